"""
Django settings for Latchkey's test-only OpenID Connect provider.

Everything instance-specific comes from environment variables that
Tests/idp/run_idp.py sets *before* Django is configured:

  LATCHKEY_IDP_PORT                  TCP port on 127.0.0.1 (issuer is http://127.0.0.1:PORT/o)
  LATCHKEY_IDP_NAME                  instance name (cookie names, application name, page titles)
  LATCHKEY_IDP_DATA_DIR              directory for db.sqlite3 and requests.log
  LATCHKEY_IDP_ACCESS_TOKEN_SECONDS  access token lifetime (default 3600)
  LATCHKEY_IDP_RSA_PRIVATE_KEY       optional PEM; otherwise a fresh RSA-2048 key is generated

NEVER use these settings for anything but local tests: DEBUG-ish secrets, plain http.
"""

import os
import re
import secrets
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent

PORT = int(os.environ.get("LATCHKEY_IDP_PORT", "8000"))
NAME = os.environ.get("LATCHKEY_IDP_NAME", "idp")
DATA_DIR = Path(os.environ.get("LATCHKEY_IDP_DATA_DIR", "/tmp/latchkey-idp")).resolve()
ACCESS_TOKEN_SECONDS = int(os.environ.get("LATCHKEY_IDP_ACCESS_TOKEN_SECONDS", "3600"))

# The issuer is fixed (not derived from the Host header) so that the discovery
# document's "issuer", the ID token "iss" claim and the RFC 9207 "iss"
# authorization-response parameter are all exactly this string.
ISSUER = f"http://127.0.0.1:{PORT}/o"

REQUEST_LOG = DATA_DIR / "requests.log"


def _rsa_private_key_pem():
    pem = os.environ.get("LATCHKEY_IDP_RSA_PRIVATE_KEY")
    if pem:
        return pem
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    ).decode("ascii")


SECRET_KEY = secrets.token_urlsafe(48)  # per process; sessions do not need to survive restarts
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "oauth2_provider",
    "idp_site",
]

MIDDLEWARE = [
    # Outermost so that every request (including ones answered by other
    # middleware) is logged as "METHOD PATH".
    "idp_site.middleware.RequestLogMiddleware",
    # Test-fixture additions to DOT's behaviour (see middleware.py).
    "idp_site.middleware.AuthorizationResponseIssMiddleware",
    "idp_site.middleware.SlowTokenEndpointMiddleware",
    "idp_site.middleware.DiscoveryExtrasMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "idp_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "idp_site.context_processors.instance",
            ],
        },
    },
]

WSGI_APPLICATION = "idp_site.wsgi.application"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(DATA_DIR / "db.sqlite3"),
        # IMMEDIATE: a transaction takes the write lock when it begins, so concurrent token
        # requests wait for each other (the timeout) instead of failing with "database is locked"
        # when two that both read try to write (SQLite cannot upgrade both).
        "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
    }
}

# Fast hashing: these are throw-away test users.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/o/"

# Two instances listen on 127.0.0.1 on different ports; browsers do not
# isolate cookies by port, so give each instance its own cookie names.
_cookie_tag = re.sub(r"[^A-Za-z0-9_]", "_", NAME)[:40] or "idp"
SESSION_COOKIE_NAME = f"latchkey_idp_{_cookie_tag}_session"
CSRF_COOKIE_NAME = f"latchkey_idp_{_cookie_tag}_csrf"
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_RSA_PRIVATE_KEY": _rsa_private_key_pem(),
    "OAUTH2_VALIDATOR_CLASS": "idp_site.validators.LatchkeyTestValidator",
    "SCOPES": {
        "openid": "OpenID Connect scope",
        "profile": "Your name and username",
        "email": "Your email address",
        # Asked for by clients that want a refresh token the OIDC way (OpenID Connect Core §11),
        # oidc-agent among them (benchmarks/commands.sh); DOT issues refresh tokens either way.
        "offline_access": "Stay signed in (refresh tokens)",
    },
    "DEFAULT_SCOPES": ["openid"],
    "PKCE_REQUIRED": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    # run_idp.py --refresh-token-reuse-protection: a rotated refresh token used again revokes its family.
    "REFRESH_TOKEN_REUSE_PROTECTION": os.environ.get("LATCHKEY_IDP_REUSE_PROTECTION") == "1",
    "ACCESS_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_SECONDS,
    "ID_TOKEN_EXPIRE_SECONDS": 3600,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    # Always show the consent form (never auto-approve from earlier grants).
    "REQUEST_APPROVAL_PROMPT": "force",
    # RFC 8252 §7.3: DOT natively ignores the port of http://127.0.0.1 and
    # http://[::1] redirect URIs. This extends the same treatment to
    # http://localhost (hostname and path must still match exactly).
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # RFC 9207: DOT natively adds iss=<issuer> to *successful* authorization
    # redirects and advertises authorization_response_iss_parameter_supported.
    # (Error redirects are covered by idp_site.middleware.)
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    # Enforce the other RFC 9700 request-time rules (also keeps logs quiet):
    # no implicit/password grants, S256 only, no access tokens in query strings.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "OIDC_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OIDC_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    # RFC 8628 device authorization grant (used by the separate "<client-id>-device" app).
    "OAUTH_DEVICE_VERIFICATION_URI": f"http://127.0.0.1:{PORT}/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": f"http://127.0.0.1:{PORT}/o/device/?user_code={{user_code}}",
    "DEVICE_FLOW_INTERVAL": 1,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"null": {"class": "logging.NullHandler"}},
    "loggers": {
        "django": {"handlers": ["null"], "propagate": False},
        "django.server": {"handlers": ["null"], "propagate": False},
        "oauth2_provider": {"handlers": ["null"], "propagate": False},
        "oauthlib": {"handlers": ["null"], "propagate": False},
    },
}
