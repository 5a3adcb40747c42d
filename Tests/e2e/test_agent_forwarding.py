"""
`latchkey agent` forwarded over SSH, with a real OpenSSH server (Debian's openssh-server) that the
test starts on 127.0.0.1 with its own host key and a throw-away user key. The "remote host" is a
command run through that server with an empty HOME: it holds no vault, no key, no refresh token.

* a remote command gets a token through the forwarded socket (LATCHKEY_AGENT), for an account
  marked forward = true, and `status` there lists only such accounts;
* an account not marked for forwarding is refused, and so are `approve` and `deny`; the account is
  chosen among the shared ones only, so every refusal is the same and names no other account, and
  `status` names no other provider;
* a forwarded host cannot fill the vault: it gets narrowed tokens only for the resources the
  provider file lists;
* a process named `sshd-session` (OpenSSH 9.8 and later) on the local socket counts as forwarded;
* forwarding the local socket itself (`ssh -R …:agent.sock`) is served as forwarded too;
* killing the agent gives the remote command a clear error within a second.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from agent_support import AgentProcess, ResourceBlindTokenEndpoint, agents, ask, flattened, runtime, wait_for  # noqa: F401  (fixtures)
from conftest import ALICE, BOB, EX_OK, EX_UNAVAILABLE, EX_VAULT, LATCHKEY_BIN, _LIVE_GROUPS, _die_with_parent, _kill_group

SSHD = Path("/usr/sbin/sshd")
pytestmark = pytest.mark.skipif(not SSHD.exists() or not shutil.which("ssh"), reason="needs openssh-server and openssh-client (scripts/setup)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SSHServer:
    """sshd on 127.0.0.1 and a free port, as whoever runs the tests, trusting one key."""

    def __init__(self, root: Path):
        self.root = root
        self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.port = free_port()
        for name in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(root / name)], check=True)
        (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
        (root / "authorized_keys").chmod(0o600)
        host = (root / "host_key.pub").read_text().split()
        (root / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host[0]} {host[1]}\n")
        (root / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\nPidFile {root / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {root / 'authorized_keys'}\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
            "AllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\nStreamLocalBindMask 0177\nLogLevel VERBOSE\n")
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # Debian's privilege separation directory
        self.log = open(root / "sshd.log", "wb")
        self.popen = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(root / "sshd_config")], stdin=subprocess.DEVNULL,
                                      stdout=self.log, stderr=self.log, start_new_session=True, preexec_fn=_die_with_parent)
        _LIVE_GROUPS.add(self.popen.pid)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if "Server listening" in (root / "sshd.log").read_text(errors="replace"):
                return
            if self.popen.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.skip(f"sshd did not start here:\n{(root / 'sshd.log').read_text(errors='replace')[-2000:]}")

    def ssh(self, forward: tuple[Path, Path] | None, command: str, timeout: float = 60, background: bool = False):
        argv, env = self.client(forward, command)
        if background:
            popen = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True, preexec_fn=_die_with_parent)
            _LIVE_GROUPS.add(popen.pid)
            return popen
        return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_die_with_parent)

    def client(self, forward: tuple[Path, Path] | None, command: str) -> tuple[list[str], dict]:
        """The ssh command line (with `-R` for `forward`) that runs `command` here, and its environment."""
        argv = ["ssh", "-F", "/dev/null", "-i", str(self.root / "user_key"), "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={self.root / 'known_hosts'}", "-o", "LogLevel=ERROR",
                "-o", "ExitOnForwardFailure=yes", "-p", str(self.port)]
        if forward:
            argv += ["-R", f"{forward[0]}:{forward[1]}"]
        argv += [f"{self.user}@127.0.0.1", command]
        return argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root)}

    def stop(self):
        _kill_group(self.popen.pid)
        self.popen.wait()
        self.log.close()


@pytest.fixture
def sshd():
    root = Path(tempfile.mkdtemp(prefix="lk-ssh-", dir="/tmp"))
    root.chmod(0o700)
    server = SSHServer(root)
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


class RemoteHost:
    """What the remote command sees: an empty HOME and XDG dirs, LATCHKEY_AGENT at the forwarded socket."""

    def __init__(self, root: Path):
        self.home = root / "remote-home"
        self.home.mkdir()
        self.socket = root / "remote.sock"

    def command(self, *args: str) -> str:
        env = (f"HOME={self.home} XDG_CONFIG_HOME={self.home}/config XDG_DATA_HOME={self.home}/data "
               f"XDG_STATE_HOME={self.home}/state XDG_RUNTIME_DIR={self.home} LANG=C.UTF-8 PATH=/usr/bin:/bin "
               f"LATCHKEY_PROVIDERS_DIR={self.home}/providers.d LATCHKEY_AGENT={self.socket}")
        return f"env -i {env} {LATCHKEY_BIN} " + " ".join(args)

    def files(self) -> list[Path]:
        return [p for p in self.home.rglob("*") if p.is_file()]


def two_accounts_one_forwarded(lk, idp_a, idp_b):
    """alice at provider a (its file says forward = true), bob at provider b (not forwarded)."""
    lk.add_provider("a", idp_a, forward=True, git_hosts=["git.example.test"], registry_hosts=["registry.example.test"])
    lk.add_provider("b", idp_b)
    assert lk.login("a").code == EX_OK
    assert lk.login("b", user="bob").code == EX_OK
    return lk.token("a")


def start_forwarding(agents, runtime) -> Path:
    """An agent with its forward socket; returns that socket's path."""
    forward = runtime / "latchkey" / "forward.sock"
    agents("--forward-socket", str(forward))
    return forward


