"""
`latchkey token` from the kernel-keyring copies (the fast path) answers exactly as the full
command would, or not at all: never another account's token, never a token for a selector the
full command calls ambiguous, and no input makes it trap.

The accounts are written straight into the vault by `latchkey-vault-stress seed`, so names and
subjects can collide on purpose; `latchkey-cli` (the full command, no fast path) is the oracle.
"""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import EX_OK, LATCHKEY_BIN, _die_with_parent

STRESS_BIN = LATCHKEY_BIN.parent / "latchkey-vault-stress"
CLI_BIN = LATCHKEY_BIN.parent / "latchkey-cli"


def seed(lk, provider: str, *accounts: str) -> None:
    if not STRESS_BIN.exists():
        pytest.fail(f"{STRESS_BIN} not found (swift build builds it)", pytrace=False)
    done = subprocess.run([str(STRESS_BIN), "seed", str(lk.vault), provider, *accounts], env=lk.env(),
                          capture_output=True, timeout=120, preexec_fn=_die_with_parent)
    assert done.returncode == 0, done.stderr.decode(errors="replace")


def full_command(lk, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI_BIN), *args], env=lk.env(), capture_output=True, timeout=120,
                          preexec_fn=_die_with_parent)


def test_a_name_equal_to_another_accounts_subject_is_ambiguous_on_both_paths(lk):
    # Account x is named alice; account y is named "x", which is also x's subject.
    seed(lk, "p", "x:alice", "y:x")
    for selector in ["p", "p:x", "p:y", "p:alice"]:
        fast = lk.run("token", selector)
        full = full_command(lk, "token", selector)
        assert (fast.code, fast.stdout) == (full.returncode, full.stdout.decode()), \
            f"{selector}: fast path {fast.code} {fast.stdout!r}, full command {full.returncode} {full.stdout!r}"
    assert lk.run("token", "p:x").code != EX_OK, "p:x names two accounts: no token may be printed"
    assert lk.token("p:alice") == "fake-access-x"
    assert lk.token("p:y") == "fake-access-y"


def test_the_fast_path_answers_only_what_the_full_command_resolves(lk):
    seed(lk, "p", "x:alice", "y:x")
    lk.ok("status")  # the copies are written after every read of the unlocked vault
    lk.leave_only_the_launcher()  # only the launcher can answer now
    assert lk.token("p:alice") == "fake-access-x", "the fast path did not answer an unambiguous name"
    assert lk.token("p:y") == "fake-access-y"
    for selector in ["p", "p:x"]:
        result = lk.run("token", selector)
        assert result.code != EX_OK and result.stdout == "", f"{selector} answered from the fast path\n{result}"


@pytest.mark.parametrize("ttl", ["18446744073709551615", "9223372036854775807", "99999999999999999999999", "-1"])
def test_a_huge_or_negative_minimum_lifetime_does_not_trap(lk, ttl):
    seed(lk, "p", "x:alice")
    lk.ok("status")
    fast = lk.run("token", "p", "--min-ttl", ttl)
    full = full_command(lk, "token", "p", "--min-ttl", ttl)
    assert fast.code >= 0 and fast.code < 128, f"the fast path died with a signal\n{fast}"
    assert (fast.code, fast.stdout) == (full.returncode, full.stdout.decode())


@pytest.mark.parametrize("expiry", ["1e300", "-1e300", "9.3e18", "0"])
def test_status_and_token_survive_any_stored_expiry(lk, expiry):
    """No stored value can crash `status` or `token`: absurd expiries are shown, not trapped on."""
    seed(lk, "p", f"x:alice@{expiry}")
    result = lk.run("status", "--json")
    assert result.code == EX_OK, result
    (account,) = result.json()["accounts"]
    assert isinstance(account["expires_in"], int)
    assert lk.run("status").code == EX_OK
    assert lk.run("token", "p").code >= 0


ROOT_MAXKEYS = Path("/proc/sys/kernel/keys/root_maxkeys")


