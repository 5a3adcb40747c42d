"""`keystore = "openbao"` against a real OpenBao 2.7 (openbao_support.py): two machines (two sets
of XDG directories, each with its own OpenBao token) share one team path. An account signed in
on one is used by the other; twelve refreshes from both at once against a provider that rotates
refresh tokens and revokes the family on reuse all succeed; OpenBao down fails fast naming the
address and changes nothing here; a token whose policy does not cover the path, and a secret
there that is not Latchkey's, are refused; a write back OpenBao refuses after the provider
answered waits in the journal (doctor says so) and is written by the next command. Refreshes of
different accounts hold their own leases at once; a logout, which takes the whole path's lease,
never runs beside a refresh of the account it removes."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import ALICE, EX_NO_ACCOUNT, EX_OK, EX_UNAVAILABLE, SHORT_TOKEN_SECONDS, IdP, Latchkey, assert_userinfo
from agent_support import AgentProcess, ask, runtime_dir
from openbao_support import OpenBaoCluster

TOKEN_POST = "POST /o/token/"
# Twelve accounts: Alice at twelve provider files naming one provider.
TWELVE_PROVIDERS = [f"a{number}" for number in range(12)]


def team_policy(prefix: str, capabilities: str = '"create", "read", "update", "list"') -> str:
    return (f'path "secret/data/{prefix}/*" {{ capabilities = [{capabilities}] }}\n'
            f'path "secret/metadata/{prefix}/*" {{ capabilities = ["read", "list"] }}\n')


@pytest.fixture(scope="module")
def reuse_idp(tmp_path_factory):
    """The test provider with refresh-token rotation and reuse protection on: a rotated refresh
    token used again revokes the whole family, as providers in the field do. Its access tokens
    live SHORT_TOKEN_SECONDS, so a test can wait for one to need a refresh, and its token endpoint
    answers 300 ms late, so refreshes started together overlap there (without the lease, two of
    the twelve below use one refresh token and the account is lost)."""
    idp = IdP("idp-reuse", tmp_path_factory.mktemp("idp-reuse"), "--refresh-token-reuse-protection",
              "--access-token-seconds", str(SHORT_TOKEN_SECONDS), "--token-delay-ms", "300",
              "--redirect-paths", ",".join(f"/oauth2redirect/{provider}" for provider in TWELVE_PROVIDERS))
    try:
        idp.wait_ready()
        yield idp
    finally:
        idp.stop()


def start_cluster(directory) -> OpenBaoCluster:
    cluster = OpenBaoCluster(directory, size=1).start()
    cluster.enable_kv("secret")
    cluster.configure("PUT", "sys/policies/acl/team", {"policy": team_policy("team")})
    cluster.configure("PUT", "sys/policies/acl/other", {"policy": team_policy("other")})
    return cluster


@pytest.fixture(scope="module")
def openbao(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory.mktemp("openbao"))
    try:
        yield cluster
    finally:
        cluster.stop()


def token_for(cluster: OpenBaoCluster, *policies: str) -> str:
    return cluster.configure("POST", "auth/token/create", {"policies": list(policies), "ttl": "1h"})["auth"]["client_token"]


class Machine(Latchkey):
    """One machine of the team: its own XDG directories and OpenBao token file."""

    def use_openbao(self, cluster: OpenBaoCluster, path: str, token: str, addresses: list[str] | None = None) -> None:
        """`keystore = "openbao"` at `cluster`'s addresses, or at `addresses` when given."""
        token_file = self.root / "secret" / "openbao-token"
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token)
        (self.config / "latchkey").mkdir(parents=True, exist_ok=True)
        addresses = ", ".join(json.dumps(address) for address in addresses or cluster.addresses)
        (self.config / "latchkey" / "config.toml").write_text(
            f'keystore = "openbao"\n\n[openbao]\naddresses = [{addresses}]\nmount = "secret"\npath = "{path}"\n'
            f'token_file = "{token_file}"\n')

    @property
    def journal(self):
        return self.data / "latchkey" / "openbao.journal"


@pytest.fixture
def machines(tmp_path, openbao):
    """Two machines sharing a team path of their own (each test gets a fresh one)."""
    path = f"team/{secrets.token_hex(4)}"
    pair = [Machine(tmp_path / "one"), Machine(tmp_path / "two")]
    for machine in pair:
        machine.use_openbao(openbao, path, token_for(openbao, "team"))
    yield pair, path
    for machine in pair:
        machine.close()


