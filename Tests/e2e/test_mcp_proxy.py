"""`latchkey mcp proxy`: the official MCP Python SDK's stdio client runs `latchkey mcp proxy NAME`
as its server, and the proxy forwards to the SDK's Streamable HTTP server (Tests/e2e/mcp_server.py,
glewlwyd's tokens): a tool call succeeds, a progress notification is passed on while the call
still runs (SSE relayed event by event), a token the server stops taking is refreshed once, and a
server that goes away ends the proxy within seconds with JSON-RPC errors for what was pending.
"""

import asyncio
import base64
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from agent_support import agent_env, agents, ath, runtime  # noqa: F401  (fixtures)
from conftest import EX_OK, EX_REJECTED, EX_USAGE, LATCHKEY_BIN, REPO, ServerProcess, free_ports
from test_mcp import call_whoami
from test_glewlwyd import Glewlwyd
from tui_support import tmux  # noqa: F401  (fixture)

pytestmark = pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")

EX_UNAVAILABLE = 69
NAME = "127.0.0.1"


def start_mcp_server(port: int, issuer: str, directory) -> ServerProcess:
    return ServerProcess("mcp server", [sys.executable, str(REPO / "Tests" / "e2e" / "mcp_server.py"), "--port", str(port),
                                        "--issuer", issuer, "--scope", "profile"], directory).wait_ready(30)


HOSTILE_PATHS = ("endless", "not-json", "html", "escapes", "refuse-all", "more-scope")


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """glewlwyd allowing MCP servers' URLs as resources of its profile scope: the SDK's server,
    which runs for the whole module, a second one each test may start and stop, and each path
    of the hostile server."""
    ports = free_ports(3)
    urls = [f"http://127.0.0.1:{port}/mcp" for port in ports[:2]] + [f"http://127.0.0.1:{ports[2]}/{path}" for path in HOSTILE_PATHS]
    glewlwyd = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-mcp-proxy"), free_ports(1), features=("registration", "resource"),
                        extra=tuple(item for url in urls for item in ("--resource", f"profile={url}"))).wait_ready()
    server = start_mcp_server(ports[0], glewlwyd.issuer, tmp_path_factory.mktemp("mcp-server"))
    hostile = HostileServer(glewlwyd.issuer, ports[2])
    yield glewlwyd, server, ports[1], hostile
    hostile.server.shutdown()
    server.stop()
    glewlwyd.stop()


def add(lk, url: str):
    added = lk.run("mcp", "add", url, "--name", NAME, "--loopback-port", str(free_ports(1)[0]), timeout=90)
    assert added.code == EX_OK, added


def through_proxy(lk, steps, command=None, args=("mcp", "proxy", NAME), env=None, message_handler=None):
    """The SDK's stdio client, with `latchkey mcp proxy` as its server: `steps(session)` runs
    after initialize; returns what it returns and the proxy's standard error."""
    stderr_path = lk.tmp / "proxy-stderr.txt"

    async def run():
        parameters = StdioServerParameters(command=command or str(lk.binary), args=list(args), env=env or lk.env(), cwd=str(lk.root))
        with open(stderr_path, "w") as errlog:
            async with stdio_client(parameters, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=message_handler) as session:
                    await session.initialize()
                    return await steps(session)
    result = asyncio.run(asyncio.wait_for(run(), 60))
    return result, stderr_path.read_text()


def text_of(result) -> str:
    assert not result.isError, result
    return result.content[0].text


def test_the_sdks_stdio_client_calls_tools_through_the_proxy_and_progress_arrives_while_the_call_runs(lk, servers):
    _, server, _, _ = servers
    add(lk, server.url)
    marker = lk.tmp / "progress-seen"
    seen = []

    async def steps(session):
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"whoami", "progress_then_wait"} <= tools, tools
        whoami = text_of(await session.call_tool("whoami", {}))

        async def progress(value, total, message):
            seen.append((value, total, message))
            marker.touch()
        # The tool answers only once the client has seen its progress notification: held back
        # until the end of the stream, the notification would come after a "never seen".
        waited = text_of(await session.call_tool("progress_then_wait", {"marker": str(marker)}, progress_callback=progress))
        return whoami, waited

    (whoami, waited), stderr = through_proxy(lk, steps)
    assert whoami and whoami != "nobody", whoami
    assert waited == "seen while running", (waited, stderr)
    assert seen == [(1.0, 2.0, "waiting for the client")], seen
    assert "\x1b" not in stderr


