#!/bin/sh
# $BROWSER for Latchkey's end-to-end tests: runs the scripted user agent
# (Tests/idp/user_agent.py) with the test venv's python. See README.md.
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV="${LATCHKEY_TEST_VENV:-$REPO/.venv-test}"
exec "$VENV/bin/python" "$HERE/user_agent.py" "$@"
