#!/usr/bin/env python3
"""
Self-test of the test IdP (run_idp.py) and the scripted user agent (user_agent.py).

    "$(Tests/idp/setup-venv.sh)/bin/python" Tests/idp/selftest.py

Starts two independent IdP instances on free ports, runs full authorization
code + PKCE (S256) flows through user_agent.run() against a tiny loopback
listener, and checks discovery, ID token (RS256, iss), refresh rotation,
revocation, RFC 9207 iss on success and error redirects, loopback-port
handling, tamper modes and SIGTERM shutdown. Exits non-zero with a message on
the first failure.
"""

import base64
import hashlib
import json
import os
import secrets
import select
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

try:
    import requests
    from jwcrypto import jwk, jwt

    import user_agent
except ImportError as e:  # pragma: no cover
    sys.exit(f"selftest: {e}; run me with the venv python from Tests/idp/setup-venv.sh")

CLIENT_ID = "latchkey-test"
PASSED = []


class Failure(Exception):
    pass


def check(cond, what, detail=""):
    if not cond:
        raise Failure(f"{what}" + (f" ({detail})" if detail else ""))
    PASSED.append(what)
    print(f"ok - {what}", flush=True)


# --------------------------------------------------------------------------- processes


class IdP:
    def __init__(self, name, tmp, *extra):
        self.name = name
        self.data_dir = Path(tmp) / name
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "run_idp.py"), "--port", "0", "--name", name,
             "--data-dir", str(self.data_dir), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if ready:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        if not line.startswith("READY "):
            self.proc.kill()
            raise Failure(f"IdP {name} did not start: stdout={line!r} stderr={self.proc.stderr.read()[-2000:]}")
        self.issuer = line.split()[1]
        self.port = urlsplit(self.issuer).port

    def log_lines(self):
        return (self.data_dir / "requests.log").read_text().splitlines()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return None
        return self.proc.returncode


class Listener:
    """The loopback redirect listener a native app would run."""

    def __init__(self):
        hits = self.hits = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                hits.append(self.path)
                body = b"signed in; you can close this window"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --------------------------------------------------------------------------- helpers


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def auth_url(idp, redirect_uri, state, challenge, nonce="n-" + secrets.token_hex(4),
             scope="openid profile email", client_id=CLIENT_ID):
    q = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "scope": scope,
         "state": state, "nonce": nonce}
    if challenge:
        q.update(code_challenge=challenge, code_challenge_method="S256")
    return f"{idp.issuer}/authorize/?{urlencode(q)}"


def qs(url_or_path):
    return {k: v[0] for k, v in parse_qs(urlsplit(url_or_path).query, keep_blank_values=True).items()}


def ua(url, **env):
    return user_agent.run(url, env={k.upper(): v for k, v in env.items()})


def token(idp, **form):
    return requests.post(f"{idp.issuer}/token/", data=form, timeout=10)


def full_flow(idp, listener, path, user_env=None, client_id=CLIENT_ID):
    verifier, challenge = pkce()
    state, nonce = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    redirect_uri = f"http://127.0.0.1:{listener.port}{path}"
    before = len(listener.hits)
    ua(auth_url(idp, redirect_uri, state, challenge, nonce, client_id=client_id), **(user_env or {}))
    check(len(listener.hits) == before + 1, f"[{idp.name}] user agent delivered the redirect once")
    hit = listener.hits[-1]
    params = qs(hit)
    check(urlsplit(hit).path == path, f"[{idp.name}] callback path is {path}", hit.split("?")[0])
    check(params.get("state") == state, f"[{idp.name}] callback carries our state")
    check(params.get("iss") == idp.issuer, f"[{idp.name}] RFC 9207 iss on success redirect", params.get("iss"))
    check("code" in params, f"[{idp.name}] callback carries a code")
    r = token(idp, grant_type="authorization_code", code=params["code"], redirect_uri=redirect_uri,
              client_id=client_id, code_verifier=verifier)
    check(r.status_code == 200, f"[{idp.name}] code exchange succeeds", r.text[:200])
    tok = r.json()
    return tok, nonce


def verify_id_token(idp, id_token, nonce, client_id=CLIENT_ID):
    header = json.loads(base64.urlsafe_b64decode(id_token.split(".")[0] + "=="))
    check(header.get("alg") == "RS256", f"[{idp.name}] ID token is RS256", header)
    jwks = jwk.JWKSet.from_json(requests.get(f"{idp.issuer}/.well-known/jwks.json", timeout=10).text)
    claims = json.loads(jwt.JWT(jwt=id_token, key=jwks, algs=["RS256"]).claims)
    check(claims.get("iss") == idp.issuer, f"[{idp.name}] ID token iss == issuer", claims.get("iss"))
    check(claims.get("aud") in (client_id, [client_id]), f"[{idp.name}] ID token aud == client_id")
    check(claims.get("nonce") == nonce, f"[{idp.name}] ID token nonce echoed")
    return header, claims


