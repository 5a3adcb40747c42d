"""`latchkey gcp-credential` as the executable source of a Google Cloud `external_account`
credential, tested with Google's own auth library (PyPI google-auth): it loads the file
`latchkey gcp-config` wrote, runs `latchkey gcp-credential` and exchanges the ID token at a
token endpoint started here (Google's STS is not reachable from the tests), which accepts only
an ID token the test IdP signed, for the signed-in account."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from jwcrypto import jwk, jwt

from conftest import EX_NO_ACCOUNT, EX_OK, LATCHKEY_BIN, _die_with_parent, jwt_parts

pytest.importorskip("google.auth", reason="google-auth is not in the test venv (Tests/idp/setup-venv.sh installs it)")

AUDIENCE = "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/pool/providers/latchkey"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
# What google-auth runs: the configuration from the file, then refresh, then the token it got.
# No scopes: with them, loading asks Cloud Resource Manager for the project's ID.
REFRESH = """
import sys, google.auth
from google.auth.transport.requests import Request
credentials, _ = google.auth.load_credentials_from_file(sys.argv[1])
credentials.refresh(Request())
print(credentials.token)
"""


class TokenExchange:
    """A token endpoint answering RFC 8693 token exchange as Google's STS does, for a subject
    token that is an ID token signed by `idp` (checked with its JWKS) and nothing else."""

    def __init__(self, idp):
        self.keys = jwk.JWKSet.from_json(json.dumps(idp.jwks()))
        self.subject_tokens: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()))
                status, answer = outer.exchange(form)
                body = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def exchange(self, form: dict) -> tuple[int, dict]:
        token = form.get("subject_token", "")
        self.subject_tokens.append(token)
        if (form.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" or form.get("audience") != AUDIENCE
                or form.get("subject_token_type") != ID_TOKEN_TYPE):
            return 400, {"error": "invalid_request"}
        try:
            jwt.JWT(jwt=token, key=self.keys, algs=["RS256", "ES256"])
        except Exception as error:  # any token the IdP did not sign
            return 400, {"error": "invalid_grant", "error_description": str(error)}
        return 200, {"access_token": "ya29.federated-" + jwt_parts(token)[1]["sub"],
                     "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer",
                     "expires_in": 3600}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sts(idp_a):
    server = TokenExchange(idp_a)
    yield server
    server.stop()


def on_path(lk) -> Path:
    """A directory holding `latchkey`, for gcp-config's default --command."""
    directory = lk.root / "bin"
    directory.mkdir(exist_ok=True)
    (directory / "latchkey").symlink_to(LATCHKEY_BIN)
    return directory


def google_auth(lk, configuration: Path, **extra) -> subprocess.CompletedProcess:
    env = lk.env(GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES="1", **extra)
    return subprocess.run([sys.executable, "-c", REFRESH, str(configuration)], env=env, cwd=lk.root,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90, start_new_session=True,
                          preexec_fn=_die_with_parent)


def test_google_auth_runs_gcp_credential_and_exchanges_the_accounts_id_token(lk, idp_a, sts):
    lk.add_provider("a", idp_a)
    assert lk.login("a", user="alice").code == EX_OK
    bin_dir = on_path(lk)
    path = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    configuration = lk.root / "gcp.json"
    lk.ok("gcp-config", "a", "--audience", AUDIENCE, "--token-url", sts.url, "--output", str(configuration), env=path)
    assert stat.S_IMODE(configuration.stat().st_mode) == 0o600
    written = json.loads(configuration.read_text())
    assert written == {
        "type": "external_account", "audience": AUDIENCE, "subject_token_type": ID_TOKEN_TYPE, "token_url": sts.url,
        "credential_source": {"executable": {"command": f"{bin_dir}/latchkey gcp-credential a", "timeout_millis": 30000}},
    }, written
    printed = lk.ok("gcp-config", "a", "--audience", AUDIENCE, "--token-url", sts.url, env=path).stdout
    assert printed == configuration.read_text(), "--output writes what gcp-config prints"

    result = google_auth(lk, configuration)
    assert result.returncode == 0, result
    id_token = lk.token("a", "--id-token")
    assert sts.subject_tokens == [id_token], "the token endpoint received the account's ID token, once"
    assert result.stdout.strip() == "ya29.federated-" + jwt_parts(id_token)[1]["sub"], "the library holds the exchanged token"

    again = lk.run("gcp-config", "a", "--audience", AUDIENCE, "--output", str(configuration), env=path)
    assert again.code != EX_OK and "already exists" in again.stderr, again
    assert json.loads(configuration.read_text()) == written, "an existing file is never replaced"


def test_gcp_credential_prints_googles_response_and_writes_the_output_file(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a", user="alice").code == EX_OK
    output = lk.root / "gcp-cache.json"
    result = lk.ok("gcp-credential", "a", env={"GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE": AUDIENCE,
                                               "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE": ID_TOKEN_TYPE,
                                               "GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "0",
                                               "GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE": str(output)})
    answer = json.loads(result.stdout)
    id_token = lk.token("a", "--id-token")
    assert answer == {"version": 1, "success": True, "token_type": ID_TOKEN_TYPE, "id_token": id_token,
                      "expiration_time": jwt_parts(id_token)[1]["exp"]}, answer
    assert json.loads(output.read_text()) == answer and stat.S_IMODE(output.stat().st_mode) == 0o600


def test_gcp_credential_with_no_account_answers_the_error_form_and_fails(lk, idp_a, sts):
    lk.add_provider("a", idp_a)
    result = lk.run("gcp-credential", "a:nobody@example.com", env={"GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "0"})
    assert result.code == EX_NO_ACCOUNT, result
    answer = json.loads(result.stdout)
    assert set(answer) == {"version", "success", "code", "message"} and answer["version"] == 1, answer
    assert answer["success"] is False and answer["code"] == str(EX_NO_ACCOUNT)
    assert "latchkey login a" in answer["message"], answer

    bin_dir = on_path(lk)
    configuration = lk.root / "gcp.json"
    lk.ok("gcp-config", "a:nobody@example.com", "--audience", AUDIENCE, "--token-url", sts.url, "--output", str(configuration),
          env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    refused = google_auth(lk, configuration)
    assert refused.returncode != 0 and "latchkey login a" in refused.stderr, refused
    assert sts.subject_tokens == [], "nothing reached the token endpoint"


def test_a_malformed_audience_or_plain_http_token_url_is_refused(lk, idp_a):
    lk.add_provider("a", idp_a)
    bad = lk.run("gcp-config", "a", "--audience", "projects/1/pool", "--command", str(LATCHKEY_BIN))
    assert bad.code != EX_OK and "is not a pool provider's name" in bad.stderr and bad.stdout == "", bad
    http = lk.run("gcp-config", "a", "--audience", AUDIENCE, "--token-url", "http://sts.example.com/v1/token",
                  "--command", str(LATCHKEY_BIN))
    assert http.code != EX_OK and "--token-url" in http.stderr and http.stdout == "", http
