"""
Sign-in end to end against glewlwyd (Debian's glewlwyd 2.7, written in C), a second OpenID
provider written independently of the django-oauth-toolkit one, with its quirks:

* it accepts only exactly registered redirect URIs, port included (so `loopback_port`);
* it sends RFC 9207 `iss` without advertising it, and Latchkey still checks it;
* revocation wants the access token as a Bearer credential;
* refresh tokens are one-time and refreshes carry no ID token.

Then the newer pieces, each discovered from its metadata: pushed authorization requests
(RFC 9126), DPoP (RFC 9449) and tokens for one resource (RFC 8707), with their negative cases.
Two more instances: `current` allows PAR, DPoP (no nonces) and resources, `strict` requires PAR
and a DPoP nonce in every proof. Dynamic client registration (RFC 7591, RFC 7592) has two of its
own: `registration` is open to anyone, `closed` wants an initial access token.

The instances are configured through glewlwyd's admin API by Tests/glewlwyd/run_glewlwyd.py.
"""
import base64
import hashlib
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from agent_support import agent_env, agents, runtime  # noqa: F401  (fixtures)
from tui_support import tmux  # noqa: F401  (fixture)
from conftest import EX_NO_ACCOUNT, EX_OK, EX_PROVIDER_FILE, EX_REJECTED, EX_USAGE, LATCHKEY_BIN, REPO, ServerProcess, assert_clean_stderr, free_ports, jwt_parts, message

pytestmark = pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")


class Glewlwyd(ServerProcess):
    """One run_glewlwyd.py process; its READY line carries JSON."""

    def __init__(self, data_dir, ports: list[int], features: tuple[str, ...] = (), extra: tuple[str, ...] = ()):
        self.ports = ports
        uris = [arg for port in ports for arg in ("--redirect-uri", f"http://127.0.0.1:{port}/oauth2redirect/g")]
        switches = [arg for feature in features for arg in ("--feature", feature)]
        super().__init__("glewlwyd", [sys.executable, str(REPO / "Tests" / "glewlwyd" / "run_glewlwyd.py"),
                                      "--data-dir", str(data_dir), *uris, *switches, *extra], data_dir)

    def wait_ready(self, timeout: float = 90):
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline and self.proc.poll() is None and not line:
            line = self.proc.stdout.readline()
        if not line.startswith(b"READY "):
            self.stop()
            raise RuntimeError(f"glewlwyd did not start: {line!r}\n{(self.data_dir / 'stderr.txt').read_text(errors='replace')[-3000:]}")
        self.info = json.loads(line[len(b"READY "):])
        self.url = self.info["issuer"]
        return self

    @property
    def issuer(self) -> str:
        return self.info["issuer"]

    def userinfo(self, access_token: str, proof: str | None = None) -> requests.Response:
        """GET userinfo with a bearer token, or with a DPoP-bound one and its proof."""
        headers = {"Authorization": f"DPoP {access_token}", "DPoP": proof} if proof else {"Authorization": f"Bearer {access_token}"}
        return requests.get(f"{self.issuer}/userinfo", headers=headers, timeout=15)

    @property
    def discovery(self) -> dict:
        return requests.get(f"{self.issuer}/.well-known/openid-configuration", timeout=15).json()


