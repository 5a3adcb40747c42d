"""
End-to-end harness for the `latchkey` command line tool.

    VENV=$(Tests/idp/setup-venv.sh)
    "$VENV/bin/python" -m pytest -q Tests/e2e

What it provides:

* three session-wide instances of the test OpenID provider (Tests/idp/run_idp.py):
  ``idp_a`` and ``idp_b`` (access tokens live an hour) and ``idp_short``
  (access tokens live ``SHORT_TOKEN_SECONDS``), all stopped at the end of the
  session, even when tests fail or the run is interrupted;
* ``lk``: a per-test ``Latchkey`` object with its own HOME, XDG dirs, TMPDIR,
  provider directory and passphrase file, which writes provider files, runs
  the binary with a time limit and captures stdout, stderr and exit status;
* helpers shared by the test modules (userinfo calls, JWT decoding, the
  "nothing was stored" check);
* tests marked ``alone`` run while no other test of the session runs, also under
  pytest-xdist (``-n N``, as scripts/test runs them).

The binary is ``$LATCHKEY_BIN`` or ``<repo>/.build/debug/latchkey``.
"""

from __future__ import annotations

import atexit
import base64
import ctypes
import fcntl
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
IDP_DIR = REPO / "Tests" / "idp"
BROWSER_SCRIPT = IDP_DIR / "browser.sh"
LATCHKEY_BIN = Path(os.environ.get("LATCHKEY_BIN") or REPO / ".build" / "debug" / "latchkey")

CLIENT_ID = "latchkey-test"
DEVICE_CLIENT_ID = "latchkey-test-device"
PASSWORD = "correct horse battery staple"
ALICE = "alice@example.test"
BOB = "bob@example.test"
SHORT_TOKEN_SECONDS = 4

# Exit statuses of latchkey(1).
EX_OK, EX_UNEXPECTED, EX_USAGE, EX_PROVIDER_FILE = 0, 1, 64, 65
EX_NO_ACCOUNT, EX_UNAVAILABLE, EX_REJECTED, EX_VAULT = 66, 69, 76, 77

# Default wall-clock limit for one latchkey process (a sign-in through the
# scripted user agent takes a few seconds).
RUN_TIMEOUT = 60

# --------------------------------------------------------------------------- process hygiene

_PR_SET_PDEATHSIG = 1
try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _libc = None


def _die_with_parent():
    """preexec_fn: the child gets SIGTERM if pytest itself dies (even by SIGKILL)."""
    if _libc is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


_LIVE_GROUPS: set[int] = set()


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _LIVE_GROUPS.discard(pgid)


@atexit.register
def _kill_leftovers():
    for pgid in list(_LIVE_GROUPS):
        _kill_group(pgid)


# --------------------------------------------------------------------------- no terminal


def _leave_the_terminal(config) -> None:
    """Standard input from /dev/null and no controlling terminal, for pytest and so for every
    process a test starts, whichever helper starts it.

    latchkey signs in on the controlling terminal (/dev/tty) when a command needs an account it
    does not have, so a suite started from a terminal window waited there for a person where a
    test expects "no account" (test_install.py's `token alpha`), and a test reading stdin read
    the keyboard. A test about a terminal makes its own (tmux); one that feeds stdin passes it."""
    if not config.getoption("usepdb"):  # --pdb reads the debugger's commands from stdin
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    try:
        terminal = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return  # no controlling terminal (CI, cron, a worker of a controller that left it)
    # A session leader that lets its terminal go sends SIGHUP to the terminal's foreground group:
    # pytest itself when a terminal window runs it directly.
    hangup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        fcntl.ioctl(terminal, termios.TIOCNOTTY)
    finally:
        os.close(terminal)
        signal.signal(signal.SIGHUP, hangup)


# --------------------------------------------------------------------------- tests that run alone

# A test marked `alone` changes what every process of this user shares (the kernel's key quota).
# It holds an exclusive lock from the setup of its fixtures to their teardown; every other test
# holds a shared one, fixtures of any scope included (a module's signed-in account unlocks a vault
# too), in a directory the xdist workers inherit from the controller. Under `-n N` an `alone` test
# so waits for a moment when no other test runs, often the end; scripts/test runs them in a pass
# of their own after the others (`-m alone`).
_LOCKS = "LATCHKEY_E2E_LOCKS"


