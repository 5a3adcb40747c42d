"""`latchkey mcp` on a host reached over SSH, through the forwarded agent alone: a real OpenSSH
server on 127.0.0.1 (test_agent_forwarding.py's), the MCP server whose authorization server is
the official MCP Python SDK's (mcp_sdk_server.py), and the SDK's own stdio client running `ssh
… latchkey mcp proxy NAME` as its server. The remote host has no provider file and no vault: the
agent answers the MCP server's URL with the token (`mcp_url`), refreshes a token the server
refused when the remote names it by its hash, and nothing else.

* the SDK's client calls a tool through the proxy on the remote; `mcp headers` and `mcp config`
  work there too; a short-lived token is refreshed by the agent and the calls go on; the
  remote's files hold no token at all;
* a token the server stops taking is refreshed once through the agent (the proxy sends its
  hash, the agent refreshes because it is the token it holds);
* a forwarded host cannot make the agent refresh with the hash of a token it does not hold, nor
  again and again with the current one (once per 30 s);
* an account not marked forward = true gets the proxy, `mcp headers` and `mcp config` refused;
* a provider that names no MCP server is refused, saying where to add one;
* a server asking for more scope gets the request answered with what to run where the agent
  runs; the proxy goes on;
* a DPoP-bound account works through the forwarded agent: the agent signs a proof per request
  (`dpop-proof`) for the token it holds and the URL its provider file names, the server's nonce
  passed along; the key never leaves; a proof for another token, another URL or an account not
  forwarded is refused unsigned; a refused DPoP token is refreshed once; a confirm = true
  account's proof waits for a person like its token.
"""

import asyncio
import json
import sys
import time

import jwt
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from agent_support import agent_env, agents, ask, ath, connect, flattened, request_line, runtime, wait_for  # noqa: F401  (fixtures)
from conftest import EX_OK, EX_USAGE, REPO, ServerProcess, free_ports
from test_agent_forwarding import RemoteHost, sshd  # noqa: F401  (fixture)
from test_mcp_proxy import proof_server, thumbprint  # noqa: F401  (fixture)
from test_mcp_sdk_auth import SHORT_LIFETIME, call_whoami, sdk_server  # noqa: F401  (fixture)

NAME = "127.0.0.1"
ACCOUNT = f"{NAME}:unnamed"


@pytest.fixture(scope="module")
def lasting_server(tmp_path_factory):
    """The SDK's server with hour-long tokens: only what a test does refreshes them."""
    port = free_ports(1)[0]
    server = ServerProcess("SDK MCP server", [sys.executable, str(REPO / "Tests" / "e2e" / "mcp_sdk_server.py"),
                                              "--port", str(port), "--scope", "tools"],
                           tmp_path_factory.mktemp("mcp-sdk-lasting")).wait_ready(30)
    yield server
    server.stop()


def shared_server(lk, url: str, agents, runtime, forward: bool = True):
    """`mcp add URL` here (the agent's machine), the account marked forward = true in
    config.toml when `forward`, and an agent with its forward socket; returns that socket and
    the agent."""
    added = lk.run("mcp", "add", url, "--loopback-port", str(free_ports(1)[0]), timeout=90)
    assert added.code == EX_OK, added
    if forward:
        config = lk.config / "latchkey" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'[accounts."{NAME}:{lk.status()[0]["account"]}"]\nforward = true\n')
    socket = runtime / "latchkey" / "forward.sock"
    return socket, agents("--forward-socket", str(socket))