@pytest.fixture(scope="module")
def glewlwyd(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd"), free_ports(2)).wait_ready()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def glewlwyd_current(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-current"), free_ports(2), features=("par", "dpop", "resource", "client-credentials")).wait_ready()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def glewlwyd_strict(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-strict"), free_ports(2), features=("par-required", "dpop-nonce", "client-credentials")).wait_ready()
    yield server
    server.stop()


def add_glewlwyd(lk, server, ports=None, **fields):
    lk.add_provider("g", None, display_name="Glewlwyd", issuer=server.issuer, client_id=server.info["client_id"],
                    loopback_port=ports or server.ports, **fields)


def test_sign_in_refresh_and_revocation_at_glewlwyd(lk, glewlwyd):
    add_glewlwyd(lk, glewlwyd)
    result = lk.login("g")
    assert result.code == EX_OK, result
    assert_clean_stderr(result)
    (account,) = lk.status()
    assert account["account"] == "alice@example.test" and account["issuer"] == glewlwyd.issuer, account
    first = lk.token("g")
    assert glewlwyd.userinfo(first).status_code == 200

    # One-time refresh tokens: the rotated one must be the one stored, twice over.
    lk.ok("refresh", "g")
    second = lk.token("g")
    lk.ok("refresh", "g")
    third = lk.token("g")
    assert len({first, second, third}) == 3
    assert glewlwyd.userinfo(third).status_code == 200

    # Revocation authenticated with the access token as Bearer.
    out = lk.ok("logout", "g")
    assert "Revoked" in out.stderr, out
    assert lk.status() == []


def test_the_first_free_registered_port_is_used(lk, glewlwyd):
    taken, free = glewlwyd.ports
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the port may be in TIME_WAIT
    holder.bind(("127.0.0.1", taken))
    holder.listen(1)
    try:
        add_glewlwyd(lk, glewlwyd)
        result = lk.login("g")
        assert result.code == EX_OK, result
        assert f"127.0.0.1:{free}/oauth2redirect/g" in result.stderr, result
    finally:
        holder.close()


def test_an_iss_glewlwyd_does_not_advertise_is_still_checked(lk, glewlwyd):
    discovery = requests.get(f"{glewlwyd.issuer}/.well-known/openid-configuration", timeout=15).json()
    assert not discovery.get("authorization_response_iss_parameter_supported"), "glewlwyd now advertises iss"
    add_glewlwyd(lk, glewlwyd)
    result = lk.login("g", tamper="iss=http://127.0.0.1:1/evil")
    assert result.code == EX_REJECTED, result
    assert "iss" in result.stderr, result
    assert not lk.vault.exists() or lk.status() == []


def test_an_unregistered_port_is_refused_by_glewlwyd_and_nothing_is_stored(lk, glewlwyd):
    (other,) = free_ports(1)
    add_glewlwyd(lk, glewlwyd, ports=[other])
    result = lk.login("g", timeout=8)
    assert result.code != EX_OK, result
    assert not lk.vault.exists() or lk.status() == []


def authorization_urls(result) -> list[str]:
    """The authorization URLs latchkey printed for the person."""
    return re.findall(r"https?://\S+/auth\?\S+", result.stderr)


# --------------------------------------------------------------------------- PAR


def test_a_sign_in_is_pushed_and_the_browser_carries_only_the_request_uri(lk, glewlwyd_current):
    assert glewlwyd_current.discovery["pushed_authorization_request_endpoint"].endswith("/par")
    add_glewlwyd(lk, glewlwyd_current)
    result = lk.login("g")
    assert result.code == EX_OK, result
    (url,) = authorization_urls(result)
    assert "request_uri=urn" in url and "code_challenge" not in url and "state=" not in url, url
    # RFC 9126 §7.3: a request_uri is used once; glewlwyd refuses it the second time.
    again = requests.get(url, allow_redirects=False, timeout=15)
    assert again.status_code == 403, again.status_code
    # A second sign-in pushes a request of its own.
    second = lk.login("g")
    assert second.code == EX_OK, second
    assert authorization_urls(second)[0] != url


def test_par_never_keeps_the_request_in_the_browsers_url_at_a_server_offering_par(lk, glewlwyd_current):
    add_glewlwyd(lk, glewlwyd_current, par="never")
    result = lk.login("g")
    assert result.code == EX_OK, result
    (url,) = authorization_urls(result)
    assert "request_uri" not in url and "code_challenge=" in url and "state=" in url, url


def test_a_server_requiring_par_gets_it_and_par_never_there_fails_before_the_browser(lk, glewlwyd_strict):
    assert glewlwyd_strict.discovery["require_pushed_authorization_requests"] is True
    add_glewlwyd(lk, glewlwyd_strict, par="never")
    refused = lk.login("g")
    assert refused.code == EX_PROVIDER_FILE, refused
    assert "require_pushed_authorization_requests" in refused.stderr and 'par = "never"' in refused.stderr, refused
    assert lk.ua_log_text() == "", "the browser was started"
    add_glewlwyd(lk, glewlwyd_strict)
    result = lk.login("g")
    assert result.code == EX_OK, result


def test_a_push_glewlwyd_refuses_is_reported_and_nothing_is_stored(lk, glewlwyd_current):
    (unregistered,) = free_ports(1)
    add_glewlwyd(lk, glewlwyd_current, ports=[unregistered])
    result = lk.login("g")
    assert result.code == EX_REJECTED, result
    assert "pushed authorization request endpoint" in message(result) and "HTTP 403" in result.stderr, result
    assert lk.ua_log_text() == "", "the browser was started for a request the server refused"
    assert not lk.vault.exists() or lk.status() == []


# --------------------------------------------------------------------------- DPoP


def test_a_dpop_bound_token_works_with_latchkeys_proof_and_not_without(lk, glewlwyd_current):
    add_glewlwyd(lk, glewlwyd_current)
    assert lk.login("g").code == EX_OK
    (account,) = lk.status()
    assert account["dpop"] is True, account
    token = lk.token("g")
    _, claims = jwt_parts(token)
    assert "jkt" in claims.get("cnf", {}), claims
    userinfo = f"{glewlwyd_current.issuer}/userinfo"
    proof = lk.ok("proof", "g", "--method", "GET", "--url", userinfo).stdout.strip()
    answer = glewlwyd_current.userinfo(token, proof=proof)
    assert answer.status_code == 200 and answer.json()["email"] == "alice@example.test", answer.text
    # Stolen without the key, the token is worthless; a proof replayed is refused (its jti is spent).
    assert glewlwyd_current.userinfo(token).status_code == 401
    assert glewlwyd_current.userinfo(token, proof=proof).status_code == 401
    # A refresh proves the key too, and the new token is bound as well.
    lk.ok("refresh", "g")
    fresh = lk.token("g")
    assert fresh != token
    fresh_proof = lk.ok("proof", "g", "--method", "GET", "--url", userinfo).stdout.strip()
    assert glewlwyd_current.userinfo(fresh, proof=fresh_proof).status_code == 200
    out = lk.ok("status")
    assert "DPoP-bound" in out.stdout, out


def test_exec_gives_the_command_the_token_type_and_the_account_for_its_proofs(lk, glewlwyd_current):
    add_glewlwyd(lk, glewlwyd_current)
    assert lk.login("g").code == EX_OK
    userinfo = f"{glewlwyd_current.issuer}/userinfo"
    script = (
        'proof=$("$LATCHKEY_BIN" proof "$LATCHKEY_ACCOUNT" --method GET --url "$URL") && '
        'curl -sf -H "Authorization: $LATCHKEY_TOKEN_TYPE $LATCHKEY_ACCESS_TOKEN" -H "DPoP: $proof" "$URL"'
    )
    result = lk.run("exec", "g", "--", "sh", "-c", script, env={"URL": userinfo, "LATCHKEY_BIN": str(lk.binary)})
    assert result.code == EX_OK, result
    assert json.loads(result.stdout)["email"] == "alice@example.test", result


def test_glewlwyds_dpop_nonce_is_asked_for_and_latchkey_retries_once(lk, glewlwyd_strict):
    add_glewlwyd(lk, glewlwyd_strict)
    result = lk.login("g")
    assert result.code == EX_OK, result
    (account,) = lk.status()
    assert account["dpop"] is True
    lk.ok("refresh", "g")
    token = lk.token("g")
    # The strict instance does want nonces (so the sign-in and the refresh went through only
    # because latchkey retried with one): a proof without one is answered with use_dpop_nonce ...
    userinfo = f"{glewlwyd_strict.issuer}/userinfo"
    bare = glewlwyd_strict.userinfo(token, proof=lk.ok("proof", "g", "--method", "GET", "--url", userinfo).stdout.strip())
    assert bare.status_code == 401 and "use_dpop_nonce" in bare.headers.get("WWW-Authenticate", ""), bare.headers
    # ... and `proof --nonce` carries the one the resource server sent.
    nonce = bare.headers["DPoP-Nonce"]
    proof = lk.ok("proof", "g", "--method", "GET", "--url", userinfo, "--nonce", nonce).stdout.strip()
    assert glewlwyd_strict.userinfo(token, proof=proof).status_code == 200


def test_proof_for_a_bearer_account_says_so(lk, glewlwyd_current):
    add_glewlwyd(lk, glewlwyd_current, dpop="never")
    assert lk.login("g").code == EX_OK
    assert lk.status()[0]["dpop"] is False
    result = lk.run("proof", "g", "--method", "GET", "--url", f"{glewlwyd_current.issuer}/userinfo")
    assert result.code != EX_OK and "bearer tokens" in result.stderr, result
    assert result.stdout == ""


# --------------------------------------------------------------------------- resources


def test_a_token_for_one_resource_is_got_with_the_refresh_token_and_kept(lk, glewlwyd_current):
    api_mail = glewlwyd_current.info["resources"]["email"][0]
    add_glewlwyd(lk, glewlwyd_current, resources=[api_mail])
    assert lk.login("g").code == EX_OK
    own = lk.token("g")
    narrowed = lk.token("g", "--resource", api_mail)
    assert narrowed != own
    _, claims = jwt_parts(narrowed)
    assert claims["aud"] == api_mail and "jkt" in claims.get("cnf", {}), claims
    # Kept: the next call is answered from the vault, and the account's own token is unchanged.
    assert lk.token("g", "--resource", api_mail) == narrowed
    assert lk.token("g") == own
    # The narrowed token is DPoP-bound too: proof --resource carries its hash (ath), and exec
    # --resource hands it to the command.
    userinfo = f"{glewlwyd_current.issuer}/userinfo"
    proof = lk.ok("proof", "g", "--resource", api_mail, "--method", "GET", "--url", userinfo).stdout.strip()
    _, proof_claims = jwt_parts(proof)
    own_proof = lk.ok("proof", "g", "--method", "GET", "--url", userinfo).stdout.strip()
    assert proof_claims["ath"] != jwt_parts(own_proof)[1]["ath"]
    assert glewlwyd_current.userinfo(narrowed, proof=own_proof).status_code == 401, "ath of another token"
    assert glewlwyd_current.userinfo(narrowed, proof=proof).status_code == 200
    result = lk.run("exec", "g", "--resource", api_mail, "--", "sh", "-c", 'printf %s "$LATCHKEY_ACCESS_TOKEN"')
    assert result.code == EX_OK and result.stdout == narrowed, result
    # glewlwyd's refresh tokens are one-time: the rotated one was kept, or this refresh fails.
    lk.ok("refresh", "g")
    assert lk.token("g") != own


def test_a_kept_resource_token_is_answered_by_the_agent_and_by_the_launcher_alone(lk, glewlwyd_current, agents):
    api_mail = glewlwyd_current.info["resources"]["email"][0]
    add_glewlwyd(lk, glewlwyd_current, resources=[api_mail])
    assert lk.login("g").code == EX_OK
    narrowed = lk.token("g", "--resource", api_mail, "--scope", "email")
    own = lk.token("g")
    agent = agents()
    through = lk.run("token", "g", "--scope=email", "--resource", api_mail, env=agent_env(agent))
    assert through.code == EX_OK and through.stdout.strip() == narrowed, through
    lk.leave_only_the_launcher()  # only the launcher's own answers from here
    assert lk.token("g", "--resource", api_mail, "--scope", "email email") == narrowed
    assert lk.token("g") == own
    for other in (("--resource", api_mail), ("--scope", "email")):
        unanswered = lk.run("token", "g", *other)
        assert unanswered.code != EX_OK and unanswered.stdout == "", f"no copy of {other}, yet answered\n{unanswered}"


def test_git_credential_hands_git_the_token_for_git_resource_directly_and_through_the_agent(lk, glewlwyd_current, agents):
    api_mail = glewlwyd_current.info["resources"]["email"][0]
    add_glewlwyd(lk, glewlwyd_current, resources=[api_mail], git_hosts=["git.example.test"], git_resource=api_mail)
    assert lk.login("g").code == EX_OK
    own = lk.token("g")
    ask = b"protocol=https\nhost=git.example.test\n\n"
    git = lk.run("git-credential", "get", input=ask)
    assert git.code == EX_OK and git.stdout.startswith("username=oauth2\npassword="), git
    password = git.stdout.splitlines()[1].removeprefix("password=")
    assert password != own and jwt_parts(password)[1]["aud"] == api_mail
    # The agent answers with the same narrowed token, kept in the vault, never the account's own.
    agent = agents()
    lk.run("lock")
    through = lk.run("git-credential", "get", env=agent_env(agent), input=ask)
    assert through.code == EX_OK and through.stdout == git.stdout, through


def test_git_credential_resource_option_wins_over_git_resource_for_a_real_git(lk, glewlwyd_current, agents):
    # The sign-in names only the profile API, so git_resource (the mail API) would be refused
    # with invalid_target at the refresh: the token git gets shows the option won.
    api_mail, api_profile = glewlwyd_current.info["resources"]["email"][0], glewlwyd_current.info["resources"]["profile"][0]
    add_glewlwyd(lk, glewlwyd_current, resources=[api_profile], git_hosts=["git.example.test"], git_resource=api_mail)
    assert lk.login("g").code == EX_OK
    ask = "url=https://git.example.test/group/repo.git\n\n"
    filled = lk.git("credential", "fill", input=ask, helper_options=("--resource", api_profile, "--scope", "'openid profile'"))
    assert filled.returncode == 0, filled
    answer = dict(line.split("=", 1) for line in filled.stdout.decode().splitlines())
    assert answer["username"] == "oauth2" and jwt_parts(answer["password"])[1]["aud"] == api_profile, answer
    assert answer["password"] != lk.token("g")
    # The agent narrows by the same rule: the same kept token, with no vault of the client's own.
    agent = agents()
    lk.run("lock")
    through = lk.git("credential", "fill", input=ask, helper_options=("--resource", api_profile, "--scope", "'openid profile'"),
                     env=agent_env(agent))
    assert through.returncode == 0 and through.stdout == filled.stdout, through
    # Without the options git_resource counts, and glewlwyd refuses it: git gets no password.
    plain = lk.git("credential", "fill", input=ask)
    assert plain.returncode != 0 and b"invalid_target" in plain.stderr, plain
    # A bad option is refused before anything is asked, naming the option.
    bad = lk.git("credential", "fill", input=ask, helper_options=("--resource", "not-a-uri"))
    assert bad.returncode != 0 and b"--resource" in bad.stderr, bad


def test_without_a_terminal_a_resource_the_sign_in_did_not_name_fails_naming_the_login_that_asks_for_it(lk, glewlwyd_current):
    api_mail, api_profile = glewlwyd_current.info["resources"]["email"][0], glewlwyd_current.info["resources"]["profile"][0]
    add_glewlwyd(lk, glewlwyd_current, resources=[api_mail])
    assert lk.login("g").code == EX_OK
    refused = lk.run("token", "g", "--resource", api_profile)
    command = f"latchkey login g:alice@example.test --resource {api_profile}"
    lines = refused.stderr.strip().splitlines()
    assert refused.code == EX_NO_ACCOUNT and len(lines) == 1 and "invalid_target" in lines[0] and command in lines[0], refused
    assert refused.stdout == ""
    wider = lk.run("token", "g", "--scope", "openid admin")
    assert wider.code == EX_USAGE and "not granted admin" in wider.stderr, wider
    # The account still works, and the command named signs in asking for the resource.
    lk.ok("refresh", "g")
    assert lk.token("g", "--resource", api_mail)
    assert lk.login("g:alice@example.test", "--resource", api_profile).code == EX_OK
    assert jwt_parts(lk.token("g", "--resource", api_profile))[1]["aud"] == api_profile
    bad = lk.run("login", "g", "--resource", "relative/path")
    assert bad.code == EX_USAGE and "--resource" in bad.stderr, bad


def test_at_a_terminal_a_resource_the_sign_in_did_not_name_signs_the_same_account_in_again_for_it(tmux, lk, glewlwyd_current):
    api_mail, api_profile = glewlwyd_current.info["resources"]["email"][0], glewlwyd_current.info["resources"]["profile"][0]
    add_glewlwyd(lk, glewlwyd_current, resources=[api_mail])
    assert lk.login("g").code == EX_OK
    (before,) = lk.status()
    out, rc = lk.root / "token.out", lk.root / "rc"
    tmux.start(f"{LATCHKEY_BIN} token g --resource {api_profile} > {out}; echo $? > {rc}", lk.env(TERM="tmux-256color"))
    tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=60, what="the token")
    assert rc.read_text().strip() == "0", tmux.capture(joined=True)
    narrowed = out.read_text().strip()
    assert jwt_parts(narrowed)[1]["aud"] == api_profile
    assert "Signing in to" in tmux.capture(joined=True), "the sign-in's messages go to the terminal, not stdout"
    (after,) = lk.status()
    assert after["subject"] == before["subject"], "the same account, signed in again"
    # Kept: the next call, without a terminal, is answered from the vault.
    assert lk.token("g", "--resource", api_profile) == narrowed


