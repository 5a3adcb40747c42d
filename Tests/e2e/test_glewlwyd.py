"""
Sign-in end to end against glewlwyd (Debian's glewlwyd 2.7, written in C), a second OpenID
provider written independently of the django-oauth-toolkit one, with its quirks:

* it accepts only exactly registered redirect URIs, port included (so `loopback_port`);
* it sends RFC 9207 `iss` without advertising it, and Latchkey still checks it;
* revocation wants the access token as a Bearer credential;
* refresh tokens are one-time and refreshes carry no ID token.

The instance is configured through glewlwyd's admin API by Tests/glewlwyd/run_glewlwyd.py.
"""
import json
import shutil
import socket
import subprocess
import sys
import time

import pytest
import requests

from conftest import EX_OK, EX_REJECTED, REPO, ServerProcess, assert_clean_stderr

pytestmark = pytest.mark.skipif(shutil.which("glewlwyd") is None, reason="needs glewlwyd (scripts/setup installs it)")


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Glewlwyd(ServerProcess):
    """One run_glewlwyd.py process; its READY line carries JSON."""

    def __init__(self, data_dir, ports: list[int]):
        self.ports = ports
        uris = [arg for port in ports for arg in ("--redirect-uri", f"http://127.0.0.1:{port}/oauth2redirect/g")]
        super().__init__("glewlwyd", [sys.executable, str(REPO / "Tests" / "glewlwyd" / "run_glewlwyd.py"),
                                      "--data-dir", str(data_dir), *uris], data_dir)

    def wait_ready(self, timeout: float = 90):
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline and self.proc.poll() is None and not line:
            line = self.proc.stdout.readline()
        if not line.startswith(b"READY "):
            self.stop()
            raise RuntimeError(f"glewlwyd did not start: {line!r}\n{(self.data_dir / 'stderr.txt').read_text(errors='replace')[-3000:]}")
        self.info = json.loads(line[len(b"READY "):])
        self.url = self.info["issuer"]
        return self

    @property
    def issuer(self) -> str:
        return self.info["issuer"]

    def userinfo(self, access_token: str) -> requests.Response:
        return requests.get(f"{self.issuer}/userinfo", headers={"Authorization": f"Bearer {access_token}"}, timeout=15)


@pytest.fixture(scope="module")
def glewlwyd(tmp_path_factory):
    server = Glewlwyd(tmp_path_factory.mktemp("glewlwyd"), free_ports(2)).wait_ready()
    yield server
    server.stop()


def add_glewlwyd(lk, server, ports=None):
    lk.add_provider("g", None, display_name="Glewlwyd", issuer=server.issuer, client_id=server.info["client_id"],
                    loopback_port=ports or server.ports)


def test_sign_in_refresh_and_revocation_at_glewlwyd(lk, glewlwyd):
    add_glewlwyd(lk, glewlwyd)
    result = lk.login("g")
    assert result.code == EX_OK, result
    assert_clean_stderr(result)
    (account,) = lk.status()
    assert account["account"] == "alice@example.test" and account["issuer"] == glewlwyd.issuer, account
    first = lk.token("g")
    assert glewlwyd.userinfo(first).status_code == 200

    # One-time refresh tokens: the rotated one must be the one stored, twice over.
    lk.ok("refresh", "g")
    second = lk.token("g")
    lk.ok("refresh", "g")
    third = lk.token("g")
    assert len({first, second, third}) == 3
    assert glewlwyd.userinfo(third).status_code == 200

    # Revocation authenticated with the access token as Bearer.
    out = lk.ok("logout", "g")
    assert "Revoked" in out.stderr, out
    assert lk.status() == []


def test_the_first_free_registered_port_is_used(lk, glewlwyd):
    taken, free = glewlwyd.ports
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the port may be in TIME_WAIT
    holder.bind(("127.0.0.1", taken))
    holder.listen(1)
    try:
        add_glewlwyd(lk, glewlwyd)
        result = lk.login("g")
        assert result.code == EX_OK, result
        assert f"127.0.0.1:{free}/oauth2redirect/g" in result.stderr, result
    finally:
        holder.close()


def test_an_iss_glewlwyd_does_not_advertise_is_still_checked(lk, glewlwyd):
    discovery = requests.get(f"{glewlwyd.issuer}/.well-known/openid-configuration", timeout=15).json()
    assert not discovery.get("authorization_response_iss_parameter_supported"), "glewlwyd now advertises iss"
    add_glewlwyd(lk, glewlwyd)
    result = lk.login("g", tamper="iss=http://127.0.0.1:1/evil")
    assert result.code == EX_REJECTED, result
    assert "iss" in result.stderr, result
    assert not lk.vault.exists() or lk.status() == []


def test_an_unregistered_port_is_refused_by_glewlwyd_and_nothing_is_stored(lk, glewlwyd):
    (other,) = free_ports(1)
    add_glewlwyd(lk, glewlwyd, ports=[other])
    result = lk.login("g", timeout=8)
    assert result.code != EX_OK, result
    assert not lk.vault.exists() or lk.status() == []
