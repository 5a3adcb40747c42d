"""docker-credential-latchkey, the container credential helper, tested with the real skopeo and an
--authfile naming it in credHelpers, against a local registry endpoint that checks the Basic
credentials against the test IdP (integration_servers.RegistryServer); and the protocol's other
actions driven as a client drives them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import ALICE, BOB, EX_OK, EX_USAGE, LATCHKEY_BIN, _die_with_parent
from integration_servers import RegistryServer, make_certificates

SKOPEO = shutil.which("skopeo")
REGISTRY_USERNAME = "oauth2accesstoken"


class Registry:
    """The registry endpoint, docker-credential-latchkey on PATH (a link to the launcher, as
    scripts/install makes it), and an auth.json naming it for both of the endpoint's names."""

    def __init__(self, lk, idp, username: str = REGISTRY_USERNAME):
        self.lk = lk
        certificates = make_certificates(lk.root / "pki")
        self.server = RegistryServer(certificates, idp.userinfo_endpoint, username)
        self.mapped = f"127.0.0.1:{self.server.port}"
        self.unmapped = f"localhost:{self.server.port}"
        self.cert_dir = lk.root / "certs"
        self.cert_dir.mkdir()
        shutil.copy(certificates.ca, self.cert_dir / "ca.crt")
        self.bin = lk.root / "bin"
        self.bin.mkdir()
        self.helper = self.bin / "docker-credential-latchkey"
        self.helper.symlink_to(LATCHKEY_BIN)
        self.authfile = lk.root / "auth.json"
        self.authfile.write_text(json.dumps({"credHelpers": {self.mapped: "latchkey", self.unmapped: "latchkey"}}))

    def env(self, **extra) -> dict:
        return self.lk.env(PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}", **extra)

    def skopeo(self, host: str, cwd=None) -> subprocess.CompletedProcess:
        image = f"docker://{host}/{RegistryServer.REPOSITORY}:{RegistryServer.TAG}"
        return subprocess.run([SKOPEO, "inspect", "--authfile", str(self.authfile), "--cert-dir", str(self.cert_dir), image],
                              env=self.env(), cwd=cwd or self.lk.root, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=120, start_new_session=True, preexec_fn=_die_with_parent)

    def helper_run(self, action: str, request: str = "", cwd=None) -> subprocess.CompletedProcess:
        """The helper run as a client runs it: by its name, the request on stdin."""
        return subprocess.run([str(self.helper), action], input=request, env=self.env(), cwd=cwd or self.lk.root,
                              capture_output=True, text=True, timeout=90, start_new_session=True,
                              preexec_fn=_die_with_parent)


@pytest.fixture
def registry(lk, idp_a):
    registry = Registry(lk, idp_a)
    yield registry
    registry.server.stop()


def signed_in(lk, idp, registry, **fields) -> None:
    lk.add_provider("a", idp, registry_hosts=[registry.mapped], **fields)
    assert lk.login("a").code == EX_OK


# --------------------------------------------------------------------------- skopeo


@pytest.mark.skipif(SKOPEO is None, reason="skopeo is not installed (scripts/setup installs it)")
def test_skopeo_inspect_succeeds_for_a_mapped_host_with_the_accounts_token(lk, idp_a, registry):
    signed_in(lk, idp_a, registry)
    result = registry.skopeo(registry.mapped)
    assert result.returncode == EX_OK, result
    inspected = json.loads(result.stdout)
    assert inspected["Digest"] == registry.server.manifest_digest
    assert inspected["Labels"] == {"org.example.latchkey": "registry-test"}
    accepted = [seen for seen in registry.server.seen if seen.status == 200]
    assert accepted and all(seen.user == ALICE for seen in accepted), registry.server.seen
    assert accepted[-1].token == lk.token("a")


@pytest.mark.skipif(SKOPEO is None, reason="skopeo is not installed (scripts/setup installs it)")
def test_skopeo_inspect_gets_no_credentials_for_an_unmapped_host(lk, idp_a, registry):
    signed_in(lk, idp_a, registry)
    result = registry.skopeo(registry.unmapped)
    assert result.returncode != 0, result
    assert "unauthorized" in result.stderr.lower() or "authentication required" in result.stderr.lower(), result
    # skopeo tries once more with an empty Basic user and password: nothing either.
    assert registry.server.seen and all(not seen.token for seen in registry.server.seen), \
        "no credential was sent to a host no provider maps"