# --------------------------------------------------------------------------- step-up


def test_max_age_is_checked_against_glewlwyds_auth_time_which_is_always_zero(lk, glewlwyd):
    # glewlwyd 2.7.5 sends auth_time 0 (1970) whatever max_age asked, so no sign-in there can
    # show a recent authentication: it is refused, said so, and not stored.
    add_glewlwyd(lk, glewlwyd)
    result = lk.login("g", "--max-age", "600")
    assert result.code == EX_REJECTED, result
    assert "authenticated more than 600 seconds ago (auth_time)" in result.stderr, result
    assert not lk.vault.exists() or lk.status() == []
    # An account signed in without --max-age is not handed out for one: asked for by name, the
    # step-up signs in again through the browser even without a terminal, as login does, and
    # glewlwyd's answer is refused again, saying what was not satisfied.
    assert lk.login("g").code == EX_OK
    assert lk.token("g")
    offset = lk.ua_log_size()
    stale = lk.run("token", "g", "--max-age", "3600")
    assert stale.code == EX_REJECTED and "authenticated more than 3600 seconds ago" in stale.stderr, stale
    assert stale.stdout == ""
    assert "max_age=3600" in lk.ua_log_text(offset), "the browser was sent to sign in again with max_age"


def test_an_acr_glewlwyd_does_not_give_is_refused_and_nothing_is_stored(lk, glewlwyd):
    add_glewlwyd(lk, glewlwyd)
    result = lk.login("g", "--acr", "urn:example:gold")
    assert result.code == EX_REJECTED, result
    assert "acr" in result.stderr and "urn:example:gold" in result.stderr, result
    assert not lk.vault.exists() or lk.status() == []


