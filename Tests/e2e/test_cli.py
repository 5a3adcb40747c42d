"""Command line usage, unknown names and timeouts map to their exit statuses."""

import re
import subprocess

import pytest

from conftest import EX_NO_ACCOUNT, EX_UNAVAILABLE, EX_USAGE


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["frobnicate"], id="an unknown command"),
        pytest.param(["status", "--frobnicate"], id="an unknown option"),
        pytest.param(["login"], id="login without a provider"),
        pytest.param(["token"], id="token without a provider"),
        pytest.param(["token", "a", "--min-ttl", "soon"], id="a non-numeric --min-ttl"),
        pytest.param(["login", "a", "--timeout"], id="--timeout without a value"),
        pytest.param(["login", "a", "--paste", "--device"], id="--paste together with --device"),
    ],
)
def test_usage_errors_exit_64_without_touching_the_vault(lk, idp_a, args):
    lk.add_provider("a", idp_a)
    result = lk.run(*args)
    assert result.code == EX_USAGE, result
    assert result.stdout == "", result
    assert result.stderr.strip(), "a usage error says what is wrong"
    assert not lk.vault.exists()
    assert "start:" not in lk.ua_log_text(), "no browser was opened"


@pytest.mark.parametrize("command", [["login", "nosuch"], ["token", "nosuch"], ["logout", "nosuch"]],
                         ids=lambda c: f"{c[0]} of an unknown provider")
def test_an_unknown_provider_exits_66_and_names_it(lk, idp_a, command):
    lk.add_provider("a", idp_a)
    result = lk.run(*command, "--timeout", "5") if command[0] == "login" else lk.run(*command)
    assert result.code == EX_NO_ACCOUNT, result
    assert result.stdout == ""
    assert "nosuch" in result.stderr, result
    assert "start:" not in lk.ua_log_text(), "no browser was opened"


def test_token_without_a_signed_in_account_exits_66(lk, idp_a):
    lk.add_provider("a", idp_a)
    result = lk.run("token", "a")
    assert result.code == EX_NO_ACCOUNT, result
    assert result.stdout == ""
    assert re.search(r"login|sign", result.stderr, re.IGNORECASE), f"the message says how to sign in\n{result}"


def test_a_sign_in_that_never_comes_back_times_out_with_69(lk, idp_a):
    lk.add_provider("a", idp_a)
    result = lk.run("login", "a", "--timeout", "3", env={"BROWSER": "/bin/true"}, timeout=30)
    assert result.code == EX_UNAVAILABLE, result
    assert result.stdout == ""
    # The message says that the wait ran out, and after how long.
    assert re.search(r"timed? ?out|within 3 ?s|3 seconds", result.stderr, re.IGNORECASE), result
    assert 3 <= result.seconds < 15, result
    assert not lk.vault.exists() or lk.status() == []


def test_a_paste_sign_in_with_nothing_pasted_times_out_with_69(lk, idp_a):
    """stdin stays open and silent (a forgotten terminal): --timeout still ends the wait."""
    lk.add_provider("a", idp_a)
    running = lk.start("login", "a", "--paste", "--timeout", "3", stdin=subprocess.PIPE)
    result = running.finish(30)
    assert result.code == EX_UNAVAILABLE, result
    assert re.search(r"within 3 ?s", result.stderr), result
    assert 3 <= result.seconds < 15, result
    assert not lk.vault.exists() or lk.status() == []
