#!/usr/bin/env python3
"""
Self-test for the glewlwyd test provider (Tests/glewlwyd/run_glewlwyd.py) and the
scripted user agent's glewlwyd mode (Tests/idp/user_agent.py).

    VENV=$(Tests/idp/setup-venv.sh)
    "$VENV/bin/python" Tests/glewlwyd/selftest.py      # ~10 s; exit 0 when all passed

Starts one instance (fresh temp dir), a loopback listener standing in for
latchkey's redirect listener, and runs the authorization-code flow with PKCE
S256 end to end: the user agent is started exactly as latchkey starts $BROWSER
(Tests/idp/browser.sh semantics: `python user_agent.py <authorization-url>`).
Then token exchange, ID token checks against the JWKS, userinfo, refresh-token
rotation, revocation, and the quirks listed in README.md.
"""

import base64
import hashlib
import http.server
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
from jwcrypto import jwk, jws

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUNNER = HERE / "run_glewlwyd.py"
USER_AGENT = REPO / "Tests" / "idp" / "user_agent.py"
CLIENT_ID = "latchkey-test"

results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond)))
    print(f"{'ok  ' if cond else 'FAIL'} {name}" + (f"  [{detail}]" if detail and not cond else ""), flush=True)
    return cond


def b64json(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Listener:
    """Loopback redirect listener: records every request's path and query."""

    def __init__(self, port):
        hits = self.hits = []

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                hits.append(self.path)
                body = b"signed in, you can close this window\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def start_runner(redirect_uris):
    proc = subprocess.Popen(
        [sys.executable, str(RUNNER), *[a for u in redirect_uris for a in ("--redirect-uri", u)]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"run_glewlwyd did not get ready: {line!r} {proc.stderr.read()[-2000:]}")
    return proc, json.loads(line[len("READY "):])


def run_user_agent(auth_url, log_path, **env):
    e = dict(os.environ, LATCHKEY_TEST_UA_LOG=str(log_path))
    e.update({k: v for k, v in env.items() if v is not None})
    return subprocess.run([sys.executable, str(USER_AGENT), auth_url], env=e, capture_output=True,
                          text=True, timeout=60)


def main():
    listen_port = free_port()
    redirect_uri = f"http://127.0.0.1:{listen_port}/oauth2redirect/glewlwyd"
    proc, ready = start_runner([redirect_uri])
    listener = Listener(listen_port)
    ua_log = Path(ready["data_dir"]) / "user-agent.log"
    try:
        issuer = ready["issuer"]
        check("READY carries issuer/client_id/username/password/port",
              all(k in ready for k in ("issuer", "client_id", "username", "password", "port")))
        disco = requests.get(issuer + "/.well-known/openid-configuration", timeout=10).json()
        check("discovery issuer == READY issuer", disco["issuer"] == issuer, disco["issuer"])
        check("discovery: code + S256", "code" in disco["response_types_supported"]
              and disco.get("code_challenge_methods_supported") == ["S256"])
        check("discovery: revocation_endpoint present", disco.get("revocation_endpoint") == issuer + "/revoke")
        check("quirk: authorization_response_iss_parameter_supported NOT advertised",
              "authorization_response_iss_parameter_supported" not in disco)
        check("quirk: 'none' not in token_endpoint_auth_methods_supported",
              "none" not in disco.get("token_endpoint_auth_methods_supported", []))
        check("no registration_endpoint without --feature registration", "registration_endpoint" not in disco)

        # ---- authorization code + PKCE S256 through the scripted user agent
        verifier, challenge = pkce()
        state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        q = dict(response_type="code", client_id=CLIENT_ID, redirect_uri=redirect_uri,
                 scope="openid email profile", state=state, nonce=nonce,
                 code_challenge=challenge, code_challenge_method="S256")
        auth_url = disco["authorization_endpoint"] + "?" + urlencode(q)
        ua = run_user_agent(auth_url, ua_log)
        check("user agent exit 0", ua.returncode == 0, ua.stderr.strip())
        hit = listener.hits[-1] if listener.hits else ""
        params = {k: v[0] for k, v in parse_qs(urlsplit(hit).query).items()}
        check("redirect delivered to the listener path", urlsplit(hit).path == "/oauth2redirect/glewlwyd", hit)
        check("authorization response: state echoed", params.get("state") == state)
        check("authorization response: iss == issuer (RFC 9207)", params.get("iss") == issuer, params.get("iss"))
        code = params.get("code", "")
        check("authorization response: code", bool(code))

        tok_url = disco["token_endpoint"]
        bad = requests.post(tok_url, data=dict(grant_type="authorization_code", code=code, redirect_uri=redirect_uri,
                                               client_id=CLIENT_ID, code_verifier=pkce()[0]), timeout=10)
        check("quirk: wrong code_verifier -> HTTP 403 {\"error\":\"invalid_code\"} (not 400 invalid_grant)",
              bad.status_code == 403 and bad.json().get("error") == "invalid_code",
              f"{bad.status_code} {bad.text[:100]}")
        # (a failed verifier does not consume the code)
        r = requests.post(tok_url, data=dict(grant_type="authorization_code", code=code, redirect_uri=redirect_uri,
                                             client_id=CLIENT_ID, code_verifier=verifier), timeout=10)
        check("token exchange with code_verifier: 200", r.status_code == 200, f"{r.status_code} {r.text[:200]}")
        tok = r.json()
        check("token response: access, refresh and ID token",
              all(k in tok for k in ("access_token", "refresh_token", "id_token")), sorted(tok))

        # ---- ID token
        keys = jwk.JWKSet.from_json(requests.get(disco["jwks_uri"], timeout=10).text)
        hdr, claims = b64json(tok["id_token"].split(".")[0]), b64json(tok["id_token"].split(".")[1])
        sig = jws.JWS()
        sig.deserialize(tok["id_token"])
        try:
            sig.verify(keys.get_key(hdr["kid"]), alg="RS256")
            verified = True
        except Exception as e:  # noqa: BLE001
            verified = False
            print("   ", e)
        check("ID token RS256 signature verifies with JWKS (kid)", verified and hdr["alg"] == "RS256")
        check("ID token iss/aud/nonce", claims.get("iss") == issuer and claims.get("aud") == CLIENT_ID
              and claims.get("nonce") == nonce, claims)
        check("ID token sub, name, email", claims.get("sub") and claims.get("email") == "alice@example.test"
              and claims.get("name") == "Alice", claims)
        check("quirk: ID token auth_time is 0", claims.get("auth_time") == 0, claims.get("auth_time"))
        print(f"     ID token claims: {sorted(claims)}")

        # ---- userinfo
        at = tok["access_token"]
        ui = requests.get(disco["userinfo_endpoint"], headers={"Authorization": "Bearer " + at}, timeout=10)
        check("userinfo 200 with same sub and email", ui.status_code == 200 and ui.json().get("sub") == claims["sub"]
              and ui.json().get("email") == "alice@example.test", ui.text[:200])

        # ---- refresh (rotation: one-time use)
        rt = tok["refresh_token"]
        r = requests.post(tok_url, data=dict(grant_type="refresh_token", refresh_token=rt, client_id=CLIENT_ID),
                          timeout=10)
        check("refresh: 200", r.status_code == 200, f"{r.status_code} {r.text[:200]}")
        tok2 = r.json()
        check("refresh: new rotated refresh token", tok2.get("refresh_token") not in (None, rt))
        check("quirk: refresh response has no id_token", "id_token" not in tok2, sorted(tok2))
        old = requests.post(tok_url, data=dict(grant_type="refresh_token", refresh_token=rt, client_id=CLIENT_ID),
                            timeout=10)
        check("old refresh token rejected after rotation", old.status_code == 400, old.status_code)
        chain = requests.post(tok_url, data=dict(grant_type="refresh_token", refresh_token=tok2["refresh_token"],
                                                 client_id=CLIENT_ID), timeout=10)
        check("quirk: replaying the old refresh token also kills the newest one (chain broken)",
              chain.status_code == 400, chain.status_code)

        # ---- revocation: needs a fresh sign-in (the chain above is dead)
        verifier, challenge = pkce()
        q.update(code_challenge=challenge, state=secrets.token_urlsafe(16))
        ua = run_user_agent(disco["authorization_endpoint"] + "?" + urlencode(q), ua_log, LATCHKEY_TEST_UA_USER="bob")
        p2 = {k: v[0] for k, v in parse_qs(urlsplit(listener.hits[-1]).query).items()}
        check("second sign-in (bob)", ua.returncode == 0 and p2.get("state") == q["state"], ua.stderr.strip())
        t3 = requests.post(tok_url, data=dict(grant_type="authorization_code", code=p2.get("code", ""),
                                              redirect_uri=redirect_uri, client_id=CLIENT_ID,
                                              code_verifier=verifier), timeout=10).json()
        rev = disco["revocation_endpoint"]
        r = requests.post(rev, data=dict(token=t3["refresh_token"], token_type_hint="refresh_token",
                                         client_id=CLIENT_ID), timeout=10)
        check("quirk: revocation without Authorization -> 401", r.status_code == 401, r.status_code)
        r = requests.post(rev, data=dict(token=t3["refresh_token"], token_type_hint="refresh_token"),
                          headers={"Authorization": "Bearer " + t3["access_token"]}, timeout=10)
        check("revocation of the refresh token with Bearer access token -> 200", r.status_code == 200,
              f"{r.status_code} {r.text[:100]}")
        r = requests.post(tok_url, data=dict(grant_type="refresh_token", refresh_token=t3["refresh_token"],
                                             client_id=CLIENT_ID), timeout=10)
        check("revoked refresh token rejected", r.status_code == 400, r.status_code)
        ui = requests.get(disco["userinfo_endpoint"], headers={"Authorization": "Bearer " + t3["access_token"]},
                          timeout=10)
        check("quirk: access token still valid after its refresh token was revoked", ui.status_code == 200,
              ui.status_code)
        r = requests.post(rev, data=dict(token=t3["access_token"], token_type_hint="access_token"),
                          headers={"Authorization": "Bearer " + t3["access_token"]}, timeout=10)
        check("revocation of the access token (itself as Bearer) -> 200", r.status_code == 200, r.status_code)
        ui = requests.get(disco["userinfo_endpoint"], headers={"Authorization": "Bearer " + t3["access_token"]},
                          timeout=10)
        check("revoked access token rejected by userinfo", ui.status_code == 401, ui.status_code)

        # ---- code replay: rejected, and (auth-type-code-revoke-replayed) the tokens
        # issued for that code are revoked
        verifier, challenge = pkce()
        q.update(code_challenge=challenge, state=secrets.token_urlsafe(16))
        ua = run_user_agent(disco["authorization_endpoint"] + "?" + urlencode(q), ua_log)
        p4 = {k: v[0] for k, v in parse_qs(urlsplit(listener.hits[-1]).query).items()}
        ex = dict(grant_type="authorization_code", code=p4.get("code", ""), redirect_uri=redirect_uri,
                  client_id=CLIENT_ID, code_verifier=verifier)
        t4 = requests.post(tok_url, data=ex, timeout=10).json()
        replay = requests.post(tok_url, data=ex, timeout=10)
        check("code replay rejected", replay.status_code in (400, 403), f"{replay.status_code} {replay.text[:100]}")
        print(f"     code replay answer: HTTP {replay.status_code} {replay.text[:100]}")
        ui = requests.get(disco["userinfo_endpoint"], headers={"Authorization": "Bearer " + t4["access_token"]},
                          timeout=10)
        check("code replay revoked the access token issued for it", ui.status_code == 401, ui.status_code)
        r = requests.post(tok_url, data=dict(grant_type="refresh_token", refresh_token=t4["refresh_token"],
                                             client_id=CLIENT_ID), timeout=10)
        check("code replay revoked the refresh token issued for it", r.status_code == 400, r.status_code)

        # ---- redirect URI and PKCE enforcement (direct requests, no user agent)
        other = f"http://127.0.0.1:{listen_port + 1 if listen_port < 65535 else listen_port - 1}/oauth2redirect/glewlwyd"
        for label, uri in [("other port", other),
                           ("no port", "http://127.0.0.1/oauth2redirect/glewlwyd"),
                           ("localhost", redirect_uri.replace("127.0.0.1", "localhost"))]:
            qq = dict(q, redirect_uri=uri)
            r = requests.get(disco["authorization_endpoint"] + "?" + urlencode(qq), allow_redirects=False, timeout=10)
            check(f"quirk: redirect_uri with {label} -> HTTP 403, no redirect",
                  r.status_code == 403 and "Location" not in r.headers, f"{r.status_code} {r.headers.get('Location')}")
        qq = {k: v for k, v in q.items() if not k.startswith("code_challenge")}
        r = requests.get(disco["authorization_endpoint"] + "?" + urlencode(qq), allow_redirects=False, timeout=10)
        loc = {k: v[0] for k, v in parse_qs(urlsplit(r.headers.get("Location", "")).query).items()}
        check("no code_challenge -> redirect error=invalid_request with iss and state",
              loc.get("error") == "invalid_request" and loc.get("iss") == issuer and loc.get("state") == q["state"],
              r.headers.get("Location"))
        qq = dict(q, code_challenge_method="plain", code_challenge=verifier)
        r = requests.get(disco["authorization_endpoint"] + "?" + urlencode(qq), allow_redirects=False, timeout=10)
        loc = {k: v[0] for k, v in parse_qs(urlsplit(r.headers.get("Location", "")).query).items()}
        check("code_challenge_method=plain -> error=invalid_request", loc.get("error") == "invalid_request",
              r.headers.get("Location"))

        # ---- no nonce: glewlwyd requires one even for response_type=code, and says so
        # only after login and consent (error redirect, with iss)
        saved = Path(ready["data_dir"]) / "saved.url"
        qq = {k: v for k, v in q.items() if k != "nonce"}
        ua = run_user_agent(disco["authorization_endpoint"] + "?" + urlencode(qq), ua_log,
                            LATCHKEY_TEST_UA_TAMPER=f"save={saved}")
        loc = {k: v[0] for k, v in parse_qs(urlsplit(saved.read_text() if saved.exists() else "").query).items()}
        check("quirk: no nonce -> error=invalid_request 'nonce required' after login",
              ua.returncode == 0 and loc.get("error") == "invalid_request"
              and loc.get("error_description") == "nonce required" and loc.get("iss") == issuer, loc)

        # ---- wrong password through the user agent
        q.update(code_challenge=pkce()[1])
        ua = run_user_agent(disco["authorization_endpoint"] + "?" + urlencode(q), ua_log,
                            LATCHKEY_TEST_UA_PASSWORD="wrong password")
        check("user agent: wrong password -> exit 1", ua.returncode == 1 and "login as" in ua.stderr, ua.stderr)
    finally:
        listener.close()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
        check("SIGTERM: runner exits 0", code == 0, code)
        check("SIGTERM: temp data dir removed", not os.path.exists(ready["data_dir"]))
        time.sleep(0.2)
        check("SIGTERM: glewlwyd port closed", not _port_open(ready["port"]))

    failed = [n for n, ok in results if not ok]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def _port_open(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


if __name__ == "__main__":
    sys.exit(main())
