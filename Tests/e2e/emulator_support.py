"""
The Identity Toolkit emulator (``latchkey-emulator``) as a subprocess, and a person typing
into ``latchkey login`` of a ``kind = "firebase"`` provider.

* ``Emulator``: one emulator process on a free loopback port, seeded from a JSON file
  (EmulatorConfiguration's keys: ``projectId``, ``tokenLifetime``, ``users`` ...), stopped by
  its PID; it can say which SMS codes it sent (``verification_codes``) and write the
  provider file that points latchkey at it (``add_provider``).
* ``Conversation``: waits for a prompt on latchkey's stderr, then types a line on its stdin.

The emulator binary is ``latchkey-emulator`` next to the latchkey binary under test.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import requests

from conftest import LATCHKEY_BIN, Latchkey, Result, Running, ServerProcess

EMULATOR_BIN = LATCHKEY_BIN.parent / "latchkey-emulator"


class Emulator(ServerProcess):
    """One latchkey-emulator process with its own users, port and signing key."""

    def __init__(self, data_dir: Path, seed: dict, *flags: str):
        if not EMULATOR_BIN.exists():
            raise RuntimeError(f"latchkey-emulator not found at {EMULATOR_BIN} (build it with `swift build`)")
        self.project = seed["projectId"]
        data_dir.mkdir(parents=True, exist_ok=True)
        seed_file = data_dir / "seed.json"
        seed_file.write_text(json.dumps(seed))
        super().__init__("latchkey-emulator", [str(EMULATOR_BIN), "--port", "0", "--seed", str(seed_file), *flags], data_dir)

    @property
    def base_url(self) -> str:
        return self.url

    # ---- what the emulator knows

    @property
    def issuer(self) -> str:
        return f"https://securetoken.google.com/{self.project}"

    def verification_codes(self) -> list[dict]:
        """Pending SMS codes, oldest first: ``{"code", "phoneNumber", "sessionInfo"}``."""
        url = f"{self.base_url}/emulator/v1/projects/{self.project}/verificationCodes"
        response = requests.get(url, timeout=10)
        assert response.status_code == 200, f"GET {url}: HTTP {response.status_code} {response.text[:200]}"
        return response.json()["verificationCodes"]

    def sessions(self) -> set[str]:
        return {entry["sessionInfo"] for entry in self.verification_codes()}

    def new_code(self, phone: str, known: set[str], wait: float = 10) -> str:
        """The code of the one SMS sent to `phone` whose session is not in `known`."""
        deadline = time.monotonic() + wait
        while True:
            fresh = [e for e in self.verification_codes() if e["phoneNumber"] == phone and e["sessionInfo"] not in known]
            if len(fresh) == 1:
                return fresh[0]["code"]
            assert len(fresh) < 2, f"{len(fresh)} new codes were sent to {phone}, one was expected"
            assert time.monotonic() < deadline, f"no code was sent to {phone}"
            time.sleep(0.05)

    # ---- latchkey's side

    def add_provider(self, lk: Latchkey, name: str = "fb", display_name: str = "Firebase emulator") -> Path:
        """A ``kind = "firebase"`` provider file for this emulator."""
        base = self.base_url
        return lk.write_provider_text(name, "\n".join([
            f"display_name = {json.dumps(display_name)}",
            'kind = "firebase"',
            'api_key = "emulator-api-key"',
            f"project_id = {json.dumps(self.project)}",
            f'identitytoolkit_url = "{base}/identitytoolkit.googleapis.com"',
            f'securetoken_url = "{base}/securetoken.googleapis.com"',
            f'jwks_uri = "{base}/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"',
            "",
        ]))


class Conversation:
    """A person at latchkey's prompts: reads stderr, answers on stdin, one line at a time."""

    def __init__(self, running: Running):
        self.running = running
        self._seen: dict[str, int] = {}

    def expect(self, prompt: str, wait: float = 20) -> None:
        """Wait until `prompt` appears on stderr once more than it had so far."""
        count = self._seen.get(prompt, 0) + 1
        deadline = time.monotonic() + wait
        while self.running.stderr_so_far().count(prompt) < count:
            if not self.running.running() or time.monotonic() > deadline:
                result = self.running.finish(5)
                raise AssertionError(f"latchkey did not ask {prompt!r} (time {count})\n{result}")
            time.sleep(0.02)
        self._seen[prompt] = count

    def type(self, line: str) -> None:
        self.running.send((line + "\n").encode(), close=False)

    def answer(self, prompt: str, line: str) -> None:
        self.expect(prompt)
        self.type(line)

    def hang_up(self, timeout: float = 30) -> Result:
        """End of input, then latchkey's outcome."""
        self.running.send(b"", close=True)
        return self.running.finish(timeout)