def root_keys_in_use() -> int:
    """This (root) user's key count from /proc/key-users (qnkeys)."""
    for line in Path("/proc/key-users").read_text().splitlines():
        uid, rest = line.split(":", 1)
        if uid.strip() == "0":
            return int(rest.split()[2].split("/")[0])
    raise AssertionError("no key-users line for root")


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(ROOT_MAXKEYS, os.W_OK),
                    reason="needs root to lower the kernel's key quota for a moment")
@pytest.mark.alone  # while the quota is full, no other test can unlock a vault or copy a token
def test_logout_with_the_key_quota_full_leaves_no_usable_token_copy(lk):
    lk.add_provider("p")  # its issuer is unreachable: logout deletes the account all the same
    seed(lk, "p", "x:alice")
    assert lk.token("p") == "fake-access-x"  # the copies exist now
    original = ROOT_MAXKEYS.read_text()
    try:
        # No new key can be created: the copies cannot be replaced, only invalidated.
        ROOT_MAXKEYS.write_text(str(root_keys_in_use()))
        result = lk.run("logout", "p")
        assert result.code == EX_OK, result
        after = lk.run("token", "p")
    finally:
        ROOT_MAXKEYS.write_text(original)
    assert after.code != EX_OK and after.stdout == "", f"a signed-out account's token was still answered\n{after}"


def test_a_default_account_is_what_the_bare_provider_name_selects_on_both_paths(lk):
    seed(lk, "p", "x:alice", "y:bob")
    assert lk.run("token", "p").code != EX_OK, "two accounts and no default: ambiguous"
    out = lk.ok("default", "p:bob")
    assert "p now means p:bob" in out.stderr, out
    lk.ok("status")
    lk.leave_only_the_launcher()  # only the launcher can answer now
    assert lk.token("p") == "fake-access-y"
    lk.restore_the_full_command()
    full = full_command(lk, "token", "p")
    assert (full.returncode, full.stdout.decode()) == (EX_OK, "fake-access-y\n")
    accounts = {a["account"]: a["default"] for a in lk.status()}
    assert accounts == {"alice": False, "bob": True}, accounts


# ---- the launcher's second answer: the vault itself, with the key an unlock cached

_KEYCTL, _KEYCTL_DESCRIBE, _KEYCTL_SEARCH, _KEYCTL_READ, _KEYCTL_INVALIDATE, _USER_KEYRING = 250, 6, 10, 11, 21, -4  # x86_64, keyctl(2)


def _keyctl():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return ctypes, libc


def _copies_keyring(lk) -> int:
    ctypes, libc = _keyctl()
    ring = libc.syscall(_KEYCTL, _KEYCTL_SEARCH, _USER_KEYRING, b"keyring", f"latchkey:tokens:{lk.vault}".encode(), 0)
    assert ring >= 0, f"no token-copy keyring (errno {ctypes.get_errno()})"
    return ring


def drop_token_copies(lk) -> None:
    """Invalidates every token copy (as `keyctl invalidate` would) but the list of accounts the
    launcher must leave to the agent, leaving the cached vault key: the state after the kernel cut
    the copies short, or after they expired before the unlock."""
    ctypes, libc = _keyctl()
    ring = _copies_keyring(lk)
    ids = (ctypes.c_int32 * 4096)()
    count = libc.syscall(_KEYCTL, _KEYCTL_READ, ring, ids, ctypes.sizeof(ids)) // 4
    assert count > 0, f"an empty copy keyring (errno {ctypes.get_errno()})"
    for key in ids[:count]:
        description = ctypes.create_string_buffer(4096)
        assert libc.syscall(_KEYCTL, _KEYCTL_DESCRIBE, key, description, 4096) > 0
        if not description.value.rsplit(b";", 1)[-1].startswith(b"latchkey:withheld:"):
            assert libc.syscall(_KEYCTL, _KEYCTL_INVALIDATE, key) == 0


def drop_token_keyring(lk) -> None:
    """Invalidates the whole keyring of the copies (as `benchmarks/commands.sh` does before each
    run of "no copy"): the withheld list, kept beside the vault key, stays."""
    ctypes, libc = _keyctl()
    assert libc.syscall(_KEYCTL, _KEYCTL_INVALIDATE, _copies_keyring(lk)) == 0


