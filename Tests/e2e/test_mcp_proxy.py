"""`latchkey mcp proxy`: the official MCP Python SDK's stdio client runs `latchkey mcp proxy NAME`
as its server, and the proxy forwards to the SDK's Streamable HTTP server (Tests/e2e/mcp_server.py,
glewlwyd's tokens): a tool call succeeds, a progress notification is passed on while the call
still runs (SSE relayed event by event), a token the server stops taking is refreshed once, and a
server that goes away ends the proxy within seconds with JSON-RPC errors for what was pending.
"""

import asyncio
import json
import os
import select
import shutil
import subprocess
import sys
import time

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import EX_OK, REPO, ServerProcess
from test_glewlwyd import Glewlwyd, free_ports

pytestmark = pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")

EX_UNAVAILABLE = 69
NAME = "127.0.0.1"


def start_mcp_server(port: int, issuer: str, directory) -> ServerProcess:
    return ServerProcess("mcp server", [sys.executable, str(REPO / "Tests" / "e2e" / "mcp_server.py"), "--port", str(port),
                                        "--issuer", issuer, "--scope", "profile"], directory).wait_ready(30)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """glewlwyd allowing two MCP servers' URLs as resources of its profile scope; the first
    server runs for the whole module, the second is each test's to start and stop."""
    ports = free_ports(2)
    urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
    glewlwyd = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-mcp-proxy"), free_ports(1), features=("registration", "resource"),
                        extra=tuple(item for url in urls for item in ("--resource", f"profile={url}"))).wait_ready()
    server = start_mcp_server(ports[0], glewlwyd.issuer, tmp_path_factory.mktemp("mcp-server"))
    yield glewlwyd, server, ports[1]
    server.stop()
    glewlwyd.stop()


def add(lk, url: str):
    added = lk.run("mcp", "add", url, "--name", NAME, "--loopback-port", str(free_ports(1)[0]), timeout=90)
    assert added.code == EX_OK, added


def through_proxy(lk, steps):
    """The SDK's stdio client, with `latchkey mcp proxy` as its server: `steps(session)` runs
    after initialize; returns what it returns and the proxy's standard error."""
    stderr_path = lk.tmp / "proxy-stderr.txt"

    async def run():
        parameters = StdioServerParameters(command=str(lk.binary), args=["mcp", "proxy", NAME], env=lk.env(), cwd=str(lk.root))
        with open(stderr_path, "w") as errlog:
            async with stdio_client(parameters, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await steps(session)
    result = asyncio.run(asyncio.wait_for(run(), 60))
    return result, stderr_path.read_text()


def text_of(result) -> str:
    assert not result.isError, result
    return result.content[0].text


def test_the_sdks_stdio_client_calls_tools_through_the_proxy_and_progress_arrives_while_the_call_runs(lk, servers):
    _, server, _ = servers
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


def test_a_token_the_server_stops_taking_is_refreshed_once_and_the_call_goes_through(lk, servers):
    _, server, _ = servers
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


def test_a_server_that_goes_away_ends_the_proxy_within_seconds_answering_what_was_pending(lk, servers, tmp_path):
    glewlwyd, _, port = servers
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
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang", "arguments": {}}})
        send({"jsonrpc": "2.0", "id": "three", "method": "tools/call", "params": {"name": "hang", "arguments": {}}})
        time.sleep(1)
    finally:
        doomed.stop()
    stopped = time.monotonic()
    answers = {answer["id"]: answer for answer in (read_line(proxy, 10), read_line(proxy, 10))}
    code = proxy.wait(timeout=10)
    took = time.monotonic() - stopped
    assert set(answers) == {2, "three"}, answers
    assert all(answer["error"]["code"] == -32000 and "is gone" in answer["error"]["message"] for answer in answers.values()), answers
    assert code == EX_UNAVAILABLE, code
    assert took < 5, took
    stderr = proxy.stderr.read().decode()
    assert "is gone" in stderr and "\x1b" not in stderr, stderr
