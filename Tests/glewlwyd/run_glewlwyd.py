#!/usr/bin/env python3
"""
Launch one instance of glewlwyd (Debian 12 package, 2.7.5) as a second,
independently written OpenID Connect provider for Latchkey's tests.

    python3 Tests/glewlwyd/run_glewlwyd.py --redirect-uri URI [--redirect-uri URI ...] \
        [--port PORT] [--data-dir DIR] [--client-id ID] [--plugin NAME] \
        [--access-token-seconds N] [--refresh-token-one-use always|never]

Standard library only (runs with /usr/bin/python3 or the test venv); needs the
`glewlwyd` and `openssl` commands.

What it does:
  1. makes a private SQLite database (schema from the Debian package) and a
     config file in DIR (default: a fresh temp dir, deleted on exit);
  2. starts `glewlwyd` on 127.0.0.1:PORT (0 = pick a free port) and waits until
     GET /config answers;
  3. configures it only through the admin REST API (session cookie from
     POST /api/auth as the built-in admin): scopes `email` and `profile`,
     users alice and bob, an OpenID Connect plugin instance with a fresh
     RSA-2048 key (RS256), and a public client (no secret, token endpoint auth
     "none", PKCE S256 required, refresh tokens, revocation);
  4. replaces the built-in admin password ("password") with a random one,
     written to DIR/admin-password (0600), never to argv or stdout;
  5. prints exactly one line on stdout:

        READY {"issuer": ..., "client_id": ..., "username": ..., "password": ...,
               "port": ..., ...}

SIGTERM / SIGINT: glewlwyd is stopped (SIGTERM, then SIGKILL after 10 s), the
temp dir is removed, exit status 0. glewlwyd's own log is DIR/glewlwyd.log.

Quirks that shaped this script (see README.md for the evidence):
  * Plugin parameters have to be complete when the instance is CREATED: a later
    PUT /api/mod/plugin/NAME is stored and logged as "updated", but the
    discovery document keeps the old values until glewlwyd restarts. The
    plugin's own defaults are minimal (only response_type id_token), so every
    switch is set explicitly below.
  * Redirect URIs are matched exactly, port included, so each one (with its
    port) must be given with --redirect-uri.
  * The issuer is ISSUER = http://127.0.0.1:PORT/api/<plugin>; discovery is at
    ISSUER/.well-known/openid-configuration.
"""

import argparse
import http.cookiejar
import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import gzip
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SCHEMA = "/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz"
MODULE_DIR = "/usr/lib/glewlwyd"
GLEWLWYD = shutil.which("glewlwyd") or "/usr/bin/glewlwyd"

