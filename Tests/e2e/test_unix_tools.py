"""The Unix tool people expect: `latchkey exec`, `latchkey git-credential` (driven by a real git),
and an unknown command named as such."""

import json
import os
import signal
import subprocess
import sys

from conftest import (ALICE, BOB, EX_NO_ACCOUNT, EX_OK, EX_PROVIDER_FILE, EX_USAGE, LATCHKEY_BIN, assert_userinfo,
                      jwt_parts)

GIT_HOST = "git.example.test"

# The child prints what it was given: its environment's tokens, its argv as the kernel sees it
# (/proc/self/cmdline, readable by every local user) and its pid.
SHOW_ENV = (
    "import json, os; print(json.dumps({"
    "'access': os.environ.get('LATCHKEY_ACCESS_TOKEN'), 'id': os.environ.get('LATCHKEY_ID_TOKEN'), "
    "'cmdline': open('/proc/self/cmdline', 'rb').read().decode(errors='replace'), 'pid': os.getpid()}))"
)

OPEN_FDS = ("import json, os\nopen_fds = []\nfor fd in range(1024):\n    try:\n        os.fstat(fd)\n"
            "        open_fds.append(fd)\n    except OSError:\n        pass\nprint(json.dumps(open_fds))")


def signed_in(lk, idp, **fields):
    lk.add_provider("a", idp, **fields)
    result = lk.login("a")
    assert result.code == EX_OK, result


# --------------------------------------------------------------------------- latchkey exec


def test_exec_hands_the_command_a_valid_token_in_its_environment_and_never_in_argv(lk, idp_a):
    signed_in(lk, idp_a)
    running = lk.start("exec", "a", "--", sys.executable, "-c", SHOW_ENV, "--marker",
                       env={"LATCHKEY_ID_TOKEN": "stale-from-an-outer-exec"})
    result = running.finish()
    assert result.code == EX_OK, result
    seen = json.loads(result.stdout)
    assert seen["access"] == lk.token("a")
    assert_userinfo(idp_a, seen["access"], ALICE)
    assert seen["access"] not in seen["cmdline"]
    assert seen["cmdline"].split("\0")[-2] == "--marker", "the command gets its own arguments"
    assert seen["id"] is None, "an inherited LATCHKEY_ID_TOKEN is not passed on as this account's"
    assert seen["pid"] == running.popen.pid, "the command replaces latchkey (execvp), it is not a child"
    assert result.stderr == "", result


def test_exec_with_id_token_also_sets_the_id_token(lk, idp_a):
    signed_in(lk, idp_a)
    result = lk.run("exec", "a", "--id-token", "--min-ttl", "30", "--", sys.executable, "-c", SHOW_ENV)
    assert result.code == EX_OK, result
    seen = json.loads(result.stdout)
    assert seen["access"] == lk.token("a")
    assert seen["id"] == lk.token("a", "--id-token")
    assert jwt_parts(seen["id"])[1]["iss"] == idp_a.issuer
    assert seen["id"] not in seen["cmdline"] and seen["access"] not in seen["cmdline"]


def test_exec_exits_with_the_commands_status_and_signal(lk, idp_a):
    signed_in(lk, idp_a)
    assert lk.run("exec", "a", "--", "sh", "-c", "exit 7").code == 7
    assert lk.run("exec", "a", "--", "sh", "-c", "kill -TERM $$").code == -15, "the signal that ended the command ends us"