def test_what_the_server_sends_on_its_own_stream_reaches_the_client(lk, servers):
    _, server, _, _ = servers
    add(lk, server.url)
    changed = asyncio.Event()

    async def handler(message):
        if isinstance(message, types.ServerNotification) and isinstance(message.root, types.ToolListChangedNotification):
            changed.set()

    async def steps(session):
        # The notification belongs to no request: only the GET stream carries it, and the server
        # drops it while that stream is not open yet (the proxy opens it once initialized is
        # taken, which races the first call on a loaded machine), so the tool is called until
        # one gets through.
        for _ in range(20):
            assert text_of(await session.call_tool("announce", {})) == "announced"
            try:
                await asyncio.wait_for(changed.wait(), 0.5)
                return True
            except asyncio.TimeoutError:
                continue
        return False

    assert through_proxy(lk, steps, message_handler=handler)[0]


def test_a_token_the_server_stops_taking_is_refreshed_once_and_the_call_goes_through(lk, servers):
    _, server, _, _ = servers
    add(lk, server.url)

    async def steps(session):
        first = text_of(await session.call_tool("token_digest", {}))
        assert text_of(await session.call_tool("refuse_this_token", {})) == "refused"
        # glewlwyd's JWTs differ by their `iat` in seconds: a refresh in the same second would
        # give the very token the server now refuses.
        await asyncio.sleep(1.1)
        second = text_of(await session.call_tool("token_digest", {}))
        third = text_of(await session.call_tool("token_digest", {}))
        return first, second, third

    (first, second, third), stderr = through_proxy(lk, steps)
    # A new token after the 401, and the same one after it: one refresh, not one per call.
    assert first != second == third, (first, second, third)
    assert stderr.count("refused the token; asking for a new one") == 1, stderr


