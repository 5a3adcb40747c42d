"""
Another user on the same machine against the launcher and the vault file, with the built binaries:

* the launcher runs ``latchkey-cli`` only when it and every directory and link on the way to it
  belong to you or root and nobody else can write them (a planted or swapped program never runs,
  and the refusal says which entry is at fault);
* the vault's path holds a private regular file of sane size or nothing is read from it: a FIFO
  neither hangs ``token`` nor ``status``, a 100 GB sparse file does not crash the launcher, and
  ``doctor`` reports both;
* the launcher answers a token copy by the full command's validity rule (the margin capped at half
  the token's lifetime), so a short-lived token is answered from the keyring.

Each test failed on the code before these checks (run with LATCHKEY_BIN pointing at an older build).
"""
from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from conftest import EX_OK, EX_UNEXPECTED, EX_VAULT
from test_install import BUILD_DIR, install, run
from test_token_fast_path import seed

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
NOBODY = 65534


@pytest.fixture
def prefix(lk) -> Path:
    """A fresh install of the build under test, for one test to attack."""
    prefix = lk.root / "prefix"
    install(prefix, "--from", str(BUILD_DIR))
    return prefix


def plant(path: Path, marker: Path) -> None:
    """Another user's program where latchkey-cli is looked for: it leaves `marker` if it runs."""
    path.write_text(f'#!/bin/sh\ntouch "{marker}"\necho planted\n')
    path.chmod(0o755)


def assert_refused(result, marker: Path | None, *reasons: str) -> None:
    assert result.returncode == EX_UNEXPECTED and result.stdout == "", result
    assert "latchkey: refusing to run" in result.stderr, result
    for reason in reasons:
        assert reason in result.stderr, result
    if marker is not None:
        assert not marker.exists(), "the planted program ran"


# --------------------------------------------------------------------------- the launcher's exec


def test_a_latchkey_cli_planted_in_a_libexec_directory_others_can_write_never_runs(lk, prefix):
    directory = prefix / "libexec" / "latchkey"
    directory.chmod(0o777)
    marker = lk.root / "ran"
    plant(directory / "latchkey-cli", marker)
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, marker, f"{directory} is writable by other users (mode 777)", "only you or root can write")


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_directory_others_can_write_anywhere_above_latchkey_cli_is_refused(lk, prefix, mode):
    """Whoever can write prefix/libexec can rename a directory of their own in as `latchkey`."""
    libexec = prefix / "libexec"
    libexec.chmod(mode)
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, None, f"{libexec} is writable by other users (mode {mode:o})")


def test_a_latchkey_cli_its_group_can_write_is_refused(lk, prefix):
    program = prefix / "libexec" / "latchkey" / "latchkey-cli"
    program.chmod(0o775)
    result = run(lk, prefix, prefix / "bin" / "latchkey", "providers")
    assert_refused(result, None, f"{program} is writable by other users (mode 775)")


def test_a_link_in_a_directory_others_can_write_is_refused_though_it_points_at_the_real_latchkey_cli(lk, prefix):
    """The link could be swapped for one to another program at any moment."""
    real = prefix / "real-libexec"
    (prefix / "libexec").rename(real)
    shared = prefix / "libexec" / "latchkey"
    shared.mkdir(parents=True)
    shared.chmod(0o777)
    (shared / "latchkey-cli").symlink_to(real / "latchkey" / "latchkey-cli")
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, None, f"{shared} is writable by other users (mode 777)")


def test_a_link_to_a_program_in_a_directory_others_can_write_is_refused(lk, prefix):
    shared = lk.root / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    marker = lk.root / "ran"
    plant(shared / "latchkey-cli", marker)
    program = prefix / "libexec" / "latchkey" / "latchkey-cli"
    program.unlink()
    program.symlink_to(shared / "latchkey-cli")
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, marker, f"{shared} is writable by other users (mode 777)")


@ROOT_ONLY
def test_a_latchkey_cli_that_belongs_to_another_user_is_refused(lk, prefix):
    program = prefix / "libexec" / "latchkey" / "latchkey-cli"
    os.chown(program, NOBODY, NOBODY)
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, None, f"{program} belongs to another user (uid {NOBODY})")