def through_remote_proxy(sshd, remote, socket, steps):
    """The SDK's stdio client with `ssh … latchkey mcp proxy NAME` (run on the remote host, the
    agent forwarded) as its server: `steps(session)` runs after initialize; returns what it
    returns and the proxy's standard error (ssh passes it on)."""
    argv, env = sshd.client((remote.socket, socket), remote.command("mcp", "proxy", NAME))
    errors = remote.home.parent / f"proxy-{time.monotonic_ns()}.err"

    async def run():
        parameters = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        with open(errors, "w") as errlog:
            async with stdio_client(parameters, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await steps(session)
    try:
        result = asyncio.run(asyncio.wait_for(run(), 90))
    except BaseException:
        print("the proxy's standard error:", errors.read_text())
        raise
    return result, errors.read_text()


def text_of(result) -> str:
    assert not result.isError, result
    return result.content[0].text


def test_the_sdks_client_calls_a_tool_through_the_proxy_on_a_forwarded_host_with_only_the_agent(
        lk, sdk_server, agents, runtime, sshd):
    socket, agent = shared_server(lk, sdk_server.url, agents, runtime)
    remote = RemoteHost(sshd.root)
    before = lk.token(NAME)

    async def steps(session):
        first = text_of(await session.call_tool("whoami", {}))
        # The token lives SHORT_LIFETIME seconds: the agent refreshes it, the calls go on.
        await asyncio.sleep(SHORT_LIFETIME + 1)
        return first, text_of(await session.call_tool("whoami", {}))

    (first, second), stderr = through_remote_proxy(sshd, remote, socket, steps)
    client_id, resource = first.split(" ")
    # The URL came from the agent (the remote has no provider file), and the token is bound to it.
    assert client_id and resource == sdk_server.url, first
    assert second == first, (second, stderr)
    assert lk.token(NAME) != before, "the agent refreshed the short-lived token"

    header = sshd.ssh((remote.socket, socket), remote.command("mcp", "headers", NAME))
    assert header.returncode == EX_OK and header.stdout.count("\n") == 1, header
    assert call_whoami(sdk_server.url, json.loads(header.stdout)) == first
    config = sshd.ssh((remote.socket, socket), remote.command("mcp", "config", NAME, "--client", "claude"))
    assert config.returncode == EX_OK, config
    entry = json.loads(config.stdout)["mcpServers"][NAME]
    assert entry["url"] == sdk_server.url and entry["headersHelper"] == f"latchkey mcp headers {NAME}", entry

    # The remote holds no token of any kind: it has no files at all (no vault, no copies).
    assert remote.files() == [], remote.files()
    log = lk.run("agent", "log", "--json").json()
    assert {entry["forwarded"] for entry in log} == {True} and {entry["outcome"] for entry in log} == {"released"}, log


def test_a_token_the_server_stops_taking_is_refreshed_once_through_the_forwarded_agent(
        lk, lasting_server, agents, runtime, sshd):
    socket, agent = shared_server(lk, lasting_server.url, agents, runtime)
    remote = RemoteHost(sshd.root)
    before = lk.token(NAME)

    async def steps(session):
        assert text_of(await session.call_tool("forget_this_token", {})) == "forgotten"
        # 401 now: the proxy names the refused token by its hash and the agent, holding that
        # very token, refreshes it; the call goes through with the new one.
        return text_of(await session.call_tool("whoami", {}))

    whoami, stderr = through_remote_proxy(sshd, remote, socket, steps)
    assert whoami.endswith(" " + lasting_server.url), (whoami, stderr)
    assert "refused the token; asking for a new one" in stderr, stderr
    after = lk.token(NAME)
    assert after != before, "the agent refreshed the refused token"
    assert agent.stderr().count("a server refused its token") == 1, agent.stderr()


def test_a_forwarded_host_cannot_make_the_agent_refresh_with_another_tokens_hash_nor_again_and_again(
        lk, lasting_server, agents, runtime):
    socket, agent = shared_server(lk, lasting_server.url, agents, runtime)
    held = lk.token(NAME)

    def token(**extra) -> dict:
        [answer] = ask(socket, {"op": "token", "selector": NAME, **extra})
        return answer

    # The hash of a token the agent does not hold (an old one, or made up): the current token,
    # no refresh.
    for refused in (ath("not-the-token"), "", "x" * 43):
        answer = token(refused=refused)
        assert answer["ok"] and answer["access_token"] == held, answer
        assert answer["mcp_url"] == lasting_server.url, answer
    assert lk.token(NAME) == held
    # The hash of the token it holds: refreshed.
    fresh = token(refused=ath(held))
    assert fresh["ok"] and fresh["access_token"] != held, fresh
    assert lk.token(NAME) == fresh["access_token"]
    # And the new one's hash at once: refused, not refreshed again (a remote holding the current
    # token could otherwise make the agent refresh in a loop).
    again = token(refused=ath(fresh["access_token"]))
    assert not again["ok"] and "refreshed moments ago" in again["message"], again
    assert lk.token(NAME) == fresh["access_token"]
    assert agent.stderr().count("a server refused its token") == 1, agent.stderr()
    # Only for the account's own access token.
    narrowed = token(refused=ath(held), resource=lasting_server.url)
    assert not narrowed["ok"] and "refused goes with the account's own access token" in narrowed["message"], narrowed


def test_a_forwarded_host_is_refused_an_mcp_server_whose_account_is_not_forwarded(lk, lasting_server, agents, runtime, sshd):
    socket, agent = shared_server(lk, lasting_server.url, agents, runtime, forward=False)
    remote = RemoteHost(sshd.root)
    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "t", "version": "1"}}})
    for command in (f"printf '%s\\n' '{initialize}' | " + remote.command("mcp", "proxy", NAME),
                    remote.command("mcp", "headers", NAME), remote.command("mcp", "config", NAME, "--client", "claude")):
        result = sshd.ssh((remote.socket, socket), command)
        assert result.returncode != EX_OK and "no account shared with forwarded connections" in result.stderr, result
        assert lasting_server.url not in result.stdout + result.stderr and "Bearer" not in result.stdout, result
    log = lk.run("agent", "log", "--json").json()
    assert log and {entry["outcome"] for entry in log} == {"refused"}, log