# --------------------------------------------------------------------------- machine identities


def add_machine(lk, server, secret_file=None, client_id=None, **fields):
    client = server.info["machine_client"]
    if secret_file is not None:
        fields["client_secret_file"] = str(secret_file)
    # kind oauth2 and its endpoints: glewlwyd serves no RFC 8414 metadata for it to discover.
    lk.add_provider("ci", None, display_name="CI", kind="oauth2", issuer=None, client_id=client_id or client["client_id"],
                    authorization_endpoint=f"{server.issuer}/auth", token_endpoint=f"{server.issuer}/token",
                    scopes=[client["scope"]], grant="client_credentials", **fields)


def test_a_machine_identity_gets_tokens_without_a_person(lk, glewlwyd_current):
    add_machine(lk, glewlwyd_current, glewlwyd_current.info["machine_client"]["secret_file"])
    # No login first, no terminal, no browser: token signs the client in itself.
    token = lk.token("ci")
    _, claims = jwt_parts(token)
    assert claims["sub"] == "latchkey-ci" and claims["scope"] == "ci", claims
    assert lk.ua_log_text() == ""
    (account,) = lk.status()
    assert account["account"] == "latchkey-ci" and account["refresh_token"] is False, account
    # A refresh is the same grant again.
    lk.ok("refresh", "ci")
    assert lk.token("ci") != token


