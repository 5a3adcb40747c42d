"""Signing in to a kind = "firebase" provider at the plain terminal: email and password,
then (when the account has one) a second factor chosen from masked hints and an SMS code
typed on stdin, against latchkey-emulator, and against the exec plugin backend."""

import json
import os
import secrets
import shutil
import stat
import subprocess
import time
from types import SimpleNamespace

import pytest
import requests
from jwcrypto import jwk, jwt

from conftest import EX_OK, EX_UNAVAILABLE, EX_VAULT, REPO, Latchkey, assert_nothing_stored, jwt_parts, message
from emulator_support import Conversation, Emulator

PROJECT = "demo-latchkey-e2e"
SHORT_PROJECT = "demo-latchkey-short"
SHORT_TOKEN_SECONDS = 6
MAX_ATTEMPTS = 2

PLAIN = "plain@example.test"
ANA = "ana@example.test"
WORK_PHONE, HOME_PHONE = "+15555550100", "+447700900123"
WORK_MASK, HOME_MASK = "+*******0100", "+********0123"
LIMITED, LIMITED_PHONE = "lim@example.test", "+15555550142"
EVE, EVE_PHONE = "eve@example.test", "+15555550177"
# Every password is random, so finding one in a file or on the terminal cannot be chance.
PASSWORDS = {email: "pw-" + secrets.token_urlsafe(18) for email in (PLAIN, ANA, LIMITED, EVE)}

CODE_PROMPT = "Code (r to send a new one): "
PLUGIN = REPO / "examples" / "mfa-plugin" / "latchkey-mfa-demo"


def user(local_id: str, email: str, *phones: tuple[str, str, str]) -> dict:
    return {"localId": local_id, "email": email, "password": PASSWORDS[email],
            "mfaInfo": [{"mfaEnrollmentId": i, "displayName": label, "phoneInfo": number} for i, label, number in phones]}


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    """`main` (MAX_ATTEMPTS wrong codes per SMS) and `short` (ID tokens live
    SHORT_TOKEN_SECONDS), started together and stopped at the end of the module."""
    root = tmp_path_factory.mktemp("emulators")
    main_seed = {"projectId": PROJECT, "users": [
        user("u-plain", PLAIN),
        user("u-ana", ANA, ("work-phone", "Work phone", WORK_PHONE), ("home-phone", "Home phone", HOME_PHONE)),
        user("u-limited", LIMITED, ("only-phone", "Phone", LIMITED_PHONE)),
    ]}
    short_seed = {"projectId": SHORT_PROJECT, "tokenLifetime": SHORT_TOKEN_SECONDS,
                  "users": [user("u-eve", EVE, ("eve-phone", "Phone", EVE_PHONE))]}
    started = []
    try:
        started.append(Emulator(root / "main", main_seed, "--max-attempts", str(MAX_ATTEMPTS)))
        started.append(Emulator(root / "short", short_seed))
        for emulator in started:
            emulator.wait_ready()
        yield SimpleNamespace(main=started[0], short=started[1])
    finally:
        for emulator in started:
            emulator.stop()


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def sign_in_with_password(lk: Latchkey, email: str, password: str, env: dict | None = None) -> Conversation:
    """`latchkey login fb`, answering the email and password prompts."""
    person = Conversation(lk.start("login", "fb", env=env, stdin=subprocess.PIPE))
    person.answer("Email: ", email)
    person.answer("Password: ", password)
    return person


def assert_no_secret_in_files(lk: Latchkey, **values: str) -> None:
    files = lk.files()
    assert lk.vault in files, "nothing was stored"
    for path in files:
        data = path.read_bytes()
        for what, value in values.items():
            assert value.encode() not in data, f"the {what} is in {path} in plain text"


def requests_json(url: str) -> dict:
    response = requests.get(url, timeout=10)
    assert response.status_code == 200, f"GET {url}: HTTP {response.status_code}"
    return response.json()


def token_claims(lk: Latchkey, *options: str) -> tuple[str, dict]:
    token = lk.token("fb", *options)
    return token, jwt_parts(token)[1]


# --------------------------------------------------------------------------- without a second factor


