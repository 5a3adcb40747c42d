#!/bin/sh
# Create (or refresh) the Python venv used by Latchkey's end-to-end tests and
# install Tests/idp/requirements.txt into it. Idempotent: when the venv already
# holds exactly the pinned requirements, nothing is reinstalled.
#
#   Tests/idp/setup-venv.sh            -> venv at <repo>/.venv-test
#   LATCHKEY_TEST_VENV=/x Tests/idp/setup-venv.sh
#
# Prints the venv path (and nothing else) on stdout.
# Needs python3 with the venv module (Debian: apt-get install python3-venv).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV="${LATCHKEY_TEST_VENV:-$REPO/.venv-test}"
REQ="$HERE/requirements.txt"

# Prefer Debian's interpreter (what CI has); fall back to whatever python3 is on PATH.
if [ -n "${LATCHKEY_TEST_PYTHON:-}" ]; then
    PY="$LATCHKEY_TEST_PYTHON"
elif [ -x /usr/bin/python3 ]; then
    PY=/usr/bin/python3
else
    PY=python3
fi

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    rm -rf "$VENV"
    "$PY" -m venv "$VENV" >&2
fi

STAMP="$VENV/.latchkey-requirements.sha256"
WANT=$(sha256sum "$REQ" | cut -d' ' -f1)
HAVE=$(cat "$STAMP" 2>/dev/null || true)
if [ "$WANT" != "$HAVE" ] || ! "$VENV/bin/python" -c 'import django, oauth2_provider, requests, jwcrypto, mcp' >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQ" >&2
    echo "$WANT" > "$STAMP"
fi

echo "$VENV"
