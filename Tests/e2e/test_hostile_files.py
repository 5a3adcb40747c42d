"""Provider files and config.toml written by someone who wants latchkey to crash, hang or misread:
each attempt from the hostile review (issue 16) is refused with the file and line, exit 65, and
everything else still works."""

import os
import re

from conftest import EX_OK, EX_PROVIDER_FILE, toml_value


def config_toml(lk, text: str):
    path = lk.config / "latchkey" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def names_file_and_line(result, path, line=1):
    """stderr says `PATH:LINE: what`, or `PATH: what` when the problem is the whole file (line None)."""
    where = re.escape(str(path)) + (f":{line}" if line is not None else "")
    return re.search(rf"{where}: \S", result.stderr) is not None


def test_a_dotted_key_of_half_a_million_parts_in_config_toml_is_an_error_not_a_crash(lk):
    """It overflowed the stack of every command (SIGSEGV), `lock` included; now the file is
    refused by its size before the TOML library sees it."""
    path = config_toml(lk, "[" + ".".join(["a"] * 500_000) + "]\n")
    for command in (["status"], ["token", "a"]):
        result = lk.run(*command)
        assert result.code == EX_PROVIDER_FILE, result
        assert names_file_and_line(result, path, line=None) and "larger than 64 KiB" in result.stderr, result


def test_nesting_and_dotted_keys_deeper_than_sixteen_are_refused_on_their_line(lk):
    for text in ("x = " + "[" * 17 + "]" * 17 + "\n", "keystore = \"vault\"\n" + ".".join(["a"] * 17) + " = 1\n",
                 "x = " + "{a=" * 17 + "1" + "}" * 17 + "\n"):
        path = config_toml(lk, text)
        result = lk.run("status")
        assert result.code == EX_PROVIDER_FILE, result
        assert names_file_and_line(result, path, text.count("\n")), result


