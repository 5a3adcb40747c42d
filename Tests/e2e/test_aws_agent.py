"""`latchkey aws-credential` through `latchkey agent`: the agent calls STS (moto's, recording) with
the account's ID token itself, so the client gets only STS's credentials. Through the agent's local
socket the real AWS CLI runs with them; through a socket forwarded by a real OpenSSH server the
AWS CLI on the "remote host" (an empty HOME, no vault) does too, for roles the provider file lists
only, from the STS endpoint the provider file names only, and for accounts marked forward = true
only."""

from __future__ import annotations

import json
import subprocess
import time

from agent_support import agent_env, agents, ask, runtime, wait_for  # noqa: F401  (fixtures)
from test_agent_confirm import waiting_request
from conftest import ALICE, EX_OK, EX_VAULT, LATCHKEY_BIN, _die_with_parent
from test_agent_forwarding import RemoteHost, sshd, start_forwarding  # noqa: F401  (fixture)
from test_aws import AWS, AWSCLI, ROLE, moto  # noqa: F401  (fixture)

OTHER_ROLE = "arn:aws:iam::123456789012:role/audit"
UNLISTED_ROLE = "arn:aws:iam::123456789012:role/admin"
CREDENTIAL_KEYS = {"Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}


def caller(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == EX_OK, result
    return json.loads(result.stdout)["Arn"]


def test_the_aws_cli_gets_credentials_through_the_local_agent_which_asks_sts_once(lk, idp_a, moto, agents):
    lk.add_provider("a", idp_a, aws_region="us-east-1")
    assert lk.login("a", user="alice").code == EX_OK
    agent = agents()
    aws = AWSCLI(lk, moto)
    # Any role, and the client's own endpoint: a local client may choose them, as without the agent.
    aws.config.parent.mkdir(parents=True, exist_ok=True)
    aws.config.write_text(f"[profile p]\ncredential_process = latchkey aws-credential a --role-arn {UNLISTED_ROLE}\n"
                          "region = us-east-1\n")
    moto.start_recording()
    env = aws.env(**agent_env(agent), AWS_ENDPOINT_URL_STS=moto.url)
    for _ in range(2):
        result = subprocess.run([str(AWS), "sts", "get-caller-identity", "--profile", "p"], env=env, cwd=lk.root,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90,
                                preexec_fn=_die_with_parent)
        assert caller(result) == f"arn:aws:sts::123456789012:assumed-role/admin/{ALICE}", result.stderr
    asked = moto.assume_role_requests()
    assert len(asked) == 1, "two aws calls within the credentials' life ask STS once, through the agent too"
    assert asked[0]["WebIdentityToken"] == lk.token("a", "--id-token"), "the agent sent the account's ID token"
    released = [entry for entry in lk.run("agent", "log", "--json").json() if entry["outcome"] == "released"]
    assert len(released) == 2 and not released[-1]["forwarded"], "each answer was the agent's release"

    # The agent's credentials are the ones kept with the account: the command without it answers the same.
    direct = lk.ok("aws-credential", "a", "--role-arn", UNLISTED_ROLE, "--sts-endpoint", moto.url)
    through = lk.ok("aws-credential", "a", "--role-arn", UNLISTED_ROLE, "--sts-endpoint", moto.url, env=agent_env(agent))
    assert json.loads(direct.stdout) == json.loads(through.stdout)
    assert set(json.loads(through.stdout)) == CREDENTIAL_KEYS and through.stderr == "", through
    assert len(moto.assume_role_requests()) == 1


def test_the_launcher_alone_prints_what_the_agent_releases_as_the_full_command_does(lk, idp_a, moto, agents):
    """The AWS CLI runs credential_process before every call: on a machine whose agent answers
    (a forwarded host has no copy to answer from), the launcher asks the agent itself rather than
    starting the full command, and prints the same bytes."""
    lk.add_provider("a", idp_a, aws_region="us-east-1")
    assert lk.login("a", user="alice").code == EX_OK
    agent = agents()
    asked = ("aws-credential", "a", "--role-arn", UNLISTED_ROLE, "--sts-endpoint", moto.url, "--min-ttl", "120")
    moto.start_recording()
    full = subprocess.run([str(LATCHKEY_BIN.parent / "latchkey-cli"), *asked], env=lk.env(**agent_env(agent)), cwd=lk.root,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, preexec_fn=_die_with_parent)
    assert full.returncode == EX_OK and set(json.loads(full.stdout)) == CREDENTIAL_KEYS, full
    lk.leave_only_the_launcher()
    alone = lk.run(*asked, env=agent_env(agent))
    assert alone.code == EX_OK and alone.stderr == "", alone
    assert alone.stdout == full.stdout, "the launcher prints byte for byte what the full command prints"
    assert len(moto.assume_role_requests()) == 1, "both answers are the agent's kept credentials"


def forwarded_setup(lk, idp_a, idp_b, sts: str | None):
    """alice at a (forward = true, two roles listed, `sts` as its STS), bob at b (not forwarded)."""
    for name, idp, user, forward in (("a", idp_a, "alice", True), ("b", idp_b, "bob", None)):
        lk.add_provider(name, idp, forward=forward, aws_role_arn=ROLE, aws_roles=[OTHER_ROLE], aws_sts_endpoint=sts,
                        aws_region="us-east-1")
        assert lk.login(name, user=user).code == EX_OK


def test_a_forwarded_host_runs_the_aws_cli_with_a_listed_role_and_never_holds_the_id_token(
        lk, idp_a, idp_b, moto, agents, runtime, sshd):
    forwarded_setup(lk, idp_a, idp_b, None)
    # No aws_sts_endpoint: the agent's own environment names its STS, and the remote's does not.
    forward = runtime / "latchkey" / "forward.sock"
    agents("--forward-socket", str(forward), env={"AWS_ENDPOINT_URL_STS": moto.url})
    remote = RemoteHost(sshd.root)
    config = remote.home / "aws-config"
    config.write_text(f"[profile p]\ncredential_process = {LATCHKEY_BIN} aws-credential a\n"
                      "region = us-east-1\n")
    aws_env = f"AWS_CONFIG_FILE={config} AWS_SHARED_CREDENTIALS_FILE={remote.home}/none AWS_ENDPOINT_URL={moto.url}"
    moto.start_recording()

    aws_cli = remote.command("sts", "get-caller-identity", "--profile", "p").replace(f"{LATCHKEY_BIN} ", f"{aws_env} {AWS} ", 1)
    arn = caller(sshd.ssh((remote.socket, forward), aws_cli))
    assert arn == f"arn:aws:sts::123456789012:assumed-role/deploy/{ALICE}", "aws_role_arn, from the agent's STS"

    # Another listed role; the remote's AWS_ENDPOINT_URL_STS is not heeded (the agent's is).
    other_role = remote.command("aws-credential", "a", "--role-arn", OTHER_ROLE)
    other = sshd.ssh((remote.socket, forward), other_role.replace(f"{LATCHKEY_BIN} ", f"AWS_ENDPOINT_URL_STS=http://127.0.0.1:9/ {LATCHKEY_BIN} ", 1))
    assert other.returncode == EX_OK and set(json.loads(other.stdout)) == CREDENTIAL_KEYS, other
    asked = moto.assume_role_requests()
    assert [form["RoleArn"] for form in asked] == [ROLE, OTHER_ROLE], "moto was asked for each role once"
    id_token = lk.token("a", "--id-token")
    assert all(form["WebIdentityToken"] == id_token for form in asked), "STS got the ID token from the agent"
    remote_files = [path for path in remote.files() if path != config]
    for path in remote_files:
        text = path.read_text(errors="replace")
        assert id_token not in text and lk.token("a") not in text, f"{path} holds a token"
    assert id_token not in other.stdout + other.stderr and lk.token("a") not in other.stdout
    log = lk.run("agent", "log", "--json").json()
    assert log[-1]["forwarded"] is True and log[-1]["outcome"] == "released"


def test_a_forwarded_host_is_refused_an_unlisted_role_another_sts_endpoint_and_an_unshared_account(
        lk, idp_a, idp_b, moto, agents, runtime, sshd):
    forwarded_setup(lk, idp_a, idp_b, moto.url)
    forward = start_forwarding(agents, runtime)
    remote = RemoteHost(sshd.root)
    moto.start_recording()

    unlisted = sshd.ssh((remote.socket, forward), remote.command("aws-credential", "a", "--role-arn", UNLISTED_ROLE))
    assert unlisted.returncode == EX_VAULT and unlisted.stdout == "", unlisted
    assert "only for a role a's provider file lists (aws_role_arn, aws_roles)" in unlisted.stderr, unlisted
    assert lk.run("agent", "log", "--json").json()[-1]["reason"] == "an AWS role the provider file does not list"

    elsewhere = sshd.ssh((remote.socket, forward), remote.command("aws-credential", "a", "--sts-endpoint", "http://127.0.0.1:9/"))
    assert elsewhere.returncode == EX_VAULT and elsewhere.stdout == "", elsewhere
    assert "may not choose the STS endpoint" in elsewhere.stderr and "aws_sts_endpoint" in elsewhere.stderr, elsewhere

    unshared = sshd.ssh((remote.socket, forward), remote.command("aws-credential", "b"))
    assert unshared.returncode == EX_VAULT and unshared.stdout == "", unshared
    assert "no account shared with forwarded connections answers this request" in unshared.stderr, unshared

    assert moto.assume_role_requests() == [], "nothing refused reached STS"
    same_endpoint = sshd.ssh((remote.socket, forward), remote.command("aws-credential", "a", "--sts-endpoint", moto.url))
    assert same_endpoint.returncode == EX_OK, "the provider file's own endpoint may be named"
    local = lk.ok("aws-credential", "b", "--role-arn", UNLISTED_ROLE)
    assert set(json.loads(local.stdout)) == CREDENTIAL_KEYS, "locally any role, any account"


def test_a_confirm_account_gets_aws_credentials_from_the_agent_only_once_a_person_agrees(lk, idp_a, moto, agents):
    lk.add_provider("a", idp_a, confirm=True, aws_role_arn=ROLE, aws_sts_endpoint=moto.url)
    assert lk.login("a", user="alice").code == EX_OK
    agent = agents()
    moto.start_recording()
    denied = lk.start("aws-credential", "a", env=agent_env(agent))
    assert lk.run("deny", str(waiting_request(denied)), env=agent_env(agent)).code == EX_OK
    result = denied.finish(30)
    assert result.code == EX_VAULT and result.stdout == "", result
    assert f"the release of a token of a:{ALICE} was denied" in result.stderr, result
    assert moto.assume_role_requests() == [], "a refused release costs no STS request"

    approved = lk.start("aws-credential", "a", env=agent_env(agent))
    request = waiting_request(approved)
    time.sleep(0.5)
    assert approved.running(), "no credentials before a person agreed"
    assert lk.run("approve", str(request), env=agent_env(agent)).code == EX_OK
    result = approved.finish(30)
    assert result.code == EX_OK and set(json.loads(result.stdout)) == CREDENTIAL_KEYS, result
    assert len(moto.assume_role_requests()) == 1
    assert lk.run("agent", "log", "--json").json()[-1]["outcome"] == "released"


def test_a_forwarded_host_gets_no_identity_token_of_an_account_whose_provider_file_lists_aws_roles(
        lk, idp_a, idp_b, moto, agents, runtime, sshd):
    """The attack: STS's AssumeRoleWithWebIdentity needs nothing but the ID token, so a host that
    holds it assumes any role at an STS of its own choosing. An account whose provider file lists
    AWS roles releases its ID token to no forwarded host, by any door: token, exec, gcp-credential
    or a raw request for it (alone or with the access token); only the credentials the agent makes
    through the list. `forward_id_token = true` in the provider file releases it (and with it, any
    role): the setting says what it gives away."""
    forwarded_setup(lk, idp_a, idp_b, moto.url)
    forward = start_forwarding(agents, runtime)
    remote = RemoteHost(sshd.root)
    id_token = lk.token("a", "--id-token")
    for door in (("token", "a", "--id-token"), ("exec", "a", "--id-token", "--", "env"), ("gcp-credential", "a")):
        result = sshd.ssh((remote.socket, forward), remote.command(*door))
        said = result.stdout + result.stderr
        assert result.returncode == EX_VAULT and id_token not in said, (door, result)
        assert "gets no identity token of a's accounts" in said and "forward_id_token" in said, (door, said)
    for tokens in ("id", "both"):
        (refused,) = ask(forward, {"op": "token", "selector": "a", "tokens": tokens})
        assert refused["ok"] is False and "id_token" not in refused and "access_token" not in refused, refused
    reasons = [entry.get("reason", "") for entry in lk.run("agent", "log", "--json").json() if entry["forwarded"]]
    assert sum("identity token the provider file keeps for its clouds" in reason for reason in reasons) == 5, reasons
    # The access token, which STS does not take here, and the role's credentials still go.
    assert sshd.ssh((remote.socket, forward), remote.command("token", "a")).stdout.strip() == lk.token("a")
    listed = sshd.ssh((remote.socket, forward), remote.command("aws-credential", "a"))
    assert listed.returncode == EX_OK and set(json.loads(listed.stdout)) == CREDENTIAL_KEYS, listed

    lk.add_provider("a", idp_a, forward=True, aws_role_arn=ROLE, aws_roles=[OTHER_ROLE], aws_sts_endpoint=moto.url,
                    aws_region="us-east-1", forward_id_token=True)
    given = wait_for(lambda: (result := sshd.ssh((remote.socket, forward), remote.command("token", "a", "--id-token"))).returncode == EX_OK
                     and result, what="the agent to read the new provider file")
    assert given.stdout.strip() == lk.token("a", "--id-token"), "forward_id_token = true releases it"


def test_an_account_whose_access_token_is_its_web_identity_keeps_the_access_token_home_too(lk, idp_a, moto, agents, runtime, sshd):
    """aws_web_identity_token = "access_token": STS takes the access token as the account, so it
    is the token a forwarded host must not hold."""
    lk.add_provider("a", idp_a, forward=True, aws_role_arn=ROLE, aws_sts_endpoint=moto.url, aws_region="us-east-1",
                    aws_web_identity_token="access_token")
    assert lk.login("a", user="alice").code == EX_OK
    forward = start_forwarding(agents, runtime)
    remote = RemoteHost(sshd.root)
    access = lk.token("a")
    result = sshd.ssh((remote.socket, forward), remote.command("token", "a"))
    assert result.returncode == EX_VAULT and access not in result.stdout + result.stderr, result
    assert "gets no identity token" in result.stderr, result
    (narrowed,) = ask(forward, {"op": "token", "selector": "a", "scope": "email"})
    assert narrowed["ok"] is True, "a token narrowed to fewer scopes is not what STS takes as the account"
