"""`latchkey demo`: the whole product with no account anywhere, in a real terminal (tmux) and
for scripts (`--no-tui`). Both demo providers run inside the latchkey process."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time

import pytest
import urllib.error
import urllib.request
from pathlib import Path

from conftest import LATCHKEY_BIN, Latchkey
from tui_support import tmux  # noqa: F401  (fixture)

CODE = re.compile(r"use the code (\d{6})")


def demo_env(lk: Latchkey, **extra) -> dict:
    """A person with nothing configured: no providers dir, no passphrase file, no browser on PATH."""
    empty = lk.root / "empty-bin"
    empty.mkdir(exist_ok=True)
    settings = {"TERM": "tmux-256color", "NO_COLOR": None, "BROWSER": None, "PATH": str(empty),
                "LATCHKEY_PROVIDERS_DIR": None, "LATCHKEY_PASSPHRASE_FILE": None}
    settings.update(extra)
    return lk.env(**settings)


def demo_command(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in [str(LATCHKEY_BIN), "demo", *args])


def leftovers(lk: Latchkey) -> list[Path]:
    """Anything the demo could have left: its TMPDIR, HOME and the XDG directories."""
    out = []
    for d in (lk.tmp, lk.home, lk.config, lk.data):
        out.extend(d.rglob("*"))
    return out


def sign_in_to_demo_firebase(tmux) -> str:
    """Choose Demo Firebase (the last provider), type its password, and return the screen
    asking which second factor to use."""
    tmux.send("G")
    tmux.send("Enter")
    tmux.wait_text("Email and password")
    tmux.send("-l", "ada@demo.test")
    tmux.send("Enter")
    tmux.send("-l", "lovelace-demo")
    tmux.wait_text("•" * 13)
    tmux.send("Enter")
    return tmux.wait_text("Use which one?", timeout=30)


def test_demo_signs_in_to_both_providers_from_the_screen_with_no_browser_and_leaves_nothing(tmux, lk):
    out = lk.root / "stty"
    command = f"/bin/stty -a > {out}.before; {demo_command()}; echo $? > {out}.rc; /bin/stty -a > {out}.after"
    tmux.start(command, demo_env(lk))
    text = tmux.wait_text("q quit")
    assert "Demo OpenID" in text and "Demo Firebase (SMS)" in text
    assert "user ada, password lovelace-demo" in text, "the demo credentials are on the screen"
    assert "SMS inbox" in text
    demo_dirs = list(lk.tmp.glob("latchkey-demo.*"))
    assert len(demo_dirs) == 1 and (demo_dirs[0].stat().st_mode & 0o777) == 0o700

    # The OpenID provider: no browser can be started, so `a` lets the demo browser play the person.
    tmux.send("Enter")
    tmux.wait_text("No browser could be opened")
    tmux.wait_text("a demo browser")
    tmux.send("a")
    text = tmux.wait_text("Signed in to Demo OpenID as", timeout=30)

    # The firebase provider: password, then the SMS code read from the screen's inbox panel.
    text = sign_in_to_demo_firebase(tmux)
    assert "Work phone  +*******1234" in text and "Personal  +********0815" in text
    tmux.send("1")
    tmux.wait_text("Code sent to +*******1234 by SMS.")
    text = tmux.wait_for(lambda t: CODE.search(t) is not None, what="the code in the inbox panel")
    tmux.send("-l", CODE.search(text).group(1))
    tmux.send("Enter")
    text = tmux.wait_text("Signed in to Demo Firebase (SMS) as ada@demo.test", timeout=30)
    assert "(second factor: phone)" in text

    tmux.send("q")
    tmux.wait_for(lambda _: (lk.root / "stty.after").exists() and (lk.root / "stty.after").stat().st_size > 0,
                  what="stty after the demo")
    assert (lk.root / "stty.rc").read_text().strip() == "0"
    assert (lk.root / "stty.after").read_text() == (lk.root / "stty.before").read_text(), "terminal restored"
    assert leftovers(lk) == [], "the demo leaves no file behind"


PHONE_APP = re.compile(r"Phone app shows (\d{6})")


def reading(text: str) -> str:
    """The pane as a person reads it: rows one after another, each run of blanks one space, so a
    sentence wrapped over rows reads whole and one cut short does not."""
    return " ".join(text.split())


def test_at_80x24_the_demo_authenticator_sign_in_finishes_with_the_code_read_off_the_panel(tmux, lk):
    """80x24 is the size most terminals open at: the panel once cut the code to `Phone app shows 96…`."""
    tmux.width, tmux.height = 80, 24
    tmux.start(demo_command(), demo_env(lk))
    text = tmux.wait_text("q quit")
    assert PHONE_APP.search(text), f"the authenticator code whole, on one row beside what it is\n{text}"
    assert "m uses it in this directory, + a provider" in reading(text), "the last note wrapped, not cut"

    text = sign_in_to_demo_firebase(tmux)
    assert "3  Phone app  Authenticator app" in text, text
    tmux.send("3")
    text = tmux.wait_for(lambda t: "Enter the code your authenticator app shows for Phone app" in reading(t),
                         what="the authenticator's code entry")
    code = PHONE_APP.search(text)
    assert code, f"the panel shows the code beside its entry\n{text}"
    tmux.send("-l", code.group(1))
    tmux.send("Enter")
    text = tmux.wait_for(lambda t: "Signed in to Demo Firebase (SMS) as ada@demo.test" in reading(t), timeout=30,
                         what="signed in with the authenticator's code")
    assert "(second factor: " in reading(text), text

    # The help's lines whole at this size too, the last key included.
    tmux.send("?")
    text = reading(tmux.wait_text("any key: back"))
    assert "m make the account the one its provider means in this directory (config.toml)" in text, text
    assert "Tokens are refreshed a minute before they expire while this screen is open." in text, text
    tmux.send("Escape")
    tmux.wait_text("q quit")
    tmux.send("q")
    tmux.wait_for(lambda _: tmux.pane_dead(), what="the demo to exit")


def test_demo_browser_approves_a_device_code_from_the_screen(tmux, lk):
    tmux.start(demo_command(), demo_env(lk))
    tmux.wait_text("q quit")
    tmux.send("Enter")
    tmux.wait_text("No browser could be opened")
    tmux.send("d")
    text = tmux.wait_text("demo browser approves the code")
    assert "a demo browser" in text and "and enter the code" in text
    tmux.send("a")
    tmux.wait_text("Signed in to Demo OpenID as", timeout=30)
    tmux.send("q")


def test_the_demo_shows_the_account_keys_and_keeps_what_they_write_in_its_own_directory(tmux, lk):
    """The panel names the keys to try once signed in; m maps the directory the demo runs in
    (in the demo's own config.toml, gone with the demo) and + opens the provider form."""
    tmux.start(demo_command(), demo_env(lk))
    text = tmux.wait_text("q quit")
    assert "n another account, ⏎ on one signs it in again, m uses it in this directory, + a provider" in text
    tmux.send("Enter")
    tmux.wait_text("No browser could be opened")
    tmux.send("a")
    tmux.wait_text("Signed in to Demo OpenID as", timeout=30)
    tmux.wait_text("m use here")  # the new account is selected
    tmux.send("m")
    tmux.wait_text("(here)")
    tmux.send("+")
    tmux.wait_text("OpenID provider by its issuer")
    tmux.send("Escape")
    tmux.wait_text("m use here")
    tmux.send("q")
    tmux.wait_for(lambda _: not list(lk.tmp.glob("latchkey-demo.*")), what="the demo's directory removed")
    assert leftovers(lk) == [], "the mapping stayed in the demo's config.toml"


@pytest.mark.parametrize("key, trap, status", [("C-c", "INT", 130), ("C-\\", "QUIT", 131)], ids=["ctrl-c", "ctrl-backslash"])
def test_ctrl_c_and_ctrl_backslash_end_the_demo_and_remove_its_directory(tmux, lk, key, trap, status):
    out = lk.root / "rc"
    tmux.start(f"trap : {trap}; {demo_command()}; echo $? > {out}", demo_env(lk))
    tmux.wait_text("q quit")
    assert list(lk.tmp.glob("latchkey-demo.*"))
    tmux.send(key)
    tmux.wait_for(lambda _: out.exists() and out.stat().st_size > 0, what="the demo to exit")
    assert out.read_text().strip() == str(status)
    assert leftovers(lk) == []


def start_headless(lk: Latchkey, *args: str) -> tuple[subprocess.Popen, dict]:
    """`latchkey demo --no-tui`, and the environment it prints for scripts."""
    popen = subprocess.Popen([str(LATCHKEY_BIN), "demo", "--no-tui", *args], env=demo_env(lk, TERM="dumb"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    exports = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = popen.stdout.readline()
        assert line, f"demo --no-tui ended early: {popen.stderr.read()}"
        if line.startswith("# latchkey demo is running"):
            return popen, exports
        name, _, value = line.removeprefix("export ").rstrip("\n").partition("=")
        exports[name] = shlex.split(value)[0]
    raise AssertionError("demo --no-tui printed no ready line")


def test_demo_without_the_screen_serves_both_providers_to_scripts(lk):
    kept = lk.root / "kept-vault"
    popen, exports = start_headless(lk, "--vault", str(kept))
    try:
        env = {**exports, "PATH": os.environ["PATH"]}
        login = lk.run("login", "demo-openid", "--timeout", "30", env=env)
        assert login.code == 0, login
        status = json.loads(lk.run("status", "--json", env=env).stdout)["accounts"]
        assert [(a["provider"], a["account"]) for a in status] == [("demo-openid", "ada@demo.test")]
        token = lk.run("token", "demo-openid", env=env).stdout.strip()
        assert token
        sms = Path(exports["LATCHKEY_DEMO_SMS_FILE"])
        assert sms.read_text() == "" and sms.stat().st_mode & 0o777 == 0o600
    finally:
        popen.send_signal(signal.SIGTERM)
        assert popen.wait(30) == 128 + signal.SIGTERM
    assert "Kept the demo vault at" in popen.stderr.read()
    assert kept.exists() and token.encode() not in kept.read_bytes(), "the kept vault is encrypted"
    assert not Path(exports["LATCHKEY_PROVIDERS_DIR"]).exists()
    assert [p for p in leftovers(lk)] == []


def get(url: str, host: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_the_demo_servers_answer_no_web_page_through_another_host_name_and_list_no_sms_codes(lk):
    """DNS rebinding: a page in the person's browser can reach the demo's loopback ports through a
    name its author controls, and then sends that name as Host. Both servers answer only requests
    addressed to loopback, and the codes sent are in the 0600 file, not listed over HTTP."""
    popen, exports = start_headless(lk)
    try:
        providers = Path(exports["LATCHKEY_PROVIDERS_DIR"])
        issuer = re.search(r'issuer = "([^"]+)"', (providers / "demo-openid.toml").read_text()).group(1)
        toolkit = re.search(r'identitytoolkit_url = "([^"]+)"', (providers / "demo-sms.toml").read_text()).group(1)
        emulator = toolkit.removesuffix("/identitytoolkit.googleapis.com")
        discovery = f"{issuer}/.well-known/openid-configuration"
        jwks = f"{emulator}/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
        for url in (discovery, jwks):
            port = url.split("/")[2].split(":")[1]
            assert get(url)[0] == 200, url
            assert get(url, host=f"localhost:{port}")[0] == 200, url
            for hostile in (f"rebind.attacker.example:{port}", "127.0.0.1", f"127.0.0.1:{int(port) + 1}"):
                status, body = get(url, host=hostile)
                assert status == 421 and b"Misdirected" in body, (url, hostile, status, body)
        status, _ = get(f"{emulator}/emulator/v1/projects/latchkey-demo/verificationCodes")
        assert status == 404
    finally:
        popen.send_signal(signal.SIGTERM)
        assert popen.wait(30) == 128 + signal.SIGTERM


def test_the_demo_without_a_terminal_says_to_use_no_tui_and_leaves_nothing(lk):
    result = subprocess.run([str(LATCHKEY_BIN), "demo"], env=demo_env(lk, TERM="dumb"), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 69, result
    assert "--no-tui" in result.stderr
    assert leftovers(lk) == []


def test_demo_vault_path_taken_while_the_demo_ran_is_never_written_through(lk):
    """`--vault PATH` was checked at the start and written at the end without a check: a symlink
    planted at PATH meanwhile had the vault written over its target."""
    kept = lk.root / "kept-vault"
    target = lk.root / "victim"
    target.write_text("precious")
    popen, exports = start_headless(lk, "--vault", str(kept))
    try:
        env = {**exports, "PATH": os.environ["PATH"]}
        assert lk.run("login", "demo-openid", "--timeout", "30", env=env).code == 0
        kept.symlink_to(target)
    finally:
        popen.send_signal(signal.SIGTERM)
        assert popen.wait(30) == 128 + signal.SIGTERM
    stderr = popen.stderr.read()
    assert "the demo vault was not kept" in stderr and "nothing there was replaced" in stderr, stderr
    assert target.read_text() == "precious" and kept.is_symlink()
    assert leftovers(lk) == []


def test_a_demo_killed_with_sigkill_still_leaves_no_directory_and_no_passphrase_behind(lk):
    """A trap in a server, an out-of-memory kill or SIGKILL skip every handler: the watchdog the
    demo starts sees its pipe close and removes the private directory."""
    popen, exports = start_headless(lk)
    directory = Path(exports["LATCHKEY_PASSPHRASE_FILE"]).parent
    assert (directory / "passphrase").exists()
    popen.send_signal(signal.SIGKILL)
    popen.wait(30)
    deadline = time.monotonic() + 10
    while directory.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not directory.exists(), "the demo's private directory outlived it"
    assert leftovers(lk) == []


def test_the_demo_watchdog_removes_only_a_private_demo_directory(lk):
    """Handed any other path, the watchdog removes nothing."""
    victim = lk.root / "not-a-demo"
    victim.mkdir(mode=0o700)
    (victim / "keep").write_text("mine")
    done = subprocess.run([str(LATCHKEY_BIN), "demo", "--remove-when-done", str(victim)], stdin=subprocess.DEVNULL,
                          env=demo_env(lk), capture_output=True, timeout=30)
    assert done.returncode == 0, done
    assert (victim / "keep").read_text() == "mine"
