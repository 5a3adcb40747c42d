"""`latchkey mcp add` against an MCP server that is its own authorization server, all of it the
official MCP Python SDK's (Tests/e2e/mcp_sdk_server.py: `create_auth_routes`, RFC 9728 metadata,
the bearer middleware; only the in-memory storage behind its provider interface is the test's).
That server is plain OAuth 2.0 with no ID token and no userinfo endpoint: it names no account, so
Latchkey keeps one `unnamed` account for it. The SDK's own client calls a tool with the header
`mcp headers` prints; a short-lived token is refreshed on its own; signing in again finds the
same account.
"""

import asyncio
import json
import re
import socket
import sys
import time

import httpx
import pytest
import requests
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import EX_OK, EX_REJECTED, EX_USAGE, REPO, ServerProcess, assert_clean_stderr, free_ports

# Access tokens live this long, so that one is refreshed within the test: Latchkey's margin is
# capped at half a token's lifetime.
SHORT_LIFETIME = 6


@pytest.fixture(scope="module")
def sdk_server(tmp_path_factory):
    port = free_ports(1)[0]
    server = ServerProcess("SDK MCP server", [sys.executable, str(REPO / "Tests" / "e2e" / "mcp_sdk_server.py"),
                                              "--port", str(port), "--scope", "tools",
                                              "--access-token-seconds", str(SHORT_LIFETIME)],
                           tmp_path_factory.mktemp("mcp-sdk-server")).wait_ready(30)
    assert server.url == f"http://127.0.0.1:{port}/mcp"
    yield server
    server.stop()


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


def answer_to(url: str, header: dict) -> int:
    """The HTTP status the server gives an MCP initialize carrying `header`."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    return requests.post(url, json=body, headers={**header, "Accept": "application/json, text/event-stream"},
                         timeout=10).status_code


def headers(lk) -> dict:
    printed = lk.ok("mcp", "headers", "127.0.0.1")
    assert printed.stdout.endswith("}\n") and printed.stdout.count("\n") == 1, printed
    header = json.loads(printed.stdout)
    assert list(header) == ["Authorization"] and header["Authorization"].startswith("Bearer "), header
    return header


def test_mcp_add_signs_in_at_the_sdks_authorization_server_and_the_sdks_client_calls_a_tool(lk, sdk_server):
    added = lk.run("mcp", "add", sdk_server.url, "--loopback-port", str(free_ports(1)[0]), timeout=90)
    assert added.code == EX_OK, added
    assert_clean_stderr(added)
    text = (lk.providers_dir / "127.0.0.1.toml").read_text()
    assert 'kind = "oauth2"' in text and 'registration = "dynamic"' in text and '"tools"' in text, text
    assert f'mcp_url = "{sdk_server.url}"' in text and f'resources = ["{sdk_server.url}"]' in text, text

    # The account: one, named by no one, shown by status.
    [account] = lk.status()
    assert account["provider"] == "127.0.0.1" and account["account"] == "unnamed", account
    assert "unnamed" in lk.ok("status").stdout

    header = headers(lk)
    client_id, resource = call_whoami(sdk_server.url, header).split(" ")
    # Registered dynamically at the SDK's /register; the token bound to the server's URL (RFC 8707),
    # which the SDK's bearer middleware checks (validate_token_resource).
    assert client_id and resource == sdk_server.url

    # A short-lived token is refreshed on its own; the old one went with the rotated refresh token.
    time.sleep(SHORT_LIFETIME / 2 + 1)
    fresh = headers(lk)
    assert fresh != header
    assert call_whoami(sdk_server.url, fresh) == f"{client_id} {sdk_server.url}"
    assert answer_to(sdk_server.url, header) == 401

    # Signing in again finds the same account (the server names none, so it must not look like another).
    again = lk.login("127.0.0.1:unnamed")
    assert again.code == EX_OK, again
    assert [a["account"] for a in lk.status()] == ["unnamed"]

    # Logout forgets the account and asks the SDK's /revoke to end the grant. mcp 1.30.0 refuses
    # a public client there ("client_secret: Field required": RevocationRequest makes the key
    # required, modelcontextprotocol/python-sdk#3508), so the sign-out says the revocation failed
    # and why; Latchkey sends no made-up secret to please it.
    logout = lk.run("logout", "127.0.0.1")
    assert logout.code == EX_OK and "revocation failed" in logout.stderr and "client_secret" in logout.stderr, logout
    assert lk.status() == []


def test_a_client_metadata_url_is_refused_where_the_sdks_server_does_not_take_one_and_nothing_is_written(lk, sdk_server):
    # mcp 1.30.0's authorization server does not advertise client_id_metadata_document_supported.
    result = lk.run("mcp", "add", sdk_server.url, "--client-metadata-url", "https://client.example.net/latchkey.json")
    assert result.code == EX_REJECTED and "does not take Client ID Metadata Documents" in result.stderr, result
    assert "--client-id" in result.stderr and "nothing was written" in result.stderr, result
    assert list(lk.providers_dir.iterdir()) == []
    both = lk.run("mcp", "add", sdk_server.url, "--client-id", "c", "--client-metadata-url", "https://client.example.net/c.json")
    assert both.code == EX_USAGE and "not both" in both.stderr, both



def delivered_ports(lk) -> list[int]:
    """The ports the scripted browser delivered redirects to, in order (its log)."""
    return [int(m) for m in re.findall(r"delivered http://127\.0\.0\.1:(\d+)/", lk.ua_log_text())]


def test_mcp_add_without_a_port_registers_the_port_it_listens_on_and_a_taken_port_registers_again(lk, sdk_server):
    """The SDK's authorization server matches a redirect URI port and all; Latchkey, registering
    its own client, lists the exact URI it will listen on (before: a port-less URI, which the SDK
    refused at the redirect, `Redirect URI … not registered for client`, and `mcp add` waited for
    a redirect that never came)."""
    added = lk.run("mcp", "add", sdk_server.url, "--timeout", "30", timeout=90)
    assert added.code == EX_OK, added
    assert_clean_stderr(added)
    assert "loopback_port" not in (lk.providers_dir / "127.0.0.1.toml").read_text()
    first_client, _ = call_whoami(sdk_server.url, headers(lk)).split(" ")

    # Signing in again listens on the port registered, and reuses the registration.
    again = lk.run("login", "127.0.0.1:unnamed", "--timeout", "30", timeout=90)
    assert again.code == EX_OK, again
    [port, same] = delivered_ports(lk)
    assert same == port
    assert call_whoami(sdk_server.url, headers(lk)).split(" ")[0] == first_client

    # Another program holds that port now: the sign-in listens on another and registers it.
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the last sign-in's connections linger in TIME_WAIT
    holder.bind(("127.0.0.1", port))
    holder.listen(1)
    try:
        moved = lk.run("login", "127.0.0.1:unnamed", "--timeout", "30", timeout=90)
        assert moved.code == EX_OK, moved
    finally:
        holder.close()
    assert delivered_ports(lk)[-1] != port
    second_client, resource = call_whoami(sdk_server.url, headers(lk)).split(" ")
    assert second_client != first_client and resource == sdk_server.url
