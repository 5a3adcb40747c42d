"""The launcher's fast path with `keystore = "openbao"`, against a real single-node OpenBao
(openbao_support.py): `unlock --for` opens a window in which every command that reads OpenBao
makes the kernel-keyring copies of the tokens, so `latchkey token` is answered by the launcher
alone, without OpenBao; `lock` drops them, and without `unlock` none is made (no passphrase to
type, so the person opts in). What proves an answer is the launcher's: a copy of the launcher
with no latchkey-cli beside it (`leave_only_the_launcher`: any other answer exits 1), and the
OpenBao node stopped."""

from __future__ import annotations

import secrets
import time

import pytest

from conftest import ALICE, EX_OK, EX_UNAVAILABLE, EX_USAGE, assert_userinfo
from openbao_support import OpenBaoCluster
from test_openbao_keystore import Machine, openbao, start_cluster, token_for  # noqa: F401  (fixture)

FULL_COMMAND_MISSING = 1


@pytest.fixture
def own_node() -> None:
    """Asked for by a test that stops OpenBao: its `cluster` is then a node of its own."""


@pytest.fixture
def cluster(request, tmp_path):
    """The module's node, or one of the test's own for a test that asks for `own_node`."""
    if "own_node" not in request.fixturenames:
        yield request.getfixturevalue("openbao")
        return
    started = start_cluster(tmp_path / "openbao")
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def path() -> str:
    """The test's own team path, so tests on the shared node never see each other's accounts."""
    return f"team/{secrets.token_hex(4)}"


def machine_at(root, cluster: OpenBaoCluster, idp, path: str) -> Machine:
    machine = Machine(root)
    machine.use_openbao(cluster, path, token_for(cluster, "team"))
    machine.add_provider("a", idp)
    return machine


@pytest.fixture
def machine(tmp_path, cluster, path, idp_a):
    signed_in = machine_at(tmp_path / "machine", cluster, idp_a, path)
    assert signed_in.login("a").code == EX_OK
    yield signed_in
    # The copies live in this user's keyring, outside the test's directories.
    signed_in.restore_the_full_command()
    signed_in.run("lock", timeout=20)


def test_after_unlock_the_second_token_is_answered_by_the_launcher_without_openbao(own_node, machine, cluster, idp_a):
    unlocked = machine.ok("unlock", "--for", "10m")
    assert "openbao keystore's tokens are copied" in unlocked.stderr and "latchkey lock" in unlocked.stderr, unlocked
    assert "vault" not in unlocked.stderr and "Secret Service" not in unlocked.stderr, unlocked
    token = machine.token("a")
    assert_userinfo(idp_a, token, ALICE)

    cluster.nodes[0].stop()
    machine.leave_only_the_launcher()
    started = time.monotonic()
    assert machine.token("a") == token, "the launcher alone answered its copy, with OpenBao down"
    assert time.monotonic() - started < 2
    assert not machine.vault.exists() and not machine.journal.exists(), "still no vault file and no journal on the machine"


def test_lock_drops_the_copies_and_token_then_asks_openbao(own_node, machine, cluster):
    machine.ok("unlock", "--for", "10m")
    machine.token("a")
    locked = machine.ok("lock")
    assert "copies of the openbao keystore's tokens are dropped" in locked.stderr, locked
    again = machine.ok("lock")
    assert "were not copied" in again.stderr and "vault" not in again.stderr, again

    machine.leave_only_the_launcher()
    assert machine.run("token", "a").code == FULL_COMMAND_MISSING, "no copy left for the launcher"
    machine.restore_the_full_command()
    cluster.nodes[0].stop()
    result = machine.run("token", "a")
    assert result.code == EX_UNAVAILABLE and "cannot reach OpenBao at" in result.stderr, result


def test_without_unlock_no_token_is_copied(machine):
    token = machine.token("a")
    assert machine.token("a") == token
    machine.leave_only_the_launcher()
    assert machine.run("token", "a").code == FULL_COMMAND_MISSING, "nothing copied without `unlock`"


def test_the_copies_last_no_longer_than_unlock_for(machine):
    machine.ok("unlock", "--for", "3s")
    token = machine.token("a")
    machine.leave_only_the_launcher()
    assert machine.token("a") == token
    time.sleep(4)
    assert machine.run("token", "a").code == FULL_COMMAND_MISSING, "the copy ended with the window"


def test_unlock_with_openbao_down_fails_naming_openbao_and_copies_nothing(own_node, machine, cluster):
    cluster.nodes[0].stop()
    result = machine.run("unlock", "--for", "10m")
    assert result.code == EX_UNAVAILABLE and "cannot reach OpenBao at" in result.stderr, result
    machine.leave_only_the_launcher()
    assert machine.run("token", "a").code == FULL_COMMAND_MISSING


def test_a_logout_on_another_machine_ends_this_machines_copy_at_its_next_command(tmp_path, machine, cluster, path, idp_a):
    """A logout there cannot reach this machine's keyring: the copy answers until this machine's
    next command that reads OpenBao, which makes the copies from what OpenBao holds now."""
    other = machine_at(tmp_path / "other", cluster, idp_a, path)
    try:
        machine.ok("unlock", "--for", "10m")
        token = machine.token("a")
        assert other.run("logout", "a").code == EX_OK
        machine.leave_only_the_launcher()
        assert machine.token("a") == token, "this machine's copy: OpenBao was not asked"
        machine.restore_the_full_command()
        assert machine.status() == [], "OpenBao no longer holds the account"
        machine.leave_only_the_launcher()
        assert machine.run("token", "a").code == FULL_COMMAND_MISSING, "the copy went with the account"
    finally:
        other.close()


def test_a_one_off_keystore_openbao_copies_nothing(machine):
    """The launcher answers only config.toml's keystore, so `--keystore` cannot fill its copies."""
    config = machine.config / "latchkey" / "config.toml"
    config.write_text(config.read_text().replace('keystore = "openbao"', 'keystore = "vault"'))
    result = machine.run("unlock", "--keystore", "openbao")
    assert result.code == EX_USAGE and "only when config.toml chooses it" in result.stderr, result


def test_a_journal_others_can_read_stops_the_launchers_answers_as_the_full_command_refuses_it(machine):
    """The full command reads the journal, with the vault's checks, before it asks OpenBao for
    anything; the launcher must not answer past that refusal."""
    machine.ok("unlock", "--for", "10m")
    machine.token("a")
    machine.journal.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    machine.journal.write_text("{}")
    machine.journal.chmod(0o644)
    refused = machine.run("token", "a")
    assert refused.code != EX_OK and "openbao.journal" in refused.stderr and "chmod 600" in refused.stderr, refused
    machine.leave_only_the_launcher()
    assert machine.run("token", "a").code == FULL_COMMAND_MISSING, "the launcher did not answer past the refusal"
    machine.journal.unlink()


def test_config_toml_edited_since_the_copies_were_made_stops_the_launchers_answers(machine):
    """config.toml chooses the keystore: edited, it may choose another, so only the full command answers."""
    machine.ok("unlock", "--for", "10m")
    machine.token("a")
    config = machine.config / "latchkey" / "config.toml"
    config.write_text(config.read_text() + "# edited\n")
    machine.leave_only_the_launcher()
    assert machine.run("token", "a").code == FULL_COMMAND_MISSING
