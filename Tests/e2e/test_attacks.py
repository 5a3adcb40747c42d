"""Tampered, replayed and hostile authorization responses are rejected and store nothing."""

import re
from urllib.parse import urlsplit, urlunsplit

import pytest

from conftest import (
    ALICE, EX_OK, EX_REJECTED, EX_UNAVAILABLE, accounts_of, assert_clean_stderr, assert_nothing_stored, message,
)

TOKEN_POST = "POST /o/token/"


@pytest.fixture
def two_providers(lk, idp_a, idp_b):
    lk.add_provider("a", idp_a, display_name="IdP A")
    lk.add_provider("b", idp_b, display_name="IdP B")
    return lk


def attempt(lk, idp, tamper, **env):
    """One sign-in at provider a with a tampered response; checks the common outcome:
    non-zero (76) exit, nothing on stdout, a reason on stderr, no code redeemed, nothing stored."""
    vault_before = lk.vault_bytes()
    posts = idp.count(TOKEN_POST)
    result = lk.login("a", tamper=tamper, env=env)
    assert result.code == EX_REJECTED, f"{result}\nUA log:\n{lk.ua_log_text()}"
    assert result.stdout == "", result
    assert result.stderr.strip(), "a rejected sign-in must say why"
    assert idp.count(TOKEN_POST) == posts, "a rejected response must not be exchanged for tokens"
    assert_nothing_stored(lk, vault_before)
    return result


@pytest.mark.parametrize(
    "tamper, reason",
    [
        pytest.param("iss={b}", r"iss", id="an iss naming another provider is rejected"),
        pytest.param("drop-iss", r"iss",
                     id="a response without iss is rejected when discovery promises iss"),
        pytest.param("drop-state", r"state", id="a response without state is rejected"),
        pytest.param("state=garbage", r"state", id="a response with a foreign state is rejected"),
        pytest.param("deny", r"access_denied", id="a refused consent ends the sign-in with the OAuth error"),
    ],
)
def test_tampered_authorization_response(two_providers, idp_a, idp_b, tamper, reason):
    result = attempt(two_providers, idp_a, tamper.format(b=idp_b.issuer))
    assert re.search(reason, message(result), re.IGNORECASE), f"stderr should name the reason /{reason}/\n{result}"


def test_a_response_at_another_providers_redirect_path_is_rejected(two_providers, idp_a):
    """Provider a's code delivered at provider b's path gets a 404 from a's listener, which goes
    on waiting: nothing is redeemed or stored, and the sign-in ends at its time-out."""
    lk = two_providers
    vault_before = lk.vault_bytes()
    posts = idp_a.count(TOKEN_POST)
    result = lk.login("a", tamper="path=/oauth2redirect/b", timeout=6)
    assert result.code == EX_UNAVAILABLE, f"{result}\nUA log:\n{lk.ua_log_text()}"
    assert re.search(r"/oauth2redirect/b\S* -> HTTP 404", lk.ua_log_text()), lk.ua_log_text()
    assert "no answer from the browser" in message(result), result
    assert idp_a.count(TOKEN_POST) == posts, "a response at the wrong path must not be exchanged for tokens"
    assert_nothing_stored(lk, vault_before)


def test_a_stray_request_at_another_path_does_not_end_the_sign_in(two_providers, idp_a):
    """After the 404 at provider b's path, the same response at a's own path is accepted once."""
    lk = two_providers
    posts = idp_a.count(TOKEN_POST)
    result = lk.login("a", tamper="path=/oauth2redirect/b,then-right-path")
    log = lk.ua_log_text()
    assert result.code == EX_OK, f"{result}\nUA log:\n{log}"
    assert re.search(r"/oauth2redirect/b\S* -> HTTP 404", log), log
    assert re.search(r"/oauth2redirect/a\S* -> HTTP 200", log), log
    assert idp_a.count(TOKEN_POST) == posts + 1, "the code is redeemed exactly once"
    assert [a["account"] for a in accounts_of(lk.status(), "a")] == [ALICE]


def test_an_error_description_cannot_inject_terminal_escape_sequences(two_providers, idp_a):
    hostile = "\x1b]0;pwned\x07\x1b[2Jgotcha"
    result = attempt(two_providers, idp_a, "error=access_denied", LATCHKEY_TEST_UA_ERROR_DESCRIPTION=hostile)
    assert "access_denied" in message(result), result
    assert "gotcha" in result.stderr, "the description is shown, stripped of control characters"
    assert b"\x1b" not in result.stderr_bytes and b"\x07" not in result.stderr_bytes, result
    assert_clean_stderr(result)


def test_a_callback_url_from_an_earlier_paste_sign_in_is_rejected(two_providers, idp_a):
    lk = two_providers
    first, old_url = lk.paste_login("a", lambda url: (url + "\n").encode())
    assert first.code == EX_OK, first
    vault_before = lk.vault_bytes()
    posts = idp_a.count(TOKEN_POST)

    def old_response_at_the_new_address(fresh):
        # Same scheme, host, port and path as this sign-in expects, so that only the
        # response itself (its state, code and iss) is old.
        return (urlunsplit(urlsplit(fresh)[:3] + urlsplit(old_url)[3:]) + "\n").encode()

    replayed, _ = lk.paste_login("a", old_response_at_the_new_address)
    assert replayed.code == EX_REJECTED, replayed
    assert "state" in message(replayed).lower(), replayed
    assert idp_a.count(TOKEN_POST) == posts, "the replayed code must not be sent to the token endpoint"
    assert lk.vault_bytes() == vault_before, "a rejected sign-in changed the vault"


def test_a_second_delivery_of_the_same_response_adds_nothing(two_providers, idp_a):
    lk = two_providers
    posts = idp_a.count(TOKEN_POST)
    result = lk.login("a", tamper="replay")
    assert result.code == EX_OK, f"{result}\nUA log:\n{lk.ua_log_text()}"
    assert idp_a.count(TOKEN_POST) == posts + 1, "the code is redeemed exactly once"
    accounts = lk.status()
    assert [a["account"] for a in accounts_of(accounts, "a")] == [ALICE], accounts
    assert len(accounts) == 1, accounts
