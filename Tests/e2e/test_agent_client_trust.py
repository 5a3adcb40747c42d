"""
A client of `latchkey agent` trusts only a socket served by its own user (or root), and the
default socket only in a directory of its own that nobody else may use. Another user who gets a
socket in first, at `LATCHKEY_AGENT` or at the default path (a shared XDG_RUNTIME_DIR, an
`ssh -R` path taken first), would otherwise learn every selector asked for and hand the victim
a token of its choosing. Each test fails without the check:

* a listener of another uid at LATCHKEY_AGENT: `token` fails naming the uid, sends nothing;
* a listener of another uid at the default socket, in the victim's own private directory:
  passed over with a warning, the victim's own vault answers, nothing is sent;
* a default socket directory open to others or owned by another user: passed over likewise;
* `latchkey agent --socket` in a directory others may write is refused, as `--forward-socket`.

The victim is root (CI runs as root) and the other user is nobody: root's own sockets stay trusted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_support import agents, runtime, wait_for  # noqa: F401
from conftest import EX_OK, LATCHKEY_BIN, _die_with_parent, _kill_group, _LIVE_GROUPS

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="another uid is needed: only root can become one here")
NOBODY = 65534
EX_CANTCREAT = 73
PLANTED = "planted-token-of-the-other-user"

# Binds the socket as the starting user (root can bind anywhere), becomes `uid`, listens (so
# SO_PEERCRED names `uid`), then logs every byte each client sends and answers every request with
# a token of its own, as an attacker's listener would.
LISTENER = r"""
import json, os, socket, sys
path, log, uid = sys.argv[1], sys.argv[2], int(sys.argv[3])
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o777)
record = open(log, "ab", buffering=0)  # opened before the uid changes: the log's directory is private
if uid != os.geteuid():
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
server.listen(16)
record.write(b"READY\n")
answer = json.dumps({"ok": True, "provider": "a", "account": "alice", "access_token": sys.argv[4]}).encode() + b"\n"
while True:
    client, _ = server.accept()
    client.settimeout(3)
    got = b""
    try:
        while not got.endswith(b"\n"):
            chunk = client.recv(65536)
            if not chunk:
                break
            got += chunk
        if got:
            client.sendall(answer)
    except OSError:
        pass
    record.write(b"CONNECTION " + got)
    client.close()
"""


class Listener:
    """The other user's listener at `path`; `received()` is every byte clients sent it."""

    def __init__(self, path: Path, uid: int, log_dir: Path):
        self.log = log_dir / f"listener-{time.monotonic_ns()}.log"
        self.popen = subprocess.Popen([sys.executable, "-c", LISTENER, str(path), str(self.log), str(uid), PLANTED],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True, preexec_fn=_die_with_parent)
        _LIVE_GROUPS.add(self.popen.pid)
        wait_for(lambda: self.log.exists() and self.log.read_bytes().startswith(b"READY\n"), timeout=10,
                 what="the other user's listener")

    def received(self) -> str:
        return self.log.read_text(errors="replace").removeprefix("READY\n")

    def stop(self):
        _kill_group(self.popen.pid)
        self.popen.wait()


@pytest.fixture
def listeners():
    started: list[Listener] = []

    def start(path: Path, uid: int, log_dir: Path) -> Listener:
        listener = Listener(path, uid, log_dir)
        started.append(listener)
        return listener

    yield start
    for listener in started:
        listener.stop()


def signed_in_and_locked(lk, idp) -> str:
    """An account whose token only the full command can give (no copy, no cached key), so a
    `token` reaches every door that may ask the agent."""
    lk.add_provider("a", idp)
    assert lk.login("a").code == EX_OK
    token = lk.token("a")
    lk.ok("lock")
    return token


@ROOT_ONLY
def test_a_listener_of_another_uid_at_LATCHKEY_AGENT_learns_no_selector_and_gives_no_token(lk, listeners, runtime):
    trap = runtime / "shared"
    trap.mkdir()
    os.chown(trap, NOBODY, NOBODY)
    listener = listeners(trap / "agent.sock", NOBODY, lk.root)
    result = lk.run("token", "a:alice@example.com", env={"LATCHKEY_AGENT": trap / "agent.sock"})
    assert result.code != EX_OK, result
    assert PLANTED not in result.stdout
    assert "runs as uid 65534, not as you or root" in result.stderr, result
    assert "alice" not in listener.received() and "selector" not in listener.received()


@ROOT_ONLY
def test_a_listener_of_another_uid_at_the_default_socket_is_passed_over_for_this_users_vault(lk, idp_a, listeners, runtime):
    token = signed_in_and_locked(lk, idp_a)
    directory = runtime / "latchkey"
    directory.mkdir(mode=0o700)
    listener = listeners(directory / "agent.sock", NOBODY, lk.root)
    result = lk.run("token", "a", env={"XDG_RUNTIME_DIR": runtime})
    assert result.code == EX_OK, result
    assert result.stdout == token + "\n"
    assert "runs as uid 65534" in result.stderr, result
    assert "selector" not in listener.received(), "the other user's listener learnt what was asked"


@ROOT_ONLY
@pytest.mark.parametrize("owner, mode", [(0, 0o755), (NOBODY, 0o700)], ids=["open to others", "another users"])
def test_a_default_socket_directory_not_private_and_ours_is_passed_over(lk, idp_a, listeners, runtime, owner, mode):
    token = signed_in_and_locked(lk, idp_a)
    directory = runtime / "latchkey"
    directory.mkdir()
    directory.chmod(mode)
    os.chown(directory, owner, owner)
    # Served by root, whom a client trusts: only the directory says the socket may not be ours.
    listener = listeners(directory / "agent.sock", 0, lk.root)
    result = lk.run("token", "a", env={"XDG_RUNTIME_DIR": runtime})
    assert result.code == EX_OK, result
    assert result.stdout == token + "\n"
    assert "whose directory another user could have put it in" in result.stderr, result
    assert listener.received() == "", "the client connected to a socket in an unsafe directory"


@ROOT_ONLY
@pytest.mark.parametrize("owner, mode", [(0, 0o777), (NOBODY, 0o700)], ids=["writable by others", "another users"])
def test_agent_socket_in_a_directory_others_control_is_refused(lk, agents, runtime, owner, mode):
    directory = runtime / "elsewhere"
    directory.mkdir()
    directory.chmod(mode)
    os.chown(directory, owner, owner)
    agent = agents("--socket", str(directory / "agent.sock"), wait=False)
    assert agent.wait_exit() == EX_CANTCREAT, agent.stderr()
    assert "could replace the socket" in agent.stderr()
    assert not (directory / "agent.sock").exists()


def test_agent_socket_in_a_private_directory_still_serves(lk, agents, runtime):
    directory = runtime / "elsewhere"
    directory.mkdir(mode=0o700)
    agent = agents("--socket", str(directory / "agent.sock"))
    result = lk.run("status", env={"LATCHKEY_AGENT": directory / "agent.sock"})
    assert result.code == EX_OK, result
    agent.stop()
