"""Secrets stay secret: tokens and the passphrase never hit the disk in plain text,
and the vault refuses a wrong passphrase or unsafe permissions."""

import os
import re
import signal
import stat
import time
from pathlib import Path

import pytest

from conftest import ALICE, EX_OK, EX_VAULT, Latchkey, assert_userinfo


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory, idp_a):
    """alice signed in at provider a; the tokens as latchkey prints them and the IdP stored them."""
    lk = Latchkey(tmp_path_factory.mktemp("secrets"))
    lk.add_provider("a", idp_a)
    result = lk.login("a")
    assert result.code == EX_OK, result
    access = lk.token("a")
    secrets = {
        "access token": access,
        "refresh token": idp_a.refresh_token_for(access),
        "ID token": lk.token("a", "--id-token"),
    }
    yield lk, secrets
    lk.close()


@pytest.fixture
def signed_in_here(lk, idp_a):
    lk.add_provider("a", idp_a)
    result = lk.login("a")
    assert result.code == EX_OK, result
    return lk


def test_no_token_is_written_anywhere_in_plain_text(signed_in):
    lk, secrets = signed_in
    files = lk.files()
    assert lk.vault in files
    for path in files:
        data = path.read_bytes()
        for what, value in secrets.items():
            assert len(value) >= 20
            assert value.encode() not in data, f"the {what} is in {path} in plain text"


def test_the_passphrase_never_appears_in_the_vault(signed_in):
    lk, _ = signed_in
    data = lk.vault.read_bytes()
    assert len(data) > 0
    assert lk.passphrase.encode() not in data
    for path in lk.files():
        assert lk.passphrase.encode() not in path.read_bytes(), f"the passphrase is in {path}"


def test_the_vault_is_readable_only_by_its_owner(signed_in):
    lk, _ = signed_in
    assert stat.S_IMODE(lk.vault.stat().st_mode) & 0o077 == 0, oct(lk.vault.stat().st_mode)
    assert stat.S_IMODE(lk.vault.parent.stat().st_mode) & 0o077 == 0, oct(lk.vault.parent.stat().st_mode)


def test_a_wrong_passphrase_is_refused_and_leaves_the_vault_untouched(signed_in_here, idp_a):
    lk = signed_in_here
    # Signing in unlocked the vault and cached its key; lock it so the passphrase is needed.
    lk.ok("lock")
    before = lk.vault.read_bytes()
    lk.set_passphrase("not the passphrase")
    for args in (("token", "a"), ("status", "--json")):
        result = lk.run(*args)
        assert result.code == EX_VAULT, result
        assert result.stdout == "", result
        assert "passphrase" in result.stderr.lower(), result
    assert lk.vault.read_bytes() == before

    lk.set_passphrase(lk.passphrase)
    assert_userinfo(idp_a, lk.token("a"), ALICE)


def test_a_vault_that_others_can_read_is_refused(signed_in_here):
    lk = signed_in_here
    before = lk.vault.read_bytes()
    os.chmod(lk.vault, 0o644)
    result = lk.run("token", "a")
    assert result.code == EX_VAULT, result
    assert result.stdout == "", result
    assert result.stderr.strip(), result
    assert lk.vault.read_bytes() == before


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_vault_directory_others_can_write_is_refused_with_the_chmod_to_run(signed_in_here, mode):
    """Whoever can write the directory can rename their own vault over ours: the full command
    and the kernel-keyring fast path both refuse, and say how to fix it."""
    lk = signed_in_here
    before = lk.vault.read_bytes()
    directory = lk.vault.parent
    os.chmod(directory, mode)
    try:
        for args in (["token", "a"], ["status"]):
            result = lk.run(*args)
            assert result.code == EX_VAULT, result
            assert result.stdout == "", result
            assert f"chmod 700 {directory}" in result.stderr, result
        assert lk.vault.read_bytes() == before
    finally:
        os.chmod(directory, 0o700)
    assert lk.token("a")


def test_a_new_vault_directory_is_created_private(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    assert stat.S_IMODE(lk.vault.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(lk.vault.stat().st_mode) == 0o600


@pytest.mark.parametrize("log2n, r, p", [(22, 32, 16), (22, 8, 1), (18, 16, 1), (17, 8, 4)])
def test_a_header_asking_for_costly_scrypt_parameters_is_refused_before_any_work(signed_in_here, log2n, r, p):
    """The header is read before anything authenticates it: a tampered one must not buy
    gigabytes of memory or minutes of work (twice the written cost at most)."""
    lk = signed_in_here
    lk.run("lock")
    data = bytearray(lk.vault.read_bytes())
    data[11] = log2n
    data[12:16] = r.to_bytes(4, "big")
    data[16:20] = p.to_bytes(4, "big")
    lk.vault.write_bytes(bytes(data))
    result = lk.run("status")
    assert result.code == EX_VAULT, result
    assert "tampered" in result.stderr or "damaged" in result.stderr, result
    assert result.seconds < 5, result


def test_the_executables_run_without_core_dumps(lk, idp_a):
    """A crash must not write the process's memory (tokens, the vault key) to a core file."""
    lk.add_provider("a", idp_a)
    running = lk.start("login", "a", "--timeout", "20", env={"BROWSER": "/bin/true"})
    try:
        limits = ""
        for _ in range(100):
            exe = os.readlink(f"/proc/{running.popen.pid}/exe")
            if exe.endswith("latchkey-cli"):
                limits = Path(f"/proc/{running.popen.pid}/limits").read_text()
                break
            time.sleep(0.05)
        assert re.search(r"Max core file size\s+0\s+0", limits), limits
    finally:
        os.killpg(running.popen.pid, signal.SIGTERM)
        running.finish(20)