def test_exec_passes_on_what_the_caller_gave_and_nothing_latchkey_opened(lk, idp_a):
    """Like nohup or `3<file` around any command: the caller's ignored signals, blocked signals and
    descriptors reach the command; the runtime's ignored SIGPIPE and latchkey's own descriptors
    (the vault lock, the network's) do not."""
    signed_in(lk, idp_a)
    passed_read, passed_write = os.pipe()

    def like_nohup_with_a_blocked_signal():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})

    def run(*command: str, through_latchkey: bool = True) -> str:
        prefix = [str(LATCHKEY_BIN), "exec", "a", "--"] if through_latchkey else []
        shown = subprocess.run(
            [*prefix, *command], env=lk.env(), cwd=lk.root, stdin=subprocess.DEVNULL,
            capture_output=True, timeout=60, pass_fds=(passed_read,), preexec_fn=like_nohup_with_a_blocked_signal,
            start_new_session=True)
        assert shown.returncode == EX_OK, shown
        return shown.stdout.decode()

    def signal_masks(**how) -> dict[str, int]:
        # cat changes no signal state (a shell or python would).
        status = dict(line.split(":\t") for line in run("cat", "/proc/self/status", **how).splitlines() if ":\t" in line)
        return {mask: int(status[mask], 16) for mask in ("SigIgn", "SigBlk")}

    try:
        # What the caller gives is more than what it set here: tmux, for one, starts its windows
        # with SIGTTIN and SIGTTOU ignored, and every program started there inherits that.
        given = signal_masks(through_latchkey=False)
        passed_on = signal_masks()
        # python lists descriptors with fstat.
        fds = run(sys.executable, "-c", OPEN_FDS)
    finally:
        os.close(passed_read)
        os.close(passed_write)
    hup, pipe, usr2 = (1 << (number - 1) for number in (signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR2))
    assert given["SigIgn"] & hup and not given["SigIgn"] & pipe and given["SigBlk"] & usr2, given
    assert passed_on["SigIgn"] == given["SigIgn"], f"SIGHUP stays ignored, SIGPIPE is not: {passed_on} != {given}"
    assert passed_on["SigBlk"] == given["SigBlk"], f"{passed_on} != {given}"
    assert json.loads(fds) == [0, 1, 2, passed_read]


def test_exec_of_a_missing_command_exits_127_like_the_shell(lk, idp_a):
    signed_in(lk, idp_a)
    result = lk.run("exec", "a", "--", "no-such-command-latchkey", "arg")
    assert result.code == 127, result
    assert result.stdout == ""
    assert "no-such-command-latchkey" in result.stderr and "not found" in result.stderr, result


def test_exec_usage_errors_exit_64(lk, idp_a):
    lk.add_provider("a", idp_a)
    for args in (["exec", "a"], ["exec", "a", "--"], ["exec", "a", "--min-ttl", "-1", "--", "true"], ["exec"]):
        result = lk.run(*args)
        assert result.code == EX_USAGE, result
        assert result.stderr.strip(), result


def test_exec_without_a_signed_in_account_runs_nothing_and_exits_66(lk, idp_a, tmp_path):
    lk.add_provider("a", idp_a)
    marker = tmp_path / "ran"
    result = lk.run("exec", "a", "--", "touch", str(marker))
    assert result.code == EX_NO_ACCOUNT, result
    assert not marker.exists()


# --------------------------------------------------------------------------- git-credential


def credential(lk, operation: str, request: str):
    return lk.run("git-credential", operation, input=request.encode())


def test_get_answers_a_mapped_host_with_the_access_token(lk, idp_a):
    signed_in(lk, idp_a, git_hosts=[GIT_HOST.upper(), "127.0.0.1:8080"], git_username="x-access-token")
    token = lk.token("a")
    for request in (f"protocol=https\nhost={GIT_HOST}\npath=group/repo.git\n\n",
                    f"url=https://{GIT_HOST}/group/repo.git\n",
                    "protocol=http\nhost=127.0.0.1:8080\n\n"):
        result = credential(lk, "get", request)
        assert result.code == EX_OK, result
        assert result.stdout == f"username=x-access-token\npassword={token}\n", result


def test_get_stays_silent_for_hosts_and_protocols_it_does_not_serve(lk, idp_a):
    signed_in(lk, idp_a, git_hosts=[GIT_HOST])
    for request in ("protocol=https\nhost=github.com\n\n",
                    f"protocol=https\nhost={GIT_HOST}:8443\n\n",
                    f"protocol=http\nhost={GIT_HOST}\n\n",
                    f"protocol=ssh\nhost={GIT_HOST}\n\n",
                    ""):
        result = credential(lk, "get", request)
        assert result.code == EX_OK, result
        assert result.stdout == "", result
        assert result.stderr == "", result


