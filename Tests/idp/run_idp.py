#!/usr/bin/env python3
"""
Launch one instance of Latchkey's test-only OpenID Connect provider
(django-oauth-toolkit) on 127.0.0.1.

    <venv>/bin/python Tests/idp/run_idp.py --port PORT --name NAME --data-dir DIR \
        [--access-token-seconds N] [--client-id ID] [--redirect-paths /p1,/p2]

Prints exactly one line on stdout once it accepts connections:

    READY http://127.0.0.1:PORT/o

(the issuer). --port 0 picks a free port; the READY line tells which.
SIGTERM / SIGINT stop it cleanly (exit status 0). See Tests/idp/README.md.
"""

import argparse
import os
import signal
import socket
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent

DEFAULT_REDIRECT_PATHS = [
    "/oauth2redirect/a",
    "/oauth2redirect/b",
    "/oauth2redirect/idp-a",
    "/oauth2redirect/idp-b",
]
# Registered redirect URIs are portless; DOT ignores the port for these
# loopback hosts (natively for the IP literals, via ALLOW_LOCALHOST_LOOPBACK
# for "localhost"), while host and path must match exactly.
LOOPBACK_HOSTS = ["127.0.0.1", "[::1]", "localhost"]

USERS = [
    # username, email, first name
    ("alice", "alice@example.test", "Alice"),
    ("bob", "bob@example.test", "Bob"),
]
PASSWORD = "correct horse battery staple"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1 (0 = pick a free one)")
    p.add_argument("--name", default="idp", help="instance name (cookie names, page titles)")
    p.add_argument("--data-dir", required=True, help="directory for db.sqlite3 and requests.log")
    p.add_argument("--access-token-seconds", type=int, default=3600)
    p.add_argument("--client-id", default="latchkey-test")
    p.add_argument("--refresh-token-reuse-protection", action="store_true",
                   help="revoke a refresh token's whole family when a rotated one is used again, as providers in the field do")
    p.add_argument("--token-delay-ms", type=int, default=0, help="answer each token and revocation request this many ms late")
    p.add_argument(
        "--redirect-paths",
        default="",
        help="comma-separated extra redirect paths (added to " + ", ".join(DEFAULT_REDIRECT_PATHS) + ")",
    )
    return p.parse_args(argv)


def redirect_uris(extra_paths):
    paths = list(DEFAULT_REDIRECT_PATHS)
    for raw in extra_paths.split(","):
        raw = raw.strip()
        if not raw:
            continue
        if not raw.startswith("/"):
            raw = "/" + raw
        if raw not in paths:
            paths.append(raw)
    return [f"http://{host}{path}" for path in paths for host in LOOPBACK_HOSTS]


def seed(args):
    from django.contrib.auth import get_user_model
    from oauth2_provider.models import get_application_model

    User = get_user_model()
    for username, email, first_name in USERS:
        user, _ = User.objects.get_or_create(username=username)
        user.email = email
        user.first_name = first_name
        user.is_active = True
        user.set_password(PASSWORD)
        user.save()

    Application = get_application_model()
    common = dict(
        client_type=Application.CLIENT_PUBLIC,
        client_secret="",
        hash_client_secret=False,
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=False,
        user=None,
    )
    Application.objects.update_or_create(
        client_id=args.client_id,
        defaults=dict(
            common,
            name=f"Latchkey test ({args.name})",
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=" ".join(redirect_uris(args.redirect_paths)),
        ),
    )
    # RFC 8628 device authorization grant: DOT allows one grant type per
    # application, so the device flow gets its own public client.
    Application.objects.update_or_create(
        client_id=f"{args.client_id}-device",
        defaults=dict(
            common,
            name=f"Latchkey test device ({args.name})",
            authorization_grant_type=Application.GRANT_DEVICE_CODE,
            redirect_uris="",
        ),
    )


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    data_dir = Path(args.data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)

    # Bind first so that --port 0 works and the issuer (which contains the
    # port) is known before Django is configured.
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - stdlib signature
            pass

    class Server(ThreadedWSGIServer):
        allow_reuse_address = True
        daemon_threads = True

        def handle_error(self, request, client_address):
            # Clients that hang up early (e.g. the harness) are not errors here.
            exc = sys.exc_info()[1]
            if isinstance(exc, (ConnectionError, BrokenPipeError, socket.timeout)):
                return
            super().handle_error(request, client_address)

    httpd = Server(("127.0.0.1", args.port), QuietHandler, ipv6=False)
    port = httpd.server_address[1]

    os.environ["DJANGO_SETTINGS_MODULE"] = "idp_site.settings"
    os.environ["LATCHKEY_IDP_PORT"] = str(port)
    os.environ["LATCHKEY_IDP_NAME"] = args.name
    os.environ["LATCHKEY_IDP_DATA_DIR"] = str(data_dir)
    os.environ["LATCHKEY_IDP_ACCESS_TOKEN_SECONDS"] = str(args.access_token_seconds)
    os.environ["LATCHKEY_IDP_TOKEN_DELAY_MS"] = str(args.token_delay_ms)
    os.environ["LATCHKEY_IDP_REUSE_PROTECTION"] = "1" if args.refresh_token_reuse_protection else "0"
    sys.path.insert(0, str(HERE))

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    call_command("migrate", verbosity=0, interactive=False)
    seed(args)
    httpd.set_app(get_wsgi_application())

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    server_thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    server_thread.start()
    print(f"READY {settings.ISSUER}", flush=True)

    while not stop.wait(0.5):
        if not server_thread.is_alive():
            return 1
    httpd.shutdown()
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
