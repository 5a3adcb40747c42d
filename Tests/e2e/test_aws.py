"""`latchkey aws-credential` as the AWS CLI's credential_process, tested with the real AWS CLI
(PyPI awscli) against moto's STS server (PyPI moto), which records every request it is sent:
one sign-in at the test IdP, and `aws sts get-caller-identity` runs as the assumed role, with
the account's own ID token as the web identity token STS received, asking STS once for many
calls. moto accepts AssumeRoleWithWebIdentity without checking the token, so what STS received
is checked here, from its recording."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import requests

from conftest import (ALICE, EX_OK, EX_REJECTED, EX_USAGE, LATCHKEY_BIN, SHORT_TOKEN_SECONDS, _die_with_parent,
                      assert_clean_stderr, free_ports, jwt_parts)

AWS = Path(sys.prefix) / "bin" / "aws"
ROLE = "arn:aws:iam::123456789012:role/deploy"
pytestmark = pytest.mark.skipif(not AWS.exists(), reason="the AWS CLI is not in the test venv (Tests/idp/setup-venv.sh installs it)")


class Moto:
    """`python -m moto.server` on a loopback port, recording requests to a file of its own."""

    def __init__(self, directory: Path):
        (self.port,) = free_ports(1)
        self.url = f"http://127.0.0.1:{self.port}"
        directory.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "MOTO_RECORDER_FILEPATH": str(directory / "recording")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)], cwd=directory, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(self.url + "/moto-api/", timeout=2)
                return
            except requests.ConnectionError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError("moto's server did not start")

    def start_recording(self) -> None:
        requests.post(self.url + "/moto-api/recorder/reset-recording", timeout=10).raise_for_status()
        requests.post(self.url + "/moto-api/recorder/start-recording", timeout=10).raise_for_status()

    def assume_role_requests(self) -> list[dict]:
        """The form of every AssumeRoleWithWebIdentity request since `start_recording`."""
        text = requests.get(self.url + "/moto-api/recorder/download-recording", timeout=10).text
        forms = []
        for line in filter(None, text.splitlines()):
            entry = json.loads(line)
            body = entry.get("body") or ""
            if entry.get("body_encoded"):
                body = base64.b64decode(body).decode()
            form = dict(urllib.parse.parse_qsl(body))
            if form.get("Action") == "AssumeRoleWithWebIdentity":
                forms.append(form)
        return forms

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = Moto(tmp_path_factory.mktemp("moto"))
    yield server
    server.stop()


class AWSCLI:
    """The AWS CLI with a config file of the test's own and `latchkey` on its PATH."""

    def __init__(self, lk, moto: Moto):
        self.lk = lk
        self.bin = lk.root / "bin"
        self.bin.mkdir(exist_ok=True)
        (self.bin / "latchkey").symlink_to(LATCHKEY_BIN)
        self.config = lk.root / "aws" / "config"
        self.moto = moto

    def env(self, **extra) -> dict:
        return self.lk.env(
            PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}", AWS_CONFIG_FILE=self.config,
            AWS_SHARED_CREDENTIALS_FILE=self.lk.root / "aws" / "no-credentials", AWS_ENDPOINT_URL=self.moto.url,
            AWS_REGION=None, AWS_DEFAULT_REGION=None, AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_PROFILE=None, **extra)

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(AWS), *args], env=self.env(), cwd=self.lk.root, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=90, start_new_session=True,
                              preexec_fn=_die_with_parent)


def signed_in(lk, idp, **fields) -> None:
    lk.add_provider("a", idp, **fields)
    assert lk.login("a", user="alice").code == EX_OK


