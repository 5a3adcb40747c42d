"""kubectl with Latchkey as its credential plugin, tested with the real kubectl against a local
HTTPS API endpoint that accepts a request only with a bearer token the test IdP's userinfo
accepts (integration_servers.KubeAPIServer).

kubectl is the one on PATH: Debian 12's kubernetes-client (1.20, which knows only
client.authentication.k8s.io/v1beta1) or a newer one; the v1 exchange runs with kubectl only when
it is 1.22 or later, and is pinned field by field in ExecCredentialTests either way."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests

from conftest import ALICE, BOB, EX_OK, EX_USAGE, LATCHKEY_BIN, SHORT_TOKEN_SECONDS, _die_with_parent
from integration_servers import KubeAPIServer, make_certificates
from tui_support import tmux  # noqa: F401  (fixture)

# LATCHKEY_TEST_KUBECTL runs the tests with another kubectl (such as one version of several).
KUBECTL = os.environ.get("LATCHKEY_TEST_KUBECTL") or shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (scripts/setup installs kubernetes-client)")

V1BETA1 = "client.authentication.k8s.io/v1beta1"
V1 = "client.authentication.k8s.io/v1"


def kubectl_minor() -> int:
    result = subprocess.run([KUBECTL, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60)
    try:
        return int(re.sub(r"\D", "", json.loads(result.stdout)["clientVersion"]["minor"]))
    except (ValueError, KeyError, json.JSONDecodeError):
        return 0


API_VERSIONS = [V1BETA1, pytest.param(V1, marks=pytest.mark.skipif(
    KUBECTL is not None and kubectl_minor() < 22, reason="kubectl before 1.22 knows only v1beta1"))]


class Cluster:
    """A kubeconfig for one HTTPS API endpoint, and `latchkey` on PATH as kubectl's plugin finds it."""

    def __init__(self, lk, idp):
        self.lk = lk
        certificates = make_certificates(lk.root / "pki")
        self.ca = certificates.ca
        self.server = KubeAPIServer(certificates, idp.userinfo_endpoint)
        self.bin = lk.root / "bin"
        self.bin.mkdir(exist_ok=True)
        (self.bin / "latchkey").symlink_to(LATCHKEY_BIN)
        self.kubeconfig = lk.root / "kubeconfig"

    def write_config(self, user_entries: str) -> None:
        """The cluster `test`, and the users and contexts that `latchkey kubeconfig` printed."""
        self.kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n"
            f"    server: {self.server.url}\n    certificate-authority: {self.ca}\n"
            f"current-context: test\n{user_entries}")

    def env(self, **extra) -> dict:
        return self.lk.env(PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}", KUBECONFIG=self.kubeconfig, **extra)

    def kubectl(self, *args: str, cwd: Path | None = None, **env) -> subprocess.CompletedProcess:
        return subprocess.run([KUBECTL, *args], env=self.env(**env), cwd=cwd or self.lk.root, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=90, start_new_session=True,
                              preexec_fn=_die_with_parent)

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def cluster_for(lk):
    """Starts the API endpoint for the tokens of one IdP."""
    started = []

    def start(idp) -> Cluster:
        started.append(Cluster(lk, idp))
        return started[-1]

    yield start
    for cluster in started:
        cluster.stop()


@pytest.fixture
def cluster(cluster_for, idp_a) -> Cluster:
    return cluster_for(idp_a)


def configured(lk, cluster, selector: str = "a", api_version: str = V1BETA1) -> None:
    printed = lk.ok("kubeconfig", selector, "--cluster", "test", "--api-version", api_version.rsplit("/", 1)[1])
    cluster.write_config(printed.stdout)


def signed_in(lk, idp, user: str = "alice") -> None:
    lk.add_provider("a", idp)
    assert lk.login("a", user=user).code == EX_OK


# --------------------------------------------------------------------------- kubectl get --raw


@pytest.mark.parametrize("api_version", API_VERSIONS)
def test_kubectl_get_raw_api_succeeds_with_the_token_latchkey_hands_it(lk, idp_a, cluster, api_version):
    signed_in(lk, idp_a)
    configured(lk, cluster, api_version=api_version)
    result = cluster.kubectl("get", "--raw", "/api")
    assert result.returncode == EX_OK, result
    assert json.loads(result.stdout)["kind"] == "APIVersions"
    answered = [seen for seen in cluster.server.requests_to("/api") if seen.status == 200]
    assert answered and answered[-1].user == ALICE, cluster.server.seen
    assert answered[-1].token == lk.token("a"), "the account's own access token reached the API server"
    assert result.stderr == "", "the plugin writes nothing kubectl shows when all is well"


