"""`latchkey doctor` says what works and what to fix; `login --device` shows a QR code."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import ALICE, EX_OK, EX_UNEXPECTED, LATCHKEY_BIN, _die_with_parent

LINE = re.compile(r"^(ok|warning|problem) +[^:]+: .+$")


def lines_of(result) -> list[str]:
    lines = result.stdout.splitlines()
    assert lines, f"doctor printed nothing on stdout\n{result}"
    bad = [line for line in lines if not LINE.match(line)]
    assert not bad, f"every line is `ok|warning|problem SUBJECT: ...`: {bad}\n{result}"
    return lines


def test_doctor_on_a_healthy_set_up_exits_0(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    result = lk.run("doctor")
    assert result.code == EX_OK, result
    lines = lines_of(result)
    assert not [line for line in lines if line.startswith("problem")], result
    assert any(line.startswith("ok") and "providers:" in line and str(lk.providers_dir) in line for line in lines), result
    assert any(line.startswith("ok") and "vault permissions:" in line for line in lines), result
    for subject in ("config.toml", "keystore", "kernel keyring", "Secret Service", "IPv4 loopback", "IPv6 loopback",
                    "browser", "terminal"):
        assert any(f" {subject}: " in line for line in lines), f"no {subject} line\n{result}"
    # Pipes and TERM=dumb: a warning that `latchkey` alone prints the status, not a failure.
    assert any(line.startswith("warning") and "terminal:" in line and "status" in line for line in lines), result
    # Nothing secret: neither the passphrase nor a token.
    assert lk.passphrase not in result.stdout + result.stderr
    assert lk.token("a") not in result.stdout + result.stderr


def test_doctor_on_a_broken_set_up_exits_1_and_names_what_to_fix(lk, idp_a):
    lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    broken = lk.write_provider_text("broken", 'display_name = "Broken"\nkind = "oidc"\nissuer = "http://insecure.example.test"\n')
    vault_dir = lk.vault.parent
    os.chmod(vault_dir, 0o777)
    try:
        result = lk.run("doctor")
    finally:
        os.chmod(vault_dir, 0o700)
    assert result.code == EX_UNEXPECTED, result
    problems = [line for line in lines_of(result) if line.startswith("problem")]
    assert any(f"{broken}:3: issuer:" in line and "latchkey providers check" in line for line in problems), result
    assert any(str(vault_dir) in line and "mode 777" in line and f"Fix: chmod 700 {vault_dir}" in line for line in problems), result
    # The good provider still loads, and the doctor changed nothing.
    assert any(line.startswith("ok") and "providers:" in line and "(a)" in line for line in result.stdout.splitlines()), result
    assert [a["account"] for a in lk.status()] == [ALICE]


def test_device_login_prints_a_qr_code_of_the_complete_address(lk, idp_a):
    lk.add_device_provider("dev", idp_a)
    result = lk.device_login("dev", env={"LATCHKEY_QR": "1"})
    assert result.code == EX_OK, f"{result}\nUA log:\n{lk.ua_log_text()}"
    qr = [line for line in result.stderr.splitlines() if set(line) <= set("█▀▄ ") and len(line) >= 25]
    assert len(qr) >= 12, f"no QR block on stderr\n{result}"
    assert len({len(line) for line in qr}) == 1, "every QR line has the same width"
    # The code and the address are still printed as text.
    assert "enter the code" in result.stderr, result
    url = re.search(r"https?://\S+/device\S*", result.stderr)
    assert url, result
    if shutil.which("zbarimg"):
        assert scanned(qr, lk.tmp / "qr.pbm") == url.group(0), "zbarimg reads the printed code as the printed address"


def scanned(lines: list[str], pbm) -> str:
    """What zbarimg reads from half-block lines (blocks are light modules, two rows a line)."""
    halves = {"█": (0, 0), "▀": (0, 1), "▄": (1, 0), " ": (1, 1)}  # 1 = dark
    rows = []
    for line in lines:
        pairs = [halves[ch] for ch in line]
        rows += [[top for top, _ in pairs], [bottom for _, bottom in pairs]]
    rows = rows[:len(lines[0])]  # an odd size: the last line's lower half is outside the code
    scale, margin = 4, 4
    width = len(rows[0]) + 2 * margin
    padded = [[0] * width] * margin + [[0] * margin + row + [0] * margin for row in rows] + [[0] * width] * margin
    body = "\n".join(" ".join(str(bit) for bit in row for _ in range(scale)) for row in padded for _ in range(scale))
    pbm.write_text(f"P1\n{width * scale} {len(padded) * scale}\n{body}\n")
    out = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(pbm)],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def test_device_login_prints_no_qr_code_in_a_pipe(lk, idp_a):
    lk.add_device_provider("dev", idp_a)
    result = lk.device_login("dev")
    assert result.code == EX_OK, result
    assert not any(ch in result.stderr for ch in "█▀▄"), result



def test_doctor_with_the_secret_service_chosen_but_unreachable_exits_1_and_says_how_to_start_one(lk, idp_a):
    lk.add_provider("a", idp_a)
    (lk.config / "latchkey").mkdir(parents=True, exist_ok=True)
    (lk.config / "latchkey" / "config.toml").write_text('keystore = "secret-service"\n')
    result = lk.run("doctor", env={"LATCHKEY_PASSPHRASE_FILE": None, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
                                   "DISPLAY": None})
    assert result.code == EX_UNEXPECTED, result
    (line,) = [line for line in lines_of(result) if " Secret Service: " in line]
    assert line.startswith("problem") and 'keystore = "vault"' in line, result
    assert any(line.startswith("ok") and "keystore: secret-service" in line for line in result.stdout.splitlines()), result


@pytest.mark.skipif(shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None,
                    reason="needs dbus-run-session and gnome-keyring-daemon (scripts/setup installs them)")
def test_doctor_finds_a_running_secret_service(lk, idp_a, tmp_path):
    lk.add_provider("a", idp_a)
    script = ("printf 'keyring-password' | gnome-keyring-daemon --unlock --components=secrets >/dev/null\n"
              '"$LATCHKEY" doctor --keystore secret-service >"$OUT/doctor.txt"; echo $? >"$OUT/rc"\n')
    env = lk.env(LATCHKEY_PASSPHRASE_FILE=None, LATCHKEY=LATCHKEY_BIN, OUT=tmp_path)
    session = subprocess.run(["dbus-run-session", "--", "bash", "-c", script], env=env,
                             capture_output=True, timeout=120, preexec_fn=_die_with_parent)
    report = (tmp_path / "doctor.txt").read_text()
    assert (tmp_path / "rc").read_text().strip() == "0", report + session.stderr.decode(errors="replace")
    (line,) = [line for line in report.splitlines() if " Secret Service: " in line]
    assert line.startswith("ok") and "reachable" in line, report