def test_a_machine_identitys_token_for_a_resource_is_a_grant_naming_it(lk, glewlwyd_current):
    # No refresh token to narrow: the token for a resource is a client credentials grant of its own.
    api_ci = glewlwyd_current.info["resources"]["ci"][0]
    add_machine(lk, glewlwyd_current, glewlwyd_current.info["machine_client"]["secret_file"], resources=[api_ci])
    own = lk.token("ci")
    narrowed = lk.token("ci", "--resource", api_ci)
    _, claims = jwt_parts(narrowed)
    assert claims["aud"] == api_ci and claims["sub"] == "latchkey-ci", claims
    assert narrowed != own and lk.token("ci", "--resource", api_ci) == narrowed, "kept like a person's"


def test_a_machine_identity_with_no_vault_and_no_passphrase_gets_its_token_and_writes_nothing(lk, glewlwyd_current):
    # A CI job: no vault, no LATCHKEY_PASSPHRASE_FILE, no terminal. Each command gets its own grant.
    add_machine(lk, glewlwyd_current, glewlwyd_current.info["machine_client"]["secret_file"])
    without = {"LATCHKEY_PASSPHRASE_FILE": None}
    before = set(lk.files())
    first = lk.run("token", "ci", env=without)
    assert first.code == EX_OK and first.stdout.count("\n") == 1, first
    assert jwt_parts(first.stdout.strip())[1]["sub"] == "latchkey-ci"
    api_ci = glewlwyd_current.info["resources"]["ci"][0]
    narrowed = lk.run("token", "ci", "--resource", api_ci, env=without)
    assert narrowed.code == EX_OK and jwt_parts(narrowed.stdout.strip())[1]["aud"] == api_ci, narrowed
    assert not lk.vault.exists() and set(lk.files()) == before, set(lk.files()) - before
    # Given a passphrase, the account is kept in the vault as any other.
    lk.token("ci")
    assert [account["account"] for account in lk.status()] == ["latchkey-ci"]