# --------------------------------------------------------------------------- the test


def main():
    tmp = tempfile.mkdtemp(prefix="latchkey-idp-selftest-")
    idps, listener = [], None
    try:
        a = IdP("idp-a", tmp)
        idps.append(a)
        b = IdP("idp-b", tmp, "--access-token-seconds", "7", "--client-id", "other-client",
                "--redirect-paths", "/extra/cb")
        idps.append(b)
        check(a.issuer == f"http://127.0.0.1:{a.port}/o", "READY line is the issuer http://127.0.0.1:PORT/o")

        # ---- discovery
        d = requests.get(f"{a.issuer}/.well-known/openid-configuration", timeout=10).json()
        check(d["issuer"] == a.issuer, "discovery issuer")
        check(d["token_endpoint"] == f"{a.issuer}/token/", "discovery token_endpoint", d["token_endpoint"])
        check(d.get("revocation_endpoint") == f"{a.issuer}/revoke_token/", "discovery revocation_endpoint")
        check(d.get("authorization_response_iss_parameter_supported") is True,
              "discovery authorization_response_iss_parameter_supported")
        check("S256" in d.get("code_challenge_methods_supported", []), "discovery S256")
        check(d.get("userinfo_endpoint") == f"{a.issuer}/userinfo/", "discovery userinfo_endpoint")
        db = requests.get(f"{b.issuer}/.well-known/openid-configuration", timeout=10).json()
        check(db["issuer"] != d["issuer"], "two instances have different issuers")
        ka = requests.get(d["jwks_uri"], timeout=10).json()["keys"][0]["kid"]
        kb = requests.get(db["jwks_uri"], timeout=10).json()["keys"][0]["kid"]
        check(ka != kb, "two instances have different signing keys")

        listener = Listener()

        # ---- full flow on A
        tok, nonce = full_flow(a, listener, "/oauth2redirect/a")
        check(tok.get("token_type", "").lower() == "bearer" and "refresh_token" in tok and "id_token" in tok,
              "token response has access, refresh and ID tokens")
        check(3500 <= int(tok.get("expires_in", 0)) <= 3600, "default access token lifetime 3600s",
              tok.get("expires_in"))
        _, claims = verify_id_token(a, tok["id_token"], nonce)
        check(claims.get("email") == "alice@example.test", "ID token email claim for alice")
        check(a.log_lines().count("POST /o/token/") == 1, "requests.log counts one POST /o/token/")

        ui = requests.get(d["userinfo_endpoint"], headers={"Authorization": f"Bearer {tok['access_token']}"},
                          timeout=10)
        check(ui.status_code == 200 and ui.json().get("email") == "alice@example.test"
              and ui.json().get("given_name") == "Alice", "userinfo works", ui.text[:200])

        # ---- refresh rotation
        r = token(a, grant_type="refresh_token", refresh_token=tok["refresh_token"], client_id=CLIENT_ID)
        check(r.status_code == 200, "refresh succeeds", r.text[:200])
        tok2 = r.json()
        check(tok2["refresh_token"] != tok["refresh_token"], "refresh token rotated")
        r = token(a, grant_type="refresh_token", refresh_token=tok["refresh_token"], client_id=CLIENT_ID)
        check(r.status_code == 400 and r.json().get("error") == "invalid_grant",
              "old refresh token rejected with invalid_grant", r.text[:200])

        # ---- revocation
        r = requests.post(d["revocation_endpoint"], data={"token": tok2["refresh_token"], "client_id": CLIENT_ID,
                                                          "token_type_hint": "refresh_token"}, timeout=10)
        check(r.status_code == 200, "revocation returns 200", r.text[:200])
        ui = requests.get(d["userinfo_endpoint"], headers={"Authorization": f"Bearer {tok2['access_token']}"},
                          timeout=10)
        check(ui.status_code == 401, "access token unusable after its refresh token was revoked", ui.status_code)
        r = token(a, grant_type="refresh_token", refresh_token=tok2["refresh_token"], client_id=CLIENT_ID)
        check(r.status_code == 400 and r.json().get("error") == "invalid_grant", "revoked refresh token rejected")

        # ---- deny -> access_denied with iss (test-fixture RFC 9207 middleware)
        _, challenge = pkce()
        ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/b", "st-deny", challenge),
           latchkey_test_ua_tamper="deny")
        p = qs(listener.hits[-1])
        check(p.get("error") == "access_denied" and p.get("state") == "st-deny" and p.get("iss") == a.issuer
              and "code" not in p, "deny -> error=access_denied with state and iss", listener.hits[-1])

        # ---- missing PKCE -> error redirect with iss
        saved = Path(tmp) / "saved.txt"
        ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/a", "st-nopkce", None),
           latchkey_test_ua_tamper=f"save={saved}")
        p = qs(saved.read_text())
        check(p.get("error") == "invalid_request" and p.get("iss") == a.issuer and p.get("state") == "st-nopkce",
              "PKCE required: error=invalid_request with iss", p)

        # ---- loopback handling: any port, exact host+path
        for host in ("localhost", "[::1]"):
            _, challenge = pkce()
            ua(auth_url(a, f"http://{host}:{40000 + secrets.randbelow(20000)}/oauth2redirect/idp-a", "st", challenge),
               latchkey_test_ua_tamper=f"save={saved}")
            check(urlsplit(saved.read_text()).hostname == host.strip("[]") and "code" in qs(saved.read_text()),
                  f"redirect to http://{host}:<any port>/oauth2redirect/idp-a accepted")
        try:
            _, challenge = pkce()
            ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/zzz", "st", challenge))
            check(False, "unregistered redirect path rejected")
        except user_agent.UAError as e:
            check("400" in str(e), "unregistered redirect path rejected by IdP (no redirect)", str(e)[:120])

        # ---- tamper modes
        hits = len(listener.hits)
        _, challenge = pkce()
        ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/a", "st-orig", challenge),
           latchkey_test_ua_tamper="path=/oauth2redirect/b,iss=http://evil.test/o,state=st-new,replay")
        check(len(listener.hits) == hits + 2, "replay delivers twice")
        p = qs(listener.hits[-1])
        check(listener.hits[-1].startswith("/oauth2redirect/b?") and p.get("iss") == "http://evil.test/o"
              and p.get("state") == "st-new" and "code" in p, "path=/iss=/state= tampering", listener.hits[-1])
        ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/a", "st-orig", pkce()[1]),
           latchkey_test_ua_tamper="drop-iss,drop-state")
        p = qs(listener.hits[-1])
        check("iss" not in p and "state" not in p and "code" in p, "drop-iss,drop-state tampering")
        desc = "bad\x1b]0;pwned\x07\x1b[2J"
        ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/a", "st-err", "x" * 43),
           latchkey_test_ua_tamper="error=server_error", latchkey_test_ua_error_description=desc)
        raw = listener.hits[-1]
        p = qs(raw)
        check("\x1b" not in raw and "%1B" in raw and p.get("error_description") == desc
              and p.get("error") == "server_error" and p.get("state") == "st-err" and p.get("iss") == a.issuer,
              "error=CODE mode percent-encodes control characters", raw)
        log_file = Path(tmp) / "ua.log"
        ua(auth_url(a, f"http://127.0.0.1:{listener.port}/oauth2redirect/a", "st-log", pkce()[1]),
           latchkey_test_ua_log=str(log_file))
        code = qs(listener.hits[-1])["code"]
        check(log_file.exists() and code not in log_file.read_text(), "UA log masks the code")
        dead = Listener()
        dead_port = dead.port
        dead.close()
        try:
            ua(auth_url(a, f"http://127.0.0.1:{dead_port}/oauth2redirect/a", "s", pkce()[1]),
               latchkey_test_ua_tamper="replay")
            check(False, "delivery to a closed port fails")
        except user_agent.UAError:
            check(True, "delivery to a closed port fails")

        # ---- RFC 8628 device authorization grant (separate "<client-id>-device" public client)
        r = requests.post(d["device_authorization_endpoint"],
                          data={"client_id": f"{CLIENT_ID}-device", "scope": "openid email"}, timeout=10)
        check(r.status_code == 200 and "device_code" in r.json(), "device authorization endpoint", r.text[:200])
        dev = r.json()
        grant = {"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": dev["device_code"],
                 "client_id": f"{CLIENT_ID}-device"}
        r = token(a, **grant)
        check(r.json().get("error") == "authorization_pending", "device token poll: authorization_pending")
        check(ua(dev["verification_uri_complete"]) is None, "user agent approves the device")
        r = token(a, **grant)
        check(r.status_code == 200 and "access_token" in r.json(), "device token poll: tokens issued", r.text[:200])

        # ---- instance B: other client id, bob, short access tokens, extra redirect path
        tok, nonce = full_flow(b, listener, "/extra/cb", {"latchkey_test_ua_user": "bob"}, client_id="other-client")
        check(int(tok.get("expires_in", 0)) <= 7, "--access-token-seconds honoured", tok.get("expires_in"))
        _, claims = verify_id_token(b, tok["id_token"], nonce, client_id="other-client")
        check(claims.get("email") == "bob@example.test", "bob signs in on instance B")
        check(a.log_lines().count("POST /o/token/") == 6, "instance A's log unaffected by B's traffic")

        # ---- clean shutdown
        for idp in idps:
            rc = idp.stop()
            check(rc == 0, f"[{idp.name}] exits 0 on SIGTERM", rc)
    except Failure as e:
        print(f"selftest: FAILED: {e}", file=sys.stderr)
        print(f"{len(PASSED)} passed, 1 failed")
        return 1
    finally:
        for idp in idps:
            idp.stop()
        if listener:
            listener.close()
    print(f"{len(PASSED)} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