DEFAULT_PASSWORD = "correct horse battery staple"
USERS = [
    # username, name, email
    ("alice", "Alice", "alice@example.test"),
    ("bob", "Bob", "bob@example.test"),
]
SCOPES = ["openid", "email", "profile"]
# What --feature switches on in the plugin (all off by default, so the plain instance is what
# the older tests were written against):
FEATURES = {
    "par": "pushed authorization requests (RFC 9126), allowed",
    "par-required": "pushed authorization requests, required for every authorization request",
    "dpop": "DPoP (RFC 9449): proofs checked, tokens bound when a proof comes with the request",
    "dpop-nonce": "DPoP with a server nonce required in every proof (use_dpop_nonce first)",
    "resource": "resource indicators (RFC 8707): RESOURCES below, allowed per scope",
    "client-credentials": "the client credentials grant, with confidential clients (CI_CLIENT, CI_KEY_CLIENT below)",
    "registration": "open dynamic client registration (RFC 7591) and its management API (RFC 7592)",
    "registration-token": "dynamic client registration only with an initial access token (RFC 7591 §3), which Latchkey has not",
    "device": "the device authorization grant (RFC 8628), with its endpoint in discovery",
}
# RFC 8707 resources the `resource` feature allows, per scope: a token for API_MAIL needs the
# `email` scope, one for API_PROFILE the `profile` scope.
API_MAIL = "https://mail.api.example.test/"
API_PROFILE = "https://profile.api.example.test/"
# And one for the machine client's `ci` scope (the client-credentials feature).
API_CI = "https://ci.api.example.test/"
RESOURCES = {"email": [API_MAIL], "profile": [API_PROFILE], "ci": [API_CI]}
# The `client-credentials` feature's machine client and the scope it may ask for.
CI_SCOPE = "ci"
CI_CLIENT = "latchkey-ci"
# The same with private_key_jwt (RFC 7523): glewlwyd checks its assertions with the PEM public key
# in the client's `pubkey` property (the plugin's client-pubkey-parameter).
CI_KEY_CLIENT = "latchkey-ci-key"
# The schema's built-in administrator (init.sqlite3.sql): admin / password.
ADMIN_USER, ADMIN_DEFAULT_PASSWORD = "admin", "password"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = pick a free one)")
    p.add_argument("--data-dir", help="directory for db, config, key and log (default: a temp dir, removed at exit)")
    p.add_argument("--client-id", default="latchkey-test")
    p.add_argument("--plugin", default="oidc", help="OIDC plugin instance name; the issuer is .../api/<plugin>")
    p.add_argument("--redirect-uri", action="append", default=[],
                   help="registered redirect URI, exact (port included); repeatable, or comma-separated")
    p.add_argument("--access-token-seconds", type=int, default=3600)
    p.add_argument("--refresh-token-one-use", choices=["always", "never"], default="always",
                   help="always: every refresh returns a new refresh token and the old one stops working")
    p.add_argument("--feature", action="append", default=[], choices=sorted(FEATURES),
                   help="switch on a newer standard in the plugin (repeatable; see FEATURES)")
    p.add_argument("--resource", action="append", default=[], metavar="SCOPE=URL",
                   help="with the resource feature, also allow URL for SCOPE (repeatable): an MCP server on a port picked at run time")
    args = p.parse_args(argv)
    uris = []
    for item in args.redirect_uri:
        uris += [u.strip() for u in item.split(",") if u.strip()]
    args.resources = {scope: list(urls) for scope, urls in RESOURCES.items()}
    for item in args.resource:
        scope, _, url = item.partition("=")
        if not url:
            p.error("--resource takes SCOPE=URL")
        args.resources.setdefault(scope, []).append(url)
    if not uris:
        p.error("at least one --redirect-uri is needed (glewlwyd matches them exactly, port included)")
    args.redirect_uris = uris
    return args


def free_port():
    # glewlwyd cannot listen on port 0 and report the port, so pick one here.
    # (Small race: another process could take it before glewlwyd binds.)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_database(path):
    with gzip.open(SCHEMA, "rt", encoding="utf-8") as f:
        script = f.read()
    con = sqlite3.connect(path)
    try:
        con.executescript(script)
        con.commit()
    finally:
        con.close()