def test_a_client_secret_file_others_can_read_is_refused_before_anything_is_sent(lk, glewlwyd_current, tmp_path):
    secret = tmp_path / "ci-client-secret"
    secret.write_text(open(glewlwyd_current.info["machine_client"]["secret_file"]).read())
    secret.chmod(0o644)
    add_machine(lk, glewlwyd_current, secret)
    result = lk.run("token", "ci")
    assert result.code == EX_PROVIDER_FILE and "chmod 600" in result.stderr, result
    assert result.stdout == "" and (not lk.vault.exists() or lk.status() == [])
    # A wrong secret is the server's refusal, shown as such.
    secret.write_text("not-the-secret\n")
    secret.chmod(0o600)
    refused = lk.run("token", "ci")
    assert refused.code == EX_REJECTED and "token endpoint" in refused.stderr, refused
    assert refused.stdout == ""


def test_a_machine_identity_signs_in_with_private_key_jwt(lk, glewlwyd_current, tmp_path):
    client = glewlwyd_current.info["machine_client"]
    add_machine(lk, glewlwyd_current, client_id=client["key_client_id"], private_key_file=client["key_file"])
    token = lk.token("ci")
    _, claims = jwt_parts(token)
    assert claims["sub"] == client["key_client_id"] and claims["scope"] == "ci", claims
    # Each request signs a new assertion: a second grant is not refused as a replayed jti.
    lk.ok("refresh", "ci")
    assert lk.token("ci") != token
    # Another P-256 key is not the client's: glewlwyd refuses its assertion, nothing is stored.
    lk.ok("logout", "ci")
    other = tmp_path / "other-key.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(other)],
                   check=True, capture_output=True)
    other.chmod(0o600)
    add_machine(lk, glewlwyd_current, client_id=client["key_client_id"], private_key_file=str(other))
    refused = lk.run("token", "ci")
    assert refused.code == EX_REJECTED and "token endpoint" in refused.stderr, refused
    assert refused.stdout == "" and "PRIVATE KEY" not in refused.stderr



