"""
config.toml's [hooks]: a program per event (on_signin, on_refresh_failed, on_expiring,
on_reauth_needed, on_release) gets the event as one JSON line on stdin, never a token. A hook runs
as a second-factor plugin does: a deadline (`timeout`) and an output cap, its whole process group
killed when it passes either; its failure is reported on stderr and never fails what fired it.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from agent_support import agent_env, agents, runtime  # noqa: F401  (fixtures)
from conftest import ALICE, EX_NO_ACCOUNT, EX_OK
from test_sign_in_again import signed_in_then_revoked
from test_token_fast_path import seed


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
    except FileNotFoundError:
        return False


def hook(lk, name: str, body: str) -> Path:
    """An executable shell script of ours (TrustedProgram accepts it: ours, 0700, in our directory)."""
    path = lk.root / "hooks" / name
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o700)
    return path


def recorder(lk, name: str = "record") -> tuple[Path, Path]:
    """A hook that appends its stdin and $LATCHKEY_EVENT to a file; returns (hook, file)."""
    out = lk.root / f"{name}.jsonl"
    return hook(lk, name, f'cat >> {out}\necho "env=$LATCHKEY_EVENT" >> {out}\n'), out


def configure(lk, text: str) -> None:
    path = lk.config / "latchkey" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def events(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines() if line.startswith("{")] if out.exists() else []


def assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text, "a hook was given a token"


def test_a_sign_in_runs_on_signin_with_the_event_as_json_and_no_token(lk, idp_a):
    record, out = recorder(lk)
    configure(lk, f'[hooks]\non_signin = ["{record}", "an argument"]\n')
    lk.add_provider("a", idp_a)
    result = lk.login("a")
    assert result.code == EX_OK, result
    (event,) = events(out)
    assert event["event"] == "signin" and event["provider"] == "a" and event["account"] == ALICE, event
    assert "time" in event and "token" not in json.dumps(event).lower(), event
    assert "env=signin" in out.read_text()
    token = lk.token("a")
    assert_no_secret(out.read_text(), token, lk.passphrase)


def test_with_nobody_at_a_terminal_a_refused_refresh_runs_on_refresh_failed_and_on_reauth_needed(lk, idp_short):
    record, out = recorder(lk)
    configure(lk, f'[hooks]\non_refresh_failed = "{record}"\non_reauth_needed = "{record}"\n')
    old = signed_in_then_revoked(lk, idp_short)
    result = lk.run("token", "a")
    assert result.code == EX_NO_ACCOUNT and result.stdout == "", result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"latchkey login a:{ALICE}" in lines[0], "hooks that succeed say nothing"
    said = events(out)
    assert [e["event"] for e in said] == ["refresh_failed", "reauth_needed"], said
    assert all(e["account"] == ALICE and e["provider"] == "a" and e["reason"] for e in said), said
    assert_no_secret(out.read_text(), old)


def test_a_hook_that_hangs_is_stopped_at_its_deadline_with_its_children_and_the_sign_in_succeeds(lk, idp_a):
    child = lk.root / "child.pid"
    hanging = hook(lk, "hang", f"sleep 600 &\necho $! > {child}\necho 'still thinking' >&2\nwait\n")
    configure(lk, f'[hooks]\non_signin = "{hanging}"\ntimeout = 2\n')
    lk.add_provider("a", idp_a)
    started = time.monotonic()
    result = lk.login("a")
    elapsed = time.monotonic() - started
    assert result.code == EX_OK, result
    assert "hook on_signin" in result.stderr and "did not finish within 2 s and was stopped" in result.stderr, result
    assert "still thinking" in result.stderr, "what the hook said on stderr is shown with its failure"
    assert elapsed < 20, f"login took {elapsed:.1f} s"
    pid = int(child.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3], \
        "the hook's own child was killed with its process group"
    assert lk.token("a")


def test_a_hook_that_floods_its_output_is_stopped_and_the_sign_in_succeeds(lk, idp_a):
    flood = hook(lk, "flood", "exec /usr/bin/yes 'a flood of output'\n")
    configure(lk, f'[hooks]\non_signin = "{flood}"\ntimeout = 30\n')
    lk.add_provider("a", idp_a)
    started = time.monotonic()
    result = lk.login("a")
    assert result.code == EX_OK, result
    assert "hook on_signin" in result.stderr and "wrote more than 64 KiB and was stopped" in result.stderr, result
    assert time.monotonic() - started < 25, "stopped at the cap, not at the deadline"
    assert len(result.stderr) < 4096, "the flood does not reach the terminal"


def test_a_hook_that_fails_or_is_not_ours_to_run_is_reported_and_not_fatal(lk, idp_a):
    failing = hook(lk, "fail", "echo 'no display' >&2\nexit 3\n")
    configure(lk, f'[hooks]\non_signin = "{failing}"\n')
    lk.add_provider("a", idp_a)
    result = lk.login("a")
    assert result.code == EX_OK and "exited with status 3 (it said: no display)" in result.stderr, result
    failing.chmod(0o777)
    result = lk.login("a")
    assert result.code == EX_OK and "was not run" in result.stderr and "writable by other users" in result.stderr, result


def test_the_agent_runs_on_release_without_waiting_for_it_and_never_gives_it_the_token(lk, idp_a, agents):
    out = lk.root / "record.jsonl"
    slow = hook(lk, "slow", f"cat >> {out}\nsleep 600\n")
    configure(lk, f'[hooks]\non_release = "{slow}"\ntimeout = 30\n')
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    agent = agents()
    timings = []
    tokens = set()
    for _ in range(3):
        started = time.monotonic()
        result = lk.run("token", "a", env=agent_env(agent))
        timings.append(time.monotonic() - started)
        assert result.code == EX_OK, result
        tokens.add(result.stdout.strip())
    assert max(timings) < 5, f"a hanging hook held up the agent's answers: {timings}"
    deadline = time.monotonic() + 10
    while len(events(out)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    said = events(out)
    assert len(said) == 3 and all(e["event"] == "release" and e["forwarded"] is False for e in said), said
    assert all(e["requester"].startswith("local: ") for e in said), said
    assert_no_secret(out.read_text(), *tokens)
    assert os.path.exists(agent.socket)


def test_a_hook_still_running_when_the_agent_stops_is_ended_with_it(lk, idp_a, agents):
    """A hook runs in a process group of its own, so it would outlive an agent stopped before the
    hook's deadline, orphaned for up to its whole timeout; the agent ends it on the way out."""
    pid_file = lk.root / "hook.pid"
    slow = hook(lk, "slow", f"echo $$ > {pid_file}\nsleep 600\n")
    configure(lk, f'[hooks]\non_release = "{slow}"\ntimeout = 300\n')
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    agent = agents()
    assert lk.run("token", "a", env=agent_env(agent)).code == EX_OK
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline, "the hook did not start"
        time.sleep(0.05)
    hook_pid = int(pid_file.read_text())
    assert running(hook_pid)
    os.kill(agent.popen.pid, signal.SIGTERM)
    assert agent.wait_exit(10) == 0, agent.stderr()
    deadline = time.monotonic() + 5
    while running(hook_pid):
        assert time.monotonic() < deadline, "the hook outlived the agent"
        time.sleep(0.05)


def test_the_agent_runs_on_expiring_once_for_an_account_without_a_refresh_token(lk, agents):
    """An account with no refresh token cannot be kept fresh: `expiring_minutes` before its token
    ends, the agent says so and runs on_expiring with the expiry, never the token."""
    record, out = recorder(lk)
    configure(lk, f'[hooks]\non_expiring = "{record}"\nexpiring_minutes = 10\n')
    soon = int(time.time()) + 300
    seed(lk, "p", "--no-refresh-token", f"s1:short-lived@{soon}")
    agent = agents()
    deadline = time.monotonic() + 20
    while not events(out) and time.monotonic() < deadline:
        time.sleep(0.2)
    (event,) = events(out)
    assert event["event"] == "expiring" and event["provider"] == "p" and event["account"] == "short-lived", event
    assert event["reason"] == "no refresh token" and "expires_at" in json.dumps(event), event
    assert_no_secret(out.read_text(), "fake-access-s1")
    assert "has no refresh token and expires in" in agent.stderr_path.read_text()
