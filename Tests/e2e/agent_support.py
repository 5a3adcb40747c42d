"""
`latchkey agent` for the end-to-end tests: started in the background with a private runtime
directory (short, so socket paths fit sun_path), stopped by process group at the end; and a raw
client that speaks the broker's protocol on the agent's socket (one JSON line each way, version 2)
as any program could.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from conftest import LATCHKEY_BIN, Latchkey, _LIVE_GROUPS, _die_with_parent, _kill_group


class AgentProcess:
    """One `latchkey agent` of `lk`, with its stderr in a file."""

    def __init__(self, lk: Latchkey, runtime: Path, *args: str, env: dict | None = None, binary: Path | None = None):
        self.lk = lk
        self.runtime = runtime
        self.stderr_path = lk.root / f"agent-{time.monotonic_ns()}.err"
        self._stderr = open(self.stderr_path, "wb")
        self.popen = subprocess.Popen(
            [str(binary or lk.binary), "agent", *args], env=lk.env(XDG_RUNTIME_DIR=runtime, **(env or {})),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr, cwd=lk.root,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        _LIVE_GROUPS.add(self.popen.pid)

    @property
    def socket(self) -> Path:
        return self.runtime / "latchkey" / "agent.sock"

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_listening(self, timeout: float = 30) -> "AgentProcess":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "listening on" in self.stderr():
                return self
            if self.popen.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"the agent did not start (exit {self.popen.poll()}):\n{self.stderr()}")

    def wait_exit(self, timeout: float = 30) -> int:
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the agent did not exit within {timeout} s\n{self.stderr()}") from None

    def stop(self) -> None:
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
                self.popen.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        _kill_group(self.popen.pid)
        self.popen.wait()
        self._stderr.close()

    def kill(self) -> None:
        """SIGKILL, as the kernel's OOM killer or a person would: no clean-up at all."""
        os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()


def runtime_dir() -> Path:
    """A private XDG_RUNTIME_DIR under /tmp: pytest's own directories are too deep for sun_path."""
    path = Path(tempfile.mkdtemp(prefix="lk-", dir="/tmp"))
    path.chmod(0o700)
    return path


@pytest.fixture
def runtime():
    path = runtime_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def agents(lk, runtime):
    """Starts agents for `lk` (XDG_RUNTIME_DIR = `runtime`); stops them all at the end."""
    started: list[AgentProcess] = []

    def start(*args: str, env: dict | None = None, wait: bool = True) -> AgentProcess:
        agent = AgentProcess(lk, runtime, *args, env=env)
        started.append(agent)
        return agent.wait_listening() if wait else agent

    yield start
    for agent in started:
        agent.stop()


def connect(path: Path | str, timeout: float = 10) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(timeout)
    client.connect(str(path))
    return client


def read_lines(client: socket.socket, limit: int = 1 << 20) -> list[dict]:
    """Every line until the agent closes the connection, decoded and flattened."""
    data = b""
    while len(data) < limit:
        try:
            chunk = client.recv(65536)
        except ConnectionResetError:  # closed with our bytes unread
            break
        if not chunk:
            break
        data += chunk
    return [flattened(json.loads(line)) for line in data.splitlines() if line.strip()]


# The exit status each kind of refusal ends a command with (FailureCategory.exitStatus).
EXIT_STATUS = {"usage": 64, "configuration": 65, "not_found": 66, "unavailable": 69, "rejected": 76, "keystore": 77,
               "cannot_create": 73, "unexpected": 1}


def request_line(operation: str, fields: dict | None = None, client: dict | None = None, version: int = 2) -> bytes:
    """A request as the broker's protocol writes it: `{"v": 2, "client": {…}, "OPERATION": {fields}}`."""
    message = {"v": version, operation: fields or {}}
    if client is not None:
        message["client"] = client
    return json.dumps(message).encode() + b"\n"


def flattened(line: dict) -> dict:
    """An answer line as the tests read it: `ok` and the release's fields, or `ok` false with the
    refusal's `message`, `category` and `exit`, or `pending` with its `message`."""
    if "refused" in line:
        refusal = line["refused"]
        return {"ok": False, **refusal, "exit": EXIT_STATUS.get(refusal.get("category"), 1)}
    if "pending" in line:
        return {"ok": False, "pending": True, "message": line["pending"]}
    (operation,) = [key for key in line if key != "v"]
    payload = line[operation]
    return {"ok": True, "operation": operation, **(payload if isinstance(payload, dict) else {operation: payload})}


def ask(path: Path | str, request: dict | bytes, timeout: float = 10) -> list[dict]:
    """One request, as raw bytes or `{"op": OPERATION, **fields}`; every answer line, flattened."""
    with connect(path, timeout) as client:
        if isinstance(request, bytes):
            client.sendall(request)
        else:
            fields = {key: value for key, value in request.items() if key != "op"}
            client.sendall(request_line(request["op"], fields))
        return read_lines(client)


def ath(token: str) -> str:
    """RFC 9449's `ath`: base64url SHA-256 of the token, as `mcp proxy` names a refused token."""
    return base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()


def agent_env(agent: AgentProcess, **extra) -> dict:
    """A client's environment that names the agent and can open no vault of its own."""
    return {"LATCHKEY_AGENT": agent.socket, "LATCHKEY_PASSPHRASE_FILE": None, **extra}


def wait_for(predicate, timeout: float = 20, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


LATCHKEY = LATCHKEY_BIN


class ResourceBlindTokenEndpoint:
    """The IdP's token endpoint without `resource`: a server that gives a token for any resource
    asked at refresh, as a forwarded host would want one to. `forms` records each request's form
    as Latchkey sent it, `resource` included."""

    def __init__(self, upstream: str):
        self.forms: list[list[tuple[str, str]]] = []
        forms = self.forms

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                form = urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode())
                forms.append(form)
                body = urllib.parse.urlencode([(key, value) for key, value in form if key != "resource"])
                answer = requests.post(upstream, data=body, headers={"Content-Type": self.headers["Content-Type"]}, timeout=30)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/o/token/"
