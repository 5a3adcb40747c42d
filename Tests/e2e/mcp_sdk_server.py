#!/usr/bin/env python3
"""A Streamable-HTTP MCP server that is its own authorization server, all of it the official MCP
Python SDK's: its authorization-server routes (RFC 8414 metadata, /authorize, /token, RFC 7591
/register, RFC 7009 /revoke; PKCE checked by the SDK), its RFC 9728 protected-resource metadata
and its bearer middleware, which refuses a token issued for another resource
(`validate_token_resource`). Only the storage behind the SDK's `OAuthAuthorizationServerProvider`
is written here, in memory: plain OAuth 2.0, no ID token and no userinfo endpoint, so the server
names no account.

    mcp_sdk_server.py --port P [--scope tools] [--access-token-seconds N]

prints `READY <url>` once it listens. /authorize approves at once, as a person pressing "allow"
would: it redirects straight back to the client's redirect_uri with a code. Codes are single-use
and live five minutes; access tokens are opaque random strings living `--access-token-seconds`
(default an hour), bound to the `resource` the sign-in named (RFC 8707); refresh tokens rotate.
Its tool `whoami` answers the client the token was issued to and the resource it is bound to;
`forget_this_token` makes the server refuse the token of that call from then on (401), keeping its
refresh token good; a call of `needs_more_scope` is answered 403 insufficient_scope.
"""

import argparse
import secrets
import sys
import threading
import time

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken, TokenError,
                                      construct_redirect_uri)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.fastmcp import FastMCP
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class InMemoryProvider:
    """The SDK's `OAuthAuthorizationServerProvider`, kept in dictionaries."""

    def __init__(self, access_token_seconds: int):
        self.access_token_seconds = access_token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        # Each refresh token's access token, so revoking either ends both (RFC 7009 §2.1).
        self.pairs: dict[str, str] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        found = self.codes.get(code)
        return found if found and found.client_id == client.client_id else None

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        if self.codes.pop(code.code, None) is None:
            raise TokenError("invalid_grant", "the code was used already")
        return self.issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, token: str) -> RefreshToken | None:
        found = self.refresh_tokens.get(token)
        return found if found and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        if self.refresh_tokens.pop(token.token, None) is None:
            raise TokenError("invalid_grant", "the refresh token was used already")
        self.access_tokens.pop(self.pairs.pop(token.token, ""), None)
        return self.issue(client.client_id, scopes, token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access_tokens.get(token)
        if found and found.expires_at and found.expires_at < time.time():
            print("mcp_sdk_server: token refused: expired", file=sys.stderr, flush=True)
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)
        paired = self.pairs.pop(token.token, None)
        if paired:
            self.access_tokens.pop(paired, None)
        for refresh, access in list(self.pairs.items()):
            if access == token.token:
                self.refresh_tokens.pop(refresh, None)
                del self.pairs[refresh]

    def issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self.access_tokens[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + self.access_token_seconds,
            resource=resource)
        self.refresh_tokens[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.pairs[refresh] = access
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.access_token_seconds,
                          refresh_token=refresh, scope=" ".join(scopes) or None)


def asking_more_scope(app):
    """`app`, except that a POST calling the tool `needs_more_scope` is answered 403 with an
    RFC 6750 §3.1 challenge for the scope `extra`, as a server whose tool needs more scope than
    the token carries (step-up)."""
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        received = []
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        if b'"needs_more_scope"' in b"".join(message.get("body", b"") for message in received):
            challenge = b'Bearer error="insufficient_scope", scope="tools extra"'
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"www-authenticate", challenge), (b"content-length", b"0")]})
            return await send({"type": "http.response.body", "body": b""})
        replay = iter(received)

        async def again():
            return next(replay, None) or await receive()
        return await app(scope, again, send)
    return wrapped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--scope", action="append", default=[])
    parser.add_argument("--access-token-seconds", type=int, default=3600)
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    url = f"{base}/mcp"
    provider = InMemoryProvider(args.access_token_seconds)
    server = FastMCP(
        "latchkey-sdk-auth-test", host="127.0.0.1", port=args.port, auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base, resource_server_url=url, validate_token_resource=True, required_scopes=args.scope or None,
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=args.scope or None),
            revocation_options=RevocationOptions(enabled=True)))

    @server.tool()
    def whoami() -> str:
        """The client the token of this call was issued to, and the resource it is bound to."""
        token = get_access_token()
        return f"{token.client_id} {token.resource}" if token else "nobody"

    @server.tool()
    def forget_this_token() -> str:
        """Forgets the access token of this call (its refresh token stays good): from now on the
        token is refused with 401, as when a server revokes a token before it expires."""
        token = get_access_token()
        if token:
            provider.access_tokens.pop(token.token, None)
        return "forgotten"

    @server.tool()
    def needs_more_scope() -> str:
        """Never reached: a call of it is answered 403 insufficient_scope (`asking_more_scope`)."""
        return "granted"

    config = uvicorn.Config(asking_more_scope(server.streamable_http_app()), host="127.0.0.1", port=args.port, log_level="warning")
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    while not web.started and thread.is_alive():
        time.sleep(0.05)
    if not web.started:
        return 1
    print(f"READY {url}", flush=True)
    thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
