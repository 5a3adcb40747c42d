"""
The secret-service keystore against a real Secret Service: gnome-keyring-daemon in a private
D-Bus session (dbus-run-session), as on a desktop. The vault key lives in the keyring; no
passphrase is involved; without a Secret Service every command fails clearly (exit 77).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ALICE, BROWSER_SCRIPT, EX_OK, EX_VAULT, LATCHKEY_BIN, _die_with_parent

pytestmark = pytest.mark.skipif(
    shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None,
    reason="needs dbus-run-session and gnome-keyring-daemon (scripts/setup installs them)")

SESSION_SCRIPT = r"""
set -u
printf 'keyring-password' | gnome-keyring-daemon --unlock --components=secrets >/dev/null
"$LATCHKEY" login a --keystore secret-service --timeout 30 || exit 10
"$LATCHKEY" status --json --keystore secret-service >"$OUT/status.json" || exit 11
"$LATCHKEY" token a --keystore secret-service >"$OUT/token" || exit 12
secret-tool lookup application latchkey vault "$VAULT" >"$OUT/keyring-secret" || exit 13
"""


def test_accounts_in_the_secret_service_keystore_need_no_passphrase(lk, idp_a, tmp_path):
    lk.add_provider("a", idp_a)
    vault = lk.data / "latchkey" / "secret-service.vault"
    env = lk.env(LATCHKEY_PASSPHRASE_FILE=None, LATCHKEY=LATCHKEY_BIN, OUT=tmp_path, VAULT=vault,
                 BROWSER=BROWSER_SCRIPT)
    session = subprocess.run(["dbus-run-session", "--", "bash", "-c", SESSION_SCRIPT], env=env,
                             capture_output=True, timeout=120, preexec_fn=_die_with_parent)
    assert session.returncode == 0, session.stderr.decode(errors="replace")
    import json
    accounts = json.loads((tmp_path / "status.json").read_text())["accounts"]
    assert [(a["account"], a["keystore"]) for a in accounts] == [(ALICE, "secret-service")]
    token = (tmp_path / "token").read_text().strip()
    assert idp_a.userinfo(token).status_code == 200
    # The keyring holds the vault key; the vault file holds the tokens, encrypted.
    key = (tmp_path / "keyring-secret").read_text().strip()
    assert len(key) >= 43
    assert token.encode() not in vault.read_bytes()
    assert not lk.vault.exists(), "the passphrase vault must not be touched by the secret-service keystore"


def test_without_a_secret_service_the_keystore_refuses_clearly(lk, idp_a):
    lk.add_provider("a", idp_a)
    result = lk.run("login", "a", "--keystore", "secret-service", "--timeout", "20",
                    env={"LATCHKEY_PASSPHRASE_FILE": None, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
                         "DISPLAY": None})
    assert result.code == EX_VAULT, str(result)
    assert "Secret Service" in result.stderr and "keystore = \"vault\"" in result.stderr
    assert not (lk.data / "latchkey" / "secret-service.vault").exists()