def jwk_thumbprint(jwk: dict) -> str:
    """RFC 7638 SHA-256 thumbprint of an EC public key, base64url."""
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def test_a_machine_identity_with_dpop_gets_tokens_bound_to_one_machine_key_kept_from_grant_to_grant(lk, glewlwyd_current):
    add_machine(lk, glewlwyd_current, glewlwyd_current.info["machine_client"]["secret_file"], dpop="always")
    token = lk.token("ci")
    bound = jwt_parts(token)[1].get("cnf", {}).get("jkt")
    assert bound, "glewlwyd 2.7.5 binds client_credentials tokens to the proof's key"
    (account,) = lk.status()
    assert account["dpop"] is True, account
    assert "DPoP-bound" in lk.ok("status").stdout
    # latchkey proof signs with that very key.
    proof = lk.ok("proof", "ci", "--method", "GET", "--url", f"{glewlwyd_current.issuer}/userinfo").stdout.strip()
    header, claims = jwt_parts(proof)
    assert jwk_thumbprint(header["jwk"]) == bound and "ath" in claims
    # The next grant proves the same key: the machine's key stays in the vault.
    lk.ok("refresh", "ci")
    renewed = lk.token("ci")
    assert renewed != token and jwt_parts(renewed)[1]["cnf"]["jkt"] == bound


def test_a_machine_identity_with_private_key_jwt_answers_glewlwyds_dpop_nonce_request(lk, glewlwyd_strict):
    # Nonces are required there, so this grant went through only with the retry. (glewlwyd checks
    # the nonce before the assertion, so it would take the first assertion again; the new one
    # latchkey signs for the retry is pinned by ClientCredentialsTests.)
    client = glewlwyd_strict.info["machine_client"]
    add_machine(lk, glewlwyd_strict, client_id=client["key_client_id"], private_key_file=client["key_file"], dpop="always")
    token = lk.token("ci")
    assert jwt_parts(token)[1]["cnf"]["jkt"], token
    assert lk.status()[0]["dpop"] is True


# --------------------------------------------------------------------------- dynamic client registration


@pytest.fixture(scope="module")
def glewlwyd_registration(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-registration"), free_ports(1), features=("registration",)).wait_ready()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def glewlwyd_closed(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-closed"), free_ports(1), features=("registration-token",)).wait_ready()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def glewlwyd_registration_device(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-registration-device"), free_ports(1),
                      features=("registration", "device")).wait_ready()
    yield server
    server.stop()


def registered_clients(server) -> set[str]:
    """The clients glewlwyd holds besides run_glewlwyd.py's own, read through its admin API; a
    registration deleted through RFC 7592 stays there, disabled, so only enabled ones count."""
    base = server.issuer.rsplit("/api/", 1)[0]
    password = (Path(server.info["data_dir"]) / "admin-password").read_text()
    session = requests.Session()
    session.post(f"{base}/api/auth/", json={"username": "admin", "password": password}, timeout=15).raise_for_status()
    clients = session.get(f"{base}/api/client/?limit=1000", timeout=15).json()
    return {client["client_id"] for client in clients if client.get("enabled")} - {server.info["client_id"]}


def add_registering(lk, server, name="reg"):
    """A provider file without client_id, registering Latchkey at a fixed port (glewlwyd matches it exactly)."""
    lk.add_provider(name, None, display_name="Glewlwyd (registered)", issuer=server.issuer, client_id=None,
                    registration="dynamic", loopback_port=free_ports(1))


