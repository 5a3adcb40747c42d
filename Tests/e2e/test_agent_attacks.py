"""
`latchkey agent` attacked as a hostile local process would, with the built binary. Each limit is
a test that fails without it:

* garbage, a nesting bomb and a request larger than 16 KiB get a one-line refusal and the
  connection is closed; a client that never finishes its request is dropped after 5 s; more than
  64 local connections at once are closed on arrival; all the while other clients are served;
* a forwarded host gets at most 32 connections, apart from the local ones, and the connections
  it is refused are said on stderr once in a while, not once each;
* a peer of another uid is refused (SO_PEERCRED), even one the socket's mode would let in (root);
* a socket path that exists and is not this user's socket, or a socket directory others may use,
  stops the agent from starting, with the reason, and is left alone; a stale socket is replaced;
* SIGKILL in the middle of a refresh loses nothing: the vault is as after the last completed one.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from agent_support import AgentProcess, agent_env, agents, ask, connect, read_lines, runtime, wait_for  # noqa: F401
from conftest import ALICE, EX_OK, EX_USAGE, LATCHKEY_BIN, _die_with_parent, _kill_group, _LIVE_GROUPS, assert_userinfo

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="another uid is needed: only root can become one here")
NOBODY = 65534
EX_CANTCREAT = 73


def signed_in(lk, idp):
    lk.add_provider("a", idp)
    assert lk.login("a").code == EX_OK
    return lk.token("a")


def assert_still_serving(agent, token):
    started = time.monotonic()
    (answer,) = ask(agent.socket, {"op": "token", "selector": "a"})
    assert answer.get("access_token") == token, answer
    assert time.monotonic() - started < 2, "another client made this one wait"


# --------------------------------------------------------------------------- bad requests


def test_garbage_gets_a_refusal_and_the_agent_goes_on_serving(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    for garbage in (b"hello agent\n", b"\x00\xff\x1b[2J\n", b'{"v": 1}\n', b'{"v": 2, "op": "token"}\n', b'{"v":1,"op":"format-disk"}\n',
                    b"[" * 15000 + b"]" * 15 + b"\n"):
        (answer,) = ask(agent.socket, garbage)
        assert answer["ok"] is False and answer["exit"] == EX_USAGE, (garbage[:40], answer)
    assert agent.popen.poll() is None
    assert_still_serving(agent, token)


def test_a_request_over_16_kib_is_refused_unread_while_others_are_served(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    client = connect(agent.socket)
    sent = 0
    try:
        # Without a newline, as much as the agent takes: it must stop reading at 16 KiB.
        client.settimeout(2)
        while sent < 8 << 20:
            sent += client.send(b"x" * 65536)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    assert sent < 8 << 20, "the agent kept reading a request of several MiB"
    lines = read_lines(client)
    assert lines and "longer than 16384 bytes" in lines[0]["message"], lines
    client.close()
    assert_still_serving(agent, token)
    assert "refused a request longer than 16384 bytes" in agent.stderr()


def test_a_client_that_never_finishes_its_request_is_dropped_and_does_not_block_others(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    slow = connect(agent.socket, timeout=15)
    slow.sendall(b'{"v": 1, "op": "tok')  # and nothing more
    started = time.monotonic()
    assert_still_serving(agent, token)
    lines = read_lines(slow)
    waited = time.monotonic() - started
    assert lines and "did not arrive within 5 s" in lines[0]["message"], lines
    assert 4 <= waited <= 8, f"dropped after {waited:.1f} s"


def test_more_than_64_connections_at_once_are_closed_on_arrival_and_serving_resumes(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    idle = [connect(agent.socket) for _ in range(64)]
    time.sleep(0.5)
    extra = connect(agent.socket, timeout=3)
    assert extra.recv(1) == b"", "the 65th connection is closed at once"
    extra.close()
    for client in idle:
        client.close()
    wait_for(lambda: _answers(agent, token), timeout=5, what="the agent to serve again")
    assert "64 local connections are open already" in agent.stderr()


def test_a_forwarded_host_holding_every_connection_it_may_leaves_local_clients_served_and_stderr_quiet(lk, idp_a, agents, runtime):
    token = signed_in(lk, idp_a)
    forward = runtime / "latchkey" / "forward.sock"
    agent = agents("--forward-socket", str(forward))
    held = [connect(forward) for _ in range(32)]
    time.sleep(0.5)
    refused = []
    for _ in range(200):
        extra = connect(forward, timeout=3)
        refused.append(extra.recv(1))
        extra.close()
    assert refused == [b""] * 200, "past 32 forwarded connections each is closed at once"
    assert_still_serving(agent, token)
    said = agent.stderr().count("refused a connection")
    assert 1 <= said <= 3, f"{said} lines for 200 refused connections:\n{agent.stderr()[-2000:]}"
    assert "32 forwarded connections are open already" in agent.stderr()
    for client in held:
        client.close()
    wait_for(lambda: _forwarded_answers(forward), timeout=5, what="the forward socket to serve again")


def _forwarded_answers(forward) -> bool:
    try:
        (answer,) = ask(forward, {"op": "status"}, timeout=2)
        return answer.get("ok") is True
    except (OSError, ValueError):
        return False


def _answers(agent, token) -> bool:
    try:
        (answer,) = ask(agent.socket, {"op": "token", "selector": "a"}, timeout=2)
        return answer.get("access_token") == token
    except (OSError, ValueError):
        return False


# --------------------------------------------------------------------------- other users


@ROOT_ONLY
def test_a_peer_of_another_uid_is_refused_even_when_the_socket_mode_lets_it_in(lk, runtime):
    """The agent runs as nobody; root (whom no file mode stops) connects and gets nothing."""
    home = runtime / "nobody"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    os.chown(runtime, NOBODY, NOBODY)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime), "LANG": "C.UTF-8",
           "LATCHKEY_PROVIDERS_DIR": str(home)}

    def as_nobody():
        _die_with_parent()
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    err = open(lk.root / "nobody-agent.err", "wb")
    agent = subprocess.Popen([str(LATCHKEY_BIN), "agent"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, start_new_session=True, preexec_fn=as_nobody)
    _LIVE_GROUPS.add(agent.pid)
    try:
        sock = runtime / "latchkey" / "agent.sock"
        wait_for(lambda: "listening on" in (lk.root / "nobody-agent.err").read_text(), timeout=30, what="the agent as nobody")
        assert sock.stat().st_uid == NOBODY
        with connect(sock, timeout=5) as client:
            try:
                client.sendall(b'{"v":2,"status":{}}\n')
            except (BrokenPipeError, ConnectionResetError):
                pass  # the agent closed the connection before the request arrived: refused as well
            assert read_lines(client) == [], "root got an answer from nobody's agent"
        assert "from uid 0" in (lk.root / "nobody-agent.err").read_text()
    finally:
        _kill_group(agent.pid)
        agent.wait()
        err.close()


def test_a_regular_file_at_the_socket_path_stops_the_agent_and_is_left_alone(lk, agents, runtime):
    directory = runtime / "latchkey"
    directory.mkdir(mode=0o700)
    planted = directory / "agent.sock"
    planted.write_text("not a socket\n")
    agent = agents(wait=False)
    assert agent.wait_exit() == EX_CANTCREAT, agent.stderr()
    assert "agent.sock exists and is not a socket (a regular file)" in agent.stderr()
    assert planted.read_text() == "not a socket\n"


def test_a_socket_directory_others_may_use_stops_the_agent(lk, agents, runtime):
    directory = runtime / "latchkey"
    directory.mkdir()
    directory.chmod(0o755)
    agent = agents(wait=False)
    assert agent.wait_exit() == EX_CANTCREAT, agent.stderr()
    assert "group or others may use it (mode 755); run chmod 700" in agent.stderr()
    assert not (directory / "agent.sock").exists()


@ROOT_ONLY
def test_another_users_socket_at_the_path_stops_the_agent(lk, agents, runtime):
    directory = runtime / "latchkey"
    directory.mkdir(mode=0o700)
    theirs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.bind(str(directory / "agent.sock"))
    os.chown(directory / "agent.sock", NOBODY, NOBODY)
    agent = agents(wait=False)
    assert agent.wait_exit() == EX_CANTCREAT, agent.stderr()
    assert "is a socket of uid 65534" in agent.stderr()
    assert (directory / "agent.sock").exists()
    theirs.close()


def test_a_second_agent_does_not_take_over_a_running_one_and_a_stale_socket_is_replaced(lk, agents):
    first = agents()
    second = agents(wait=False)
    assert second.wait_exit() != EX_OK and "an agent already answers at" in second.stderr()
    assert ask(first.socket, {"op": "status"})[0]["ok"] is True
    first.kill()
    assert first.socket.exists(), "SIGKILL leaves the socket behind"
    third = agents()
    assert ask(third.socket, {"op": "status"})[0]["ok"] is True


# --------------------------------------------------------------------------- SIGKILL mid-refresh


class HoldingTokenEndpoint:
    """A token endpoint in front of the IdP's that passes code exchanges on and holds refreshes
    until released, so the agent can be killed while it waits for one."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.held = threading.Event()
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if b"grant_type=refresh_token" in body and not outer.release.is_set():
                    outer.held.set()
                    outer.release.wait(60)
                    return
                answer = requests.post(outer.upstream, data=body, headers={"Content-Type": self.headers["Content-Type"]}, timeout=30)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/o/token/"

    def close(self):
        self.release.set()
        self.server.shutdown()


def test_sigkill_in_the_middle_of_a_refresh_leaves_the_vault_as_after_the_last_completed_one(lk, idp_short, agents):
    proxy = HoldingTokenEndpoint(f"{idp_short.issuer}/token/")
    try:
        lk.add_provider("a", idp_short, token_endpoint=proxy.url)
        assert lk.login("a").code == EX_OK
        agent = agents()
        assert proxy.held.wait(20), "the agent did not start a refresh"
        before = lk.vault_bytes()
        agent.kill()
        assert lk.vault_bytes() == before, "the vault changed"
        proxy.release.set()
        # The lock died with the agent; the refresh token it never got to spend still works.
        token = lk.token("a", "--min-ttl", "0")
        assert_userinfo(idp_short, token, ALICE)
        (account,) = lk.status()
        assert account["last_error"] is None
    finally:
        proxy.close()