def test_the_aws_cli_runs_as_the_role_with_the_accounts_id_token_and_asks_sts_once(lk, idp_a, moto):
    signed_in(lk, idp_a, aws_region="us-east-1")
    aws = AWSCLI(lk, moto)
    written = lk.ok("aws-config", "a", "--role-arn", ROLE, "--profile", "p", "--sts-endpoint", moto.url, "--write",
                    env={"AWS_CONFIG_FILE": aws.config})
    printed = lk.ok("aws-config", "a", "--role-arn", ROLE, "--profile", "p", "--sts-endpoint", moto.url).stdout
    assert aws.config.read_text() == printed, "--write adds what aws-config prints"
    assert printed == (f"[profile p]\ncredential_process = latchkey aws-credential a --role-arn {ROLE} --sts-endpoint {moto.url}\n"
                       "region = us-east-1\n"), "the region comes from aws_region"
    assert "added [profile p]" in written.stderr
    moto.start_recording()

    for _ in range(3):
        result = aws.run("sts", "get-caller-identity", "--profile", "p")
        assert result.returncode == EX_OK, result
        assert json.loads(result.stdout)["Arn"] == f"arn:aws:sts::123456789012:assumed-role/deploy/{ALICE}", result.stdout

    asked = moto.assume_role_requests()
    assert len(asked) == 1, "three aws calls within the credentials' life ask STS once"
    assert asked[0]["RoleArn"] == ROLE and asked[0]["RoleSessionName"] == ALICE
    assert asked[0]["WebIdentityToken"] == lk.token("a", "--id-token"), "STS received the account's ID token"

    again = lk.run("aws-config", "a", "--role-arn", ROLE, "--profile", "p", "--write", env={"AWS_CONFIG_FILE": aws.config})
    assert again.code != EX_OK and "already has a profile p" in again.stderr, again
    assert aws.config.read_text() == printed, "an existing profile is never replaced"