def test_latchkey_registers_itself_at_glewlwyd_checks_the_client_is_public_and_reuses_it(lk, glewlwyd_registration):
    before = registered_clients(glewlwyd_registration)
    add_registering(lk, glewlwyd_registration)
    result = lk.login("reg")
    assert result.code == EX_OK, result
    assert_clean_stderr(result)
    # glewlwyd stores a client asking for token_endpoint_auth_method "none" as confidential: the
    # token endpoint's unauthorized_client says so, the person is told, and the second
    # registration (with client_confidential: false) is the one kept; the first is deleted.
    said = message(result)
    assert "confidential client" in said and "unauthorized_client" in said and "client_confidential: false" in said, result
    added = registered_clients(glewlwyd_registration) - before
    _, claims = jwt_parts(lk.token("reg", "--id-token"))
    audience = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    assert added == set(audience), (added, claims)

    # Kept and reused: a refresh, a second sign-in and the sign-out register nothing more.
    lk.ok("refresh", "reg")
    again = lk.login("reg")
    assert again.code == EX_OK and "confidential" not in again.stderr, again
    assert registered_clients(glewlwyd_registration) - before == added
    out = lk.ok("logout", "reg")
    assert "Revoked" in out.stderr, out


def test_providers_remove_waits_for_sign_out_then_deletes_the_registration_at_glewlwyd(lk, glewlwyd_registration):
    before = registered_clients(glewlwyd_registration)
    add_registering(lk, glewlwyd_registration)
    assert lk.login("reg").code == EX_OK
    added = registered_clients(glewlwyd_registration) - before
    assert len(added) == 1, added

    refused = lk.run("providers", "remove", "reg")
    assert refused.code == EX_USAGE and "latchkey logout" in message(refused), refused
    assert (lk.providers_dir / "reg.toml").exists()

    lk.ok("logout", "reg")
    removed = lk.ok("providers", "remove", "reg")
    assert "Deleted the client Latchkey registered at reg" in removed.stderr, removed
    assert not (lk.providers_dir / "reg.toml").exists()
    assert not added & registered_clients(glewlwyd_registration), "the registration is still at glewlwyd"


def test_providers_add_by_issuer_writes_registration_dynamic_where_discovery_offers_it(lk, glewlwyd_registration, glewlwyd):
    added = lk.ok("providers", "add", "--issuer", glewlwyd_registration.issuer, "--name", "found")
    text = (lk.providers_dir / "found.toml").read_text()
    assert 'registration = "dynamic"' in text and "client_id" not in text, text
    assert "registers Latchkey there" in added.stderr, added
    # glewlwyd matches redirect URIs port and all, so a port is set, as for any glewlwyd provider.
    with open(lk.providers_dir / "found.toml", "a") as f:
        f.write(f"loopback_port = {free_ports(1)[0]}\n")
    assert lk.login("found").code == EX_OK

    # Where discovery lists no registration_endpoint, the file asks for a client_id as before.
    lk.ok("providers", "add", "--issuer", glewlwyd.issuer, "--name", "plain")
    plain = (lk.providers_dir / "plain.toml").read_text()
    assert 'client_id = ""' in plain and "registration" not in plain, plain


def test_a_registration_glewlwyd_refuses_is_reported_before_the_browser_and_nothing_is_kept(lk, glewlwyd_closed):
    add_registering(lk, glewlwyd_closed)
    result = lk.login("reg")
    assert result.code == EX_REJECTED, result
    said = message(result)
    assert "registration endpoint" in said and "initial access token" in said, result
    assert authorization_urls(result) == [], "the browser was sent to sign in with no client"
    assert not lk.vault.exists() or lk.status() == []


def test_registration_at_a_server_without_a_registration_endpoint_fails_before_the_browser(lk, glewlwyd):
    assert "registration_endpoint" not in glewlwyd.discovery
    add_registering(lk, glewlwyd)
    result = lk.login("reg")
    assert result.code == EX_PROVIDER_FILE, result
    assert "registration_endpoint" in message(result) and authorization_urls(result) == [], result


def test_a_server_that_refuses_the_device_grant_at_registration_gets_a_client_for_the_browser_only(lk, glewlwyd_registration_device):
    """Where discovery names a device authorization endpoint, the registration asks for RFC 8628's
    grant too; glewlwyd knows that grant only by a name of its own and refuses the request, so
    Latchkey registers again without it, says so, and a device sign-in later says why it cannot."""
    assert "device_authorization_endpoint" in glewlwyd_registration_device.discovery
    add_registering(lk, glewlwyd_registration_device)
    result = lk.login("reg")
    assert result.code == EX_OK, result
    said = message(result)
    assert "refused a registration asking for the device grant too" in said and "browser sign-in only" in said, result
    assert lk.token("reg")
    result = lk.run("login", "reg", "--device")
    assert result.code == EX_PROVIDER_FILE, result
    assert "cannot sign in with a device code" in message(result) and "sign in without --device" in message(result), result
