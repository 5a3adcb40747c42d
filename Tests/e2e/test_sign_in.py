"""Signing in through the loopback listener, the paste flow and the device flow."""

import json

import pytest
from jwcrypto import jwk, jwt

from conftest import (
    ALICE, BOB, CLIENT_ID, EX_NO_ACCOUNT, EX_OK, EX_REJECTED, Latchkey, accounts_of, assert_userinfo, jwt_parts,
)


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory, idp_a, idp_b):
    """alice signed in at two providers, a (IdP A) and b (IdP B); read-only tests share it."""
    lk = Latchkey(tmp_path_factory.mktemp("signed-in"))
    lk.add_provider("a", idp_a, display_name="IdP A")
    lk.add_provider("b", idp_b, display_name="IdP B")
    first = lk.login("a")
    second = lk.login("b")
    yield lk, first, second
    lk.close()


def test_sign_in_through_the_loopback_listener_succeeds_quietly(signed_in):
    _, first, second = signed_in
    for result in (first, second):
        assert result.code == EX_OK, result
        assert result.stdout == "", f"login must print nothing on stdout\n{result}"


def test_status_lists_one_account_per_provider_with_its_email(signed_in, idp_a, idp_b):
    lk, _, _ = signed_in
    accounts = lk.status()
    assert sorted(a["provider"] for a in accounts) == ["a", "b"], accounts
    for provider, idp in (("a", idp_a), ("b", idp_b)):
        (account,) = accounts_of(accounts, provider)
        assert account["account"] == ALICE
        assert account["issuer"] == idp.issuer
        assert account["subject"], account
        assert account["refresh_token"] is True
        assert account["keystore"] == "vault"
        assert account["last_error"] is None
        assert 3000 < account["expires_in"] <= 3600, account
        assert account["expires_at"], account


def test_token_works_at_each_providers_userinfo_endpoint(signed_in, idp_a, idp_b):
    lk, _, _ = signed_in
    token_a = lk.token("a")
    token_b = lk.token("b")
    assert token_a != token_b
    assert_userinfo(idp_a, token_a, ALICE)
    assert_userinfo(idp_b, token_b, ALICE)
    # Each IdP only knows its own tokens: nothing was mixed up between providers.
    assert idp_a.userinfo(token_b).status_code == 401
    assert idp_b.userinfo(token_a).status_code == 401


def test_status_never_shows_a_token(signed_in):
    lk, _, _ = signed_in
    tokens = [lk.token("a"), lk.token("a", "--id-token"), lk.token("b")]
    shown = lk.ok("status", "--json").stdout + lk.ok("status").stdout
    for token in tokens:
        assert token not in shown
        assert token[:24] not in shown


def test_id_token_is_a_jwt_signed_by_the_provider_for_this_client(signed_in, idp_a):
    lk, _, _ = signed_in
    id_token = lk.token("a", "--id-token")
    header, claims = jwt_parts(id_token)
    assert header.get("alg") == "RS256"
    assert claims["iss"] == idp_a.issuer
    assert claims["aud"] in (CLIENT_ID, [CLIENT_ID])
    assert claims.get("email") == ALICE
    assert claims.get("nonce"), "the ID token carries the nonce latchkey sent"
    # The signature verifies against IdP A's published keys.
    keys = jwk.JWKSet.from_json(json.dumps(idp_a.jwks()))
    jwt.JWT(jwt=id_token, key=keys, algs=["RS256"])
    assert id_token != lk.token("a")


def test_signing_in_again_as_the_same_person_updates_the_account(lk, idp_a):
    lk.add_provider("a", idp_a)
    lk.ok("login", "a", "--timeout", "30")
    before = lk.token("a")
    again = lk.login("a")
    assert again.code == EX_OK, again
    accounts = lk.status()
    assert [a["account"] for a in accounts] == [ALICE], accounts
    after = lk.token("a")
    assert after != before, "the second sign-in's tokens replace the first's"
    assert_userinfo(idp_a, after, ALICE)


def test_a_proxy_in_the_environment_is_not_used_for_a_provider_on_loopback(lk, idp_a):
    """Every proxy variable points at a closed port: discovery, the token request and the JWKS
    reach the loopback provider directly, and the sign-in succeeds."""
    lk.add_provider("a", idp_a)
    dead = "http://127.0.0.1:9"
    proxies = {name: dead for name in ("http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}
    result = lk.login("a", env={**proxies, "no_proxy": "corp.example"})
    assert result.code == EX_OK, f"{result}\nUA log:\n{lk.ua_log_text()}"
    assert [a["account"] for a in lk.status()] == [ALICE]


def test_signing_in_as_another_person_adds_a_second_account(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    bob = lk.login("a", user="bob")
    assert bob.code == EX_OK, bob
    accounts = accounts_of(lk.status(), "a")
    assert sorted(a["account"] for a in accounts) == [ALICE, BOB], accounts
    assert len({a["subject"] for a in accounts}) == 2

    ambiguous = lk.run("token", "a")
    assert ambiguous.code == EX_NO_ACCOUNT, ambiguous
    assert ambiguous.stdout == ""
    assert ALICE in ambiguous.stderr and BOB in ambiguous.stderr, ambiguous

    assert_userinfo(idp_a, lk.token(f"a:{BOB}"), BOB)
    assert_userinfo(idp_a, lk.token(f"a:{ALICE}"), ALICE)


def test_paste_flow_accepts_a_very_long_pasted_redirect_url(lk, idp_a):
    lk.add_provider("a", idp_a)
    # Unknown response parameters must be ignored (RFC 6749 section 4.1.2);
    # this one makes the pasted line far longer than a terminal line buffer.
    padding = "&latchkey_padding=" + "x" * 20000
    result, saved = lk.paste_login("a", lambda url: (url + padding + "\n").encode())
    assert "code=" in saved and "/oauth2redirect/a?" in saved
    assert result.code == EX_OK, result
    assert result.stdout == ""
    assert "/authorize/" in result.stderr, f"paste mode prints the authorization URL on stderr\n{result}"
    (account,) = lk.status()
    assert account["provider"] == "a" and account["account"] == ALICE
    assert_userinfo(idp_a, lk.token("a"), ALICE)


def test_device_flow_signs_in_without_a_redirect(lk, idp_a):
    lk.add_device_provider("dev", idp_a)
    result = lk.device_login("dev")
    assert result.code == EX_OK, f"{result}\nUA log:\n{lk.ua_log_text()}"
    assert result.stdout == ""
    (account,) = lk.status()
    assert account["provider"] == "dev" and account["account"] == ALICE, account
    assert_userinfo(idp_a, lk.token("dev"), ALICE)


def test_signing_in_again_as_one_account_refuses_another_and_stores_nothing(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    before = lk.vault.read_bytes()
    result = lk.login(f"a:{ALICE}", user="bob")
    assert result.code == EX_REJECTED, result
    assert "not alice@example.test" in result.stderr and "nothing was stored" in result.stderr, result
    assert lk.vault.read_bytes() == before
    assert [a["account"] for a in lk.status()] == [ALICE]
    again = lk.login(f"a:{ALICE}")
    assert again.code == EX_OK and "Signed in again" in again.stderr, again
