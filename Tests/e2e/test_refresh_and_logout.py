"""Refreshing access tokens, and signing out (RFC 7009 revocation)."""

import time

import requests

from conftest import (
    ALICE, BOB, CLIENT_ID, EX_NO_ACCOUNT, EX_OK, SHORT_TOKEN_SECONDS, assert_userinfo,
)

TOKEN_POST = "POST /o/token/"
REVOKE_POST = "POST /o/revoke_token/"


def test_an_expired_access_token_is_refreshed_once_before_it_is_printed(lk, idp_short):
    lk.add_provider("a", idp_short)
    signed_in = lk.login("a")
    assert signed_in.code == EX_OK, signed_in
    signed_in_at = time.monotonic()
    posts = idp_short.count(TOKEN_POST)

    old = lk.token("a", "--min-ttl", "0")
    assert idp_short.count(TOKEN_POST) == posts, "a still valid token needs no token request"

    time.sleep(max(0.0, SHORT_TOKEN_SECONDS + 1 - (time.monotonic() - signed_in_at)))
    assert idp_short.userinfo(old).status_code == 401, "the old token has expired at the IdP"

    new = lk.token("a")
    assert new != old
    assert idp_short.count(TOKEN_POST) == posts + 1, idp_short.requests_log()[-10:]
    assert_userinfo(idp_short, new, ALICE)


def test_a_refresh_rotates_the_refresh_token_and_the_rotation_is_kept(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    first = lk.token("a")
    posts = idp_a.count(TOKEN_POST)
    # The IdP rotates refresh tokens and rejects a used one, so the second
    # refresh only works if the first one stored the new refresh token.
    # `refresh` spends the refresh token now (a 1-hour token is not refreshed for --min-ttl
    # alone: the margin is capped at half the token's lifetime).
    lk.ok("refresh", "a")
    second = lk.token("a")
    lk.ok("refresh", "a")
    third = lk.token("a")
    assert len({first, second, third}) == 3
    assert idp_a.count(TOKEN_POST) == posts + 2
    assert_userinfo(idp_a, third, ALICE)
    (account,) = lk.status()
    assert account["last_error"] is None and account["refresh_token"] is True, account


def test_a_valid_token_is_printed_without_any_token_request(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    posts = idp_a.count(TOKEN_POST)
    first = lk.token("a")
    second = lk.token("a")
    assert first == second
    assert idp_a.count(TOKEN_POST) == posts, idp_a.requests_log()[-10:]
    assert_userinfo(idp_a, first, ALICE)


def test_logout_revokes_the_grant_at_the_provider_and_forgets_the_account(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    access = lk.token("a")
    refresh = idp_a.refresh_token_for(access)
    assert_userinfo(idp_a, access, ALICE)
    revocations = idp_a.count(REVOKE_POST)

    result = lk.run("logout", "a")
    assert result.code == EX_OK, result
    assert result.stdout == ""
    assert idp_a.count(REVOKE_POST) > revocations, "logout sends a revocation request"

    assert idp_a.userinfo(access).status_code == 401, "the printed access token no longer works"
    reuse = requests.post(f"{idp_a.issuer}/token/", timeout=15, data={
        "grant_type": "refresh_token", "refresh_token": refresh, "client_id": CLIENT_ID})
    assert reuse.status_code == 400 and reuse.json().get("error") == "invalid_grant", reuse.text
    assert lk.status() == []

    after = lk.run("token", "a")
    assert after.code == EX_NO_ACCOUNT, after
    assert after.stdout == ""


def test_logout_of_one_account_keeps_the_other_accounts(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    assert lk.login("a", user="bob").code == EX_OK
    alice = lk.token(f"a:{ALICE}")

    result = lk.run("logout", f"a:{BOB}")
    assert result.code == EX_OK, result
    assert [a["account"] for a in lk.status()] == [ALICE]
    assert lk.token("a") == alice
    assert_userinfo(idp_a, alice, ALICE)


def test_a_token_shorter_lived_than_min_ttl_is_reused_until_half_its_lifetime_is_gone(lk, idp_short):
    """Tokens live SHORT_TOKEN_SECONDS (4 s), less than the default --min-ttl of 60 s: the margin is
    capped at half the lifetime, so calls right after a refresh reuse the token instead of
    refreshing on every call."""
    lk.add_provider("a", idp_short)
    assert lk.login("a").code == EX_OK
    first = lk.token("a")  # may refresh, if the sign-in took longer than half the lifetime
    posts = idp_short.count(TOKEN_POST)
    again = lk.token("a")
    assert first == again and idp_short.count(TOKEN_POST) == posts, idp_short.requests_log()[-10:]
    time.sleep(SHORT_TOKEN_SECONDS / 2 + 0.5)
    later = lk.token("a")
    assert later != first and idp_short.count(TOKEN_POST) == posts + 1