def test_the_plugin_answers_in_the_version_kubectl_asked_and_writes_nothing_else_to_stdout(lk, idp_a):
    signed_in(lk, idp_a)
    for version in (V1BETA1, V1):
        info = json.dumps({"kind": "ExecCredential", "apiVersion": version, "spec": {"interactive": False}})
        result = lk.run("kubectl-credential", "a", env={"KUBERNETES_EXEC_INFO": info})
        assert result.code == EX_OK, result
        answer = json.loads(result.stdout)
        assert answer["apiVersion"] == version and answer["kind"] == "ExecCredential"
        assert answer["status"]["token"] == lk.token("a")
        expiry = answer["status"]["expirationTimestamp"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", expiry), expiry
        assert result.stderr == "", result


def test_after_the_token_expires_kubectl_gets_a_refreshed_one_from_the_plugin(lk, idp_short, cluster_for):
    """One long-lived kubectl (`kubectl proxy`) keeps the credential until its
    expirationTimestamp, then runs the plugin again: a request after the access token expired
    succeeds only if the timestamp was no later than the token's own expiry."""
    cluster = cluster_for(idp_short)
    signed_in(lk, idp_short)
    configured(lk, cluster)
    proxy = subprocess.Popen([KUBECTL, "proxy", "--port=0"], env=cluster.env(), cwd=lk.root, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                             preexec_fn=_die_with_parent)
    try:
        line = proxy.stdout.readline()
        port = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert port, f"kubectl proxy said {line!r}"
        base = f"http://127.0.0.1:{port.group(1)}"

        def get() -> int:
            return requests.get(f"{base}/api", timeout=30).status_code

        started = time.monotonic()
        assert get() == 200
        assert get() == 200, "a second request within the token's lifetime"
        time.sleep(max(0.0, SHORT_TOKEN_SECONDS + 1.5 - (time.monotonic() - started)))
        assert get() == 200, f"after the first token expired: {cluster.server.seen}"
    finally:
        os.killpg(proxy.pid, 9)
        proxy.wait()
    tokens = [seen.token for seen in cluster.server.requests_to("/api")]
    assert [seen.status for seen in cluster.server.requests_to("/api")] == [200, 200, 200], cluster.server.seen
    assert tokens[0] == tokens[1], "kubectl kept the credential while it was valid"
    assert tokens[2] != tokens[0], "and asked the plugin again once it expired"
    assert all(seen.user == ALICE for seen in cluster.server.requests_to("/api"))


def test_with_no_account_and_no_terminal_kubectl_prints_latchkeys_one_line_and_fails(lk, idp_a, cluster):
    lk.add_provider("a", idp_a)
    configured(lk, cluster)
    result = cluster.kubectl("get", "--raw", "/api")
    assert result.returncode != 0, result
    # One line per run of the plugin: Google's kubectl package runs it twice, once in the
    # dispatcher that asks the server's version first.
    lines = [line for line in result.stderr.splitlines() if line.startswith("latchkey:")]
    assert lines and set(lines) == {"latchkey: no account is signed in at a; run `latchkey login a`"}, result.stderr
    assert not cluster.server.requests_to("/api") or all(s.status == 401 for s in cluster.server.seen)


def test_at_a_terminal_kubectl_signs_the_account_in_through_the_plugin(tmux, lk, idp_a, cluster):
    lk.add_provider("a", idp_a)
    configured(lk, cluster)
    out, rc = lk.root / "api.json", lk.root / "rc"
    tmux.start(f"{KUBECTL} get --raw /api > {out}; echo $? > {rc}", cluster.env(TERM="tmux-256color"))
    tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=90, what="kubectl to finish")
    screen = tmux.capture(joined=True)
    assert rc.read_text().strip() == "0", screen
    assert json.loads(out.read_text())["kind"] == "APIVersions"
    assert "Signing in to" in screen, "the sign-in's messages reach the terminal on stderr"
    (account,) = lk.status()
    assert account["account"] == ALICE