def stored(cluster: OpenBaoCluster, path: str) -> dict:
    answer = cluster.api("GET", f"secret/data/{path}")
    return answer.json()["data"] if answer.ok else {}


def test_an_account_signed_in_on_one_machine_is_used_by_the_other(machines, idp_a):
    (one, two), path = machines
    for machine in (one, two):
        machine.add_provider("a", idp_a)
    assert one.login("a").code == EX_OK
    token = two.token("a")
    assert token == one.token("a")
    assert_userinfo(idp_a, token, ALICE)
    assert [account["keystore"] for account in two.status()] == ["openbao"]
    for machine in (one, two):
        assert not machine.vault.exists() and not machine.journal.exists(), "no vault file, no journal on a machine"


def test_twelve_refreshes_from_two_machines_at_once_all_succeed_and_the_account_survives(machines, reuse_idp):
    (one, two), path = machines
    for machine in (one, two):
        machine.add_provider("a", reuse_idp)
    assert one.login("a").code == EX_OK
    posts = reuse_idp.count(TOKEN_POST)

    started = time.monotonic()
    with ThreadPoolExecutor(12) as pool:
        runs = list(pool.map(lambda machine: machine.run("refresh", "a", timeout=120), [one, two] * 6))
    seconds = time.monotonic() - started
    failed = [str(run) for run in runs if run.code != EX_OK]
    assert not failed, "\n".join(failed)
    assert reuse_idp.count(TOKEN_POST) == posts + 12, "each refresh asked the provider once, one after another"

    token = one.token("a")
    assert two.token("a") == token
    assert_userinfo(reuse_idp, token, ALICE)
    assert two.run("refresh", "a").code == EX_OK, "the refresh token OpenBao holds is the family's newest"
    print(f"12 refreshes from two machines at once: {seconds:.1f} s")


def live_leases(cluster: OpenBaoCluster, path: str) -> int:
    """How many account leases under `path` are held now (an owner, a deadline to come)."""
    listed = cluster.api("LIST", f"secret/metadata/{path}/leases")
    names = listed.json()["data"]["keys"] if listed.ok else []
    held = 0
    for name in names:
        lease = stored(cluster, f"{path}/leases/{name}").get("data") or {}
        held += bool(lease.get("owner")) and float(lease.get("deadline", 0)) > time.time()
    return held


def test_refreshes_of_twelve_accounts_from_two_machines_hold_their_leases_at_once(machines, openbao, reuse_idp):
    """Twelve accounts (one per provider file, each at the provider that answers 300 ms late):
    refreshed together from both machines, their leases are seen held together in OpenBao, where
    the path's one lease let a single refresh run at a time."""
    (one, two), path = machines
    providers = TWELVE_PROVIDERS
    for machine in (one, two):
        for provider in providers:
            machine.add_provider(provider, reuse_idp)
    for provider in providers:
        assert one.login(provider).code == EX_OK
    before = {provider: one.token(provider) for provider in providers}

    most, done = 0, False

    def watch() -> None:
        nonlocal most
        while not done:
            most = max(most, live_leases(openbao, path))

    with ThreadPoolExecutor(13) as pool:
        watcher = pool.submit(watch)
        started = time.monotonic()
        runs = list(pool.map(lambda pair: pair[0].run("refresh", pair[1], timeout=120), zip([one, two] * 6, providers)))
        seconds = time.monotonic() - started
        done = True
        watcher.result()
    failed = [str(run) for run in runs if run.code != EX_OK]
    assert not failed, "\n".join(failed)
    assert most >= 2, f"at most {most} account lease was held at a time: the refreshes queued"
    for provider in providers:
        assert one.token(provider) != before[provider]
        # Reuse protection revokes a family whose rotated refresh token is used again.
        assert two.run("refresh", provider).code == EX_OK, f"{provider}: OpenBao holds the family's newest refresh token"
    print(f"12 refreshes of 12 accounts from two machines at once: {seconds:.1f} s, up to {most} leases held together")