def test_an_account_without_a_second_factor_signs_in_with_email_and_password(lk, emulators):
    emulators.main.add_provider(lk)
    result = sign_in_with_password(lk, PLAIN, PASSWORDS[PLAIN]).hang_up()
    assert result.code == EX_OK, result
    assert result.stdout == "", f"login must print nothing on stdout\n{result}"
    assert "Signed in to Firebase emulator as plain@example.test.\n" in result.stderr, result
    assert "second factor" not in result.stderr.lower(), result

    (account,) = lk.status()
    assert account["provider"] == "fb" and account["account"] == PLAIN, account
    assert account["issuer"] == emulators.main.issuer and account["subject"] == "u-plain", account
    assert account["refresh_token"] is True and account["last_error"] is None, account
    assert 3000 < account["expires_in"] <= 3600, account

    token, claims = token_claims(lk)
    assert claims["iss"] == f"https://securetoken.google.com/{PROJECT}" and claims["aud"] == PROJECT, claims
    assert claims["firebase"]["sign_in_provider"] == "password", claims
    assert "sign_in_second_factor" not in claims["firebase"], claims
    assert PASSWORDS[PLAIN] not in result.stderr
    assert_no_secret_in_files(lk, password=PASSWORDS[PLAIN], token=token)


# --------------------------------------------------------------------------- SMS second factor


@pytest.fixture(scope="module")
def ana(tmp_path_factory, emulators):
    """ana signs in, picks the second of her two phones, types a wrong code, then the right one."""
    emulator = emulators.main
    lk = Latchkey(tmp_path_factory.mktemp("ana"))
    emulator.add_provider(lk)
    sessions_before = emulator.sessions()
    person = sign_in_with_password(lk, ANA, PASSWORDS[ANA])
    person.answer("Use which one [1-2]: ", "2")
    person.expect(CODE_PROMPT)
    code = emulator.new_code(HOME_PHONE, sessions_before)
    person.type(wrong(code))
    person.answer(CODE_PROMPT, code)
    result = person.hang_up()
    yield SimpleNamespace(lk=lk, result=result, code=code, wrong_code=wrong(code), emulator=emulator)
    lk.close()


def test_second_factor_sign_in_succeeds_after_a_wrong_code(ana):
    result = ana.result
    assert result.code == EX_OK, result
    assert result.stdout == "", f"login must print nothing on stdout\n{result}"
    assert "Signed in to Firebase emulator as ana@example.test (second factor: phone).\n" in result.stderr, result


def test_the_menu_lists_masked_phone_numbers_and_never_a_full_one(ana):
    stderr = ana.result.stderr
    assert "This account has a second factor:" in stderr, ana.result
    assert f"  1) Work phone: {WORK_MASK}\n" in stderr, ana.result
    assert f"  2) Home phone: {HOME_MASK}\n" in stderr, ana.result
    assert f"A code was sent by SMS to {HOME_MASK}." in stderr, ana.result
    for full in (WORK_PHONE, HOME_PHONE, WORK_PHONE[1:], HOME_PHONE[1:], HOME_PHONE[-8:]):
        assert full not in stderr, f"the full number {full} reached the terminal\n{ana.result}"


def test_a_wrong_code_is_refused_and_asked_for_again_without_a_new_sms(ana):
    stderr = ana.result.stderr
    refusal = "latchkey: the verification code is wrong; check it and enter it again\n"
    assert stderr.count(refusal) == 1, ana.result
    assert stderr.count(CODE_PROMPT) == 2, ana.result
    assert stderr.index(CODE_PROMPT) < stderr.index(refusal) < stderr.rindex(CODE_PROMPT), ana.result
    assert stderr.count("A code was sent by SMS") == 1, ana.result
    # The right code used up its session at the emulator: nothing is left pending for the phone.
    assert [c for c in ana.emulator.verification_codes() if c["phoneNumber"] == HOME_PHONE] == []


