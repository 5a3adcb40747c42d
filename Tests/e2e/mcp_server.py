#!/usr/bin/env python3
"""A Streamable-HTTP MCP server built from the official MCP Python SDK, protected as an OAuth
resource server (the MCP authorization spec): RFC 9728 metadata naming an authorization server,
401 with `WWW-Authenticate: Bearer resource_metadata=...` without a token, and a bearer token
checked here: a JWT signed with the authorization server's keys (glewlwyd's access tokens are),
unexpired, from that issuer, for this server's URL (`aud`, RFC 8707) and with the scope asked.

    mcp_server.py --port P --issuer ISSUER --scope profile

prints `READY <url>` once it listens. Its tools: `whoami` answers the token's subject; for
`latchkey mcp proxy`'s tests, `progress_then_wait` sends a progress notification and then waits
for the file its client creates on seeing it (so it ends well only if the notification was
passed on while the call was still running), `token_digest` answers a digest of the token the
call came with, `refuse_this_token` makes the server answer that token 401 from now on,
`announce` sends a notification on the session's own stream (the client's GET), and `hang`
never answers.
"""

import argparse
import asyncio
import hashlib
import json
import os
import sys
import threading
import time
import urllib.request

import jwt
import uvicorn
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.fastmcp import Context, FastMCP


class IssuerTokens(TokenVerifier):
    """Takes a JWT access token of `issuer`, for `resource`, checked with the issuer's JWKS."""

    def __init__(self, issuer: str, resource: str):
        self.issuer = issuer
        self.resource = resource
        self.refused = set()
        with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration", timeout=10) as answer:
            self.keys = jwt.PyJWKClient(json.load(answer)["jwks_uri"])

    async def verify_token(self, token: str) -> AccessToken | None:
        if token in self.refused:
            print("mcp_server: token refused: refuse_this_token", file=sys.stderr, flush=True)
            return None
        try:
            key = self.keys.get_signing_key_from_jwt(token).key
            claims = jwt.decode(token, key, algorithms=["RS256", "RS384", "RS512", "ES256"], issuer=self.issuer,
                                audience=self.resource)
        except jwt.PyJWTError as error:
            print(f"mcp_server: token refused: {error}", file=sys.stderr, flush=True)
            return None
        return AccessToken(token=token, client_id=str(claims.get("client_id") or claims.get("azp") or ""),
                           scopes=str(claims.get("scope", "")).split(), expires_at=claims.get("exp"),
                           resource=self.resource, subject=claims.get("sub"), claims=claims)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--scope", action="append", default=[])
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}/mcp"
    tokens = IssuerTokens(args.issuer, url)
    server = FastMCP(
        "latchkey-test", host="127.0.0.1", port=args.port, token_verifier=tokens,
        auth=AuthSettings(issuer_url=args.issuer, resource_server_url=url, required_scopes=args.scope or None))

    @server.tool()
    def whoami() -> str:
        """The subject of the token this call came with."""
        token = get_access_token()
        return token.subject if token else "nobody"

    @server.tool()
    async def progress_then_wait(marker: str, ctx: Context) -> str:
        """A progress notification, then up to 20 s waiting for `marker` to exist."""
        await ctx.report_progress(1, 2, "waiting for the client")
        for _ in range(200):
            if os.path.exists(marker):
                return "seen while running"
            await asyncio.sleep(0.1)
        return "never seen"

    def token_of(ctx: Context) -> str:
        """The token of the HTTP request carrying this call (get_access_token() answers the one
        the session began with)."""
        return ctx.request_context.request.headers["authorization"].split(" ", 1)[1]

    @server.tool()
    def token_digest(ctx: Context) -> str:
        """The first 16 hex digits of the SHA-256 of the token this call came with."""
        return hashlib.sha256(token_of(ctx).encode()).hexdigest()[:16]

    @server.tool()
    def refuse_this_token(ctx: Context) -> str:
        """From now on the token this call came with is answered 401."""
        tokens.refused.add(token_of(ctx))
        return "refused"

    @server.tool()
    async def announce(ctx: Context) -> str:
        """Sends notifications/tools/list_changed outside this call (no related request): it goes
        on the session's own stream, the client's GET, or nowhere."""
        await ctx.session.send_tool_list_changed()
        return "announced"

    @server.tool()
    async def hang() -> str:
        """Never answers (for a test that stops the server meanwhile)."""
        await asyncio.sleep(3600)
        return "late"

    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")
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