@ROOT_ONLY
def test_another_users_link_in_a_sticky_directory_is_refused(lk, prefix):
    """A sticky directory such as /tmp lets anyone add an entry: only the entry's owner tells whose it is."""
    real = prefix / "real-libexec"
    (prefix / "libexec").rename(real)
    sticky = prefix / "libexec" / "latchkey"
    sticky.mkdir(parents=True)
    sticky.chmod(0o1777)
    marker = lk.root / "ran"
    plant(lk.root / "theirs", marker)
    link = sticky / "latchkey-cli"
    link.symlink_to(lk.root / "theirs")
    os.lchown(link, NOBODY, NOBODY)
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, marker, f"{link} belongs to another user (uid {NOBODY})")
    # The same layout with the link and its target ours is accepted (the sticky bit is not the fault).
    link.unlink()
    link.symlink_to(real / "latchkey" / "latchkey-cli")
    assert run(lk, prefix, prefix / "bin" / "latchkey", "--version").returncode == EX_OK


def test_a_latchkey_cli_that_is_not_executable_is_refused_not_passed_over(lk, prefix):
    program = prefix / "libexec" / "latchkey" / "latchkey-cli"
    program.chmod(0o644)
    shutil.copy2(BUILD_DIR / "latchkey-cli", prefix / "bin" / "latchkey-cli")  # a stale copy beside it
    result = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert_refused(result, None, f"{program} is not an executable file")


# --------------------------------------------------------------------------- the vault's path


def make_vault_directory(lk) -> Path:
    directory = lk.vault.parent
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    return directory


@pytest.mark.parametrize("args", [["token", "p"], ["status"], ["status", "--json"]])
def test_a_fifo_at_the_vault_path_is_refused_at_once(lk, args):
    make_vault_directory(lk)
    os.mkfifo(lk.vault, 0o600)
    result = lk.run(*args, timeout=20)
    assert result.code == EX_VAULT and result.stdout == "", result
    assert f"{lk.vault} cannot be the vault: it is a FIFO, not a regular file" in result.stderr, result
    assert stat.S_ISFIFO(lk.vault.stat().st_mode), "the FIFO was replaced"


def test_doctor_reports_a_fifo_at_the_vault_path(lk):
    make_vault_directory(lk)
    os.mkfifo(lk.vault, 0o600)
    result = lk.run("doctor", timeout=30)
    assert result.code == EX_UNEXPECTED, result
    problems = [line for line in result.stdout.splitlines() if line.startswith("problem") and "vault permissions:" in line]
    assert problems and "it is a FIFO" in problems[0] and f"mv {lk.vault}" in problems[0], result


@pytest.mark.parametrize("locked", [False, True])
def test_a_huge_sparse_vault_is_refused_before_it_is_read(lk, locked):
    seed(lk, "p", "x:alice")
    if locked:
        lk.ok("lock")
    os.truncate(lk.vault, 100 << 30)  # 100 GB, no block written
    for args in (["token", "p"], ["status", "--json"]):
        result = lk.run(*args)
        assert result.code == EX_VAULT and result.stdout == "", result
        assert "larger than any vault Latchkey writes (64 MiB)" in result.stderr, result
    doctor = lk.run("doctor")
    assert doctor.code == EX_UNEXPECTED and "larger than any vault" in doctor.stdout, doctor
    assert lk.vault.stat().st_size == 100 << 30


def test_a_symbolic_link_at_the_vault_path_is_refused_by_the_launcher_and_the_full_command_alike(lk):
    seed(lk, "p", "x:alice")
    lk.ok("status")  # token copies exist: the launcher alone could answer
    real = lk.vault.with_name("elsewhere")
    lk.vault.rename(real)
    lk.vault.symlink_to(real)
    result = lk.run("token", "p")
    assert result.code == EX_VAULT and result.stdout == "", result
    assert "it is a symbolic link, not a regular file" in result.stderr, result


# --------------------------------------------------------------------------- one validity rule


def test_the_token_copy_is_answered_by_the_full_commands_rule_for_a_short_lived_token(lk):
    """90 s left of a 90 s token and --min-ttl 120: the full command caps the margin at half the
    lifetime and answers without a refresh, so the copy is answered too. The vault's ciphertext is
    damaged and the launcher runs alone, so only the copy can answer."""
    now = int(time.time())
    seed(lk, "p", f"w:dave@{now + 90}")
    lk.ok("status")  # the full command writes the copies
    lk.leave_only_the_launcher()
    data = bytearray(lk.vault.read_bytes())
    data[-20] ^= 0x01
    lk.vault.write_bytes(bytes(data))
    assert lk.token("p:dave", "--min-ttl", "120") == "fake-access-w"
