"""Every way out of a prompt gives the terminal back as it was: the passphrase prompt (echo off)
and the paste prompt (canonical mode off), left by Ctrl-C, Ctrl-\\, a timeout or an answer."""

from __future__ import annotations

import time

import pytest

from conftest import LATCHKEY_BIN
from tui_support import tmux  # noqa: F401  (fixture)


def prompt_env(lk, **extra):
    """lk's environment for a terminal, with no passphrase file unless one is given."""
    return lk.env(**{"TERM": "tmux-256color", "LATCHKEY_PASSPHRASE_FILE": None, **extra})


def run_in_terminal(tmux, lk, command: str, trap: str, env: dict) -> tuple:
    """Runs `latchkey COMMAND` in a tmux pane between two `stty -a`; returns the paths of the
    settings before, after, and the exit status."""
    out = lk.root / "stty"
    tmux.start(f"trap : {trap}; stty -a > {out}.before; {LATCHKEY_BIN} {command}; echo $? > {out}.rc; stty -a > {out}.after", env)
    return out.with_suffix(".before"), out.with_suffix(".after"), out.with_suffix(".rc")


def wait_done(tmux, after):
    tmux.wait_for(lambda _: after.exists() and after.stat().st_size > 0, timeout=30, what="the command to end")


@pytest.mark.parametrize("key, trap, status", [("C-c", "INT", 130), ("C-\\", "QUIT", 131)], ids=["ctrl-c", "ctrl-backslash"])
def test_leaving_the_passphrase_prompt_turns_echo_back_on(tmux, lk, key, trap, status):
    before, after, rc = run_in_terminal(tmux, lk, "unlock", trap, prompt_env(lk))
    tmux.wait_text("New vault passphrase:")
    tmux.send(key)
    wait_done(tmux, after)
    assert after.read_text() == before.read_text(), "the terminal settings changed"
    assert rc.read_text().strip() == str(status)
    assert not lk.vault.exists()


def paste_provider(lk):
    lk.add_provider("a", None, authorization_endpoint="http://127.0.0.1:9/authorize", token_endpoint="http://127.0.0.1:9/token",
                    jwks_uri="http://127.0.0.1:9/jwks", issuer=None)


@pytest.mark.parametrize("key, trap, status", [("C-c", "INT", 130), ("C-\\", "QUIT", 131)], ids=["ctrl-c", "ctrl-backslash"])
def test_leaving_the_paste_prompt_turns_canonical_mode_back_on(tmux, lk, key, trap, status):
    paste_provider(lk)
    before, after, rc = run_in_terminal(tmux, lk, "login a --paste", trap, prompt_env(lk, LATCHKEY_PASSPHRASE_FILE=lk.passphrase_file))
    tmux.wait_text("Redirect URL:")
    tmux.send(key)
    wait_done(tmux, after)
    assert after.read_text() == before.read_text(), "the terminal settings changed"
    assert rc.read_text().strip() == str(status)


def test_a_paste_prompt_that_times_out_ends_on_time_and_gives_the_terminal_back(tmux, lk):
    """The message came on time, but canonical mode stayed off: the read that waited was never
    ended, so nothing restored the mode it had changed."""
    paste_provider(lk)
    started = time.monotonic()
    before, after, rc = run_in_terminal(
        tmux, lk, "login a --paste --timeout 3", "INT", prompt_env(lk, LATCHKEY_PASSPHRASE_FILE=lk.passphrase_file))
    wait_done(tmux, after)
    assert time.monotonic() - started < 20, "the command outlived its timeout"
    assert "no redirect URL was pasted" in tmux.capture(joined=True)
    assert rc.read_text().strip() == "69"
    assert "-icanon" not in after.read_text() and after.read_text() == before.read_text()