@pytest.mark.parametrize("first", ["refresh", "logout"])
def test_a_logout_racing_a_refresh_of_its_account_from_another_machine_leaves_it_signed_out(machines, openbao, reuse_idp, first):
    """A refresh on one machine and a logout of the same account on the other, each started
    while the other holds its lease. Whatever the order, the account ends signed out everywhere:
    a refresh that wrote back after the logout (into the journal, on a check-and-set it lost)
    would bring it back with the next command."""
    (one, two), path = machines
    for machine in (one, two):
        machine.add_provider("a", reuse_idp)
    assert one.login("a").code == EX_OK
    commands = {"refresh": (one, ("refresh", "a")), "logout": (two, ("logout", "a"))}
    second = "logout" if first == "refresh" else "refresh"
    started = commands[first][0].start(*commands[first][1])
    # The first holds its lease (the provider answers its token and revocation requests 300 ms
    # late) when the second starts.
    deadline = time.monotonic() + 10
    while live_leases(openbao, path) == 0 and not (stored(openbao, f"{path}/lease").get("data") or {}).get("owner"):
        assert time.monotonic() < deadline and started.popen.poll() is None, "the first command was never seen holding a lease"
        time.sleep(0.02)
    results = {second: commands[second][0].run(*commands[second][1], timeout=120), first: started.finish(120)}

    assert results["logout"].code == EX_OK, results["logout"]
    if first == "refresh":
        assert results["refresh"].code == EX_OK, results["refresh"]
    else:
        assert results["refresh"].code == EX_NO_ACCOUNT and "no account" in results["refresh"].stderr, results["refresh"]
    for machine in (one, two):
        assert machine.status() == [], f"the account came back on {machine.root.name}"
        assert not machine.journal.exists()


def test_a_machine_that_waited_for_the_lease_reads_the_new_token_and_does_not_refresh_again(machines, reuse_idp):
    (one, two), path = machines
    for machine in (one, two):
        machine.add_provider("a", reuse_idp)
    assert one.login("a").code == EX_OK
    time.sleep(SHORT_TOKEN_SECONDS + 1)
    posts = reuse_idp.count(TOKEN_POST)
    with ThreadPoolExecutor(2) as pool:
        tokens = list(pool.map(lambda machine: machine.token("a"), [one, two]))
    assert tokens[0] == tokens[1], "the machine that waited read the token the other wrote"
    assert reuse_idp.count(TOKEN_POST) == posts + 1, "one refresh for both machines"


def test_openbao_down_fails_fast_naming_the_address_and_changes_nothing_here(tmp_path, idp_a):
    cluster = start_cluster(tmp_path / "openbao")
    machine = Machine(tmp_path / "machine")
    try:
        machine.use_openbao(cluster, "team/down", token_for(cluster, "team"))
        machine.add_provider("a", idp_a)
        assert machine.login("a").code == EX_OK
        before = {path: path.read_bytes() for path in machine.files()}
        cluster.nodes[0].stop()

        for args in (("token", "a"), ("refresh", "a"), ("status",)):
            result = machine.run(*args)
            assert result.code == EX_UNAVAILABLE and result.seconds < 5, result
            assert f"cannot reach OpenBao at {cluster.url.removeprefix('http://')}" in result.stderr, result
        assert {path: path.read_bytes() for path in machine.files()} == before, "nothing local changed"

        cluster.nodes[0].start()
        cluster.unseal(cluster.nodes[0])
        cluster.wait_until(lambda: cluster.nodes[0].health() == 200, "the node did not become active again")
        assert_userinfo(idp_a, machine.token("a"), ALICE)
        assert machine.run("refresh", "a").code == EX_OK, "the account came back with the cluster"
    finally:
        machine.close()
        cluster.stop()


def test_a_sealed_node_is_passed_over_and_when_every_node_is_sealed_the_message_says_so(tmp_path, idp_a):
    """The first address is a sealed OpenBao (sealed by its operator), the second serves: every
    command works through the second. Then the second is sealed too: each command fails at once
    saying OpenBao is sealed at both addresses, and nothing on the machine changes."""
    sealed, serving = start_cluster(tmp_path / "sealed"), start_cluster(tmp_path / "serving")
    machine = Machine(tmp_path / "machine")
    try:
        assert sealed.bao("operator", "seal", token=sealed.root_token).returncode == 0
        assert sealed.nodes[0].health() == 503
        machine.use_openbao(serving, "team/sealed", token_for(serving, "team"), addresses=[sealed.url, serving.url])
        machine.add_provider("a", idp_a)
        assert machine.login("a").code == EX_OK
        token = machine.token("a")
        assert_userinfo(idp_a, token, ALICE)
        assert machine.run("refresh", "a").code == EX_OK and machine.token("a") != token

        assert serving.bao("operator", "seal", token=serving.root_token).returncode == 0
        before = {path: path.read_bytes() for path in machine.files()}
        hosts = ", ".join(address.removeprefix("http://") for address in (sealed.url, serving.url))
        for args in (("token", "a"), ("refresh", "a"), ("status",)):
            result = machine.run(*args)
            assert result.code == EX_UNAVAILABLE and result.seconds < 5, result
            assert f"OpenBao is sealed at {hosts}" in result.stderr, result
        assert {path: path.read_bytes() for path in machine.files()} == before, "nothing local changed"

        assert serving.unseal(serving.nodes[0])
        serving.wait_until(lambda: serving.nodes[0].health() == 200, "the node did not become active again")
        assert machine.run("refresh", "a").code == EX_OK, "unsealed, it serves again"
    finally:
        machine.close()
        sealed.stop()
        serving.stop()