def test_status_lists_the_account_signed_in_with_a_second_factor(ana):
    (account,) = ana.lk.status()
    assert account["provider"] == "fb" and account["account"] == ANA, account
    assert account["issuer"] == f"https://securetoken.google.com/{PROJECT}", account
    assert account["subject"] == "u-ana", account
    assert account["refresh_token"] is True and account["last_error"] is None, account
    assert 3000 < account["expires_in"] <= 3600, account
    text = ana.lk.ok("status").stdout
    assert "fb — Firebase emulator" in text and ANA in text, text


def test_token_is_a_firebase_id_token_that_records_the_phone_factor(ana):
    token, claims = token_claims(ana.lk)
    header, _ = jwt_parts(token)
    assert header.get("alg") == "RS256", header
    assert claims["iss"] == f"https://securetoken.google.com/{PROJECT}", claims
    assert claims["aud"] == PROJECT and claims["sub"] == "u-ana" and claims["email"] == ANA, claims
    assert claims["firebase"]["sign_in_second_factor"] == "phone", claims
    assert claims["firebase"]["second_factor_identifier"] == "home-phone", "the second phone was the one chosen"
    assert ana.lk.token("fb", "--id-token") == token, "for firebase the access token is the ID token"
    # Signed by the emulator's key, published at the provider file's jwks_uri.
    keys = requests_json(f"{ana.emulator.base_url}/www.googleapis.com/service_accounts/v1/jwk/"
                         "securetoken@system.gserviceaccount.com")
    jwt.JWT(jwt=token, key=jwk.JWKSet.from_json(json.dumps(keys)), algs=["RS256"])


def test_no_password_code_or_token_is_written_to_any_file(ana):
    token = ana.lk.token("fb")
    assert_no_secret_in_files(ana.lk, password=PASSWORDS[ANA], code=ana.code, wrong_code=ana.wrong_code,
                              token=token, token_signature=token.rsplit(".", 1)[1])
    shown = ana.result.stderr + ana.lk.ok("status", "--json").stdout + ana.lk.ok("status").stdout
    for what, value in (("password", PASSWORDS[ANA]), ("code", ana.code), ("token", token)):
        assert value not in shown, f"the {what} was shown"


# --------------------------------------------------------------------------- refresh and limits


def test_an_expired_token_is_refreshed_and_the_account_remains(lk, emulators):
    emulator = emulators.short
    emulator.add_provider(lk)
    sessions_before = emulator.sessions()
    person = sign_in_with_password(lk, EVE, PASSWORDS[EVE])
    person.expect(CODE_PROMPT)
    person.type(emulator.new_code(EVE_PHONE, sessions_before))
    result = person.hang_up()
    signed_in_at = time.time()
    assert result.code == EX_OK, result
    assert "Use which one" not in result.stderr, f"one phone needs no menu\n{result}"
    assert "  1) Phone: +*******0177\n" in result.stderr, result

    first, first_claims = token_claims(lk, "--min-ttl", "0")
    assert first_claims["iat"] <= signed_in_at, "the first token is the one stored at sign-in"
    (before,) = lk.status()
    time.sleep(max(0.0, first_claims["exp"] + 1 - time.time()))

    second, second_claims = token_claims(lk, "--min-ttl", "0")
    assert second != first, "an expired token must be refreshed"
    assert second_claims["iat"] >= first_claims["exp"], second_claims
    assert second_claims["sub"] == "u-eve" and second_claims["iss"] == emulator.issuer, second_claims
    assert second_claims["firebase"]["sign_in_second_factor"] == "phone", "the factor survives a refresh"
    (after,) = lk.status()
    assert (after["account"], after["subject"], after["issuer"]) == (before["account"], before["subject"], before["issuer"])
    assert after["refresh_token"] is True and after["last_error"] is None, after
    assert after["expires_at"] > before["expires_at"] and after["expires_in"] > 0, (before, after)
    assert lk.token("fb", "--min-ttl", "0") == second, "the refreshed token was stored"