def test_aws_credential_prints_the_documented_json_and_nothing_else(lk, idp_a, moto):
    signed_in(lk, idp_a)
    result = lk.ok("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", moto.url, "--duration", "900")
    answer = json.loads(result.stdout)
    assert set(answer) == {"Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}
    assert answer["Version"] == 1 and answer["AccessKeyId"].startswith("ASIA")
    assert result.stderr == "", result
    again = lk.ok("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", moto.url, "--duration", "900")
    assert json.loads(again.stdout) == answer, "answered from the vault"

    # The launcher answers the same command line alone, byte for byte, from what the full command
    # kept in the copies' keyring; another option, another STS variable or a logout is not it.
    lk.leave_only_the_launcher()
    alone = lk.ok("aws-credential", "a", "--role-arn", ROLE, "--duration=900", "--sts-endpoint", moto.url)
    assert alone.stdout == result.stdout and alone.stderr == "", alone
    for other, env in [(["--duration", "901"], {}), (["--duration", "900"], {"AWS_REGION": "eu-west-1"}),
                       (["--duration", "900", "--session-name", "x"], {})]:
        unanswered = lk.run("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", moto.url, *other, env=env)
        assert unanswered.code != EX_OK and unanswered.stdout == "", (other, env, unanswered)
    lk.restore_the_full_command()
    lk.ok("logout", "a")
    lk.leave_only_the_launcher()
    gone = lk.run("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", moto.url, "--duration", "900")
    assert gone.code != EX_OK and gone.stdout == "", "answered for an account signed out"


def test_an_expired_id_token_is_refreshed_before_sts_gets_it_and_logout_forgets_the_credentials(lk, idp_short, moto):
    signed_in(lk, idp_short)
    moto.start_recording()
    lk.ok("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", moto.url)
    time.sleep(SHORT_TOKEN_SECONDS + 1)
    asked_at = time.time()
    lk.ok("aws-credential", "a", "--role-arn", ROLE + "-2", "--sts-endpoint", moto.url)
    first, second = (form["WebIdentityToken"] for form in moto.assume_role_requests())
    assert second != first, "the expired ID token was refreshed first"
    assert jwt_parts(second)[1]["exp"] >= int(asked_at), "STS got an ID token that had not expired when it was asked for"

    lk.ok("logout", "a")
    assert lk.login("a", user="alice").code == EX_OK
    lk.ok("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", moto.url)
    assert len(moto.assume_role_requests()) == 3, "the credentials went with the account at logout"


class ErrorSTS:
    """A local STS that answers every request with an ErrorResponse, hostile Message and all."""

    BODY = ("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error><Type>Sender</Type>"
            "<Code>InvalidIdentityToken</Code><Message>Couldn&apos;t retrieve verification key&#10;"
            "&#x9B;31mfrom your identity provider &#x202E;</Message></Error><RequestId>1</RequestId></ErrorResponse>")

    def __init__(self):
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                outer.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = ErrorSTS.BODY.encode()
                self.send_response(400)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def test_an_sts_error_is_one_line_with_its_code_and_message_made_inert_and_nothing_is_kept(lk, idp_a):
    signed_in(lk, idp_a)
    sts = ErrorSTS()
    try:
        for attempt in (1, 2):
            result = lk.run("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", sts.url)
            assert result.code == EX_REJECTED, result
            assert result.stdout == "", "nothing on stdout for the AWS CLI to read as credentials"
            assert result.stderr.count("\n") == 1, result
            assert "InvalidIdentityToken: Couldn't retrieve verification key" in result.stderr, result
            assert_clean_stderr(result)
            assert "\u202e" not in result.stderr and "\u009b" not in result.stderr
            assert sts.requests == attempt, "nothing was kept: the next call asks STS again"
    finally:
        sts.stop()


def test_a_malformed_role_arn_or_plain_http_sts_is_refused_before_anything_is_sent(lk, idp_a):
    signed_in(lk, idp_a)
    bad = lk.run("aws-credential", "a", "--role-arn", "deploy", "--sts-endpoint", "http://127.0.0.1:9/")
    assert bad.code == EX_USAGE and "must be an IAM role ARN" in bad.stderr, bad
    insecure = lk.run("aws-credential", "a", "--role-arn", ROLE, "--sts-endpoint", "http://sts.example.com/")
    assert insecure.code == EX_USAGE and "STS endpoint" in insecure.stderr, insecure
    no_role = lk.run("aws-credential", "a")
    assert no_role.code == EX_USAGE and "aws_role_arn" in no_role.stderr, no_role


def test_status_shows_each_kept_roles_expiry_and_never_a_key_and_logout_forgets_them(lk, idp_a, moto):
    signed_in(lk, idp_a)
    keys = [json.loads(lk.ok("aws-credential", "a", "--role-arn", role, "--sts-endpoint", moto.url, "--duration", duration).stdout)
            for role, duration in ((ROLE, "3600"), (ROLE + "-2", "900"))]
    report = lk.ok("status", "--json")
    (account,) = json.loads(report.stdout)["accounts"]
    kept = account["aws_credentials"]
    assert [entry["role_arn"] for entry in kept] == [ROLE + "-2", ROLE], "soonest to expire first"
    assert {entry["session_name"] for entry in kept} == {ALICE}
    assert all(entry["sts_endpoint"] == moto.url + "/" or entry["sts_endpoint"] == moto.url for entry in kept), kept
    assert 800 < kept[0]["expires_in"] <= 900 and 3500 < kept[1]["expires_in"] <= 3600, kept
    assert kept[1]["expires_at"] == keys[0]["Expiration"].replace("+00:00", "Z"), "STS's Expiration"
    listing = lk.ok("status").stdout
    assert f"AWS {ROLE} as {ALICE}  expires in 59m" in listing or f"AWS {ROLE} as {ALICE}  expires in 1h 0m" in listing, listing
    assert f"AWS {ROLE}-2 as {ALICE}  expires in 1" in listing, listing
    for key in keys:
        for secret in (key["AccessKeyId"], key["SecretAccessKey"], key["SessionToken"]):
            assert secret not in report.stdout and secret not in listing, "status shows no key"

    lk.ok("logout", "a")
    assert lk.login("a", user="alice").code == EX_OK
    (account,) = json.loads(lk.ok("status", "--json").stdout)["accounts"]
    assert account["aws_credentials"] == [], "logout forgot them"
    assert "AWS " not in lk.ok("status").stdout