def test_lock_locks_the_vault_whatever_config_toml_holds(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    assert lk.ok("unlock", "--for", "1h")
    path = config_toml(lk, "x = " + "[" * 17 + "]" * 17 + "\n")
    result = lk.run("lock")
    assert result.code == EX_OK, result
    assert "The vault is locked." in result.stderr, result
    assert names_file_and_line(result, path), "the file's problem is still said"
    config_toml(lk, "")
    locked = lk.run("token", "a", env={"LATCHKEY_PASSPHRASE_FILE": None})
    assert locked.code != EX_OK and locked.stdout == "", "no token without the passphrase once locked"


def test_an_escaped_nul_in_git_hosts_is_refused_instead_of_naming_another_host(lk, idp_a):
    """TOMLKit cut the string at the NUL, so the entry read as `evil.example`."""
    path = lk.write_provider_text("a", "".join(f"{k} = {toml_value(v)}\n" for k, v in {
        "display_name": "IdP A", "kind": "oidc", "issuer": idp_a.issuer, "client_id": "latchkey-test"}.items())
        + 'git_hosts = ["evil.example\\u0000.github.com"]\n')
    result = lk.run("providers", "check")
    assert result.code == EX_PROVIDER_FILE, result
    assert names_file_and_line(result, path, 5) and "NUL" in result.stderr, result
    answer = lk.run("git-credential", "get", input=b"protocol=https\nhost=evil.example\n\n")
    assert answer.stdout == "", answer


def test_a_fifo_named_like_a_provider_file_neither_hangs_a_command_nor_hides_the_others(lk, idp_a):
    lk.add_provider("a", idp_a)
    fifo = lk.providers_dir / "b.toml"
    os.mkfifo(fifo)
    result = lk.run("providers", "check", timeout=20)
    assert result.code == EX_PROVIDER_FILE, result
    assert f"{fifo}: is not a regular file" in result.stderr, result
    listed = lk.run("providers", "--json", timeout=20).json()
    assert [p["name"] for p in listed["providers"]] == ["a"]


def test_thousands_of_unknown_keys_are_cut_off_at_the_key_limit(lk, idp_a):
    """Each unknown key was reported by rescanning the file: 6,000 of them took 48 s."""
    lk.add_provider("a", idp_a)
    path = lk.write_provider_text("b", 'display_name = "B"\nkind = "oidc"\n' + "".join(f"k{i} = 1\n" for i in range(6000)))
    result = lk.run("providers", "check", timeout=20)
    assert result.code == EX_PROVIDER_FILE, result
    assert f"{path}:" in result.stderr and ("has more than 512 keys" in result.stderr or "larger than 64 KiB" in result.stderr), result


def test_a_provider_file_over_64_kib_is_refused_without_reading_it(lk, idp_a):
    lk.add_provider("a", idp_a)
    big = lk.providers_dir / "big.toml"
    with open(big, "wb") as f:
        f.truncate(1 << 40)  # sparse: a terabyte the disk does not hold
    result = lk.run("providers", "check", timeout=20)
    assert result.code == EX_PROVIDER_FILE, result
    assert f"{big}: is larger than 64 KiB" in result.stderr, result


# --------------------------------------------------------------------------- text that reaches the terminal

ESCAPES = "\x1b]0;pwned\x07\x1b[2J"


def assert_inert(result):
    """Nothing from a file or a server reached the terminal as a control character."""
    for stream in (result.stdout_bytes, result.stderr_bytes):
        assert b"\x1b" not in stream and b"\x07" not in stream, result


def test_providers_check_shows_hostile_keys_and_file_names_as_text(lk, idp_a):
    lk.add_provider("a", idp_a)
    lk.write_provider_text("keys", 'display_name = "K"\nkind = "oidc"\n"\\u001b]0;pwned\\u0007" = 1\n')
    (lk.providers_dir / f"{ESCAPES}name.toml").write_text('display_name = "N"\nkind = "oidc"\n')
    result = lk.run("providers", "check")
    assert result.code == EX_PROVIDER_FILE, result
    assert_inert(result)
    assert "\\x1B]0;pwned\\x07" in result.stderr, result
    assert_inert(lk.run("providers"))


def test_providers_presets_and_add_show_hostile_display_names_as_text(lk):
    presets = lk.data / "latchkey" / "providers.d"
    presets.mkdir(parents=True)
    (presets / "shady.toml").write_text('display_name = "\\u001b]0;pwned\\u0007Shady"\n'
                                        'kind = "oidc"\nissuer = "https://x.example"\nclient_id = ""\n')
    listed = lk.run("providers", "presets")
    assert listed.code == EX_OK and "\\x1B]0;pwned\\x07Shady" in listed.stdout, listed
    assert_inert(listed)
    added = lk.run("providers", "add", "shady")
    assert_inert(added)


PLUGIN = """#!/usr/bin/env python3
import json, sys
json.loads(sys.stdin.readline())
print(json.dumps({"type": "tokens", "id_token": "header.payload.signature",
                  "account": {"issuer": "https://plugin.example", "subject": "uid-1", "display_name": "\\u001b]0;pwned\\u0007eve"},
                  "second_factor": "\\u001b[2Jphone"}))
"""


def test_a_second_factor_claim_from_the_backend_is_printed_as_text(lk):
    """`login` printed "(second factor: …)" with the backend's claim as received."""
    program = lk.root / "plugin" / "hostile-plugin"
    program.parent.mkdir()
    program.write_text(PLUGIN)
    program.chmod(0o755)
    lk.write_provider_text("fb", f'display_name = "Plugin"\nkind = "firebase"\nmfa_backend = "exec:{program}"\n')
    result = lk.run("login", "fb", input=b"eve@example.test\nsecret-password\n")
    assert result.code == EX_OK, result
    assert "second factor: \\x1B[2Jphone" in result.stderr, result
    assert_inert(result)
    status = lk.run("status")
    assert_inert(status)
