"""The full-screen interface (`latchkey screen`) in a real terminal: tmux send-keys / capture-pane."""

import re
import time

import pytest

from conftest import ALICE, Latchkey, assert_userinfo
from tui_support import colour_codes, screen_command, screen_env, tmux  # noqa: F401 (fixture)

COUNTDOWN = re.compile(r"\b(\d\d):(\d\d)\b")


def two_providers(lk: Latchkey, idp_a, idp_b) -> None:
    lk.add_provider("a", idp_a, display_name="IdP A")
    lk.add_provider("b", idp_b, display_name="IdP B")


def open_screen(tmux, lk: Latchkey, *args: str, **env) -> str:
    tmux.start(screen_command(*args), screen_env(lk, **env))
    return tmux.wait_text("q quit")


def account_row(text: str) -> str:
    return next(line for line in text.splitlines() if ALICE in line and "signed in" in line)


def test_the_list_shows_both_local_providers_signed_out(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    text = open_screen(tmux, lk)
    assert "Latchkey" in text.splitlines()[0]
    for name in ("IdP A (a)", "IdP B (b)"):
        line = next(line for line in text.splitlines() if name in line)
        assert "signed out" in line
    # The detail pane of the first provider shows its own redirect URI (the mix-up defence).
    assert "http://127.0.0.1:PORT/oauth2redirect/a" in text
    assert idp_a.issuer in text
    tmux.send("q")
    tmux.wait_for(lambda _: tmux.pane_dead(), what="latchkey to exit on q")


def test_signing_in_through_the_screen_shows_the_account_and_a_live_countdown(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    open_screen(tmux, lk)
    tmux.send("Enter")
    text = tmux.wait_for(lambda t: account_row_or_none(t) is not None, timeout=40, what="alice signed in")
    first = COUNTDOWN.search(account_row(text).split(ALICE, 1)[1])
    assert first, account_row(text)
    assert 55 <= int(first.group(1)) <= 60
    time.sleep(2.2)
    later = COUNTDOWN.search(account_row(tmux.capture()).split(ALICE, 1)[1])
    assert later and later.group(0) != first.group(0), "the countdown moves every second"
    assert "Signed in to IdP A as alice@example.test" in tmux.capture()
    # Stored for real: the command line sees the same account.
    tmux.send("q")
    tmux.wait_for(lambda _: tmux.pane_dead(), what="exit")
    (account,) = lk.status()
    assert account["provider"] == "a" and account["account"] == ALICE


def account_row_or_none(text: str):
    try:
        return account_row(text)
    except StopIteration:
        return None


def test_c_copies_the_access_token_with_osc52_and_never_draws_it(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    lk.login("a")
    token = lk.token("a")
    open_screen(tmux, lk)
    tmux.wait_text(ALICE)
    tmux.send("j")
    tmux.send("c")
    tmux.wait_text("Copied the access token")
    assert tmux.clipboard() == token
    assert token not in tmux.capture() and token[:16] not in tmux.capture(escapes=True)


def test_resizing_to_40x12_and_smaller_and_back_redraws_cleanly(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    open_screen(tmux, lk)
    tmux.resize(40, 12)
    text = tmux.wait_for(lambda t: "IdP B" in t and len(t.splitlines()) <= 12, what="the 40x12 layout")
    assert all(len(line) <= 40 for line in text.splitlines())
    tmux.resize(39, 11)
    tmux.wait_text("Make the window larger")
    tmux.resize(120, 40)
    text = tmux.wait_for(lambda t: "IdP A (a)" in t and "q quit" in t and "larger" not in t, what="the full layout again")
    assert "STORE" in text  # the backend column comes back at this width


def test_no_color_draws_without_colour_codes(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    open_screen(tmux, lk, NO_COLOR="1")
    assert colour_codes(tmux.capture(escapes=True)) == []
    tmux.send("q")
    tmux.wait_for(lambda _: tmux.pane_dead(), what="exit")


def test_without_no_color_the_screen_uses_colours(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    open_screen(tmux, lk)
    assert colour_codes(tmux.capture(escapes=True)), "expected colours when NO_COLOR is not set"


def test_an_idp_error_description_with_escape_sequences_is_rendered_inert(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    open_screen(tmux, lk, LATCHKEY_TEST_UA_TAMPER="error=access_denied",
                LATCHKEY_TEST_UA_ERROR_DESCRIPTION="\x1b]2;pwned\x07\x1b[2Jgone")
    title_before = tmux.pane_title()
    tmux.send("Enter")
    text = tmux.wait_text("Sign-in failed", timeout=40)
    assert "access_denied" in text
    assert "\\x1B" in text, "the escape is shown as text"
    assert "IdP A (a)" in text, "the screen was not cleared by the description"
    assert tmux.pane_title() == title_before != "pwned"


@pytest.mark.parametrize("key, trap, status", [("C-c", "INT", 130), ("C-\\", "QUIT", 131)], ids=["ctrl-c", "ctrl-backslash"])
def test_ctrl_c_and_ctrl_backslash_restore_the_terminal(tmux, lk, idp_a, idp_b, key, trap, status):
    two_providers(lk, idp_a, idp_b)
    out = lk.root / "stty"
    # The shell traps the signal (a trap, unlike ignoring, is reset for latchkey) so it lives on to run stty.
    command = f"trap : {trap}; stty -a > {out}.before; {screen_command()}; echo $? > {out}.rc; stty -a > {out}.after"
    tmux.start(command, screen_env(lk))
    tmux.wait_text("q quit")
    tmux.send(key)
    tmux.wait_for(lambda _: (lk.root / "stty.after").exists() and (lk.root / "stty.after").stat().st_size > 0,
                  what="stty after the screen")
    assert (lk.root / "stty.after").read_text() == (lk.root / "stty.before").read_text()
    assert (lk.root / "stty.rc").read_text().strip() == str(status)


def test_an_unknown_term_falls_back_to_the_plain_status(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    # The short sleep lets tmux finish setting up the pane before the message is printed.
    tmux.start("sleep 0.3; " + screen_command() + "; echo rc=$?", screen_env(lk, TERM="nosuchterm"))
    tmux.wait_text("rc=")
    text = tmux.capture(joined=True)
    assert "unknown here" in text and "latchkey status" in text
    assert "a — IdP A (signed out)" in text
    assert "rc=0" in text


# ---- device code, paste and second factor

CODE_LINE = re.compile(r"^\s{3}([0-9A-Za-z-]{4,})\s+\(to copy\)", re.M)
URL_AFTER_OPEN = re.compile(r"On any device, open\s*(?:\S.*)?\n\s(https?://\S+)")


def test_device_code_sign_in_through_the_screen_adds_the_account(tmux, lk, idp_a):
    lk.add_device_provider("dev", idp_a)
    open_screen(tmux, lk)
    tmux.send("Enter")
    text = tmux.wait_text("(to copy)", timeout=30)
    assert "Client latchkey-test-device asks to sign in." in text
    assert "Only continue if you started this yourself" in text
    assert "▀" in text and "█" in text, "the QR code and the large code are drawn"
    code = CODE_LINE.search(text).group(1)
    url = URL_AFTER_OPEN.search(text).group(1)
    assert url.startswith(idp_a.issuer.rsplit("/o", 1)[0]) and "/device" in url
    # The person approves on another device: the scripted user agent types the code shown.
    agent = lk.run_user_agent(url, LATCHKEY_TEST_UA_USER_CODE=code.replace("-", ""))
    assert agent.returncode == 0, agent
    text = tmux.wait_for(lambda t: account_row_or_none(t) is not None, timeout=40, what="alice signed in by device code")
    assert "Signed in to IdP device as alice@example.test" in text
    tmux.send("q")
    tmux.wait_for(lambda _: tmux.pane_dead(), what="exit")
    (account,) = lk.status()
    assert account["provider"] == "dev" and account["account"] == ALICE


def pasted_address(text: str, after: str = "1. Open this address") -> str:
    """The authorization URL a sign-in screen drew below `after`, its pieces joined (one piece per row)."""
    rows = text.splitlines()
    first = next(i for i, row in enumerate(rows) if after in row) + 2
    pieces = []
    for row in rows[first:]:
        if not row.strip():
            break
        pieces.append(row)
    return "".join(pieces)


def test_p_switches_to_pasting_the_redirect_url_which_signs_in(tmux, lk, idp_a, idp_b):
    two_providers(lk, idp_a, idp_b)
    # The browser here does nothing: the person signs in on another machine.
    open_screen(tmux, lk, BROWSER="/bin/true")
    tmux.send("Enter")
    tmux.wait_text("p paste URL instead")
    tmux.send("p")
    text = tmux.wait_text("Paste it here and press Enter")
    authorization = pasted_address(text)
    assert authorization.startswith(idp_a.issuer) and "redirect_uri=" in authorization
    save = lk.new_save_path()
    agent = lk.run_user_agent(authorization, LATCHKEY_TEST_UA_TAMPER=f"save={save}")
    assert agent.returncode == 0, agent
    url = save.read_text()
    assert "/oauth2redirect/a?" in url
    tmux.send("-l", url)
    text = tmux.wait_text(f"{len(url)} characters")
    assert url not in text and url[:40] not in text, "only the end of the pasted URL is shown"
    tmux.send("Enter")
    text = tmux.wait_for(lambda t: account_row_or_none(t) is not None, timeout=40, what="alice signed in by paste")
    assert "Signed in to IdP A as alice@example.test" in text


def test_firebase_sign_in_with_the_second_phone_through_the_screen(tmux, lk, tmp_path):
    from emulator_support import Emulator

    seed = {"projectId": "demo-latchkey", "users": [{
        "localId": "alice", "email": ALICE, "password": "correct horse battery staple",
        "mfaInfo": [
            {"mfaEnrollmentId": "work", "displayName": "Work phone", "phoneInfo": "+15555550100"},
            {"mfaEnrollmentId": "home", "displayName": "Home phone", "phoneInfo": "+15555550199"},
        ]}]}
    emulator = Emulator(tmp_path / "emulator", seed).wait_ready()
    try:
        emulator.add_provider(lk, "fb", "Emulated")
        open_screen(tmux, lk)
        tmux.send("Enter")
        tmux.wait_text("Email and password")
        tmux.send("-l", ALICE)
        tmux.send("Enter")
        tmux.send("-l", "correct horse battery staple")
        text = tmux.wait_text("•" * 20)  # the screen draws the keys when it has read them
        assert "correct horse" not in text
        known = emulator.sessions()
        tmux.send("Enter")
        text = tmux.wait_text("Use which one?")
        assert "1  Work phone  +*******0100" in text and "2  Home phone  +*******0199" in text
        assert "5555550" not in text, "no unmasked number"
        tmux.send("2")
        tmux.wait_text("Code sent to +*******0199 by SMS.")
        code = emulator.new_code("+15555550199", known)
        wrong = "000000" if code != "000000" else "111111"
        tmux.send("-l", wrong)
        tmux.send("Enter")
        tmux.wait_text("the verification code is wrong")
        tmux.send("-l", code)
        tmux.send("Enter")
        text = tmux.wait_text("(second factor: phone)", timeout=30)
        assert "Signed in to Emulated as alice@example.test" in text
        tmux.send("j")
        tmux.wait_text("Second factor  phone")
        # e on the account enrolls a third phone: the code goes to the full number, the screen
        # shows it masked.
        tmux.send("e")
        tmux.wait_text("Enroll a phone as second factor")
        tmux.send("-l", "+15555550142")
        tmux.send("Tab")
        tmux.send("-l", "Desk phone")
        known = emulator.sessions()
        tmux.send("Enter")
        tmux.wait_text("Code sent to +*******0142 by SMS.")
        tmux.send("-l", emulator.new_code("+15555550142", known))
        tmux.send("Enter")
        tmux.wait_text("Enrolled the phone for alice@example.test", timeout=30)
        (account,) = lk.status()
        assert account["provider"] == "fb" and account["account"] == ALICE
    finally:
        emulator.stop()


def test_firebase_sign_in_whose_first_factor_is_the_browser_sign_in_of_another_provider(tmux, lk, idp_a, tmp_path):
    from emulator_support import Emulator

    # The emulator knows alice by her subject at the test IdP (signInWithIdp, providerId oidc.a).
    lk.add_provider("a", idp_a)
    signed_in = lk.login("a")
    assert signed_in.code == 0, signed_in
    (first,) = lk.status()
    seed = {"projectId": "demo-latchkey", "users": [{
        "localId": "alice", "email": ALICE,
        "federatedIdentities": [{"providerId": "oidc.a", "rawId": first["subject"]}],
        "mfaInfo": [{"mfaEnrollmentId": "work", "displayName": "Work phone", "phoneInfo": "+15555550100"}]}]}
    emulator = Emulator(tmp_path / "emulator", seed).wait_ready()
    try:
        path = emulator.add_provider(lk, "fb", "Emulated")
        path.write_text(path.read_text() + 'first_factor = "provider:a"\n')
        # The browser here does nothing: the person opens the address the screen shows.
        open_screen(tmux, lk, BROWSER="/bin/true")
        tmux.send("G")  # fb, the last row (after a and its account)
        tmux.send("Enter")
        text = tmux.wait_text("Sign in to IdP A (first factor of Emulated)")
        text = tmux.wait_text("If no browser opened, open this address:")
        authorization = pasted_address(text, after="If no browser opened")
        assert authorization.startswith(idp_a.issuer) and "redirect_uri=" in authorization
        known = emulator.sessions()
        agent = lk.run_user_agent(authorization)
        assert agent.returncode == 0, agent
        text = tmux.wait_text("Use which one?", timeout=30)
        assert "1  Work phone  +*******0100" in text
        tmux.send("1")
        tmux.wait_text("Code sent to +*******0100 by SMS.")
        tmux.send("-l", emulator.new_code("+15555550100", known))
        tmux.send("Enter")
        text = tmux.wait_text("(second factor: phone)", timeout=30)
        assert "Signed in to Emulated as alice@example.test" in text
        tmux.send("q")
        tmux.wait_for(lambda _: tmux.pane_dead(), what="exit")
        accounts = {account["provider"]: account["account"] for account in lk.status()}
        assert accounts == {"a": ALICE, "fb": ALICE}
    finally:
        emulator.stop()


def test_enter_on_an_account_row_signs_that_account_in_again_and_n_adds_another(tmux, lk, idp_a, idp_b):
    """As `latchkey login a:alice@example.test`: the login hint goes out, and a browser that comes
    back as someone else is refused with nothing stored; `n` is how another account is added."""
    two_providers(lk, idp_a, idp_b)
    who = lk.root / "ua-user"
    who.write_text("alice")
    open_screen(tmux, lk, LATCHKEY_TEST_UA_USER_FILE=who)
    tmux.send("Enter")
    tmux.wait_text("Signed in to IdP A as alice@example.test")
    vault = lk.vault_bytes()
    who.write_text("bob")
    tmux.send("Enter")  # the new account's row is selected
    text = tmux.wait_text("Sign-in failed", timeout=40)
    assert "not alice@example.test" in text and "bob@example.test" in text, text
    assert lk.vault_bytes() == vault, "a refused sign-in stored something"
    who.write_text("alice")
    tmux.send("Enter")
    tmux.wait_text("Signed in again to IdP A as alice@example.test", timeout=40)
    who.write_text("bob")
    tmux.send("n")
    tmux.wait_text("Signed in to IdP A as bob@example.test", timeout=40)
    assert sorted(a["account"] for a in lk.status()) == ["alice@example.test", "bob@example.test"]


def test_plus_adds_a_provider_by_issuer_writing_only_a_file_that_loads_and_shows_it_at_once(tmux, lk, idp_a):
    """The form checks what `providers check` checks: an issuer that is no URL is reported and
    nothing is written; a good one appears on the list at once and signs in. (Named `a`: the test
    provider accepts only its registered redirect paths.)"""
    lk.add_provider("b", idp_a, display_name="IdP B")
    open_screen(tmux, lk)
    tmux.send("+")
    tmux.wait_text("OpenID provider by its issuer")
    tmux.send("End", "Enter")
    tmux.wait_text("Client ID")
    tmux.send("a", "Tab", "not a url", "Tab", "latchkey-test", "Enter")
    tmux.wait_text("would not load")
    assert not (lk.providers_dir / "a.toml").exists()
    tmux.send("Up")
    tmux.send(*["BSpace"] * 9)
    tmux.send(idp_a.issuer, "Tab", "Enter")
    tmux.wait_text("Added a")
    tmux.wait_text("a (a)")
    assert (lk.providers_dir / "a.toml").exists()
    assert lk.run("providers", "check").code == 0
    tmux.send("Enter")
    tmux.wait_text("Signed in to a as alice@example.test", timeout=40)


def test_m_makes_the_selected_account_the_one_its_provider_means_in_this_directory(tmux, lk, idp_a, idp_b):
    """The mapping goes into config.toml for the directory the screen runs in, the list marks it,
    and `latchkey token a` there answers for that account, not the default."""
    two_providers(lk, idp_a, idp_b)
    assert lk.login("a", user="alice").code == 0 and lk.login("a", user="bob").code == 0
    lk.ok("default", "a:bob@example.test")
    project = lk.root / "project"
    project.mkdir()
    tmux.start(f"cd {project} && {screen_command()}", screen_env(lk))
    tmux.wait_text("q quit")
    tmux.send("Down")  # the first account row: alice
    tmux.wait_text("alice@example.test")
    tmux.send("m")
    tmux.wait_text("now means alice")
    text = tmux.wait_text("(here)")
    assert any("alice@example.test" in line and "(here)" in line for line in text.splitlines()), text
    config = (lk.config / "latchkey" / "config.toml").read_text()
    assert f'[directories."{project.resolve()}"]' in config and 'a = "alice@example.test"' in config, config
    tmux.send("q")
    here = lk.run("token", "a", cwd=project)
    assert here.code == 0, here
    assert_userinfo(idp_a, here.stdout.strip(), "alice@example.test")
    assert_userinfo(idp_a, lk.token("a"), "bob@example.test")