def test_a_bare_provider_follows_the_directory_kubectl_runs_in(lk, idp_a, cluster):
    lk.add_provider("a", idp_a)
    assert lk.login("a", user="alice").code == EX_OK
    assert lk.login("a", user="bob").code == EX_OK
    lk.ok("default", f"a:{BOB}")
    work = lk.root / "work"
    (work / "deploy").mkdir(parents=True)
    config = lk.config / "latchkey" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[directories."{work}"]\na = "{ALICE}"\n')
    configured(lk, cluster)
    for directory, expected in ((work / "deploy", ALICE), (lk.root, BOB)):
        before = len(cluster.server.seen)
        result = cluster.kubectl("get", "--raw", "/api", cwd=directory)
        assert result.returncode == EX_OK, result
        assert [s.user for s in cluster.server.seen[before:] if s.path == "/api"] == [expected]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("info, says", [
    (None, "KUBERNETES_EXEC_INFO is not set"),
    ("{not json", "KUBERNETES_EXEC_INFO is not JSON"),
    ('{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1","spec":{}}',
     '"client.authentication.k8s.io/v1alpha1"; Latchkey answers client.authentication.k8s.io/v1 or '
     "client.authentication.k8s.io/v1beta1"),
])
def test_a_malformed_kubernetes_exec_info_is_one_clear_line_and_changes_nothing(lk, idp_a, info, says):
    signed_in(lk, idp_a)
    vault = lk.vault_bytes()
    result = lk.run("kubectl-credential", "a", env={"KUBERNETES_EXEC_INFO": info})
    assert result.code == EX_USAGE and result.stdout == "", result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("latchkey: ") and says in lines[0], result
    assert lk.vault_bytes() == vault


# --------------------------------------------------------------------------- latchkey kubeconfig


def test_kubeconfig_write_adds_the_user_and_context_with_kubectl_after_a_backup(lk, idp_a, cluster):
    signed_in(lk, idp_a)
    cluster.write_config("users: []\ncontexts: []\n")
    original = cluster.kubeconfig.read_bytes()
    result = lk.run("kubeconfig", "a", "--cluster", "test", "--write", "--kubeconfig", str(cluster.kubeconfig),
                    env={"PATH": cluster.env()["PATH"]})
    assert result.code == EX_OK, result
    backups = list(lk.root.glob("kubeconfig.latchkey-backup-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == original, backups
    assert oct(backups[0].stat().st_mode & 0o777) == "0o600"
    assert str(backups[0]) in result.stderr
    view = json.loads(cluster.kubectl("config", "view", "-o", "json").stdout)
    (user,) = view["users"]
    assert user["name"] == "latchkey-a"
    assert user["user"]["exec"]["command"] == "latchkey" and user["user"]["exec"]["args"] == ["kubectl-credential", "a"]
    assert user["user"]["exec"]["apiVersion"] == V1BETA1
    assert view["contexts"] == [{"name": "test", "context": {"cluster": "test", "user": "latchkey-a"}}]
    # The written entries work: kubectl signs in with them.
    result = cluster.kubectl("--context", "test", "get", "--raw", "/api")
    assert result.returncode == EX_OK, result
    # A second run keeps the first backup and makes another.
    assert lk.run("kubeconfig", "a", "--cluster", "test", "--write", "--kubeconfig", str(cluster.kubeconfig),
                  env={"PATH": cluster.env()["PATH"]}).code == EX_OK
    assert len(list(lk.root.glob("kubeconfig.latchkey-backup-*"))) == 2


def test_kubeconfig_write_for_a_cluster_the_file_lacks_changes_nothing(lk, idp_a, cluster):
    cluster.write_config("users: []\ncontexts: []\n")
    original = cluster.kubeconfig.read_bytes()
    result = lk.run("kubeconfig", "a", "--cluster", "prod", "--write", env={"PATH": cluster.env()["PATH"],
                                                                              "KUBECONFIG": str(cluster.kubeconfig)})
    assert result.code != EX_OK, result
    assert result.stderr.strip() == f"latchkey: {cluster.kubeconfig} has no cluster prod (it has test); " \
                                    "add it first with kubectl config set-cluster", result
    assert cluster.kubeconfig.read_bytes() == original
    assert not list(lk.root.glob("kubeconfig.latchkey-backup-*"))