def write_config(path, port, db_path):
    # libconfig syntax. Only what differs from glewlwyd's built-in defaults or
    # from /etc/glewlwyd/glewlwyd.conf matters; that file is not used at all.
    base = f"http://127.0.0.1:{port}"
    text = f"""\
port={port}
bind_address="127.0.0.1"
external_url="{base}"
# The OIDC plugin redirects the browser here (login web app). We do not serve
# it: the scripted user agent talks to the login API directly.
login_url="login.html"
api_prefix="api"
allow_origin="*"
log_mode="console"
log_level="INFO"
cookie_secure=0
cookie_same_site="empty"
session_key="GLEWLWYD2_SESSION_ID"
session_expiration=3600
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="{MODULE_DIR}/user"
client_module_path="{MODULE_DIR}/client"
user_auth_scheme_module_path="{MODULE_DIR}/scheme"
plugin_module_path="{MODULE_DIR}/plugin"
hash_algorithm="SHA512"
database = {{
  type = "sqlite3"
  path = "{db_path}"
}};
"""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def make_rsa_key(directory):
    """RSA-2048 key pair as PEM strings, via openssl (key file stays in the 0700 data dir)."""
    key_path = os.path.join(directory, "signing-key.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                    "-out", key_path], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key_path, 0o600)
    pub = subprocess.run(["openssl", "pkey", "-in", key_path, "-pubout"], check=True,
                         capture_output=True, text=True).stdout
    with open(key_path, encoding="ascii") as f:
        return f.read(), pub


class Api:
    """Tiny JSON client with a cookie jar (the admin session is a cookie)."""

    def __init__(self, base):
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def call(self, method, path, body=None, ok=(200,)):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with self.opener.open(req, timeout=15) as r:
                status, text = r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode("utf-8", "replace")
        if status not in ok:
            raise RuntimeError(f"glewlwyd admin API: {method} {path} -> HTTP {status} {text[:300]}")
        return json.loads(text) if text.strip().startswith(("{", "[")) else text


def plugin_parameters(args, issuer, key_pem, pub_pem):
    # Names as used by glewlwyd's admin web app (admin.js) and src/plugin/protocol_oidc.c.
    return {
        "iss": issuer,
        "jwt-type": "rsa",
        "jwt-key-size": "256",  # RS256
        "key": key_pem,
        "cert": pub_pem,
        "jwks-show": True,  # publish ISSUER/jwks
        "jwks-uri": "", "jwks-private": "", "default-kid": "", "jwks-public": "", "jwks-x5c": [],
        "access-token-duration": args.access_token_seconds,
        "refresh-token-duration": 1209600,
        "code-duration": 600,
        "refresh-token-rolling": True,
        "refresh-token-one-use": args.refresh_token_one_use,
        "client-refresh-token-one-use-parameter": "refresh-token-one-use",
        "allow-non-oidc": False,
        # grant / response types
        "auth-type-code-enabled": True,
        "auth-type-code-revoke-replayed": True,  # replayed code -> its tokens are revoked
        "auth-type-token-enabled": False,
        "auth-type-id-token-enabled": False,
        "auth-type-none-enabled": False,
        "auth-type-password-enabled": False,
        "auth-type-client-enabled": False,
        "auth-type-device-enabled": False,
        "auth-type-refresh-enabled": True,
        "allowed-scope": SCOPES,
        "scope": [], "additional-parameters": [], "claims": [],
        "secret-type": "public",  # same `sub` for every client (not pairwise)
        "name-claim": "on-demand", "name-claim-scope": ["profile"],
        "email-claim": "on-demand", "email-claim-scope": ["email"],
        "scope-claim": "no", "scope-claim-scope": [],
        "address-claim": {"type": "no", "formatted": "", "street_address": "", "locality": "", "region": "",
                          "postal_code": "", "country": "", "mandatory": False},
        "service-documentation": "", "op-policy-uri": "", "op-tos-uri": "",
        "request-parameter-allow": False,
        "request-uri-allow-https-non-secure": False,
        "request-parameter-allow-encrypted": False,
        "request-parameter-ietf-strict": False,
        "request-maximum-exp": 3600,
        # RFC 9207: adds iss= to authorization responses (success AND error).
        # Not advertised in discovery (no authorization_response_iss_parameter_supported).
        "oauth-as-iss-id": True,
        # PKCE (RFC 7636): S256 only, mandatory for every authorization request
        "pkce-allowed": True,
        "pkce-method-plain-allowed": False,
        "pkce-required": True,
        "pkce-required-public-client": True,
        "pkce-scopes": [],
        # RFC 7009 revocation / RFC 7662 introspection. A public client cannot
        # authenticate to /revoke (client auth there means client_secret_basic
        # for clients with the client_credentials grant), so requests are
        # authenticated with an access token carrying one of these scopes:
        # "Authorization: Bearer <access token>".
        "introspection-revocation-allowed": True,
        "introspection-revocation-auth-scope": ["openid"],
        "introspection-revocation-allow-target-client": True,
        "register-client-allowed": False,
        "session-management-allowed": False,
        "encrypt-out-token-allow": False,
        "oauth-dpop-allowed": False,
        "resource-allowed": False,
        "oauth-rar-allowed": False,
        "oauth-par-allowed": False,
        "oauth-par-required": False,
        "oauth-ciba-allowed": False,
        "oauth-fapi-check-all": False,
        "device-authorization-expiration": 600,
        **feature_parameters(args.feature, args.resources),
        "device-authorization-interval": 5,
        "prompt-continue-client-property": "",
        "restrict-scope-client-property": "",
    }


def feature_parameters(features, resources=RESOURCES):
    """The plugin switches of each --feature (names from protocol_oidc.c's check_parameters)."""
    params = {}
    if "par" in features or "par-required" in features:
        params.update({"oauth-par-allowed": True, "oauth-par-required": "par-required" in features,
                       "oauth-par-duration": 90, "oauth-par-request_uri-prefix": "urn:ietf:params:oauth:request_uri:"})
    if "dpop" in features or "dpop-nonce" in features:
        params.update({"oauth-dpop-allowed": True, "oauth-dpop-iat-duration": 60, "oauth-dpop-nonce-counter": 5,
                       "oauth-dpop-nonce-mandatory": "dpop-nonce" in features})
    if "resource" in features:
        params.update({"resource-allowed": True, "resource-scope": resources, "resource-client-property": "resource",
                       "resource-scope-and-client-property": False})
    if "client-credentials" in features:
        # OpenID Connect has no client credentials grant: glewlwyd serves it only with allow-non-oidc.
        params.update({"auth-type-client-enabled": True, "allow-non-oidc": True})
        # private_key_jwt: glewlwyd checks a client_assertion with its request object code, so
        # it answers one with 403 ("unauthorized request parameter" in its log) unless request
        # objects are allowed; the key is the client's `pubkey` property.
        params.update({"request-parameter-allow": True, "client-pubkey-parameter": "pubkey"})
    if "registration" in features or "registration-token" in features:
        # Open registration: no initial access token (an empty auth scope), and each client's
        # registration access token serves RFC 7592 reads and deletion. With registration-token,
        # only a bearer of an access token with the openid scope may register.
        auth_scope = ["openid"] if "registration-token" in features else []
        params.update({"register-client-allowed": True, "register-client-auth-scope": auth_scope,
                       "register-client-credentials-scope": [], "register-client-management-allowed": True,
                       "register-client-token-one-use": True, "register-resource-specify-allowed": False,
                       "register-resource-default": [], "register-default-properties": {}})
    if "device" in features:
        params["auth-type-device-enabled"] = True
    return params


def configure_machine_client(api, data_dir):
    """A confidential client for the client credentials grant; its secret goes to a 0600 file."""
    api.call("POST", "/api/scope/", {"name": CI_SCOPE, "display_name": "CI", "description": "CI jobs",
                                     "password_required": False, "password_max_age": 0, "scheme": {}})
    secret = secrets.token_urlsafe(24)
    api.call("POST", "/api/client/", {
        "client_id": CI_CLIENT, "name": "Latchkey CI", "description": "confidential client for tests",
        "confidential": True, "enabled": True, "password": secret, "scope": [CI_SCOPE], "redirect_uri": [],
        "authorization_type": ["client_credentials"],
        "token_endpoint_auth_method": ["client_secret_basic", "client_secret_post"],
    })
    path = os.path.join(data_dir, "ci-client-secret")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    # private_key_jwt: a P-256 key whose private half stays in the 0600 data dir for Latchkey.
    key_path = os.path.join(data_dir, "ci-client-key.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key_path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key_path, 0o600)
    pubkey = subprocess.run(["openssl", "pkey", "-in", key_path, "-pubout"], check=True,
                            capture_output=True, text=True).stdout
    api.call("POST", "/api/client/", {
        "client_id": CI_KEY_CLIENT, "name": "Latchkey CI (key)", "description": "private_key_jwt client for tests",
        "confidential": True, "enabled": True, "scope": [CI_SCOPE], "redirect_uri": [], "pubkey": pubkey,
        "authorization_type": ["client_credentials"], "token_endpoint_auth_method": ["private_key_jwt"],
    })
    return {"client_id": CI_CLIENT, "scope": CI_SCOPE, "secret_file": path, "key_client_id": CI_KEY_CLIENT,
            "key_file": key_path}


def configure(api, args, issuer, key_pem, pub_pem, password, data_dir):
    """Scopes, users, the plugin and the clients; returns the new admin password and the
    machine client (None without the client-credentials feature)."""
    api.call("POST", "/api/auth/", {"username": ADMIN_USER, "password": ADMIN_DEFAULT_PASSWORD})
    # Scopes: `openid` ships with the schema (no password needed); make all three
    # need the password session, and add email and profile.
    for name, display in [("openid", "OpenID"), ("email", "E-mail address"), ("profile", "Profile")]:
        body = {"name": name, "display_name": display, "description": display,
                "password_required": True, "password_max_age": 0, "scheme": {}}
        if name == "openid":
            api.call("PUT", f"/api/scope/{name}", body)
        else:
            api.call("POST", "/api/scope/", body)
    for username, name, email in USERS:
        api.call("POST", "/api/user/", {"username": username, "name": name, "email": email,
                                        "password": password, "scope": SCOPES, "enabled": True})
    api.call("POST", "/api/mod/plugin/", {
        "module": "oidc", "name": args.plugin, "display_name": "OpenID Connect (Latchkey tests)",
        "order_rank": 0, "readonly": False,
        "parameters": plugin_parameters(args, issuer, key_pem, pub_pem),
    })
    api.call("POST", "/api/client/", {
        "client_id": args.client_id, "name": "Latchkey test", "description": "public client for Latchkey tests",
        "confidential": False, "enabled": True, "scope": [],
        "redirect_uri": args.redirect_uris,
        "authorization_type": ["code", "refresh_token"],
        "token_endpoint_auth_method": ["none"],
    })
    machine_client = configure_machine_client(api, data_dir) if "client-credentials" in args.feature else None
    # Last: retire the well-known admin password.
    admin_password = secrets.token_urlsafe(24)
    admin = api.call("GET", f"/api/user/{ADMIN_USER}")
    api.call("PUT", f"/api/user/{ADMIN_USER}", {
        "name": admin.get("name", ""), "email": admin.get("email", ""), "enabled": True,
        "scope": admin.get("scope", ["g_admin", "g_profile"]), "password": admin_password})
    return admin_password, machine_client


def wait_http(url, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, ConnectionError, socket.timeout):
            pass
        time.sleep(0.1)
    return False


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    password = os.environ.get("LATCHKEY_GLEWLWYD_PASSWORD") or DEFAULT_PASSWORD
    own_dir = args.data_dir is None
    data_dir = tempfile.mkdtemp(prefix="glewlwyd-") if own_dir else os.path.abspath(args.data_dir)
    os.makedirs(data_dir, exist_ok=True)
    os.chmod(data_dir, 0o700)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    proc = None
    log = None
    try:
        port = args.port or free_port()
        base = f"http://127.0.0.1:{port}"
        issuer = f"{base}/api/{args.plugin}"
        db_path = os.path.join(data_dir, "glewlwyd.sqlite3")
        if os.path.exists(db_path):
            os.unlink(db_path)  # always start from the pristine schema
        make_database(db_path)
        conf = os.path.join(data_dir, "glewlwyd.conf")
        write_config(conf, port, db_path)
        key_pem, pub_pem = make_rsa_key(data_dir)

        log = open(os.path.join(data_dir, "glewlwyd.log"), "ab")
        proc = subprocess.Popen([GLEWLWYD, "--config-file", conf], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if not wait_http(base + "/config", proc, 30):
            print(f"run_glewlwyd: glewlwyd did not start, see {data_dir}/glewlwyd.log", file=sys.stderr)
            return 1
        admin_password, machine_client = configure(Api(base), args, issuer, key_pem, pub_pem, password, data_dir)
        fd = os.open(os.path.join(data_dir, "admin-password"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(admin_password)

        # Sanity check: the plugin must advertise the code flow with S256.
        with urllib.request.urlopen(issuer + "/.well-known/openid-configuration", timeout=5) as r:
            disco = json.load(r)
        if "code" not in disco.get("response_types_supported", []) or disco.get("issuer") != issuer:
            raise RuntimeError(f"unexpected discovery document: {json.dumps(disco)[:300]}")

        ready = {
            "issuer": issuer,
            "client_id": args.client_id,
            "username": USERS[0][0],
            "password": password,
            "port": port,
            "users": [{"username": u, "name": n, "email": e} for u, n, e in USERS],
            "redirect_uris": args.redirect_uris,
            "data_dir": data_dir,
            "features": sorted(set(args.feature)),
        }
        if "resource" in args.feature:
            ready["resources"] = args.resources
        if machine_client:
            ready["machine_client"] = machine_client
        print("READY " + json.dumps(ready), flush=True)

        while not stop.wait(0.5):
            if proc.poll() is not None:
                print(f"run_glewlwyd: glewlwyd exited with status {proc.returncode}", file=sys.stderr)
                return 1
        return 0
    except Exception as e:  # noqa: BLE001 - report one line, clean up below
        print(f"run_glewlwyd: {e}", file=sys.stderr)
        return 1
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if log is not None:
            log.close()
        if own_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
