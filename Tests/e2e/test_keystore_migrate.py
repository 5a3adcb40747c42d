"""`latchkey keystore migrate --to KEYSTORE` against a real OpenBao 2.7 node (openbao_support.py)
and the real vault: two accounts of two providers and a client Latchkey registered at glewlwyd
(RFC 7591) move from the vault into the team path, where a second machine uses them, and back;
a run OpenBao stops halfway (a policy that lets only the first account be written) and a run
stopped between the writes and the removals (the vault as it was before) are finished by running
again, nothing lost and nothing duplicated; accounts move into the secret-service keystore and
back in a desktop session (gnome-keyring); a migration to the keystore in use is refused."""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import subprocess

import pytest

from conftest import ALICE, EX_OK, EX_REJECTED, EX_UNAVAILABLE, EX_USAGE, LATCHKEY_BIN, _die_with_parent, assert_userinfo
from openbao_support import OpenBaoCluster
from test_glewlwyd import add_registering, glewlwyd_registration, registered_clients  # noqa: F401  (fixture)
from test_openbao_keystore import Machine, openbao, stored, token_for  # noqa: F401  (fixture)


def configure(machine: Machine, cluster: OpenBaoCluster, path: str, token: str, keystore: str | None) -> None:
    """config.toml with the team path in [openbao]; `keystore` chosen only when given, as a person
    about to migrate has it (the [openbao] table written, the vault still in use)."""
    machine.use_openbao(cluster, path, token)
    config = machine.config / "latchkey" / "config.toml"
    text = config.read_text().replace('keystore = "openbao"\n', "" if keystore is None else f'keystore = "{keystore}"\n')
    config.write_text(text)


def set_token(machine: Machine, token: str) -> None:
    (machine.root / "secret" / "openbao-token").write_text(token)


def accounts_in(machine: Machine, keystore: str) -> list[tuple[str, str]]:
    result = machine.ok("status", "--json", "--keystore", keystore)
    return sorted((account["provider"], account["account"]) for account in result.json()["accounts"])


def openbao_accounts(cluster: OpenBaoCluster, path: str) -> dict[str, dict]:
    """The account secrets under the path, by name: each record as stored (removed ones left out)."""
    listed = cluster.api("LIST", f"secret/metadata/{path}/accounts")
    names = listed.json()["data"]["keys"] if listed.ok else []
    records = {}
    for name in names:
        data = stored(cluster, f"{path}/accounts/{name}")["data"]
        if data["latchkey"] == "account":
            records[name] = json.loads(data["record"])
    return records


def secret_name(account: dict) -> str:
    return hashlib.sha256(f"{account['provider']}\n{account['issuer']}\n{account['subject']}".encode()).hexdigest()


@pytest.fixture
def team(tmp_path, openbao):
    """A fresh team path and two machines; each test signs in on the first."""
    path = f"team/{secrets.token_hex(4)}"
    one, two = Machine(tmp_path / "one"), Machine(tmp_path / "two")
    yield one, two, path
    for machine in (one, two):
        machine.close()


@pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")
def test_vault_to_openbao_and_back_moves_two_accounts_and_the_registered_client(team, openbao, idp_a, glewlwyd_registration):
    one, two, path = team
    one.add_provider("a", idp_a)
    add_registering(one, glewlwyd_registration)
    assert one.login("a").code == EX_OK and one.login("reg").code == EX_OK
    configure(one, openbao, path, token_for(openbao, "team"), keystore=None)
    token_a, token_reg = one.token("a"), one.token("reg")
    registrations = registered_clients(glewlwyd_registration)
    one.leave_only_the_launcher()
    assert one.token("a") == token_a, "the launcher answers from its copy of the vault"
    one.restore_the_full_command()
    secrets_here = [token_a, token_reg, idp_a.refresh_token_for(token_a)]

    moved = one.ok("keystore", "migrate", "--to", "openbao")
    lines = moved.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted([f"a:{ALICE}: moved", "reg:alice@example.test: moved", "reg registered client: moved"]), moved
    assert lines[-1] == "2 of 2 accounts and 1 of 1 registered clients are in openbao now; nothing is left in vault.", moved
    assert 'add the line `keystore = "openbao"` at the top of' in moved.stderr, moved
    assert not any(secret in moved.stdout + moved.stderr for secret in secrets_here), "no secret printed"
    one.leave_only_the_launcher()
    assert one.run("token", "a").code != EX_OK, "the launcher's copies of the vault are gone with the vault's key"
    one.restore_the_full_command()
    assert accounts_in(one, "vault") == [], "the vault no longer holds them"
    assert len(openbao_accounts(openbao, path)) == 2
    assert stored(openbao, f"{path}/clients")["data"]["latchkey"] == "clients"
    again = one.ok("keystore", "migrate", "--to", "openbao")
    assert again.stdout == "vault holds no account and no registered client: nothing to move.\n", again
    assert 'add the line `keystore = "openbao"`' in again.stderr, "the line to set, still"

    # This machine, now configured for OpenBao, and a second one sharing the path.
    configure(one, openbao, path, token_for(openbao, "team"), keystore="openbao")
    assert one.token("a") == token_a
    configure(two, openbao, path, token_for(openbao, "team"), keystore="openbao")
    two.add_provider("a", idp_a)
    two.write_provider_text("reg", (one.providers_dir / "reg.toml").read_text())
    assert two.token("a") == token_a
    assert_userinfo(idp_a, token_a, ALICE)
    assert two.ok("refresh", "reg").code == EX_OK, "the registered client came along: the refresh uses its client ID"
    assert glewlwyd_registration.userinfo(two.token("reg")).status_code == 200
    assert registered_clients(glewlwyd_registration) == registrations, "no new registration"

    back = one.ok("keystore", "migrate", "--to", "vault")
    assert back.stdout.splitlines()[-1] == (
        "2 of 2 accounts and 1 of 1 registered clients are in vault now; nothing is left in openbao."), back
    assert 'set `keystore = "vault"` on line 1 of' in back.stderr, back
    assert openbao_accounts(openbao, path) == {}
    assert two.status() == []
    assert accounts_in(one, "vault") == [("a", ALICE), ("reg", "alice@example.test")]
    assert one.token("a", "--keystore", "vault") == token_a
    assert one.ok("refresh", "reg", "--keystore", "vault").code == EX_OK, "the client is in the vault again"


@pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")
def test_a_provider_registered_as_another_client_at_the_target_stays_here(team, openbao, idp_a, glewlwyd_registration):
    """The team path already holds a client of its own for the provider (another client ID):
    the refresh token here was issued to this machine's client, which the team's could not
    refresh, so the client and the provider's accounts stay here; the rest moves."""
    one, two, path = team
    configure(two, openbao, path, token_for(openbao, "team"), keystore="openbao")
    add_registering(two, glewlwyd_registration)
    assert two.login("reg").code == EX_OK
    team_client = stored(openbao, f"{path}/clients")["data"]["clients"]

    one.add_provider("a", idp_a)
    one.write_provider_text("reg", (two.providers_dir / "reg.toml").read_text())
    assert one.login("a").code == EX_OK and one.login("reg").code == EX_OK
    configure(one, openbao, path, token_for(openbao, "team"), keystore=None)
    result = one.run("keystore", "migrate", "--to", "openbao")
    assert result.code == EX_UNAVAILABLE, result
    assert result.stdout.splitlines() == [
        "reg registered client: left here: the target has another client registered for its provider",
        f"a:{ALICE}: moved",
        "reg:alice@example.test: left here: the target has another client registered for its provider",
        "1 of 2 accounts and 0 of 1 registered clients are in openbao now; 2 left in vault (above).",
    ], result
    assert accounts_in(one, "vault") == [("reg", "alice@example.test")]
    assert stored(openbao, f"{path}/clients")["data"]["clients"] == team_client, "the team's client untouched"
    assert one.ok("refresh", "reg", "--keystore", "vault").code == EX_OK, "the account here still refreshes with its client"


def test_a_run_openbao_stops_halfway_is_finished_by_running_again(team, openbao, idp_a, idp_b):
    one, _, path = team
    one.add_provider("a", idp_a)
    one.add_provider("b", idp_b)
    assert one.login("a").code == EX_OK and one.login("b").code == EX_OK
    tokens = {provider: one.token(provider) for provider in ("a", "b")}
    first = next(account for account in one.status() if account["provider"] == "a")
    # A token that may write the lease, the clients and the first account, and nothing else.
    only_first = (f'path "secret/data/{path}/lease" {{ capabilities = ["create", "read", "update"] }}\n'
                  f'path "secret/data/{path}/leases/*" {{ capabilities = ["create", "read", "update"] }}\n'
                  f'path "secret/data/{path}/clients" {{ capabilities = ["create", "read", "update"] }}\n'
                  f'path "secret/data/{path}/accounts/{secret_name(first)}" {{ capabilities = ["create", "read", "update"] }}\n'
                  f'path "secret/data/{path}/accounts/*" {{ capabilities = ["read"] }}\n'
                  f'path "secret/metadata/{path}/*" {{ capabilities = ["read", "list"] }}\n')
    openbao.configure("PUT", f"sys/policies/acl/first-{path.replace('/', '-')}", {"policy": only_first})
    configure(one, openbao, path, token_for(openbao, f"first-{path.replace('/', '-')}"), keystore=None)

    stopped = one.run("keystore", "migrate", "--to", "openbao")
    assert stopped.code == EX_REJECTED and "permission denied" in stopped.stderr, stopped
    assert stopped.stdout == f"a:{ALICE}: moved\n", stopped
    assert accounts_in(one, "vault") == [("b", ALICE)], "the first moved, the second is still here"
    assert [record["provider"] for record in openbao_accounts(openbao, path).values()] == ["a"]
    # The write OpenBao refused waits in this machine's journal, as any write back does.
    assert one.journal.exists()

    set_token(one, token_for(openbao, "team"))
    again = one.ok("keystore", "migrate", "--to", "openbao")
    assert again.stdout.splitlines()[0] == f"b:{ALICE}: already there", "the journal wrote it first"
    assert not one.journal.exists()
    assert accounts_in(one, "vault") == []
    assert accounts_in(one, "openbao") == [("a", ALICE), ("b", ALICE)], "each once"
    for provider, idp in (("a", idp_a), ("b", idp_b)):
        assert one.token(provider, "--keystore", "openbao") == tokens[provider]
        assert one.ok("refresh", provider, "--keystore", "openbao").code == EX_OK
        assert_userinfo(idp, one.token(provider, "--keystore", "openbao"), ALICE)


