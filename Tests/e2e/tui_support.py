"""tmux harness for the full-screen interface (test_tui.py).

Each ``Tmux`` is one private tmux server (its own socket under the test's directory), one
session, one window, the status line off so the pane is the whole window.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LATCHKEY_BIN, Latchkey

TMUX = shutil.which("tmux")

SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def colour_codes(text: str) -> list[str]:
    """Every SGR parameter in ``text`` that sets a foreground or background colour."""
    found = []
    for match in SGR.finditer(text):
        params = [p for p in re.split(r"[;:]", match.group(1)) if p]
        for p in params:
            n = int(p)
            if 30 <= n <= 38 or 40 <= n <= 48 or 90 <= n <= 97 or 100 <= n <= 107:
                found.append(p)
    return found


class Tmux:
    def __init__(self, root: Path, width: int = 100, height: int = 30):
        if TMUX is None:
            pytest.skip("tmux is not installed (apt-get install tmux)")
        self.socket = str(root / "tmux.sock")
        self.width, self.height = width, height
        self.started = False

    def tmux(self, *args: str, check: bool = True) -> str:
        result = subprocess.run([TMUX, "-S", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True, timeout=20)
        if check and result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def start(self, command: str, env: dict) -> None:
        """Runs ``command`` (a shell command line) in a fresh session with exactly ``env``.

        The environment goes through a script file, so values with control characters (an
        IdP error description with escape sequences) reach latchkey byte for byte."""
        script = Path(self.socket).with_name("run.sh")
        lines = ["#!/bin/sh"] + [f"export {k}={shlex.quote(str(v))}" for k, v in env.items()] + [command]
        script.write_text("\n".join(lines) + "\n")
        script.chmod(0o700)
        self.tmux("new-session", "-d", "-s", "t", "-x", str(self.width), "-y", str(self.height),
                  f"env -i /bin/sh {shlex.quote(str(script))}")
        self.tmux("set-option", "-t", "t", "status", "off")
        self.tmux("set-option", "-t", "t", "remain-on-exit", "on")
        self.tmux("set-option", "-g", "set-clipboard", "on")
        self.started = True

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def capture(self, escapes: bool = False, joined: bool = False) -> str:
        """The pane's text; ``joined`` also joins wrapped lines and includes the scrollback."""
        return self.tmux("capture-pane", "-p", "-t", "t", *(["-e"] if escapes else []), *(["-J", "-S", "-"] if joined else []))

    def wait_for(self, predicate, timeout: float = 20, what: str = "") -> str:
        """Polls the pane until ``predicate(text)`` holds; fails with the last capture."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.capture()
            if predicate(text):
                return text
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what or predicate}\n--- pane ---\n{text}")

    def wait_text(self, needle: str, timeout: float = 20) -> str:
        return self.wait_for(lambda t: needle in t, timeout, repr(needle))

    def resize(self, width: int, height: int) -> None:
        self.tmux("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def pane_dead(self) -> bool:
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "1"

    def pane_title(self) -> str:
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def clipboard(self) -> str:
        return self.tmux("show-buffer", check=False)

    def kill(self) -> None:
        """Ends the server and waits until it is gone (its socket removed), so a test may start
        another session at once without reaching the one shutting down."""
        if self.started:
            self.tmux("kill-server", check=False)
            self.started = False
            deadline = time.monotonic() + 10
            while Path(self.socket).exists() and time.monotonic() < deadline:
                time.sleep(0.05)


def screen_env(lk: Latchkey, **extra) -> dict:
    """latchkey's test environment for a real terminal: tmux's TERM, colours allowed."""
    settings = {"TERM": "tmux-256color", "NO_COLOR": None}
    settings.update(extra)
    return lk.env(**settings)


def screen_command(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in [str(LATCHKEY_BIN), "screen", *args])


@pytest.fixture
def tmux(tmp_path):
    session = Tmux(tmp_path)
    yield session
    session.kill()