def test_a_token_whose_policy_does_not_cover_the_path_is_refused_naming_the_path(machines, openbao, idp_a):
    (one, _), path = machines
    one.use_openbao(openbao, path, token_for(openbao, "other"))
    one.add_provider("a", idp_a)
    result = one.login("a")
    assert result.code != EX_OK and f"secret/metadata/{path}/accounts" in result.stderr, result
    assert "permission denied" in result.stderr and result.stderr.count("\n") == 1, result
    assert not one.vault.exists() and not one.ua_log_text(), "refused before the browser was opened"


def test_a_secret_at_the_path_that_is_not_latchkeys_is_refused_and_left_alone(machines, openbao, idp_a):
    (one, _), path = machines
    one.add_provider("a", idp_a)
    openbao.configure("POST", f"secret/data/{path}/lease", {"data": {"owner": "the ops team's own lease"}})
    result = one.login("a")
    assert result.code != EX_OK and f"secret/{path}/lease that Latchkey did not write" in result.stderr, result
    lease = stored(openbao, f"{path}/lease")
    assert lease["data"] == {"owner": "the ops team's own lease"} and lease["metadata"]["version"] == 1, "left alone"

    openbao.api("DELETE", f"secret/metadata/{path}/lease")
    openbao.configure("POST", f"secret/data/{path}/accounts/database", {"data": {"password": "not latchkey's"}})
    result = one.run("status")
    assert result.code != EX_OK and f"secret/{path}/accounts/database that Latchkey did not write" in result.stderr, result
    assert stored(openbao, f"{path}/accounts/database")["metadata"]["version"] == 1


def write_only_leases_policy(openbao: OpenBaoCluster, path: str) -> str:
    """A policy that lets the leases be written but not the accounts: a refresh runs, its write
    back fails after the provider answered. Its name."""
    name = f"readonly-{secrets.token_hex(3)}"
    openbao.configure("PUT", f"sys/policies/acl/{name}", {"policy": (
        f'path "secret/data/{path}/lease" {{ capabilities = ["create", "read", "update"] }}\n'
        f'path "secret/data/{path}/leases/*" {{ capabilities = ["create", "read", "update"] }}\n'
        f'path "secret/data/{path}/accounts/*" {{ capabilities = ["read"] }}\n'
        f'path "secret/metadata/{path}/*" {{ capabilities = ["read", "list"] }}\n')})
    return name


def test_a_write_back_openbao_refuses_after_the_provider_answered_waits_in_the_journal(machines, openbao, reuse_idp):
    (one, two), path = machines
    for machine in (one, two):
        machine.add_provider("a", reuse_idp)
    assert one.login("a").code == EX_OK
    name = write_only_leases_policy(openbao, path)
    one.use_openbao(openbao, path, token_for(openbao, name))
    before = one.token("a")

    refreshed = one.run("refresh", "a")
    assert refreshed.code == EX_OK, refreshed
    assert one.journal.exists() and one.journal.stat().st_mode & 0o777 == 0o600
    doctor = one.run("doctor")
    assert "openbao journal" in doctor.stdout and str(one.journal) in doctor.stdout, doctor

    openbao.configure("PUT", f"sys/policies/acl/{name}", {"policy": team_policy("team")})
    assert one.run("status").code == EX_OK
    assert not one.journal.exists(), "the next command wrote the journal and removed it"
    token = two.token("a")
    assert token != before and one.token("a") == token
    assert_userinfo(reuse_idp, token, ALICE)
    assert two.run("refresh", "a").code == EX_OK, "the rotated refresh token reached OpenBao: the family lives"