def pytest_configure(config):
    _leave_the_terminal(config)
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config._latchkey_locks = tempfile.mkdtemp(prefix="latchkey-e2e-locks.")
        os.environ[_LOCKS] = config._latchkey_locks


def pytest_unconfigure(config):
    if hasattr(config, "_latchkey_locks"):
        shutil.rmtree(config._latchkey_locks, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    alone = item.get_closest_marker("alone") is not None
    mode = fcntl.LOCK_EX if alone else fcntl.LOCK_SH
    with open(Path(os.environ[_LOCKS]) / "alone.lock", "a") as lock:
        fcntl.flock(lock, mode)
        return (yield)


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports nobody listens on now (held open together while chosen),
    for servers that must be told their ports (OpenBao's API and cluster listeners)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


# --------------------------------------------------------------------------- the test IdP


class ServerProcess:
    """A test server started on port 0 that prints `READY <url>` once it listens (the IdP, the
    Identity Toolkit emulator); its stderr goes to data_dir/stderr.txt; stopped by process group."""

    def __init__(self, label: str, argv: list[str], data_dir: Path):
        self.label = label
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self._stderr = open(data_dir / "stderr.txt", "wb")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        _LIVE_GROUPS.add(self.proc.pid)
        self.url = ""

    def wait_ready(self, timeout: float = 90):
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline and self.proc.poll() is None:
            if select.select([self.proc.stdout], [], [], 0.2)[0]:
                line = self.proc.stdout.readline()
                break
        if not line.startswith(b"READY "):
            self.stop()
            err = (self.data_dir / "stderr.txt").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.label} did not start (stdout {line!r}):\n{err}")
        self.url = line.split()[1].decode()
        return self

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        _kill_group(self.proc.pid)
        self.proc.wait()
        self._stderr.close()


class IdP(ServerProcess):
    """One run_idp.py process (its own port, database, signing key and requests.log)."""

    def __init__(self, name: str, data_dir: Path, *extra: str):
        self.name = name
        super().__init__(f"IdP {name}", [sys.executable, str(IDP_DIR / "run_idp.py"), "--port", "0", "--name", name,
                                         "--data-dir", str(data_dir), *extra], data_dir)

    @property
    def issuer(self) -> str:
        return self.url

    @property
    def port(self) -> int:
        return urlsplit(self.issuer).port

    @property
    def userinfo_endpoint(self) -> str:
        return f"{self.issuer}/userinfo/"

    def requests_log(self) -> list[str]:
        path = self.data_dir / "requests.log"
        return path.read_text().splitlines() if path.exists() else []

    def count(self, line: str) -> int:
        return self.requests_log().count(line)

    def userinfo(self, access_token: str) -> requests.Response:
        return requests.get(self.userinfo_endpoint, headers={"Authorization": f"Bearer {access_token}"}, timeout=15)

    def jwks(self) -> dict:
        return requests.get(f"{self.issuer}/.well-known/jwks.json", timeout=15).json()

    def refresh_token_for(self, access_token: str) -> str:
        """The refresh token the IdP issued together with access_token (from its sqlite DB)."""
        db = sqlite3.connect(f"file:{self.data_dir / 'db.sqlite3'}?mode=ro", uri=True, timeout=10)
        try:
            row = db.execute(
                "SELECT r.token FROM oauth2_provider_refreshtoken r "
                "JOIN oauth2_provider_accesstoken a ON a.id = r.access_token_id WHERE a.token = ?",
                (access_token,),
            ).fetchone()
        finally:
            db.close()
        assert row and row[0], "the IdP's database holds no refresh token for this access token"
        return row[0]



@pytest.fixture(scope="session")
def idps(tmp_path_factory):
    """Start all instances at once (they start in parallel), stop them at the end."""
    root = tmp_path_factory.mktemp("idp")
    started = []
    try:
        started.append(IdP("idp-a", root / "a"))
        started.append(IdP("idp-b", root / "b"))
        started.append(IdP("idp-short", root / "short", "--access-token-seconds", str(SHORT_TOKEN_SECONDS)))
        for idp in started:
            idp.wait_ready()
        yield {idp.name: idp for idp in started}
    finally:
        for idp in started:
            idp.stop()


@pytest.fixture(scope="session")
def idp_a(idps) -> IdP:
    return idps["idp-a"]


@pytest.fixture(scope="session")
def idp_b(idps) -> IdP:
    return idps["idp-b"]


@pytest.fixture(scope="session")
def idp_short(idps) -> IdP:
    return idps["idp-short"]


# --------------------------------------------------------------------------- running latchkey


@dataclass
class Result:
    args: list[str]
    code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes
    stderr_bytes: bytes
    seconds: float

    def __str__(self):
        return (f"$ latchkey {' '.join(self.args)}\n-> exit {self.code} after {self.seconds:.1f}s\n"
                f"stdout: {self.stdout!r}\nstderr: {self.stderr!r}")

    def json(self):
        try:
            return json.loads(self.stdout)
        except ValueError:
            raise AssertionError(f"stdout is not JSON\n{self}") from None


class Running:
    """A latchkey process in flight; output is collected by threads."""

    def __init__(self, args, popen):
        self.args = args
        self.popen = popen
        self.started = time.monotonic()
        self._out, self._err = bytearray(), bytearray()
        self._threads = [
            threading.Thread(target=self._pump, args=(popen.stdout, self._out), daemon=True),
            threading.Thread(target=self._pump, args=(popen.stderr, self._err), daemon=True),
        ]
        for t in self._threads:
            t.start()

    @staticmethod
    def _pump(stream, buf):
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                return
            buf.extend(chunk)

    def stderr_so_far(self) -> str:
        return bytes(self._err).decode("utf-8", "replace")

    def running(self) -> bool:
        return self.popen.poll() is None

    def send(self, data: bytes, close: bool = True) -> None:
        try:
            self.popen.stdin.write(data)
            self.popen.stdin.flush()
            if close:
                self.popen.stdin.close()
        except BrokenPipeError:
            pass

    def finish(self, timeout: float = RUN_TIMEOUT) -> Result:
        remaining = max(0.1, timeout - (time.monotonic() - self.started))
        timed_out = False
        try:
            self.popen.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
        # Whatever latchkey left behind (a user agent still running) goes too.
        _kill_group(self.popen.pid)
        self.popen.wait()
        for t in self._threads:
            t.join(timeout=5)
        if self.popen.stdin and not self.popen.stdin.closed:
            try:
                self.popen.stdin.close()
            except BrokenPipeError:
                pass
        result = Result(
            args=self.args,
            code=self.popen.returncode,
            stdout=bytes(self._out).decode("utf-8", "replace"),
            stderr=bytes(self._err).decode("utf-8", "replace"),
            stdout_bytes=bytes(self._out),
            stderr_bytes=bytes(self._err),
            seconds=time.monotonic() - self.started,
        )
        if timed_out:
            raise AssertionError(f"latchkey did not finish within {timeout}s and was killed\n{result}")
        return result


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)  # a valid TOML basic string for ASCII text