def drop_withheld_list(lk) -> None:
    """Invalidates the list of accounts the launcher must leave to the agent, wherever it is."""
    ctypes, libc = _keyctl()
    key = libc.syscall(_KEYCTL, _KEYCTL_SEARCH, _USER_KEYRING, b"user", f"latchkey:withheld:{lk.vault}".encode(), 0)
    assert key >= 0, f"no withheld list (errno {ctypes.get_errno()})"
    assert libc.syscall(_KEYCTL, _KEYCTL_INVALIDATE, key) == 0


def assert_unanswered(result, why: str = "answered") -> None:
    assert result.code != EX_OK and result.stdout == "", f"{why}\n{result}"


def lock_with_only_the_launcher_left(lk) -> None:
    """Drops the cached key with the full command, then leaves the launcher alone again."""
    lk.restore_the_full_command()
    lk.ok("lock")
    lk.leave_only_the_launcher()


def test_without_token_copies_the_launcher_answers_from_the_vault_with_the_cached_key(lk):
    seed(lk, "p", "x:alice", "y:bob")
    drop_token_copies(lk)
    lk.leave_only_the_launcher()  # only the launcher can answer now
    assert lk.token("p:alice") == "fake-access-x"
    assert lk.token("p:y", "--min-ttl", "600") == "fake-access-y"
    result = lk.run("token", "p")
    assert result.code != EX_OK and result.stdout == "", f"two accounts and no default, yet answered\n{result}"


def test_without_the_copies_keyring_the_launcher_answers_from_the_vault_but_never_a_confirm_account(lk):
    # The withheld list outlives the copies' keyring (the kernel cut it short, it expired, someone
    # dropped it): the launcher answers from the vault in milliseconds, with no latchkey-cli to
    # hand over to, and still leaves the confirm = true account to a person. With a config.toml
    # the launcher also needs its copy of the directory mappings: it outlives the keyring too.
    lk.add_provider("p")
    config = lk.config / "latchkey" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[accounts."p:bob"]\nconfirm = true\n')
    time.sleep(0.1)  # settled (PolicyFiles.settleTime): a fingerprint the copies can carry
    seed(lk, "p", "x:alice", "y:bob")
    drop_token_keyring(lk)
    lk.leave_only_the_launcher()
    assert lk.token("p:alice") == "fake-access-x"
    assert_unanswered(lk.run("token", "p:bob"), "a confirm = true account answered from the vault")
    lk.restore_the_full_command()
    refused = lk.run("token", "p:bob")
    assert refused.code != EX_OK and "confirm = true" in refused.stderr, refused


def test_without_the_list_of_withheld_accounts_the_launcher_answers_no_token_from_the_vault(lk):
    seed(lk, "p", "x:alice")
    drop_token_keyring(lk)
    drop_withheld_list(lk)
    lk.leave_only_the_launcher()
    assert_unanswered(lk.run("token", "p:alice"), "answered without knowing which accounts need confirmation")
    assert lk.run("status", "--json").code == EX_OK, "status names no token: the vault answers it still"


def test_lock_drops_the_withheld_list_and_the_directory_mappings_with_the_key_and_the_copies(lk):
    config = lk.config / "latchkey" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[agent]\nconfirm_timeout = 1\n")
    time.sleep(0.1)
    seed(lk, "p", "x:alice")
    ctypes, libc = _keyctl()
    kept = ((b"user", "withheld"), (b"user", "directories"), (b"keyring", "tokens"))

    def found(kind: bytes, name: str) -> bool:
        return libc.syscall(_KEYCTL, _KEYCTL_SEARCH, _USER_KEYRING, kind, f"latchkey:{name}:{lk.vault}".encode(), 0) >= 0

    assert all(found(*key) for key in kept), "not all written while unlocked"
    lk.ok("lock")
    for kind, name in kept:
        assert not found(kind, name), f"latchkey:{name} outlived lock"