def test_a_run_stopped_before_its_removals_is_finished_keeping_the_newer_copy(team, openbao, idp_a, idp_b):
    one, _, path = team
    one.add_provider("a", idp_a)
    one.add_provider("b", idp_b)
    assert one.login("a").code == EX_OK and one.login("b").code == EX_OK
    configure(one, openbao, path, token_for(openbao, "team"), keystore=None)
    before = one.vault.read_bytes()
    one.ok("keystore", "migrate", "--to", "openbao")
    # What a run killed after its writes leaves: every account in both keystores. Meanwhile the
    # team refreshed a in OpenBao: the vault's copy holds a refresh token rotated away since.
    one.vault.write_bytes(before)
    one.ok("refresh", "a", "--keystore", "openbao")
    refreshed = one.token("a", "--keystore", "openbao")

    again = one.ok("keystore", "migrate", "--to", "openbao")
    assert sorted(again.stdout.splitlines()[:-1]) == [
        f"a:{ALICE}: already there, kept the newer copy there", f"b:{ALICE}: already there"], again
    assert accounts_in(one, "vault") == []
    assert accounts_in(one, "openbao") == [("a", ALICE), ("b", ALICE)], "never duplicated"
    assert one.token("a", "--keystore", "openbao") == refreshed
    assert one.ok("refresh", "a", "--keystore", "openbao").code == EX_OK, "the kept copy holds the live refresh token"


def test_a_migration_to_the_keystore_in_use_is_refused(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    vault = lk.vault_bytes()
    for args in (("--to", "vault"), ("--to", "openbao", "--keystore", "openbao")):
        result = lk.run("keystore", "migrate", *args)
        assert result.code == EX_USAGE and "already" in result.stderr, result
    assert lk.vault_bytes() == vault, "nothing written"


SECRET_SERVICE_SESSION = r"""
set -u
printf 'keyring-password' | gnome-keyring-daemon --unlock --components=secrets >/dev/null
"$LATCHKEY" keystore migrate --to secret-service >"$OUT/to" 2>&1 || exit 10
"$LATCHKEY" status --json --keystore vault >"$OUT/vault-between" || exit 11
"$LATCHKEY" token a --keystore secret-service >"$OUT/token" || exit 12
"$LATCHKEY" keystore migrate --keystore secret-service --to vault >"$OUT/back" 2>&1 || exit 13
"$LATCHKEY" status --json --keystore secret-service >"$OUT/secret-service-after" || exit 14
"""


@pytest.mark.skipif(shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None,
                    reason="needs dbus-run-session and gnome-keyring-daemon (scripts/setup installs them)")
def test_vault_to_secret_service_and_back_in_a_desktop_session(lk, idp_a, idp_b, tmp_path):
    """The secret-service keystore is a vault file of its own whose key the desktop keyring
    holds (gnome-keyring-daemon in a private D-Bus session, as test_secret_service.py runs it):
    the same command moves the accounts into it and back, with no rekeying command needed."""
    lk.add_provider("a", idp_a)
    lk.add_provider("b", idp_b)
    assert lk.login("a").code == EX_OK and lk.login("b").code == EX_OK
    token = lk.token("a")
    session = subprocess.run(["dbus-run-session", "--", "bash", "-c", SECRET_SERVICE_SESSION],
                             env=lk.env(LATCHKEY=LATCHKEY_BIN, OUT=tmp_path), stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=180, preexec_fn=_die_with_parent)
    outputs = {name: (tmp_path / name).read_text() for name in ("to", "back") if (tmp_path / name).exists()}
    assert session.returncode == 0, (session.stderr.decode(errors="replace"), outputs)
    assert "2 of 2 accounts and 0 of 0 registered clients are in secret-service now; nothing is left in vault." in outputs["to"]
    assert json.loads((tmp_path / "vault-between").read_text())["accounts"] == []
    assert (tmp_path / "token").read_text() == token + "\n"
    assert "2 of 2 accounts and 0 of 0 registered clients are in vault now; nothing is left in secret-service." in outputs["back"]
    assert json.loads((tmp_path / "secret-service-after").read_text())["accounts"] == []
    assert accounts_in(lk, "vault") == [("a", ALICE), ("b", ALICE)]
    assert lk.token("a") == token
