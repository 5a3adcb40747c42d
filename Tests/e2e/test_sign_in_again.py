"""Never stuck on a dead refresh token: when a refresh is refused (revoked, expired, rotated away),
`token`, `exec` and `git-credential` sign the same account in again when a person is at a
terminal, and print the token as if nothing happened; with nobody to ask they exit 66 with one
line saying which command to run."""

from __future__ import annotations

import time

import requests

from conftest import ALICE, CLIENT_ID, EX_NO_ACCOUNT, EX_OK, LATCHKEY_BIN, SHORT_TOKEN_SECONDS, assert_userinfo
from tui_support import tmux  # noqa: F401  (fixture)


def signed_in_then_revoked(lk, idp):
    """alice signed in at a; her refresh token revoked at the provider, her access token expired."""
    lk.add_provider("a", idp)
    assert lk.login("a").code == EX_OK
    started = time.monotonic()
    token = lk.token("a", "--min-ttl", "0")
    refresh = idp.refresh_token_for(token)
    revoked = requests.post(f"{idp.issuer}/revoke_token/", data={"token": refresh, "token_type_hint": "refresh_token",
                                                               "client_id": CLIENT_ID}, timeout=15)
    assert revoked.status_code == 200, revoked.text
    time.sleep(max(0.0, SHORT_TOKEN_SECONDS + 1 - (time.monotonic() - started)))
    return token


def test_with_nobody_at_a_terminal_a_refused_refresh_exits_66_with_one_line_naming_the_command(lk, idp_short):
    signed_in_then_revoked(lk, idp_short)
    result = lk.run("token", "a")
    assert result.code == EX_NO_ACCOUNT and result.stdout == "", result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"latchkey login a:{ALICE}" in lines[0], result
    (account,) = lk.status()
    assert account["account"] == ALICE, "the account is kept"


def test_at_a_terminal_a_refused_refresh_signs_the_same_account_in_again_and_prints_the_token(tmux, lk, idp_short):
    old = signed_in_then_revoked(lk, idp_short)
    out = lk.root / "token.out"
    rc = lk.root / "rc"
    tmux.start(f"{LATCHKEY_BIN} token a --min-ttl 0 > {out}; echo $? > {rc}", lk.env(TERM="tmux-256color"))
    tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=60, what="the token")
    assert rc.read_text().strip() == "0", tmux.capture(joined=True)
    token = out.read_text().strip()
    assert token and token != old
    assert_userinfo(idp_short, token, ALICE)
    assert "Signing in to" in tmux.capture(joined=True), "the sign-in's messages go to the terminal, not stdout"
    (account,) = lk.status()
    assert account["account"] == ALICE


def test_with_stderr_captured_as_the_aws_cli_does_the_sign_in_speaks_on_the_terminal_itself(tmux, lk, idp_short):
    # The AWS CLI, git and kubectl capture a helper's stderr: prompts written there would never
    # reach the person waiting at the terminal. They go to /dev/tty instead; stderr keeps nothing.
    signed_in_then_revoked(lk, idp_short)
    out, err, rc = lk.root / "token.out", lk.root / "token.err", lk.root / "rc"
    tmux.start(f"{LATCHKEY_BIN} token a --min-ttl 0 > {out} 2> {err}; echo $? > {rc}", lk.env(TERM="tmux-256color"))
    tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=60, what="the token")
    assert rc.read_text().strip() == "0", tmux.capture(joined=True) + err.read_text()
    assert "Signing in to" in tmux.capture(joined=True), "the sign-in's messages are on the terminal"
    assert "Signing in to" not in err.read_text(), err.read_text()
    assert_userinfo(idp_short, out.read_text().strip(), ALICE)


def test_at_a_terminal_a_browser_that_comes_back_as_someone_else_is_refused(tmux, lk, idp_short):
    signed_in_then_revoked(lk, idp_short)
    rc = lk.root / "rc"
    env = lk.env(TERM="tmux-256color", LATCHKEY_TEST_UA_USER="bob")
    tmux.start(f"{LATCHKEY_BIN} token a --min-ttl 0 > /dev/null; echo $? > {rc}", env)
    tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=60, what="the refusal")
    assert rc.read_text().strip() == "76", tmux.capture(joined=True)
    assert "not alice@example.test" in tmux.capture(joined=True)
    assert [a["account"] for a in lk.status()] == [ALICE]