def test_get_with_several_accounts_answers_for_the_default_one_and_else_says_why(lk, idp_a):
    signed_in(lk, idp_a, git_hosts=[GIT_HOST])
    assert lk.login("a", user="bob").code == EX_OK
    request = f"protocol=https\nhost={GIT_HOST}\n\n"
    result = credential(lk, "get", request)
    assert result.stdout == "", result
    assert "several accounts" in result.stderr and ALICE in result.stderr and BOB in result.stderr, result

    lk.ok("default", f"a:{BOB}")
    result = credential(lk, "get", request)
    assert result.code == EX_OK, result
    assert result.stdout == f"username=oauth2\npassword={lk.token(f'a:{BOB}')}\n", result


def test_store_and_erase_do_nothing_and_keep_the_account(lk, idp_a):
    signed_in(lk, idp_a, git_hosts=[GIT_HOST])
    token = lk.token("a")
    vault = lk.vault_bytes()
    for operation in ("store", "erase", "frobnicate"):
        result = credential(lk, operation, f"protocol=https\nhost={GIT_HOST}\nusername=oauth2\npassword={token}\n\n")
        assert result.code == EX_OK, result
        assert result.stdout == "" and result.stderr == "", result
    assert lk.vault_bytes() == vault
    assert lk.token("a") == token


def test_a_bad_git_hosts_entry_is_a_provider_file_error(lk, idp_a):
    path = lk.add_provider("a", idp_a, git_hosts=["ok.example.test", f"https://{GIT_HOST}/group"])
    result = lk.run("providers", "check")
    assert result.code == EX_PROVIDER_FILE, result
    assert f"{path}:6: git_hosts:" in result.stdout + result.stderr, result


def test_git_credential_fill_gets_the_token_and_reject_keeps_the_account(lk, idp_a):
    signed_in(lk, idp_a, git_hosts=[GIT_HOST])
    token = lk.token("a")
    filled = lk.git("credential", "fill", input=f"url=https://{GIT_HOST}/group/repo.git\n\n")
    assert filled.returncode == 0, filled
    answer = dict(line.split("=", 1) for line in filled.stdout.decode().splitlines())
    assert answer == {"protocol": "https", "host": GIT_HOST, "username": "oauth2", "password": token}

    rejected = lk.git("credential", "reject",
                   input=f"url=https://{GIT_HOST}/group/repo.git\nusername=oauth2\npassword={token}\n\n")
    assert rejected.returncode == 0, rejected
    assert [a["provider"] for a in lk.status()] == ["a"]
    assert lk.token("a") == token


def test_git_credential_fill_for_an_unmapped_host_gets_no_answer(lk, idp_a):
    signed_in(lk, idp_a, git_hosts=[GIT_HOST])
    filled = lk.git("credential", "fill", input="url=https://elsewhere.example.test/repo.git\n\n")
    assert filled.returncode != 0, "with no helper answering and prompts off, git gives up"
    assert filled.stdout == b"", filled
    assert b"terminal prompts disabled" in filled.stderr, filled


# --------------------------------------------------------------------------- unknown commands


def test_an_unknown_command_is_named_as_such_with_the_commands_listed(lk):
    result = lk.run("frobnicate", "--json")
    assert result.code == EX_USAGE, result
    assert result.stdout == ""
    first = result.stderr.splitlines()[0]
    assert first.startswith("latchkey: no such command 'frobnicate'; commands: "), result
    for name in ("status", "token", "exec", "git-credential", "login"):
        assert name in first, result


def test_options_alone_still_reach_the_default_command(lk, idp_a):
    lk.add_provider("a", idp_a)
    result = lk.run("--keystore", "vault")
    assert result.code == EX_OK, result
