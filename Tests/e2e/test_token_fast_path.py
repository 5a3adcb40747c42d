"""
`latchkey token` from the kernel-keyring copies (the fast path) answers exactly as the full
command would, or not at all: never another account's token, never a token for a selector the
full command calls ambiguous, and no input makes it trap.

The accounts are written straight into the vault by `latchkey-vault-stress seed`, so names and
subjects can collide on purpose; `latchkey-cli` (the full command, no fast path) is the oracle.
"""
import os
import subprocess
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


def break_config(lk) -> None:
    """A config.toml the full command refuses; the fast path never reads it, so only the fast
    path can still answer (which proves the answer came from it)."""
    path = lk.config / "latchkey" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("keystore = 42\n")


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
    break_config(lk)
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
    break_config(lk)  # only the fast path can answer now
    assert lk.token("p") == "fake-access-y"
    (lk.config / "latchkey" / "config.toml").unlink()
    full = full_command(lk, "token", "p")
    assert (full.returncode, full.stdout.decode()) == (EX_OK, "fake-access-y\n")
    accounts = {a["account"]: a["default"] for a in lk.status()}
    assert accounts == {"alice": False, "bob": True}, accounts
