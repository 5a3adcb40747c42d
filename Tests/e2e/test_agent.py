"""
`latchkey agent` on this machine: the door to the vault for other processes.

* `token`, `exec`, `git-credential`, `status`, `kubectl-credential` and `docker-credential` ask the agent when LATCHKEY_AGENT names its
  socket (no vault, no passphrase needed by the client), and when the default socket in
  $XDG_RUNTIME_DIR/latchkey answers; the launcher speaks the protocol itself;
* the agent keeps accounts fresh ahead of expiry with nobody asking;
* an account only a sign-in can help is said, with exit 66 and the command to run;
* every release is in `latchkey agent log`.

The attacks on the agent's limits are in test_agent_attacks.py.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time

from agent_support import ResourceBlindTokenEndpoint, agent_env, agents, ask, ath, runtime, wait_for  # noqa: F401  (fixtures)
from conftest import ALICE, EX_NO_ACCOUNT, EX_OK, EX_UNAVAILABLE, assert_userinfo
from test_sign_in_again import signed_in_then_revoked


def signed_in(lk, idp, name="a"):
    lk.add_provider(name, idp, git_hosts=["git.example.test"])
    assert lk.login(name).code == EX_OK
    return lk.token(name)


def test_a_client_with_no_vault_gets_the_token_through_the_agent_named_by_latchkey_agent(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    lk.run("lock")
    # No passphrase, no key in the keyring: only the agent can answer.
    result = lk.run("token", "a", env=agent_env(agent))
    assert result.code == EX_OK and result.stdout == token + "\n", result
    lk.leave_only_the_launcher()
    alone = lk.run("token", "a", env=agent_env(agent))
    assert alone.code == EX_OK and alone.stdout == token + "\n", f"the launcher alone asks the agent\n{alone}"
    assert_userinfo(idp_a, token, ALICE)


def test_exec_git_credential_and_status_ask_the_agent(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    lk.run("lock")
    env = agent_env(agent)
    result = lk.run("exec", "a", "--", "sh", "-c", 'printf %s "$LATCHKEY_ACCESS_TOKEN"', env=env)
    assert result.code == EX_OK and result.stdout == token, result
    git = lk.run("git-credential", "get", env=env, input=b"protocol=https\nhost=git.example.test\n\n")
    assert git.code == EX_OK and git.stdout == f"username=oauth2\npassword={token}\n", git
    silent = lk.run("git-credential", "get", env=env, input=b"protocol=https\nhost=elsewhere.example\n\n")
    assert silent.code == EX_OK and silent.stdout == "", "a host no provider maps gets no answer"
    status = lk.run("status", "--json", env=env)
    assert status.code == EX_OK, status
    (account,) = status.json()["accounts"]
    assert account["account"] == ALICE and "token" not in json.dumps(account).lower().replace("refresh_token", "")
    listing = lk.run("status", env=env)
    assert listing.code == EX_OK and "a — IdP A" in listing.stdout and ALICE in listing.stdout, listing


def test_the_kubectl_and_container_credential_helpers_ask_the_agent(lk, idp_a, agents):
    lk.add_provider("a", idp_a, registry_hosts=["registry.example.test"])
    assert lk.login("a").code == EX_OK
    token = lk.token("a")
    agent = agents()
    lk.run("lock")
    env = agent_env(agent)
    info = json.dumps({"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "spec": {"interactive": False}})
    kube = lk.run("kubectl-credential", "a", env={**env, "KUBERNETES_EXEC_INFO": info})
    assert kube.code == EX_OK and kube.stderr == "", kube
    answer = json.loads(kube.stdout)
    assert answer["status"]["token"] == token and answer["status"]["expirationTimestamp"], answer
    docker = lk.run("docker-credential", "get", env=env, input=b"https://registry.example.test/v2/")
    assert docker.code == EX_OK, docker
    assert json.loads(docker.stdout) == {"ServerURL": "https://registry.example.test/v2/", "Username": "oauth2accesstoken",
                                         "Secret": token}
    log = lk.run("agent", "log", "--json").json()
    assert [entry["outcome"] for entry in log[-2:]] == ["released", "released"], log


def test_the_container_helper_says_the_agents_refusal_on_stdout_as_its_protocol_wants(lk, idp_a, agents, runtime):
    lk.add_provider("a", idp_a, registry_hosts=["registry.example.test"])
    assert lk.login("a").code == EX_OK
    forward = runtime / "latchkey" / "forward.sock"
    agents("--forward-socket", str(forward))
    docker = lk.run("docker-credential", "get", env={"LATCHKEY_AGENT": forward, "LATCHKEY_PASSPHRASE_FILE": None},
                    input=b"registry.example.test")
    assert docker.code != EX_OK and docker.stdout.startswith("latchkey: ") and "shared with forwarded connections" in docker.stdout, docker


def test_the_default_socket_answers_when_latchkey_agent_is_unset_and_the_vault_is_locked(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    lk.run("lock")
    env = {"LATCHKEY_PASSPHRASE_FILE": None, "XDG_RUNTIME_DIR": agent.runtime}
    assert lk.run("token", "a", env=env).stdout == token + "\n"
    lk.leave_only_the_launcher()
    alone = lk.run("token", "a", env=env)
    assert alone.code == EX_OK and alone.stdout == token + "\n", alone


def test_with_no_agent_at_the_default_socket_commands_go_on_as_before(lk, idp_a, runtime):
    token = signed_in(lk, idp_a)
    lk.run("lock")
    result = lk.run("token", "a", env={"XDG_RUNTIME_DIR": runtime})
    assert result.code == EX_OK and result.stdout == token + "\n", "the vault answers, with the passphrase file"


def test_an_agent_named_by_latchkey_agent_that_is_not_running_is_a_clear_error(lk, runtime):
    missing = runtime / "nothing.sock"
    for args in (("token", "a"), ("status",), ("exec", "a", "--", "true")):
        result = lk.run(*args, env={"LATCHKEY_AGENT": missing, "LATCHKEY_PASSPHRASE_FILE": None})
        assert result.code == EX_UNAVAILABLE and result.stdout == "", result
        assert f"no agent answers at {missing}" in result.stderr, result


def test_the_agent_refreshes_a_token_ahead_of_expiry_with_nobody_asking(lk, idp_short, agents):
    signed_in(lk, idp_short)
    (before,) = lk.status()
    refreshes = idp_short.count("POST /o/token/")
    agents()
    # 4-second tokens: refreshed at half their lifetime, several times within 7 s.
    wait_for(lambda: idp_short.count("POST /o/token/") >= refreshes + 2, timeout=15, what="two refreshes")
    (after,) = lk.status()
    assert after["expires_at"] != before["expires_at"], "the vault holds the refreshed token"
    assert after["last_error"] is None


def test_a_revoked_refresh_token_through_the_agent_exits_66_naming_the_command_and_the_agent_says_it(lk, idp_short, agents):
    signed_in_then_revoked(lk, idp_short)
    agent = agents()
    result = lk.run("token", "a", env=agent_env(agent))
    assert result.code == EX_NO_ACCOUNT and result.stdout == "", result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"latchkey login a:{ALICE}" in lines[0], result
    wait_for(lambda: f"a:{ALICE} needs a sign-in" in agent.stderr(), what="the agent to say the account needs a sign-in")


def test_every_release_is_in_the_agent_log_without_the_token(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    assert lk.run("token", "a", env=agent_env(agent)).code == EX_OK
    log = lk.run("agent", "log", "--json")
    assert log.code == EX_OK, log
    (entry,) = log.json()
    assert entry["account"] == f"a:{ALICE}" and entry["outcome"] == "released" and entry["forwarded"] is False
    assert "token a" in entry["requester"], "the requesting command line is named"
    text = lk.run("agent", "log")
    assert f"released  a:{ALICE}  local:" in text.stdout, text
    logs = list((lk.home / ".local" / "state" / "latchkey").glob("agent.log*"))
    assert logs and all(token not in p.read_text() for p in logs)


def test_the_agent_answers_the_directory_mapping_of_the_clients_working_directory(lk, idp_a, agents):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    assert lk.login("a", user="bob").code == EX_OK
    assert lk.run("default", f"a:{ALICE}").code == EX_OK
    work = lk.root / "work"
    work.mkdir()
    (lk.config / "latchkey").mkdir(exist_ok=True)
    (lk.config / "latchkey" / "config.toml").write_text(f'[directories."{work}"]\na = "bob@example.test"\n')
    agent = agents()
    bob = lk.run("token", "a", env=agent_env(agent), cwd=work)
    alice = lk.run("token", "a", env=agent_env(agent))
    assert bob.code == EX_OK and alice.code == EX_OK
    assert_userinfo(idp_a, bob.stdout.strip(), "bob@example.test")
    assert_userinfo(idp_a, alice.stdout.strip(), ALICE)


def test_sigterm_stops_the_agent_and_removes_its_socket(lk, agents):
    agent = agents()
    assert agent.socket.exists()
    agent.popen.send_signal(15)
    assert agent.wait_exit() == 0, agent.stderr()
    assert not agent.socket.exists()


def test_a_raw_client_gets_one_json_answer_and_the_connection_closes(lk, idp_a, agents):
    token = signed_in(lk, idp_a)
    agent = agents()
    (answer,) = ask(agent.socket, {"op": "token", "selector": "a"})
    assert answer["ok"] is True and answer["access_token"] == token and answer["account"] == ALICE
    (refusal,) = ask(agent.socket, {"op": "token", "selector": "nope"})
    assert refusal["ok"] is False and refusal["exit"] == EX_NO_ACCOUNT and "nope" in refusal["message"]


def test_a_default_socket_that_takes_the_connection_and_closes_it_is_passed_over_as_no_agent(lk, idp_a, runtime):
    """An agent too busy to serve (all its connections taken) closes new ones unanswered."""
    token = signed_in(lk, idp_a)
    lk.run("lock")  # so that neither the token copies nor the cached key answer before the agent is tried
    directory = runtime / "latchkey"
    directory.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(directory / "agent.sock"))
    server.listen(16)
    closed = []

    def accept_and_close():
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            closed.append(1)
            client.close()

    threading.Thread(target=accept_and_close, daemon=True).start()
    try:
        env = {"XDG_RUNTIME_DIR": runtime}
        result = lk.run("token", "a", env=env)
        assert result.code == EX_OK and result.stdout == token + "\n", result
        assert closed, "the socket was tried"
        status = lk.run("status", "--json", env=env)
        assert status.code == EX_OK and status.json()["accounts"][0]["account"] == ALICE, status
    finally:
        server.close()


def test_the_vault_keeps_at_most_16_narrowed_tokens_an_account_however_many_resources_are_asked(lk, idp_a, agents):
    endpoint = ResourceBlindTokenEndpoint(f"{idp_a.issuer}/token/")
    try:
        lk.add_provider("a", idp_a, token_endpoint=endpoint.url)
        assert lk.login("a").code == EX_OK
        agent = agents()
        sizes = {}
        for i in range(40):
            (answer,) = ask(agent.socket, {"op": "token", "selector": "a", "resource": f"https://api{i}.example.test/" + "x" * 1900})
            assert answer["ok"] is True, answer
            sizes[i] = len(lk.vault_bytes())
    finally:
        endpoint.server.shutdown()
    # Each token kept is about 2 KB: 24 more would be about 48 KB more.
    assert sizes[15] - sizes[0] > 25_000, sizes
    assert sizes[39] - sizes[15] < 2000, sizes
    over = ask(agent.socket, {"op": "token", "selector": "a", "resource": "https://api.example.test/" + "x" * 2100})[0]
    assert over["ok"] is False and "longer than the 2048 a resource indicator may have" in over["message"], over
    direct = lk.run("token", "a", "--resource", "https://api.example.test/" + "x" * 2100)
    assert direct.code != EX_OK and "--resource" in direct.stderr and "2048" in direct.stderr, direct
    assert len(lk.vault_bytes()) == sizes[39]


def test_resource_goes_on_the_code_exchange_and_every_refresh_of_an_account_whose_provider_file_lists_one(lk, idp_a, agents):
    """RFC 8707 §2 on token requests, as the MCP authorization spec requires: the authorization
    request alone named the resource before, and the token endpoint never heard of it."""
    endpoint = ResourceBlindTokenEndpoint(f"{idp_a.issuer}/token/")
    try:
        lk.add_provider("a", idp_a, token_endpoint=endpoint.url, resources=["https://api.example.test/"])
        assert lk.login("a").code == EX_OK
        assert lk.run("refresh", "a").code == EX_OK
        agent = agents()
        (answer,) = ask(agent.socket, {"op": "token", "selector": "a", "refused": ath(lk.token("a"))})
        assert answer["ok"] is True, answer
    finally:
        endpoint.server.shutdown()
    grants = [dict(form).get("grant_type") for form in endpoint.forms]
    assert grants == ["authorization_code", "refresh_token", "refresh_token"], grants
    for form in endpoint.forms:
        assert [value for key, value in form if key == "resource"] == ["https://api.example.test/"], form
