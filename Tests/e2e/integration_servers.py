"""The servers kubectl and skopeo talk to in the integration tests, on loopback over HTTPS with a
throw-away CA made by openssl in the test's directory:

* ``KubeAPIServer``: enough of a Kubernetes API server for ``kubectl get --raw`` and ``kubectl
  proxy``: every request needs ``Authorization: Bearer TOKEN`` where TOKEN is one the test IdP's
  userinfo endpoint accepts, else 401 with a ``Status`` object, as a real API server answers;
* ``RegistryServer``: enough of the registry API v2 for ``skopeo inspect`` (``/v2/``, a
  manifest, its config blob, the tag list), behind HTTP Basic: the user name must be the
  provider's ``registry_username`` and the password a token the IdP's userinfo accepts; otherwise
  401 with ``WWW-Authenticate: Basic``.

Both record every request (path, the credentials' user as the IdP names it, the status) so a test
can tell which token and which account arrived."""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests


@dataclass
class Certificates:
    ca: Path
    cert: Path
    key: Path


def make_certificates(directory: Path) -> Certificates:
    """A CA and a server certificate for 127.0.0.1 and localhost, signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / "ca.key", directory / "ca.crt"
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.crt"
    extensions = directory / "server.ext"
    extensions.write_text("subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(ca_key),
            "-out", str(ca), "-days", "2", "-subj", "/CN=Latchkey test CA")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key),
            "-out", str(csr), "-subj", "/CN=localhost")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-out", str(cert),
            "-days", "2", "-extfile", str(extensions))
    return Certificates(ca=ca, cert=cert, key=key)


@dataclass
class Seen:
    path: str
    status: int
    user: str | None  # the IdP's email for the token, when it accepted one
    token: str | None


class _HTTPSServer:
    """A ThreadingHTTPServer on 127.0.0.1 with TLS, run on a daemon thread."""

    def __init__(self, certificates: Certificates, userinfo_endpoint: str):
        self.userinfo_endpoint = userinfo_endpoint
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: pytest shows what the test asserts
                pass

            def do_GET(self):
                server.handle(self, head=False)

            def do_HEAD(self):
                server.handle(self, head=True)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(certificates.cert), str(certificates.key))
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def user_of(self, token: str) -> str | None:
        """The email the IdP's userinfo gives for this token; None when it refuses the token."""
        response = requests.get(self.userinfo_endpoint, headers={"Authorization": f"Bearer {token}"}, timeout=15)
        return response.json().get("email") if response.status_code == 200 else None

    def record(self, path: str, status: int, user: str | None, token: str | None) -> None:
        with self._lock:
            self.seen.append(Seen(path, status, user, token))

    def requests_to(self, prefix: str) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.path.startswith(prefix)]

    @staticmethod
    def reply(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str, head: bool,
              headers: dict[str, str] | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        if not head:
            handler.wfile.write(body)

    def handle(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        raise NotImplementedError


class KubeAPIServer(_HTTPSServer):
    """`/api`, `/version` and `/apis` for a bearer token the IdP accepts; 401 otherwise."""

    ANSWERS = {
        "/api": {"kind": "APIVersions", "versions": ["v1"],
                 "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]},
        "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"},
        "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    }

    def handle(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        path = handler.path.split("?", 1)[0]
        header = handler.headers.get("Authorization", "")
        token = header[len("Bearer "):] if header.startswith("Bearer ") else None
        user = self.user_of(token) if token else None
        if user is None:
            self.record(path, 401, None, token)
            body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "Unauthorized",
                    "reason": "Unauthorized", "code": 401}
            self.reply(handler, 401, json.dumps(body).encode(), "application/json", head)
            return
        answer = self.ANSWERS.get(path)
        status = 200 if answer is not None else 404
        self.record(path, status, user, token)
        body = answer if answer is not None else {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404}
        self.reply(handler, status, json.dumps(body).encode(), "application/json", head)


class RegistryServer(_HTTPSServer):
    """One image, `latchkey/test:1`, behind HTTP Basic as a cloud registry checks an access token."""

    REPOSITORY = "latchkey/test"
    TAG = "1"

    def __init__(self, certificates: Certificates, userinfo_endpoint: str, username: str):
        self.username = username
        self.config = json.dumps({
            "architecture": "amd64", "os": "linux", "created": "2025-01-01T00:00:00Z",
            "config": {"Labels": {"org.example.latchkey": "registry-test"}},
            "rootfs": {"type": "layers", "diff_ids": []},
        }).encode()
        self.config_digest = "sha256:" + hashlib.sha256(self.config).hexdigest()
        self.manifest = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(self.config),
                       "digest": self.config_digest},
            "layers": [],
        }).encode()
        self.manifest_digest = "sha256:" + hashlib.sha256(self.manifest).hexdigest()
        super().__init__(certificates, userinfo_endpoint)

    def authorised_user(self, handler: BaseHTTPRequestHandler) -> tuple[str | None, str | None]:
        header = handler.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None, None
        try:
            username, _, password = base64.b64decode(header[len("Basic "):]).decode().partition(":")
        except ValueError:
            return None, None
        if username != self.username:
            return None, password
        return self.user_of(password), password

    def handle(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        path = handler.path.split("?", 1)[0]
        user, token = self.authorised_user(handler)
        if user is None:
            self.record(path, 401, None, token)
            body = json.dumps({"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]}).encode()
            self.reply(handler, 401, body, "application/json", head, {
                "WWW-Authenticate": 'Basic realm="latchkey-test-registry"',
                "Docker-Distribution-API-Version": "registry/2.0"})
            return
        base = f"/v2/{self.REPOSITORY}"
        if path == "/v2/":
            status, body, content_type, extra = 200, b"{}", "application/json", {}
        elif path in (f"{base}/manifests/{self.TAG}", f"{base}/manifests/{self.manifest_digest}"):
            status, body = 200, self.manifest
            content_type = "application/vnd.docker.distribution.manifest.v2+json"
            extra = {"Docker-Content-Digest": self.manifest_digest}
        elif path == f"{base}/blobs/{self.config_digest}":
            status, body, content_type = 200, self.config, "application/octet-stream"
            extra = {"Docker-Content-Digest": self.config_digest}
        elif path == f"{base}/tags/list":
            status, body, content_type, extra = 200, json.dumps({"name": self.REPOSITORY, "tags": [self.TAG]}).encode(), \
                "application/json", {}
        else:
            status, body, content_type, extra = 404, json.dumps({"errors": [{"code": "NAME_UNKNOWN"}]}).encode(), \
                "application/json", {}
        extra["Docker-Distribution-API-Version"] = "registry/2.0"
        self.record(path, status, user, token)
        self.reply(handler, status, body, content_type, head, extra)
