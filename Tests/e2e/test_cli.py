"""Command line usage, unknown names and timeouts map to their exit statuses."""

import os
import re
import signal
import subprocess
import time

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


def test_a_process_a_test_starts_has_no_terminal_even_when_pytest_was_started_at_one():
    """conftest.py leaves pytest's terminal: from a terminal window, `token` in test_install.py
    once signed in on it (/dev/tty) instead of answering "no account". However a helper starts
    a process, its stdin is /dev/null and it has no controlling terminal."""
    probe = subprocess.run(["sh", "-c", "readlink /proc/self/fd/0; exec 3<>/dev/tty && echo has-a-terminal"],
                           capture_output=True, text=True, timeout=10)
    assert probe.stdout.splitlines() == ["/dev/null"], probe


def test_a_paste_sign_in_with_nothing_pasted_times_out_with_69(lk, idp_a):
    """stdin stays open and silent (a forgotten terminal): --timeout still ends the wait."""
    lk.add_provider("a", idp_a)
    running = lk.start("login", "a", "--paste", "--timeout", "3", stdin=subprocess.PIPE)
    result = running.finish(30)
    assert result.code == EX_UNAVAILABLE, result
    assert re.search(r"within 3 ?s", result.stderr), result
    assert 3 <= result.seconds < 15, result
    assert not lk.vault.exists() or lk.status() == []


def test_a_paste_sign_in_fed_by_sleep_through_a_pipe_ends_at_its_timeout_not_when_sleep_does(lk, idp_a):
    """`sleep 20 | latchkey login a --paste --timeout 3`, run by a shell as a person types it:
    latchkey leaves 3 s after its prompt while `sleep` still holds the pipe open. The shell itself
    returns only when `sleep` ends too (it waits for every command of a pipeline, and `sleep`,
    writing nothing, never gets SIGPIPE), which is why the pipeline as a whole takes 20 s."""
    lk.add_provider("a", idp_a)
    stderr, status = lk.root / "login.stderr", lk.root / "login.status"
    pipeline = 'sleep 20 | { "$0" login a --paste --timeout 3 2>"$1"; echo $? >"$2"; }'
    started = time.monotonic()
    shell = subprocess.Popen(["sh", "-c", pipeline, str(lk.binary), str(stderr), str(status)], env=lk.env(), cwd=lk.root,
                             stdin=subprocess.DEVNULL, start_new_session=True)

    def moment(done, limit: float) -> float:
        deadline = time.monotonic() + limit
        while not done():
            assert time.monotonic() < deadline and shell.poll() is None, stderr.read_text() if stderr.exists() else ""
            time.sleep(0.02)
        return time.monotonic()

    try:
        prompted = moment(lambda: stderr.exists() and "Redirect URL: " in stderr.read_text(), 40)
        ended = moment(lambda: status.exists() and status.read_text().endswith("\n"), 15)
        assert shell.poll() is None, "sleep still holds the pipe open when latchkey has left"
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
    assert int(status.read_text()) == EX_UNAVAILABLE, stderr.read_text()
    assert re.search(r"no redirect URL was pasted for a within 3 s", stderr.read_text()), stderr.read_text()
    assert 2.5 <= ended - prompted < 6, f"latchkey left {ended - prompted:.1f} s after its prompt"
    assert ended - started < 18, "well before sleep's 20 s"
    assert not lk.vault.exists() or lk.status() == []