def test_a_remote_command_gets_a_token_through_the_forwarded_socket_and_holds_no_vault(lk, idp_a, idp_b, agents, runtime, sshd):
    token = two_accounts_one_forwarded(lk, idp_a, idp_b)
    forward = start_forwarding(agents, runtime)
    remote = RemoteHost(sshd.root)
    result = sshd.ssh((remote.socket, forward), remote.command("token", "a"))
    assert result.returncode == 0 and result.stdout == token + "\n", result
    git = sshd.ssh((remote.socket, forward), f"printf 'protocol=https\\nhost=git.example.test\\n\\n' | {remote.command('git-credential', 'get')}")
    assert git.returncode == 0 and git.stdout == f"username=oauth2\npassword={token}\n", git
    # The container credential helper too, though the remote has no provider file naming the registry.
    docker = sshd.ssh((remote.socket, forward), f"printf registry.example.test | {remote.command('docker-credential', 'get')}")
    assert docker.returncode == 0, docker
    assert json.loads(docker.stdout) == {"ServerURL": "registry.example.test", "Username": "oauth2accesstoken", "Secret": token}, docker.stdout
    assert remote.files() == [], "the remote host keeps nothing"
    log = lk.run("agent", "log", "--json").json()
    assert log[-1]["forwarded"] is True and log[-1]["outcome"] == "released"
    assert log[-1]["requester"].startswith("forwarded: ") and " says " in log[-1]["requester"]


def test_an_account_not_marked_for_forwarding_is_refused_and_status_lists_only_what_the_remote_may_use(
        lk, idp_a, idp_b, agents, runtime, sshd):
    two_accounts_one_forwarded(lk, idp_a, idp_b)
    forward = start_forwarding(agents, runtime)
    remote = RemoteHost(sshd.root)
    refused = sshd.ssh((remote.socket, forward), remote.command("token", "b"))
    assert refused.returncode == EX_VAULT and refused.stdout == "", refused
    assert "no account shared with forwarded connections answers this request" in refused.stderr, refused
    assert BOB not in refused.stderr, refused
    status = sshd.ssh((remote.socket, forward), remote.command("status", "--json"))
    assert status.returncode == 0, status
    assert [(a["provider"], a["account"]) for a in json.loads(status.stdout)["accounts"]] == [("a", ALICE)]
    listing = sshd.ssh((remote.socket, forward), remote.command("status"))
    assert ALICE in listing.stdout and BOB not in listing.stdout and "IdP B" not in listing.stdout, listing
    assert lk.run("agent", "log", "--json").json()[-1]["outcome"] == "refused"


def test_a_forwarded_connection_cannot_approve_or_deny(lk, agents, runtime, sshd):
    forward = start_forwarding(agents, runtime)
    remote = RemoteHost(sshd.root)
    for verb in ("approve", "deny"):
        result = sshd.ssh((remote.socket, forward), remote.command(verb, "1"))
        assert result.returncode == EX_VAULT, result
        assert "approval is answered only on the agent's own machine" in result.stderr, (verb, result)


def test_forwarding_the_local_socket_itself_is_served_as_forwarded(lk, idp_a, idp_b, agents, runtime, sshd):
    token = two_accounts_one_forwarded(lk, idp_a, idp_b)
    agent = agents()
    remote = RemoteHost(sshd.root)
    assert sshd.ssh((remote.socket, agent.socket), remote.command("token", "a")).stdout == token + "\n"
    refused = sshd.ssh((remote.socket, agent.socket), remote.command("token", "b"))
    assert refused.returncode == EX_VAULT and "no account shared with forwarded connections" in refused.stderr, refused
    assert "came from ssh" in agent.stderr()