@pytest.mark.skipif(SKOPEO is None, reason="skopeo is not installed (scripts/setup installs it)")
def test_skopeo_with_a_bare_provider_uses_the_account_mapped_to_its_directory(lk, idp_a, registry):
    lk.add_provider("a", idp_a, registry_hosts=[registry.mapped])
    assert lk.login("a", user="alice").code == EX_OK
    assert lk.login("a", user="bob").code == EX_OK
    lk.ok("default", f"a:{ALICE}")
    work = lk.root / "work"
    work.mkdir()
    config = lk.config / "latchkey" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[directories."{work}"]\na = "{BOB}"\n')
    result = registry.skopeo(registry.mapped, cwd=work)
    assert result.returncode == EX_OK, result
    assert {seen.user for seen in registry.server.seen if seen.status == 200} == {BOB}


# --------------------------------------------------------------------------- the protocol's actions


def test_get_answers_server_url_username_and_a_fresh_access_token(lk, idp_a, registry):
    signed_in(lk, idp_a, registry)
    result = registry.helper_run("get", f"https://{registry.mapped}/v2/")
    assert result.returncode == EX_OK, result
    assert json.loads(result.stdout) == {"ServerURL": f"https://{registry.mapped}/v2/", "Username": REGISTRY_USERNAME,
                                         "Secret": lk.token("a")}
    assert result.stderr == ""


def test_get_gives_the_identity_token_form_when_registry_username_says_so(lk, idp_a, registry):
    signed_in(lk, idp_a, registry, registry_username="<token>")
    answer = json.loads(registry.helper_run("get", registry.mapped).stdout)
    assert answer["Username"] == "<token>" and answer["Secret"] == lk.token("a")


def test_get_for_an_unknown_host_says_the_protocols_not_found_and_nothing_else(lk, idp_a, registry):
    signed_in(lk, idp_a, registry)
    vault = lk.vault_bytes()
    result = registry.helper_run("get", "registry.elsewhere.example")
    assert result.returncode != 0 and result.stdout == "credentials not found in native keychain\n", result
    assert lk.vault_bytes() == vault


def test_list_names_every_mapped_host(lk, idp_a, registry):
    lk.add_provider("a", idp_a, registry_hosts=[registry.mapped, "Europe-Docker.pkg.dev"])
    lk.add_provider("b", idp_a, registry_hosts=["r.example.test:5000"], registry_username="<token>")
    result = registry.helper_run("list")
    assert result.returncode == EX_OK, result
    assert json.loads(result.stdout) == {registry.mapped: REGISTRY_USERNAME, "europe-docker.pkg.dev": REGISTRY_USERNAME,
                                         "r.example.test:5000": "<token>"}


def test_store_and_erase_say_latchkey_owns_the_credentials_and_do_not_fail_docker_login(lk, idp_a, registry):
    signed_in(lk, idp_a, registry)
    vault = lk.vault_bytes()
    stored = registry.helper_run("store", json.dumps({"ServerURL": registry.mapped, "Username": "alice",
                                                      "Secret": "fake-registry-password"}))
    assert stored.returncode == EX_OK and stored.stdout == "", stored
    assert stored.stderr.strip() == f"latchkey: nothing to store for {registry.mapped}: Latchkey signs in to it itself " \
                                    "(registry_hosts of provider a)", stored
    assert "fake-registry-password" not in stored.stderr
    erased = registry.helper_run("erase", registry.mapped)
    assert erased.returncode == EX_OK and erased.stdout == "", erased
    assert "nothing to erase" in erased.stderr
    assert lk.vault_bytes() == vault, "neither touched the vault"
    assert "fake-registry-password" not in "".join(p.read_text(errors="replace") for p in lk.files())


@pytest.mark.parametrize("action, request_text, says", [
    ("get", "ftp://registry.example.test", '"ftp://registry.example.test" is not a registry server URL'),
    ("store", "registry.example.test", "store expects a JSON object with ServerURL, Username and Secret"),
    ("version", "", 'unknown credential helper action "version"'),
])
def test_a_malformed_request_is_one_line_on_stdout_where_clients_quote_it(lk, idp_a, registry, action, request_text, says):
    signed_in(lk, idp_a, registry)
    vault = lk.vault_bytes()
    result = registry.helper_run(action, request_text)
    assert result.returncode == EX_USAGE, result
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("latchkey: ") and says in lines[0], result
    assert lk.vault_bytes() == vault


def test_get_with_no_account_and_no_terminal_says_which_command_to_run(lk, idp_a, registry):
    lk.add_provider("a", idp_a, registry_hosts=[registry.mapped])
    result = registry.helper_run("get", registry.mapped)
    assert result.returncode != 0, result
    assert result.stdout == "latchkey: no account is signed in at a; run `latchkey login a`\n", result