def test_three_refreshes_of_three_accounts_while_openbao_refuses_writes_all_reach_it_later(machines, openbao, reuse_idp):
    """Three accounts refreshed at once while OpenBao refuses the write backs: each command
    succeeds, the journal keeps all three changes (it kept one: each replaced the whole file),
    holds no access token and no DPoP key, and once OpenBao takes writes again every rotated
    refresh token reaches it: the other machine refreshes each account, and the provider, which
    revokes a family whose rotated refresh token is presented again, accepts all three."""
    (one, two), path = machines
    providers = TWELVE_PROVIDERS[:3]
    for machine in (one, two):
        for provider in providers:
            machine.add_provider(provider, reuse_idp)
    for provider in providers:
        assert one.login(provider).code == EX_OK
    before = {provider: one.token(provider) for provider in providers}
    name = write_only_leases_policy(openbao, path)
    one.use_openbao(openbao, path, token_for(openbao, name))

    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda provider: one.run("refresh", provider, timeout=120), providers))
    failed = [str(run) for run in runs if run.code != EX_OK]
    assert not failed, "\n".join(failed)
    journal = json.loads(one.journal.read_text())
    assert sorted(change["record"]["provider"] for change in journal["changes"]) == providers, journal
    for change in journal["changes"]:
        assert change["record"]["accessToken"] == "" and "dpopKey" not in change["record"]
    doctor = one.run("doctor")
    assert "openbao journal" in doctor.stdout and "holds 3 changes" in doctor.stdout, doctor

    openbao.configure("PUT", f"sys/policies/acl/{name}", {"policy": team_policy("team")})
    assert one.run("status").code == EX_OK
    assert not one.journal.exists(), "the next command wrote every change and removed the journal"
    for provider in providers:
        assert two.run("refresh", provider).code == EX_OK, f"{provider}: OpenBao holds the family's newest refresh token"
        token = two.token(provider)
        assert token != before[provider]
        assert_userinfo(reuse_idp, token, ALICE)


def test_a_lease_with_a_deadline_no_latchkey_writes_is_taken_over_listed_and_cleared(machines, openbao, idp_a):
    """A teammate writes the path's lease with the deadline 99999999999: the refresh on the
    other machine still succeeds at once (it waited 90 s and failed, and so did every sign-in,
    sign-out and `default` on the path), `doctor` and `keystore leases` name the holder and say
    it is taken over, and `keystore leases --clear lease` frees it with check-and-set."""
    (one, two), path = machines
    for machine in (one, two):
        machine.add_provider("a", idp_a)
    assert one.login("a").code == EX_OK
    openbao.configure("POST", f"secret/data/{path}/lease", {"data": {
        "latchkey": "lease", "owner": "mallory-laptop pid 4242 x", "deadline": "99999999999"}})

    started = time.monotonic()
    refreshed = two.run("refresh", "a", timeout=120)
    seconds = time.monotonic() - started
    assert refreshed.code == EX_OK, refreshed
    assert seconds < 10, f"the refresh waited {seconds:.1f} s for a lease that never ends"
    assert two.run("logout", "a").code == EX_OK
    assert one.login("a").code == EX_OK

    openbao.configure("POST", f"secret/data/{path}/lease", {"data": {
        "latchkey": "lease", "owner": "mallory-laptop pid 4242 x", "deadline": "99999999999"}})
    doctor = two.run("doctor")
    assert "openbao lease: lease: held by mallory-laptop pid 4242 x with the deadline 99999999999" in doctor.stdout, doctor
    assert "latchkey keystore leases --clear lease" in doctor.stdout, doctor
    listed = two.run("keystore", "leases")
    assert listed.code == EX_OK and listed.stdout.startswith("lease: held by mallory-laptop pid 4242 x"), listed
    assert "the next one takes it over" in listed.stdout, listed

    cleared = two.run("keystore", "leases", "--clear", "lease")
    assert cleared.code == EX_OK and "cleared lease" in cleared.stdout, cleared
    assert stored(openbao, f"{path}/lease")["data"]["owner"] == ""
    listed = two.run("keystore", "leases")
    assert listed.code == EX_OK and listed.stdout.startswith("no lease is held"), listed