def test_killing_the_agent_gives_the_remote_a_clear_error_within_a_second(lk, idp_a, idp_b, agents, runtime, sshd):
    two_accounts_one_forwarded(lk, idp_a, idp_b)
    forward = runtime / "latchkey" / "forward.sock"
    agent = agents("--forward-socket", str(forward))
    remote = RemoteHost(sshd.root)
    go = sshd.root / "go"
    script = (f"while [ ! -e {go} ]; do sleep 0.02; done; start=$(date +%s%N); {remote.command('token', 'a')}; "
              "echo rc=$? ms=$(( ($(date +%s%N) - start) / 1000000 ))")
    session = sshd.ssh((remote.socket, forward), f"sh -c '{script}'", background=True)
    wait_for(lambda: remote.socket.exists(), what="the forwarded socket on the remote side")
    agent.kill()
    go.touch()
    out, err = session.communicate(timeout=30)
    text = out.decode() + err.decode()
    assert f"rc={EX_UNAVAILABLE}" in text, text
    assert "closed the connection without answering" in text or "no agent answers" in text, text
    elapsed = int(text.split("ms=")[1].split()[0])
    assert elapsed < 1000, f"the remote waited {elapsed} ms"


def test_a_forwarded_host_gets_the_same_refusal_for_every_account_it_is_not_given_and_no_labels(lk, idp_a, idp_b, agents, runtime):
    two_accounts_one_forwarded(lk, idp_a, idp_b)
    forward = start_forwarding(agents, runtime)
    # Unshared (bob at b), at an unshared provider by the wrong name, at a provider that does not
    # exist, and a missing account at the shared provider: one answer, no label, no provider.
    answers = [ask(forward, {"op": "token", "selector": selector})[0] for selector in ("b", f"b:{BOB}", "b:nobody", "nosuch", "a:nobody")]
    assert all(answer["ok"] is False for answer in answers), answers
    assert len({answer["message"] for answer in answers}) == 1, answers
    assert "no account shared with forwarded connections answers this request" in answers[0]["message"]
    assert all(BOB not in answer["message"] and ALICE not in answer["message"] for answer in answers), answers
    (git,) = ask(forward, {"op": "git_credential", "attributes": "protocol=https\nhost=git.example.test\n"})
    assert git["ok"] is True and "credential" in git, "the shared account still answers"
    (status,) = ask(forward, {"op": "status"})
    assert not any("IdP B" in line or line.startswith("b ") for line in status["lines"]), status["lines"]
    log = lk.run("agent", "log", "--json").json()
    assert log[-1]["outcome"] == "released" and log[-2]["outcome"] == "refused" and log[-2]["forwarded"] is True


API = "https://api.example.test/v1/"


def test_a_forwarded_host_gets_narrowed_tokens_only_for_resources_the_provider_file_lists(lk, idp_a, agents, runtime):
    # A server that would give a token for any resource: only the agent can refuse.
    endpoint = ResourceBlindTokenEndpoint(f"{idp_a.issuer}/token/")
    try:
        lk.add_provider("a", idp_a, forward=True, resources=[API], token_endpoint=endpoint.url)
        assert lk.login("a").code == EX_OK
        forward = start_forwarding(agents, runtime)
        before = len(lk.vault_bytes())
        for i in range(5):
            (refused,) = ask(forward, {"op": "token", "selector": "a", "resource": f"https://api{i}.example.test/" + "x" * 1900})
            assert refused["ok"] is False and "provider file lists (resources, git_resource)" in refused["message"], refused
        assert len(lk.vault_bytes()) == before, "nothing kept for a resource the host chose"
        (listed,) = ask(forward, {"op": "token", "selector": "a", "resource": API})
        assert listed["ok"] is True and listed["access_token"], listed
        (scoped,) = ask(forward, {"op": "token", "selector": "a", "scope": "email"})
        assert scoped["ok"] is True, "scopes alone are the account's own, bounded by what it was granted"
    finally:
        endpoint.server.shutdown()


def test_a_connection_from_a_process_named_sshd_session_is_served_as_forwarded(lk, idp_a, idp_b, agents, runtime):
    """OpenSSH 9.8 split sshd: the process serving a connection's forwarding is `sshd-session`."""
    two_accounts_one_forwarded(lk, idp_a, idp_b)
    agent = agents()
    script = (
        "import ctypes, json, socket, sys\n"
        "ctypes.CDLL(None).prctl(15, b'sshd-session', 0, 0, 0)\n"  # PR_SET_NAME: /proc/self/comm
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "s.sendall(json.dumps({'v': 2, 'token': {'selector': 'b'}}).encode() + b'\\n')\n"
        "print(s.makefile().readline(), end='')\n")
    result = subprocess.run([sys.executable, "-c", script, str(agent.socket)], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL)
    answer = flattened(json.loads(result.stdout))
    assert answer["ok"] is False and "no account shared with forwarded connections" in answer["message"], (answer, result.stderr)
    assert "came from ssh" in agent.stderr()