def test_a_server_asking_for_more_scope_through_the_agent_says_what_to_run_where_the_agent_runs(
        lk, lasting_server, agents, runtime, sshd):
    socket, agent = shared_server(lk, lasting_server.url, agents, runtime)
    remote = RemoteHost(sshd.root)

    async def steps(session):
        with pytest.raises(McpError) as refused:
            await session.call_tool("needs_more_scope", {})
        return str(refused.value), text_of(await session.call_tool("whoami", {}))

    (refusal, whoami), stderr = through_remote_proxy(sshd, remote, socket, steps)
    assert "its tokens come from the agent, which never starts a sign-in for a client" in refusal, refusal
    assert f"latchkey login {NAME} --scope tools --scope extra" in refusal and "where the agent runs" in refusal, refusal
    assert whoami.endswith(" " + lasting_server.url), "the proxy went on"
    assert remote.files() == []


def test_a_forwarded_host_asking_for_a_provider_that_names_no_mcp_server_is_told_where_to_add_it(lk, idp_a, agents, runtime, sshd):
    lk.add_provider("a", idp_a, forward=True)
    assert lk.login("a").code == EX_OK
    socket = runtime / "latchkey" / "forward.sock"
    agents("--forward-socket", str(socket))
    remote = RemoteHost(sshd.root)
    for command in ("printf '' | " + remote.command("mcp", "proxy", "a"), remote.command("mcp", "config", "a", "--client", "claude")):
        result = sshd.ssh((remote.socket, socket), command)
        assert result.returncode == EX_USAGE and "names no MCP server" in result.stderr and "where the agent runs" in result.stderr, result
        assert "latchkey mcp add URL" in result.stderr and result.stdout == "", result


def test_a_dpop_bound_account_works_through_the_forwarded_agent_which_signs_a_proof_per_request(
        lk, proof_server, agents, runtime, sshd):
    socket, agent = shared_server(lk, proof_server.url, agents, runtime)
    assert lk.status()[0]["dpop"] is True
    remote = RemoteHost(sshd.root)
    # The server wants its nonce in proofs: the first one lacks it, the 401 names it, and the
    # proxy passes it to the agent for the next.
    proof_server.nonce = "forwarded-nonce-" + str(time.time())
    del proof_server.requests[:]
    proof_server.jtis.clear()
    try:
        async def steps(session):
            return [text_of(await session.call_tool("echo", {})) for _ in range(3)]
        echoes, stderr = through_remote_proxy(sshd, remote, socket, steps)
    finally:
        proof_server.nonce = None
    assert echoes == ["echo: proof ok"] * 3, (echoes, stderr)
    posts = [request for request in proof_server.requests if request[0] == "POST"]
    # initialize (no nonce yet: refused), initialize again, initialized, three calls: each
    # after the first with a valid proof of its own (the server refuses a jti seen before),
    # for this method and URL, the token's hash, the key the token is bound to.
    assert [proved for _, _, _, proved in posts] == [False] + [True] * (len(posts) - 1), proof_server.requests
    assert [method for _, _, method, _ in posts].count("tools/call") == 3
    assert all(headers["Authorization"].startswith("DPoP ") for _, headers, _, _ in posts), posts
    assert len(proof_server.jtis) == len(proof_server.requests), (proof_server.jtis, proof_server.requests)
    # The remote never held the key, nor anything else.
    assert remote.files() == [], remote.files()
    log = lk.run("agent", "log", "--json").json()
    assert log and {(entry["forwarded"], entry["outcome"]) for entry in log} == {(True, "released")}, log