def test_the_active_node_killed_mid_refresh_and_the_whole_cluster_restarted_lose_no_account(tmp_path, reuse_idp):
    """Three nodes with Raft: the active one killed while a refresh holds the lease and the
    provider is answering (its write back then fails and the new tokens wait in the journal),
    then every node stopped and started again. The account (at a provider that revokes the
    family on reuse) survives both, and the machine reaches the new leader through the other
    addresses.

    The nodes keep OpenBao's default: standbys answer reads from their own copy, which lags the
    active node's by a few milliseconds. After the failover a standby is the first node that
    answers, so the refresh that takes over the dead holder's lease writes the journal through
    it (forwarded to the active node) and reads the account back from it at once: without the
    lease write's X-Vault-Index on those reads, that read gave the version from before the
    journal's and the refresh presented the rotated refresh token (invalid_grant, the family
    revoked)."""
    cluster = OpenBaoCluster(tmp_path / "openbao", size=3)
    cluster.start()
    machine = Machine(tmp_path / "machine")
    try:
        cluster.enable_kv("secret")
        cluster.configure("PUT", "sys/policies/acl/team", {"policy": team_policy("team")})

        def voters() -> int:
            servers = cluster.configure("GET", "sys/storage/raft/configuration")["data"]["config"]["servers"]
            return sum(1 for server in servers if server["voter"])
        cluster.wait_until(lambda: voters() == 3, "autopilot did not make the three nodes voters", timeout=90)

        machine.use_openbao(cluster, "team/ha", token_for(cluster, "team"))
        machine.add_provider("a", reuse_idp)
        assert machine.login("a").code == EX_OK

        running = machine.start("refresh", "a")
        time.sleep(0.2)  # the token endpoint answers 300 ms late: the lease is held, the provider asked
        cluster.nodes[0].kill()
        first = running.finish(120)
        assert first.code in (EX_OK, EX_UNAVAILABLE), first
        journaled = machine.journal.exists()
        cluster.wait_until(lambda: any(node.health() == 200 for node in cluster.nodes[1:]), "no new leader", timeout=60)
        # The dead node first (refused), then the standby, which answers reads from its own copy.
        standby = next(node for node in cluster.nodes[1:] if node.health() == 429)
        active = next(node for node in cluster.nodes[1:] if node is not standby)
        machine.use_openbao(cluster, "team/ha", (machine.root / "secret" / "openbao-token").read_text(),
                            addresses=[cluster.nodes[0].url, standby.url, active.url])

        # A lease the killed refresh could not free expires within 60 s; the next refresh waits for it.
        after = machine.run("refresh", "a", timeout=150)
        assert after.code == EX_OK, f"{first}\n{after}"
        assert not machine.journal.exists()
        assert_userinfo(reuse_idp, machine.token("a"), ALICE)
        print(f"refresh during the kill: exit {first.code} after {first.seconds:.1f} s, journal {journaled}; "
              f"the next refresh {after.seconds:.1f} s")

        for node in cluster.nodes[1:]:
            node.stop()
        down = machine.run("token", "a")
        assert down.code == EX_UNAVAILABLE and down.seconds < 5, down
        assert all(address.removeprefix("http://") in down.stderr for address in cluster.addresses), down

        for node in cluster.nodes:
            node.start()
        for node in cluster.nodes:
            cluster.wait_until(lambda node=node: cluster.unseal(node), f"{node.node_id} did not take the key")
        cluster.wait_until(lambda: any(node.health() == 200 for node in cluster.nodes), "no leader after the restart", timeout=90)
        assert machine.run("refresh", "a", timeout=150).code == EX_OK, "the account came back with the cluster"
        assert_userinfo(reuse_idp, machine.token("a"), ALICE)
    finally:
        machine.close()
        cluster.stop()


def test_a_logout_on_one_machine_is_seen_by_the_other_machines_agent_within_its_cache_time(machines, idp_a):
    """The agent's record cache follows the keystore in use (`Keystore.freshness`: 5 s for
    OpenBao), not a vault file that `keystore = "openbao"` leaves empty: another machine's
    logout ends this agent's answers within that time."""
    (one, two), _ = machines
    for machine in (one, two):
        machine.add_provider("a", idp_a)
    assert one.login("a").code == EX_OK
    runtime = runtime_dir()
    agent = AgentProcess(two, runtime).wait_listening()
    try:
        first = ask(agent.socket, {"op": "token", "selector": "a"})[-1]
        assert first["ok"] and first["access_token"], first
        assert one.run("logout", "a").code == EX_OK
        logged_out = time.monotonic()
        while True:
            answer = ask(agent.socket, {"op": "token", "selector": "a"})[-1]
            if not answer["ok"]:
                break
            assert time.monotonic() - logged_out < 5 + 3, "the agent still answers 8 s after the other machine's logout"
            time.sleep(0.2)
        assert answer["exit"] == EX_NO_ACCOUNT or "not signed in" in answer["message"], answer
    finally:
        agent.stop()
        shutil.rmtree(runtime, ignore_errors=True)