def test_too_many_wrong_codes_end_the_sign_in_with_a_wait_message_and_store_nothing(lk, emulators):
    emulator = emulators.main
    emulator.add_provider(lk)
    sessions_before = emulator.sessions()
    person = sign_in_with_password(lk, LIMITED, PASSWORDS[LIMITED])
    person.expect(CODE_PROMPT)
    code = emulator.new_code(LIMITED_PHONE, sessions_before)
    for _ in range(MAX_ATTEMPTS):
        person.type(wrong(code))
        person.expect(CODE_PROMPT)
    person.type(code)  # even the right code is refused once the attempts are used up
    result = person.hang_up()

    assert result.code == EX_UNAVAILABLE, result
    assert result.stdout == "", result
    reason = message(result).lower()
    assert "too many attempts" in reason and "wait" in reason, result
    assert "Signed in" not in result.stderr, result
    assert_nothing_stored(lk, None)
    for path in lk.files():
        data = path.read_bytes()
        assert PASSWORDS[LIMITED].encode() not in data and code.encode() not in data, f"a secret is in {path}"


# --------------------------------------------------------------------------- exec plugin backend


def test_the_exec_plugin_backend_signs_in_end_to_end(lk):
    program = lk.root / "plugin" / "latchkey-mfa-demo"
    program.parent.mkdir()
    shutil.copyfile(PLUGIN, program)
    os.chmod(program, 0o755)
    assert stat.S_IMODE(program.stat().st_mode) & 0o022 == 0
    state = lk.root / "plugin-state"  # outside the dirs lk.files() checks: the plugin's outbox holds codes
    state.mkdir(mode=0o700)
    password = "pw-" + secrets.token_urlsafe(18)
    (state / "users.json").write_text(json.dumps({"carol@example.test": {
        "uid": "demo-carol", "password": password,
        "factors": [{"id": "work", "kind": "phone", "display_name": "Work phone", "phone_number": WORK_PHONE},
                    {"id": "home", "kind": "phone", "display_name": "Home phone", "phone_number": HOME_PHONE}]}}))
    lk.write_provider_text("fb", f'display_name = "MFA demo plugin"\nkind = "firebase"\nmfa_backend = "exec:{program}"\n')
    env = {"LATCHKEY_MFA_DEMO_DIR": state}

    person = sign_in_with_password(lk, "carol@example.test", password, env=env)
    person.answer("Use which one [1-2]: ", "2")
    person.expect(CODE_PROMPT)
    (phone, code, _session), = [line.split() for line in (state / "outbox").read_text().splitlines()]
    assert phone == HOME_PHONE, "the plugin was asked for the second phone"
    person.type(code)
    result = person.hang_up()

    assert result.code == EX_OK, result
    assert "Signed in to MFA demo plugin as carol@example.test (second factor: phone).\n" in result.stderr, result
    assert f"  1) Work phone: {WORK_MASK}\n" in result.stderr and f"  2) Home phone: {HOME_MASK}\n" in result.stderr, result
    for full in (WORK_PHONE, HOME_PHONE):
        assert full not in result.stderr, f"the plugin's full number {full} reached the terminal\n{result}"
    (account,) = lk.status()
    assert account["account"] == "carol@example.test" and account["subject"] == "demo-carol", account
    assert account["issuer"] == "urn:latchkey:mfa-demo" and account["refresh_token"] is True, account

    token = lk.ok("token", "fb", env=env).stdout.strip()
    assert token.startswith("demo."), token
    lk.ok("refresh", "fb", env=env)
    refreshed = lk.ok("token", "fb", env=env).stdout.strip()
    assert refreshed.startswith("demo.") and refreshed != token, "the plugin refreshed the token"
    assert [a["subject"] for a in lk.status()] == ["demo-carol"]
    assert_no_secret_in_files(lk, password=password, code=code, token=token, refreshed=refreshed)


def test_a_firebase_sign_in_checks_the_keystore_before_asking_for_email_and_password(lk, emulators):
    """A passphrase file others can read is refused first: the person types no password for a
    sign-in that could not have been stored."""
    emulators.main.add_provider(lk)
    os.chmod(lk.passphrase_file, 0o644)
    result = lk.run("login", "fb", input=b"plain@example.test\nwhatever\n")
    assert result.code == EX_VAULT, result
    assert "Email:" not in result.stderr and "Password:" not in result.stderr, result
    assert str(lk.passphrase_file) in result.stderr, result
