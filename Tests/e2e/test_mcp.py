"""`latchkey mcp`: an MCP server built from the official MCP Python SDK (Tests/e2e/mcp_server.py),
protected as an OAuth resource server with glewlwyd as its authorization server, is added from its
URL alone (RFC 9728 metadata, OpenID discovery, RFC 7591 registration), signed in to through the
scripted browser, and called by the SDK's own client with the header `mcp headers` prints. And
what a hostile or unprotected server says is refused with nothing written.
"""

import asyncio
import json
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import requests
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agent_support import agent_env, agents, runtime  # noqa: F401  (fixtures)
from conftest import EX_OK, EX_REJECTED, EX_USAGE, REPO, ServerProcess, assert_clean_stderr, free_ports, jwt_parts
from test_glewlwyd import Glewlwyd, add_glewlwyd, glewlwyd_current  # noqa: F401  (fixture)

pytestmark = pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")

EX_CANTCREAT = 73


@pytest.fixture(scope="module")
def mcp_server(tmp_path_factory):
    """glewlwyd with open registration and the MCP server's URL as a resource of its profile
    scope, and the SDK's MCP server on that URL taking glewlwyd's tokens for it."""
    port = free_ports(1)[0]
    url = f"http://127.0.0.1:{port}/mcp"
    glewlwyd = Glewlwyd(tmp_path_factory.mktemp("glewlwyd-mcp"), free_ports(1), features=("registration", "resource"),
                        extra=("--resource", f"profile={url}")).wait_ready()
    server = ServerProcess("mcp server", [sys.executable, str(REPO / "Tests" / "e2e" / "mcp_server.py"), "--port", str(port),
                                          "--issuer", glewlwyd.issuer, "--scope", "profile"],
                           tmp_path_factory.mktemp("mcp-server")).wait_ready(30)
    assert server.url == url
    yield server
    server.stop()
    glewlwyd.stop()


def call_whoami(url: str, headers: dict) -> str:
    """The SDK's client over Streamable HTTP: initialize, then the whoami tool."""
    async def call():
        async with httpx.AsyncClient(headers=headers, timeout=30) as http, \
                streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("whoami", {})
                assert not result.isError, result
                return result.content[0].text
    return asyncio.run(asyncio.wait_for(call(), 30))


def test_mcp_add_registers_and_signs_in_and_the_sdks_client_calls_a_tool_with_mcp_headers(lk, mcp_server, agents):
    assert requests.post(mcp_server.url, json={}, timeout=10).status_code == 401, "the server is not protected"
    added = lk.run("mcp", "add", mcp_server.url, "--loopback-port", str(free_ports(1)[0]), timeout=90)
    assert added.code == EX_OK, added
    assert_clean_stderr(added)
    text = (lk.providers_dir / "127.0.0.1.toml").read_text()
    assert f'mcp_url = "{mcp_server.url}"' in text and f'resources = ["{mcp_server.url}"]' in text, text
    assert 'registration = "dynamic"' in text and 'kind = "oidc"' in text and '"profile"' in text, text

    headers = lk.ok("mcp", "headers", "127.0.0.1")
    assert headers.stdout.endswith("}\n") and headers.stdout.count("\n") == 1, headers
    header = json.loads(headers.stdout)
    assert list(header) == ["Authorization"] and header["Authorization"].startswith("Bearer "), header
    _, claims = jwt_parts(header["Authorization"][len("Bearer "):])
    assert mcp_server.url in (claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]), claims

    assert call_whoami(mcp_server.url, header) == claims["sub"]

    # The launcher answers it alone from its kernel-keyring copy, byte for byte as the full command.
    lk.leave_only_the_launcher()
    assert lk.ok("mcp", "headers", "127.0.0.1").stdout == headers.stdout
    lk.restore_the_full_command()

    # Through the agent, as token goes: the same header, from a client with no vault of its own.
    through = lk.run("mcp", "headers", "127.0.0.1", env=agent_env(agents()))
    assert through.code == EX_OK and json.loads(through.stdout) == header, through


def test_a_sign_in_that_fails_leaves_the_file_and_login_signs_in_with_it(lk, mcp_server):
    port = str(free_ports(1)[0])
    failed = lk.run("mcp", "add", mcp_server.url, "--loopback-port", port, "--timeout", "2", env={"BROWSER": "/bin/false"})
    assert failed.code != EX_OK and "`latchkey login 127.0.0.1` signs in" in failed.stderr, failed
    assert 'mcp_url = "' in (lk.providers_dir / "127.0.0.1.toml").read_text()
    assert lk.login("127.0.0.1").code == EX_OK
    assert lk.ok("mcp", "headers", "127.0.0.1").stdout.startswith('{"Authorization":"Bearer ')


def test_mcp_headers_refuses_a_dpop_bound_account_and_prints_nothing(lk, glewlwyd_current, agents):
    add_glewlwyd(lk, glewlwyd_current, dpop="always")
    assert lk.login("g").code == EX_OK
    refused = lk.run("mcp", "headers", "g")
    assert refused.code == EX_USAGE and refused.stdout == "", refused
    assert "DPoP-bound" in refused.stderr and "mcp proxy" in refused.stderr, refused
    # Through the agent too: its answer says the token is bound, so no header carries it.
    through = lk.run("mcp", "headers", "g", env=agent_env(agents()))
    assert through.code == EX_USAGE and through.stdout == "" and "DPoP-bound" in through.stderr, through
    # The launcher holds a copy of that token (it answers `token` alone) but knows it is bound,
    # so it prints no header either and leaves the refusal to the full command.
    lk.leave_only_the_launcher()
    assert lk.token("g")
    alone = lk.run("mcp", "headers", "g")
    assert alone.code != EX_OK and alone.stdout == "", alone


class HostileServer:
    """An "MCP server" on loopback answering as each test needs: /open answers without asking
    for a sign-in; /wrong asks, and its metadata names another resource."""

    def __init__(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body=b"{}", headers=()):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/open":
                    return self.answer(200)
                self.answer(401, headers=[("WWW-Authenticate",
                                           f'Bearer resource_metadata="{outer.base}/.well-known/oauth-protected-resource{self.path}"')])

            def do_GET(self):
                metadata = {"resource": f"{outer.base}/elsewhere", "authorization_servers": [f"{outer.base}/as"]}
                self.answer(200, json.dumps(metadata).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def hostile():
    server = HostileServer()
    yield server
    server.server.shutdown()


def test_metadata_for_another_resource_is_refused_and_nothing_is_written(lk, hostile):
    result = lk.run("mcp", "add", f"{hostile.base}/wrong")
    assert result.code == EX_REJECTED and "RFC 9728 §3.3" in result.stderr, result
    assert f"{hostile.base}/elsewhere" in result.stderr, result
    assert list(lk.providers_dir.iterdir()) == []


def test_a_server_that_asks_for_no_sign_in_is_refused_and_nothing_is_written(lk, hostile):
    result = lk.run("mcp", "add", f"{hostile.base}/open")
    assert result.code == EX_REJECTED and "asks for no sign-in" in result.stderr, result
    assert list(lk.providers_dir.iterdir()) == []


def test_a_name_another_provider_has_is_refused_before_the_server_is_asked(lk, hostile):
    before = lk.add_provider("taken").read_text()
    result = lk.run("mcp", "add", f"{hostile.base}/open", "--name", "taken")
    assert result.code == EX_CANTCREAT and "choose another name with --name" in result.stderr, result
    assert (lk.providers_dir / "taken.toml").read_text() == before
    # Refused before any request: /open would have been "asks for no sign-in".
    assert "sign-in" not in result.stderr, result