def test_the_vault_answer_is_the_full_commands_answer_for_every_selector(lk):
    # x is named alice; y is named "x" (x's subject); z is expired, w expires in 90 s.
    now = int(time.time())
    seed(lk, "p", "x:alice", "y:x", f"z:carol@{now - 10}", f"w:dave@{now + 90}")
    drop_token_copies(lk)
    selectors = ["p", "p:x", "p:y", "p:alice", "p:z", "p:carol", "p:w", "p:nobody", "q", "p:"]
    expected = {s: full_command(lk, "token", s) for s in selectors}
    expected_ttl = full_command(lk, "token", "p:dave", "--min-ttl", "120")
    drop_token_copies(lk)  # the full command wrote them again
    lk.leave_only_the_launcher()  # only the launcher can answer now
    for selector in selectors:
        launcher = lk.run("token", selector)
        full = expected[selector]
        if full.returncode == EX_OK:
            assert (launcher.code, launcher.stdout) == (EX_OK, full.stdout.decode()), selector
        else:
            assert launcher.code != EX_OK and launcher.stdout == "", f"{selector} answered by the launcher only\n{launcher}"
    # 90 s left of a 90 s lifetime, 120 asked for: the full command caps the margin at half the
    # lifetime and answers; the launcher applies the same rule (the copies alone would not).
    launcher = lk.run("token", "p:dave", "--min-ttl", "120")
    assert (launcher.code, launcher.stdout) == (expected_ttl.returncode, expected_ttl.stdout.decode()) == (EX_OK, "fake-access-w\n")


def test_the_launcher_never_answers_from_a_vault_that_fails_authentication(lk):
    seed(lk, "p", "x:alice")
    drop_token_copies(lk)
    lk.leave_only_the_launcher()  # only the launcher can answer now
    data = bytearray(lk.vault.read_bytes())
    data[-20] ^= 0x01  # a ciphertext byte: the key check still passes, the AEAD tag does not
    lk.vault.write_bytes(bytes(data))
    assert_unanswered(lk.run("token", "p"))


def test_the_launcher_never_answers_from_a_vault_others_can_read_or_when_locked(lk):
    seed(lk, "p", "x:alice")
    drop_token_copies(lk)
    lk.leave_only_the_launcher()  # only the launcher can answer now
    lk.vault.chmod(0o640)
    assert_unanswered(lk.run("token", "p"))
    lk.vault.chmod(0o600)
    assert lk.token("p") == "fake-access-x"
    lock_with_only_the_launcher_left(lk)
    assert_unanswered(lk.run("token", "p"), "answered with no key cached")


def test_status_json_from_the_launcher_is_the_full_commands_report(lk):
    now = int(time.time())
    seed(lk, "p", "x:alice", f"y:bob@{now - 10}", f"z@{now + 3600}")
    full = full_command(lk, "status", "--json")
    assert full.returncode == EX_OK, full
    lk.leave_only_the_launcher()  # only the launcher can answer now
    launcher = lk.run("status", "--json")
    assert launcher.code == EX_OK, launcher

    ours, theirs = launcher.json()["accounts"], json.loads(full.stdout)["accounts"]
    countdowns = [(a.pop("expires_in"), b.pop("expires_in")) for a, b in zip(ours, theirs)]
    assert ours == theirs  # every field but the countdown, which moved on between the two runs
    assert all(0 <= b - a <= 2 for a, b in countdowns), countdowns
    lock_with_only_the_launcher_left(lk)
    assert_unanswered(lk.run("status", "--json"), "a locked vault's status was printed")


def test_choosing_the_secret_service_in_config_ends_the_launchers_answers_from_the_vault(lk):
    seed(lk, "p", "x:alice")
    assert lk.token("p") == "fake-access-x"
    path = lk.config / "latchkey" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('keystore = "secret-service"\n')
    lk.run("status")  # the first full command under the new setting (no Secret Service here: it may fail)
    for args in (["token", "p"], ["status", "--json"]):
        result = lk.run(*args, env={"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"})
        assert "fake-access-x" not in result.stdout and "alice" not in result.stdout, \
            f"{args} still answered from the passphrase vault\n{result}"