class Latchkey:
    """One person's latchkey: private HOME, XDG dirs, TMPDIR, provider dir and passphrase."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.config = root / "config"
        self.data = root / "data"
        self.tmp = root / "tmp"
        self.providers_dir = root / "providers"
        self.passphrase_file = root / "secret" / "passphrase"
        self.ua_log = root / "user-agent.log"
        for d in (self.home, self.config, self.data, self.tmp, self.providers_dir, self.passphrase_file.parent):
            d.mkdir(parents=True, exist_ok=True)
        self.passphrase = "pp-" + secrets.token_urlsafe(24)
        # What `run` starts: the build's launcher, or a copy of it alone (`leave_only_the_launcher`).
        self.binary = LATCHKEY_BIN
        self.set_passphrase(self.passphrase)
        self._saves = 0

    def close(self) -> None:
        """Drop this vault's key from the kernel keyring, where any passphrase unlock
        caches it (docs/decisions/keystore.md), so that a test leaves nothing behind outside its dirs."""
        self.binary = LATCHKEY_BIN
        if self.vault.exists() and LATCHKEY_BIN.exists():
            self.run("lock", timeout=20)

    def leave_only_the_launcher(self) -> None:
        """From now on `run` starts a copy of the launcher with no latchkey-cli beside it: what
        answers then can only be the launcher's own answers (the others fail, exit 1)."""
        alone = self.root / "launcher-alone"
        alone.mkdir(mode=0o700, exist_ok=True)
        copy = alone / "latchkey"
        shutil.copyfile(LATCHKEY_BIN, copy)
        copy.chmod(0o755)
        self.binary = copy

    def restore_the_full_command(self) -> None:
        self.binary = LATCHKEY_BIN

    # ---- files

    @property
    def vault(self) -> Path:
        return self.data / "latchkey" / "vault"

    def vault_bytes(self) -> bytes | None:
        return self.vault.read_bytes() if self.vault.exists() else None

    def set_passphrase(self, passphrase: str) -> None:
        fd = os.open(self.passphrase_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(passphrase)
        os.chmod(self.passphrase_file, 0o600)

    def write_provider_text(self, name: str, text: str) -> Path:
        path = self.providers_dir / f"{name}.toml"
        path.write_text(text)
        return path

    def add_provider(self, name: str, idp: IdP | None = None, **fields) -> Path:
        """A provider file for the test IdP (kind oidc, client latchkey-test) plus any overrides."""
        values = {
            "display_name": f"IdP {name.upper()}",
            "kind": "oidc",
            "issuer": idp.issuer if idp else "http://127.0.0.1:9/o",
            "client_id": CLIENT_ID,
            "scopes": ["openid", "email", "profile"],
        }
        values.update(fields)
        body = "".join(f"{k} = {toml_value(v)}\n" for k, v in values.items() if v is not None)
        return self.write_provider_text(name, body)

    def add_device_provider(self, name: str, idp: IdP) -> Path:
        return self.add_provider(name, idp, display_name="IdP device", client_id=DEVICE_CLIENT_ID, redirect="device")

    def files(self) -> list[Path]:
        """Every regular file latchkey could have written: data, config, TMPDIR and HOME."""
        out = []
        for d in (self.data, self.config, self.tmp, self.home):
            out.extend(p for p in d.rglob("*") if p.is_file() and not p.is_symlink())
        return out

    # ---- processes

    def env(self, **extra) -> dict:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config),
            "XDG_DATA_HOME": str(self.data),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "LATCHKEY_PROVIDERS_DIR": str(self.providers_dir),
            "LATCHKEY_PASSPHRASE_FILE": str(self.passphrase_file),
            "BROWSER": str(BROWSER_SCRIPT),
            "LATCHKEY_TEST_VENV": sys.prefix,
            "LATCHKEY_TEST_UA_LOG": str(self.ua_log),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        for key, value in extra.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def start(self, *args: str, env: dict | None = None, stdin=subprocess.DEVNULL, cwd: Path | None = None) -> Running:
        if not self.binary.exists():
            pytest.fail(f"latchkey binary not found at {LATCHKEY_BIN} (build it with `swift build`, "
                        "or set LATCHKEY_BIN)", pytrace=False)
        ua_offset = self.ua_log_size()
        popen = subprocess.Popen(
            [str(self.binary), *args], env=self.env(**(env or {})), cwd=cwd or self.root,
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        _LIVE_GROUPS.add(popen.pid)
        running = Running(list(args), popen)
        running.ua_log_offset = ua_offset
        return running

    def run(self, *args: str, env: dict | None = None, input: bytes | None = None,
            timeout: float = RUN_TIMEOUT, cwd: Path | None = None) -> Result:
        if input is None:
            return self.start(*args, env=env, cwd=cwd).finish(timeout)
        running = self.start(*args, env=env, stdin=subprocess.PIPE, cwd=cwd)
        running.send(input)
        return running.finish(timeout)

    def ok(self, *args: str, **kw) -> Result:
        result = self.run(*args, **kw)
        assert result.code == EX_OK, f"expected exit 0\n{result}"
        return result

    # ---- commands

    def login(self, name: str, *options: str, user: str | None = None, tamper: str | None = None,
              timeout: float = 30, env: dict | None = None) -> Result:
        """`latchkey login NAME --timeout T` with the scripted user agent as BROWSER."""
        ua = {"LATCHKEY_TEST_UA_USER": user, "LATCHKEY_TEST_UA_TAMPER": tamper}
        ua.update(env or {})
        return self.run("login", name, *options, "--timeout", str(timeout), env=ua, timeout=timeout + 30)

    def status(self) -> list[dict]:
        result = self.ok("status", "--json")
        doc = result.json()
        assert isinstance(doc.get("accounts"), list), f"status --json has no accounts list\n{result}"
        return doc["accounts"]

    def token(self, spec: str, *options: str) -> str:
        result = self.ok("token", spec, *options)
        assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1, \
            f"token must print exactly one line\n{result}"
        token = result.stdout[:-1]
        assert token and token == token.strip(), f"token line is empty or padded\n{result}"
        return token

    def git(self, *args: str, input: str, helper_options: tuple[str, ...] = (), env: dict | None = None) -> subprocess.CompletedProcess:
        """A real git with `latchkey git-credential [helper_options]` as its only credential helper,
        configured only by -c: no system or global file, no terminal prompt, no controlling terminal."""
        env = self.env(GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_ASKPASS=None,
                       SSH_ASKPASS=None, **(env or {}))
        helper = " ".join([f"!{self.binary}", "git-credential", *helper_options])
        return subprocess.run(["git", "-c", f"credential.helper={helper}", *args],
                              input=input.encode(), env=env, cwd=self.root, capture_output=True, timeout=60,
                              start_new_session=True)

    # ---- the person in the browser

    def ua_log_text(self, since: int = 0) -> str:
        """The user agent's step log (from byte offset `since`)."""
        return self.ua_log.read_bytes()[since:].decode(errors="replace") if self.ua_log.exists() else ""

    def ua_log_size(self) -> int:
        return self.ua_log.stat().st_size if self.ua_log.exists() else 0

    def run_user_agent(self, url: str, **ua_env) -> subprocess.CompletedProcess:
        """Run the scripted user agent ourselves (when latchkey only printed a URL)."""
        env = self.env(**{k: v for k, v in ua_env.items()})
        return subprocess.run([str(BROWSER_SCRIPT), url], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=60, preexec_fn=_die_with_parent)

    def new_save_path(self) -> Path:
        self._saves += 1
        return self.tmp.parent / f"saved-{self._saves}.url"

    def paste_login(self, name: str, make_line, *, timeout: float = 40, user: str | None = None) -> tuple[Result, str]:
        """`latchkey login NAME --paste`: the user agent (as BROWSER, in save= mode) signs in
        and saves the final redirect URL; make_line(saved_url) -> bytes is then written to
        latchkey's stdin. Returns (result, saved_url)."""
        save = self.new_save_path()
        ua = {"LATCHKEY_TEST_UA_TAMPER": f"save={save}", "LATCHKEY_TEST_UA_USER": user}
        running = self.start("login", name, "--paste", "--timeout", str(timeout),
                             env=ua, stdin=subprocess.PIPE)
        saved = wait_for_saved_url(self, running, save, ua)
        running.send(make_line(saved))
        return running.finish(timeout + 20), saved


    def device_login(self, name: str, *options: str, timeout: float = 60, user: str | None = None,
                     env: dict | None = None) -> Result:
        """`latchkey login NAME` for a device-flow provider. The user agent approves the
        device: as $BROWSER when latchkey opens the verification URL itself, otherwise
        started here on the verification URL (and user code) that latchkey printed on stderr."""
        ua = {"LATCHKEY_TEST_UA_USER": user}
        running = self.start("login", name, *options, "--timeout", str(timeout), env={**(env or {}), **ua})
        deadline = time.monotonic() + timeout
        while running.running() and time.monotonic() < deadline:
            if "start:" in self.ua_log_text(running.ua_log_offset):
                break  # latchkey opened the verification URL with $BROWSER
            if time.monotonic() - running.started > 3:
                text = running.stderr_so_far()
                url = DEVICE_URL.search(text)
                if url:
                    extra = dict(ua)
                    if "user_code=" not in url.group(0):
                        code = USER_CODE.search(text[url.end():]) or USER_CODE.search(text)
                        if code:
                            extra["LATCHKEY_TEST_UA_USER_CODE"] = code.group(1) + code.group(2)
                    threading.Thread(target=self.run_user_agent, args=(url.group(0),), kwargs=extra,
                                     daemon=True).start()
                    break
            time.sleep(0.05)
        return running.finish(timeout + 20)


# URLs on latchkey's stderr; the lookahead waits for the whole line to arrive.
DEVICE_URL = re.compile(r"https?://[^\s\"'<>]+/device/?(?:\?[^\s\"'<>]+)?(?=\s)")
USER_CODE = re.compile(r"\b([0-9A-V]{4})-?([0-9A-V]{4})\b")
AUTHORIZE_URL = re.compile(r"https?://[^\s\"'<>]+/authorize/?\?[^\s\"'<>]+(?=\s)")


def wait_for_saved_url(lk: Latchkey, running: Running, save: Path, ua_env: dict, wait: float = 40) -> str:
    """Wait until the user agent has saved the final URL. latchkey --paste only prints
    the authorization URL, so unless it starts $BROWSER itself, the person (the user
    agent) is started here on the URL from stderr."""
    started_ourselves = False
    seen_url_at = None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        log = lk.ua_log_text(running.ua_log_offset)
        if "saved " in log and save.exists():
            return save.read_text()
        if "FAILED" in log or not running.running():
            break
        match = AUTHORIZE_URL.search(running.stderr_so_far())
        if match and seen_url_at is None:
            seen_url_at = time.monotonic()
        if not started_ourselves and "start:" not in log and match and time.monotonic() - seen_url_at > 1.5:
            started_ourselves = True
            threading.Thread(target=lk.run_user_agent, args=(match.group(0),), kwargs=ua_env,
                             daemon=True).start()
        time.sleep(0.05)
    result = running.finish(5)
    raise AssertionError(f"the user agent did not save the redirect URL\nUA log:\n{lk.ua_log_text()}\n{result}")


@pytest.fixture
def lk(tmp_path):
    person = Latchkey(tmp_path)
    yield person
    person.close()


# --------------------------------------------------------------------------- shared checks


def b64url_json(part: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def jwt_parts(token: str) -> tuple[dict, dict]:
    pieces = token.split(".")
    assert len(pieces) == 3, f"not a compact JWS: {len(pieces)} parts"
    return b64url_json(pieces[0]), b64url_json(pieces[1])


def assert_userinfo(idp: IdP, access_token: str, email: str) -> dict:
    response = idp.userinfo(access_token)
    assert response.status_code == 200, f"userinfo at {idp.name}: HTTP {response.status_code} {response.text[:200]}"
    claims = response.json()
    assert claims.get("email") == email, f"userinfo at {idp.name} names {claims.get('email')!r}, not {email!r}"
    return claims


def assert_nothing_stored(lk: Latchkey, vault_before: bytes | None) -> None:
    """No account was added: the vault is as before (absent, or byte for byte the same)."""
    after = lk.vault_bytes()
    if vault_before is None:
        if after is not None:
            assert lk.status() == [], "a rejected sign-in stored an account"
    else:
        assert after == vault_before, "a rejected sign-in changed the vault"


def message(result: Result) -> str:
    """stderr without URLs: latchkey echoes the authorization URL (with its state=...)
    before signing in, and a reason must be found in what it says, not in that echo."""
    return re.sub(r"https?://\S+", "<url>", result.stderr)


def assert_clean_stderr(result: Result) -> None:
    """Nothing from a server may reach the terminal as control characters."""
    bad = [b for b in result.stderr_bytes if b < 0x20 and b not in (0x0A, 0x09) or b == 0x7F]
    assert not bad, f"stderr contains control bytes {sorted(set(bad))}\n{result}"


def accounts_of(accounts: list[dict], provider: str) -> list[dict]:
    return [a for a in accounts if a.get("provider") == provider]
