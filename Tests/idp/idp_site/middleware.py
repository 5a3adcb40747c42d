"""
Middleware of Latchkey's test-only OpenID Connect provider.

RequestLogMiddleware
    Appends "METHOD PATH" (no query string, so no secrets) to
    <data-dir>/requests.log for every request, so tests can count e.g.
    "POST /o/token/".

AuthorizationResponseIssMiddleware  -- TEST FIXTURE's implementation of RFC 9207
    django-oauth-toolkit 3.4 (with COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS) adds
    iss=<issuer> to *successful* authorization responses only. Error responses
    redirected to the client (access_denied after the user presses Cancel,
    invalid_scope, ...) do not carry it, although RFC 9207 §2 requires iss on
    error responses too. This middleware appends iss to any authorization-
    endpoint redirect to a loopback redirect URI that carries "code" or "error"
    and lacks "iss".

SlowTokenEndpointMiddleware
    With run_idp.py --token-delay-ms N, answers each token request N ms late,
    as providers in the field take their time: a test of concurrent refreshes
    then really overlaps them.

DiscoveryExtrasMiddleware
    DOT's OIDC discovery document omits some endpoints that its RFC 8414
    metadata has. This adds (only when missing): revocation_endpoint,
    device_authorization_endpoint, grant_types_supported and
    authorization_response_iss_parameter_supported.
"""

import json
import os
import threading
import time
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from django.conf import settings

_log_lock = threading.Lock()

AUTHORIZE_PATH = "/o/authorize/"
DISCOVERY_PATHS = ("/o/.well-known/openid-configuration", "/o/.well-known/openid-configuration/")
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class RequestLogMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        line = f"{request.method} {request.path}\n".encode("utf-8", "backslashreplace")
        with _log_lock:
            fd = os.open(settings.REQUEST_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        return self.get_response(request)


class SlowTokenEndpointMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.delay = int(os.environ.get("LATCHKEY_IDP_TOKEN_DELAY_MS", "0")) / 1000

    def __call__(self, request):
        if self.delay and request.method == "POST" and request.path in ("/o/token/", "/o/revoke_token/"):
            time.sleep(self.delay)
        return self.get_response(request)


class AuthorizationResponseIssMiddleware:
    """Test fixture's RFC 9207 completion: iss on authorization *error* redirects."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path != AUTHORIZE_PATH or response.status_code not in (301, 302, 303, 307, 308):
            return response
        location = response.get("Location")
        if not location:
            return response
        parts = urlsplit(location)
        if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS:
            return response
        keys = [k for k, _ in parse_qsl(parts.query, keep_blank_values=True)]
        if "iss" in keys or not ("code" in keys or "error" in keys):
            return response
        # Append to the raw query so the existing parameters keep their exact encoding.
        iss = "iss=" + quote(settings.ISSUER, safe="")
        query = f"{parts.query}&{iss}" if parts.query else iss
        response["Location"] = urlunsplit(parts._replace(query=query))
        return response


class DiscoveryExtrasMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path not in DISCOVERY_PATHS or response.status_code != 200:
            return response
        try:
            data = json.loads(response.content)
        except ValueError:
            return response
        data.setdefault("revocation_endpoint", f"{settings.ISSUER}/revoke_token/")
        data.setdefault("device_authorization_endpoint", f"{settings.ISSUER}/device-authorization/")
        data.setdefault(
            "grant_types_supported",
            ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        )
        data.setdefault("authorization_response_iss_parameter_supported", True)
        response.content = json.dumps(data).encode("utf-8")
        if response.has_header("Content-Length"):
            response["Content-Length"] = str(len(response.content))
        return response