def test_a_forwarded_host_gets_no_proof_for_another_token_another_url_or_an_unshared_account(lk, proof_server, agents, runtime):
    socket, agent = shared_server(lk, proof_server.url, agents, runtime)
    [answer] = ask(socket, {"op": "token", "selector": NAME})
    assert answer["ok"] and answer["proof_bound"] is True, answer
    held = answer["access_token"]

    def proof(**target) -> dict:
        [answer] = ask(socket, {"op": "dpop_proof", "selector": NAME, "htm": "POST", "htu": proof_server.url, "ath": ath(held), **target})
        return answer

    # The one it may have: signed with the key the token is bound to, for that request.
    good = proof(nonce="n-1")
    assert good["ok"], good
    header = jwt.get_unverified_header(good["proof"])
    claims = jwt.decode(good["proof"], jwt.PyJWK(header["jwk"]).key, algorithms=["ES256"])
    assert (claims["htm"], claims["htu"], claims["ath"], claims["nonce"]) == ("POST", proof_server.url, ath(held), "n-1"), claims
    assert jwt.decode(held, options={"verify_signature": False})["cnf"]["jkt"] == thumbprint(header["jwk"])
    assert proof()["proof"] != good["proof"], "a fresh jti each time"
    # The canonical form of the same URL is the same URL.
    assert proof(htu=proof_server.url.replace("http://", "HTTP://") + "?x=1")["ok"]

    refusals = {
        "another token": (proof(ath=ath("another token")), "current access token; nothing was signed"),
        "another server": (proof(htu="http://127.0.0.1:9/mcp"), "gets DPoP proofs only for the MCP server"),
        "another path": (proof(htu=proof_server.url + "/other"), "gets DPoP proofs only for the MCP server"),
        "no hash at all": (proof(ath="not+a/hash"), "ath must be"),
        "a lower-case method": (proof(htm="post"), "htm must be"),
    }
    for what, (answer, says) in refusals.items():
        assert not answer["ok"] and "proof" not in answer and says in answer["message"], (what, answer)
    log = lk.run("agent", "log", "--json").json()
    reasons = [entry.get("reason", "") for entry in log if entry["outcome"] == "refused"]
    assert sum("current access token" in reason for reason in reasons) == 1, log
    assert sum("a URL the provider file does not name" in reason for reason in reasons) == 2, log

    # Not shared any more: the same good request is refused as any unshared account is.
    (lk.config / "latchkey" / "config.toml").write_text("")
    wait_for(lambda: not proof()["ok"], what="the account no longer shared")
    unshared = proof()
    assert "proof" not in unshared and "no account shared with forwarded connections" in unshared["message"], unshared


def test_a_dpop_bound_token_the_server_stops_taking_is_refreshed_once_through_the_forwarded_agent(
        lk, proof_server, agents, runtime, sshd):
    socket, agent = shared_server(lk, proof_server.url, agents, runtime)
    remote = RemoteHost(sshd.root)
    before = lk.token(NAME)

    async def steps(session):
        assert text_of(await session.call_tool("forget_this_token", {})) == "forget_this_token: proof ok"
        # 401 now: the proxy names the refused DPoP token by its hash, the agent refreshes, and
        # the call goes through with the new token and a proof for it.
        return text_of(await session.call_tool("echo", {}))

    echo, stderr = through_remote_proxy(sshd, remote, socket, steps)
    assert echo == "echo: proof ok", (echo, stderr)
    assert "refused the token; asking for a new one" in stderr, stderr
    assert lk.token(NAME) != before, "the agent refreshed the refused token"
    assert agent.stderr().count("a server refused its token") == 1, agent.stderr()


def test_a_confirm_account_gets_a_proof_through_the_forwarded_agent_only_once_a_person_agrees(lk, proof_server, agents, runtime):
    socket, agent = shared_server(lk, proof_server.url, agents, runtime)
    account = f"{NAME}:{lk.status()[0]['account']}"
    (lk.config / "latchkey" / "config.toml").write_text(f'[accounts."{account}"]\nforward = true\nconfirm = true\n')

    def answered(request: dict, answer: str) -> dict:
        """`request` on the forward socket, the person's `answer` (approve or deny) to the
        confirmation it waits on; its final line."""
        with connect(socket, 30) as client:
            client.sendall(request_line(request["op"], {key: value for key, value in request.items() if key != "op"}))
            lines = client.makefile("rb")
            waiting = flattened(json.loads(lines.readline()))
            assert waiting.get("pending"), waiting
            number = waiting["message"].split("request ")[1].split(" ")[0]
            assert lk.run(answer, number, env=agent_env(agent)).code == EX_OK
            return flattened(json.loads(lines.readline()))

    token = answered({"op": "token", "selector": NAME}, "approve")
    assert token["ok"] and token["proof_bound"], token
    request = {"op": "dpop_proof", "selector": NAME, "htm": "POST", "htu": proof_server.url, "ath": ath(token["access_token"])}
    denied = answered(request, "deny")
    assert not denied["ok"] and "proof" not in denied and "was denied" in denied["message"], denied
    approved = answered(request, "approve")
    assert approved["ok"] and approved["proof"], approved
    log = lk.run("agent", "log", "--json").json()
    assert [entry["outcome"] for entry in log] == ["released", "denied", "released"], log