def read_line(proc, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    line = b""
    while time.monotonic() < deadline and not line.endswith(b"\n"):
        if select.select([proc.stdout], [], [], 0.1)[0]:
            chunk = os.read(proc.stdout.fileno(), 1)
            if not chunk:
                break
            line += chunk
    assert line.endswith(b"\n"), f"no line within {timeout} s: {line!r}"
    return json.loads(line)


@pytest.mark.parametrize("pending", [("2", "three"), ()], ids=["requests pending", "idle"])
def test_a_server_killed_mid_session_ends_the_proxy_within_seconds_answering_what_was_pending(lk, servers, tmp_path, pending):
    glewlwyd, _, port, _ = servers
    doomed = start_mcp_server(port, glewlwyd.issuer, tmp_path / "doomed")
    try:
        add(lk, doomed.url)
        proxy = subprocess.Popen([str(lk.binary), "mcp", "proxy", NAME], env=lk.env(), cwd=lk.root, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def send(message):
            proxy.stdin.write((json.dumps(message) + "\n").encode())
            proxy.stdin.flush()
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert read_line(proxy, 20)["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ids = [2 if ident == "2" else ident for ident in pending]
        for ident in ids:
            send({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": "hang", "arguments": {}}})
        time.sleep(1)
        killed = time.monotonic()
        os.killpg(doomed.proc.pid, signal.SIGKILL)
        answers = {answer["id"]: answer for answer in (read_line(proxy, 10) for _ in ids)}
        code = proxy.wait(timeout=10)
        took = time.monotonic() - killed
    finally:
        doomed.stop()
    print(f"proxy ended {took:.2f} s after the server was killed ({len(ids)} pending)")
    assert set(answers) == set(ids), answers
    assert all(answer["error"]["code"] == -32000 and "is gone" in answer["error"]["message"] for answer in answers.values()), answers
    assert code == EX_UNAVAILABLE, code
    # Idle, the server's own stream (the GET) is what notices.
    assert took < 5, took
    stderr = proxy.stderr.read().decode()
    assert "is gone" in stderr and "\x1b" not in stderr, stderr


class SignInFirst(BaseHTTPRequestHandler):
    """An MCP server's sign-in half, for the servers written here: a POST without a token is
    answered 401 naming the metadata (RFC 9728), whose GET names `issuer` for the path's URL."""
    issuer = ""
    port = 0

    def log_message(self, *args):
        pass

    def answer(self, status, value=None, headers=(), body=None, content_type="application/json"):
        body = body if body is not None else (json.dumps(value, indent=2).encode() if value is not None else b"")
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, text in headers:
            self.send_header(name, text)
        self.end_headers()
        self.wfile.write(body)

    def challenge(self):
        path = self.path
        self.answer(401, headers=[("WWW-Authenticate",
                                   f'Bearer resource_metadata="http://127.0.0.1:{self.port}/.well-known/oauth-protected-resource{path}"')])

    def do_GET(self):
        path = self.path.removeprefix("/.well-known/oauth-protected-resource")
        self.answer(200, {"resource": f"http://127.0.0.1:{self.port}{path}", "authorization_servers": [self.issuer],
                          "scopes_supported": ["profile"]})


class HostileServer:
    """Answers a signed-in POST as its path says: /endless an SSE line that never ends, /not-json
    an event that is no JSON-RPC message, /html a page, /escapes a 500 whose text holds terminal
    escapes, /refuse-all a 401 to every token, /more-scope a 403 asking for `admin:all`. The
    tokens it was sent are kept in `tokens`."""

    def __init__(self, issuer: str, port: int):
        tokens: list[str] = []

        class Handler(SignInFirst):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.headers.get("Authorization"):
                    return self.challenge()
                tokens.append(self.headers["Authorization"])
                if self.path == "/refuse-all":
                    return self.answer(401, headers=[("WWW-Authenticate", 'Bearer error="invalid_token"')])
                if self.path == "/more-scope":
                    return self.answer(403, headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="admin:all"')])
                if self.path == "/endless":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(b"data: ")
                    try:
                        for _ in range(64 * 16):  # 64 MiB at most, well past the cap
                            self.wfile.write(b"a" * 65536)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return
                if self.path == "/not-json":
                    return self.answer(200, body=b"event: message\ndata: {not json\n\n", content_type="text/event-stream")
                if self.path == "/html":
                    return self.answer(200, body=b"<html>hello</html>", content_type="text/html")
                self.answer(500, body=b"\x1b]0;owned\x07\x1b[2Jbroken", content_type="text/plain")

        Handler.issuer, Handler.port = issuer, port
        self.tokens = tokens
        self.base = f"http://127.0.0.1:{port}"
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def initialize_raw(lk, env=None):
    """`mcp proxy` with its stdin and stdout kept here, after an initialize request (id 1)."""
    proxy = subprocess.Popen([str(lk.binary), "mcp", "proxy", NAME], env=lk.env(**(env or {})), cwd=lk.root, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proxy.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}) + "\n").encode())
    proxy.stdin.flush()
    return proxy


@pytest.mark.parametrize("path, says", [("endless", "over 8192 KiB"), ("not-json", "no JSON-RPC message"), ("html", "text/html")])
def test_a_server_answering_garbage_gets_its_request_a_json_rpc_error_and_ends_the_proxy(lk, servers, path, says):
    _, _, _, hostile = servers
    add(lk, f"{hostile.base}/{path}")
    proxy = initialize_raw(lk)
    answer = read_line(proxy, 20)
    assert answer["id"] == 1 and answer["error"]["code"] == -32000 and says in answer["error"]["message"], answer
    assert proxy.wait(timeout=10) == EX_REJECTED
    stderr = proxy.stderr.read().decode()
    assert says in stderr and "\x1b" not in stderr, stderr


def test_a_refusal_is_answered_with_its_text_made_inert_and_the_proxy_goes_on(lk, servers):
    _, _, _, hostile = servers
    add(lk, f"{hostile.base}/escapes")
    proxy = initialize_raw(lk)
    answer = read_line(proxy, 20)
    message = answer["error"]["message"]
    assert answer["id"] == 1 and "HTTP 500" in message and "broken" in message, answer
    assert "\x1b" not in message and "\\x1B]0;owned" in message, message
    # Not the end: the next request is forwarded too, a line that is no JSON-RPC message is
    # answered as JSON-RPC says (-32700, id null), and stdin's end ends the proxy quietly.
    proxy.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\nnot json\n')
    proxy.stdin.flush()
    answers = sorted((read_line(proxy, 20), read_line(proxy, 20)), key=lambda answer: str(answer["id"]))
    assert answers[0]["id"] == 2 and "HTTP 500" in answers[0]["error"]["message"], answers
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32700, answers
    proxy.stdin.close()
    assert proxy.wait(timeout=10) == EX_OK


class ProofCheckingServer:
    """A Streamable HTTP MCP server written here, for what the SDK's server cannot show: it takes
    only DPoP-bound tokens (RFC 9449 §7.1: `Authorization: DPoP`, and a `DPoP` proof for this
    method and URL, carrying `ath` for the token, signed by the key the token's `cnf.jkt` names),
    answers with pretty-printed JSON (no SSE), gives a session ID and records every request's
    headers. Its `needs_email` tool answers 403 insufficient_scope (RFC 6750 §3.1) until the
    token carries the `email` scope; `forget_this_token` makes it refuse the call's token (401)
    from then on. Tokens' signatures are not checked: the proof is the test."""

    def __init__(self, issuer: str, port: int):
        outer = self
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.requests = []
        self.scopes = []
        self.jtis = set()
        self.forgotten = set()
        # When set, a proof must carry it (RFC 9449 §9); one without is answered use_dpop_nonce.
        self.nonce = None

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, value=None, headers=()):
                body = json.dumps(value, indent=2).encode() if value is not None else b""
                self.send_response(status)
                if value is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, text in headers:
                    self.send_header(name, text)
                self.end_headers()
                self.wfile.write(body)

            def claims(self):
                """The token's claims when its proof holds for this request, else None."""
                scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
                proof = self.headers.get("DPoP")
                if scheme != "DPoP" or not proof:
                    return None
                header = jwt.get_unverified_header(proof)
                proof_claims = jwt.decode(proof, jwt.PyJWK(header["jwk"]).key, algorithms=["ES256"])
                token_claims = jwt.decode(token, options={"verify_signature": False})
                if token in outer.forgotten:
                    return None
                token_hash = ath(token)
                fresh = proof_claims["jti"] not in outer.jtis
                outer.jtis.add(proof_claims["jti"])
                if outer.nonce and proof_claims.get("nonce") != outer.nonce:
                    self.wants_nonce = True
                    return None
                good = (header["typ"] == "dpop+jwt" and proof_claims["htm"] == self.command and proof_claims["htu"] == outer.url
                        and proof_claims["ath"] == token_hash and fresh and token_claims["cnf"]["jkt"] == thumbprint(header["jwk"]))
                return token_claims if good else None

            def do_POST(self):
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                self.wants_nonce = False
                claims = self.claims() if self.headers.get("Authorization") else None
                outer.requests.append(("POST", dict(self.headers), message.get("method"), claims is not None))
                outer.scopes.append(str((claims or {}).get("scope", "")).split())
                if self.wants_nonce:
                    return self.answer(401, headers=[("DPoP-Nonce", outer.nonce), ("WWW-Authenticate", 'DPoP error="use_dpop_nonce"')])
                if claims is None:
                    return self.answer(401, headers=[("WWW-Authenticate", f'Bearer resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"')])
                method, ident = message.get("method"), message.get("id")
                if method == "initialize":
                    return self.answer(200, {"jsonrpc": "2.0", "id": ident, "result": {
                        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "proofs", "version": "1"}}},
                        headers=[("Mcp-Session-Id", "proof-session-1")])
                if ident is None:
                    return self.answer(202)
                if method == "tools/list":
                    tools = [{"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "needs_email", "needs_what_none_grants", "forget_this_token")]
                    return self.answer(200, {"jsonrpc": "2.0", "id": ident, "result": {"tools": tools}})
                name = message["params"]["name"]
                if name == "forget_this_token":
                    outer.forgotten.add(self.headers["Authorization"].partition(" ")[2])
                if name == "needs_email" and "email" not in str(claims.get("scope", "")).split():
                    return self.answer(403, headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="email"')])
                if name == "needs_what_none_grants":
                    return self.answer(403, headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="no-such-scope"')])
                return self.answer(200, {"jsonrpc": "2.0", "id": ident, "result": {
                    "content": [{"type": "text", "text": f"{name}: proof ok"}], "isError": False}})

            def do_GET(self):
                self.answer(200, {"resource": outer.url, "authorization_servers": [issuer], "scopes_supported": ["profile"]})

            def do_DELETE(self):
                outer.requests.append(("DELETE", dict(self.headers), None, self.claims() is not None))
                self.answer(200)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def thumbprint(jwk: dict) -> str:
    """RFC 7638 for an EC key."""
    members = json.dumps({name: jwk[name] for name in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(members.encode()).digest()).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def proof_server(tmp_path_factory):
    """glewlwyd with DPoP on (a separate one: with DPoP offered, every account becomes bound),
    allowing the server's URL for the profile and email scopes."""
    port = free_ports(1)[0]
    url = f"http://127.0.0.1:{port}/mcp"
    glewlwyd = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-mcp-dpop"), free_ports(1), features=("registration", "resource", "dpop"),
                        extra=("--resource", f"profile={url}", "--resource", f"email={url}")).wait_ready()
    server = ProofCheckingServer(glewlwyd.issuer, port)
    yield server
    server.server.shutdown()
    glewlwyd.stop()


def test_a_dpop_bound_account_sends_a_fresh_proof_per_request_and_the_session_headers_and_more_scope_needs_a_person(lk, proof_server):
    add(lk, proof_server.url)
    assert lk.status()[0]["dpop"] is True
    del proof_server.requests[:]

    async def steps(session):
        echo = text_of(await session.call_tool("echo", {}))
        again = text_of(await session.call_tool("echo", {}))
        with pytest.raises(McpError) as refused:
            await session.call_tool("needs_email", {})
        return echo, again, str(refused.value)

    # No terminal: nobody is there to accept the scope the server asks for, so no sign-in starts;
    # the request is answered with what to run, and nothing more is asked for or kept.
    (echo, again, refusal), stderr = through_proxy(lk, steps)
    assert echo == again == "echo: proof ok", (echo, again, stderr)
    assert f"latchkey login {NAME}:" in refusal and "--scope email" in refusal and "nobody accepted" in refusal, refusal
    assert "Signing in" not in stderr, stderr

    posts = [request for request in proof_server.requests if request[0] == "POST"]
    # Every request proved (a proof used twice would have been refused), the first one (the
    # 403) included; after initialize, each carried the session and the negotiated version.
    assert all(proved for _, _, _, proved in proof_server.requests), proof_server.requests
    assert posts[0][2] == "initialize" and "Mcp-Session-Id" not in posts[0][1]
    for _, headers, _, _ in posts[1:]:
        assert headers.get("Mcp-Session-Id") == "proof-session-1" and headers.get("MCP-Protocol-Version") == "2025-06-18", headers
        assert headers.get("Accept") == "application/json, text/event-stream", headers
    assert [method for _, _, method, _ in posts].count("tools/call") == 3  # echo, echo, needs_email once
    assert all("email" not in scopes for scopes in proof_server.scopes), proof_server.scopes
    # stdin's end ended the session.
    assert proof_server.requests[-1][0] == "DELETE" and proof_server.requests[-1][1].get("Mcp-Session-Id") == "proof-session-1"

    # The person runs what the answer said: from then on the account holds the union.
    assert lk.login(NAME, "--scope", "email").code == EX_OK
    more, _ = through_proxy(lk, lambda session: session.call_tool("needs_email", {}))
    assert text_of(more) == "needs_email: proof ok"
    assert {"profile", "email"} <= set(proof_server.scopes[-1]), proof_server.scopes


def test_at_a_terminal_the_person_shown_the_scope_a_server_asks_for_accepts_it_and_the_proxy_signs_in_for_the_union(
        tmux, lk, proof_server):
    """`mcp proxy` run from a terminal (its JSON-RPC on pipes) asks the person there; the MCP SDKs
    start their stdio servers without one, and those get the answer with what to run instead."""
    add(lk, proof_server.url)

    def call(tool: str) -> dict:
        requests, answers, rc = lk.tmp / f"{tool}.in", lk.tmp / f"{tool}.out", lk.tmp / f"{tool}.rc"
        requests.write_text("".join(json.dumps(message) + "\n" for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}})))
        tmux.start(f"{lk.binary} mcp proxy {NAME} < {requests} > {answers}; echo $? > {rc}", lk.env(TERM="tmux-256color"))
        tmux.wait_text("sign in again asking for it? [y/N]", timeout=60)
        shown = tmux.capture(joined=True)
        tmux.send("y", "Enter")
        tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=90, what="the proxy's end")
        tmux.kill()
        (answer,) = [json.loads(line) for line in answers.read_text().splitlines() if json.loads(line).get("id") == 2]
        return answer, shown

    answer, shown = call("needs_email")
    assert f"the MCP server {proof_server.url}" in shown and "for more scope: email" in shown, shown
    assert answer["result"]["content"][0]["text"] == "needs_email: proof ok", answer
    assert {"profile", "email"} <= set(proof_server.scopes[-1]), "the sign-in asked for the union of the scopes"
    # A scope nothing grants: accepted, signed in for, and the server still refuses.
    answer, shown = call("needs_what_none_grants")
    assert "for more scope: no-such-scope" in shown, shown
    assert "still asks for no-such-scope after a sign-in asking for it" in answer["error"]["message"], answer


def test_mcp_config_prints_entries_that_claude_code_codex_and_others_can_use_as_they_are(lk, servers):
    _, server, _, _ = servers
    add(lk, server.url)
    # The agents find `latchkey` on their PATH.
    env = lk.env(PATH=f"{LATCHKEY_BIN.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}")

    claude = lk.ok("mcp", "config", NAME, "--client", "claude").stdout
    entry = json.loads(claude)["mcpServers"][NAME]
    assert entry == {"type": "http", "url": server.url, "headersHelper": f"latchkey mcp headers {NAME}"}, claude
    # Claude Code runs the helper in a shell and sends the headers it prints.
    helper = subprocess.run(["sh", "-c", entry["headersHelper"]], env=env, cwd=lk.root, capture_output=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert helper.returncode == 0, helper
    whoami = call_whoami(entry["url"], json.loads(helper.stdout))

    codex = lk.ok("mcp", "config", NAME, "--client", "codex").stdout
    table = tomllib.loads(codex)["mcp_servers"][NAME]
    assert table == {"command": "latchkey", "args": ["mcp", "proxy", NAME]}, codex

    async def steps(session):
        return text_of(await session.call_tool("whoami", {}))
    through, _ = through_proxy(lk, steps, command=table["command"], args=table["args"], env=env)
    assert through == whoami != "nobody"

    assert lk.ok("mcp", "config", NAME, "--client", "generic").stdout == f"latchkey mcp proxy {NAME}\n"
    # As latchkey(1)'s example runs it: input ends at once, the answer still comes.
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sh", "version": "1"}}}
    piped = subprocess.run(["sh", "-c", f"printf '%s\\n' '{json.dumps(initialize)}' | latchkey mcp proxy {NAME}"], env=env, cwd=lk.root,
                           capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert piped.returncode == 0 and json.loads(piped.stdout)["result"]["protocolVersion"] == "2025-06-18", piped


def test_mcp_config_and_proxy_refuse_a_provider_that_names_no_mcp_server(lk):
    lk.add_provider("plain")
    for args in (("config", "plain", "--client", "codex"), ("proxy", "plain")):
        refused = lk.run("mcp", *args)
        assert refused.code == EX_USAGE and refused.stdout == "", refused
        assert "names no MCP server" in refused.stderr and "latchkey mcp add" in refused.stderr, refused
    bad = lk.run("mcp", "config", "plain", "--client", "vim")
    assert bad.code == EX_USAGE and "claude, codex or generic" in bad.stderr, bad


def test_a_server_asking_for_its_dpop_nonce_gets_it_in_the_next_proof_without_a_refresh(lk, proof_server):
    add(lk, proof_server.url)
    proof_server.nonce = "server-nonce-" + str(time.time())
    del proof_server.requests[:]
    try:
        async def steps(session):
            return text_of(await session.call_tool("echo", {}))
        echo, stderr = through_proxy(lk, steps)
    finally:
        proof_server.nonce = None
    assert echo == "echo: proof ok", (echo, stderr)
    # Only the first proof lacked the nonce: the 401 it got named it, and every later one had it.
    proved = [proved for method, _, _, proved in proof_server.requests if method == "POST"]
    assert proved[0] is False and all(proved[1:]), proof_server.requests
    assert "asking for a new one" not in stderr, stderr


def test_a_dpop_bound_account_through_the_agent_gets_each_proof_from_the_agent(lk, proof_server, agents):
    add(lk, proof_server.url)
    del proof_server.requests[:]

    async def steps(session):
        return text_of(await session.call_tool("echo", {}))

    # LATCHKEY_AGENT and no vault of its own: the token and every proof come from the agent.
    echo, stderr = through_proxy(lk, steps, env=lk.env(**agent_env(agents())))
    assert echo == "echo: proof ok", (echo, stderr)
    posts = [request for request in proof_server.requests if request[0] == "POST"]
    assert posts and all(proved for _, _, _, proved in posts), proof_server.requests
    assert all(headers["Authorization"].startswith("DPoP ") for _, headers, _, _ in posts), posts


def requests_through(lk, count: int, env=None) -> tuple[list[dict], str, int]:
    """`count` requests through `mcp proxy` after initialize, with no terminal; the answers, the
    proxy's standard error and its exit status."""
    proxy = initialize_raw(lk, env)
    for number in range(2, count + 2):
        proxy.stdin.write((json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/list"}) + "\n").encode())
    proxy.stdin.close()
    answers = [json.loads(line) for line in proxy.stdout.read().decode().splitlines() if line.strip()]
    status = proxy.wait(timeout=60)
    return answers, proxy.stderr.read().decode(), status


def test_a_server_refusing_every_token_gets_one_refresh_not_one_per_message(lk, servers):
    """The attack: a server answering 401 to everything made the proxy refresh the account for
    every message (each rotating its refresh token). Now the broker refreshes a refused token only
    while it is the current one, at most once per 30 s: 21 messages cost one refresh, each still
    gets its JSON-RPC error, and the proxy goes on."""
    _, _, _, hostile = servers
    add(lk, f"{hostile.base}/refuse-all")
    before = lk.token(NAME)
    hostile.tokens.clear()
    answers, stderr, status = requests_through(lk, 20)
    assert status == EX_OK, stderr
    assert sorted(answer["id"] for answer in answers) == list(range(1, 22)), answers
    assert all(answer["error"]["code"] == -32000 for answer in answers), answers
    assert len(set(hostile.tokens)) == 2, "the first token and one refreshed one, whatever the server refuses"
    assert lk.token(NAME) != before and f"Bearer {lk.token(NAME)}" in hostile.tokens
    said = [answer["error"]["message"] for answer in answers]
    assert all("refused a new token too" in text or "no new one is given" in text for text in said), said


def test_a_server_asking_for_more_scope_gets_no_sign_in_nobody_accepted(lk, servers):
    """The attack: a server answering 403 insufficient_scope with scope="admin:all" made the
    proxy sign in through the browser for it, once per message, and admin:all was then kept with
    the account. Now a scope is asked for only once a person at a terminal accepted it; with none
    (an agent's client has none), every message gets an error saying what to run, and no sign-in
    starts."""
    _, _, _, hostile = servers
    add(lk, f"{hostile.base}/more-scope")
    before = lk.token(NAME)
    opened = lk.tmp / "browser-opened.txt"
    browser = lk.tmp / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho \"$1\" >> {opened}\n")
    browser.chmod(0o755)
    answers, stderr, status = requests_through(lk, 6, env={"BROWSER": str(browser)})
    assert status == EX_OK, stderr
    assert len(answers) == 7 and all("admin:all" in answer["error"]["message"] for answer in answers), answers
    assert "latchkey login" in answers[0]["error"]["message"] and "--scope admin:all" in answers[0]["error"]["message"], answers
    assert lk.token(NAME) == before, "no sign-in, no refresh"
    assert not opened.exists(), "no browser was started"
    assert "Signing in" not in stderr, stderr
