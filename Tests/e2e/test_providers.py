"""Provider files: listing, checking, error reports, and the shipped presets."""

import re

from conftest import EX_OK, EX_PROVIDER_FILE, REPO

PRESETS = REPO / "providers.d"


def listing(lk):
    result = lk.run("providers", "--json")
    assert result.code in (EX_OK, EX_PROVIDER_FILE), result
    doc = result.json()
    assert isinstance(doc.get("providers"), list) and isinstance(doc.get("errors"), list), result
    return doc


def test_check_accepts_good_provider_files(lk, idp_a, idp_b):
    lk.add_provider("a", idp_a, display_name="IdP A")
    lk.add_provider("b", idp_b, display_name="IdP B")
    result = lk.run("providers", "check")
    assert result.code == EX_OK, result
    assert not re.search(r"\.toml(:\d+)?:", result.stdout + result.stderr), result


def test_providers_json_describes_each_provider(lk, idp_a, idp_b):
    lk.add_provider("a", idp_a, display_name="IdP A")
    lk.add_provider("b", idp_b, display_name="IdP B", redirect_path="/oauth2redirect/idp-b", par="never", dpop="always")
    doc = listing(lk)
    assert doc["errors"] == []
    by_name = {p["name"]: p for p in doc["providers"]}
    assert sorted(by_name) == ["a", "b"]
    for name, idp, path in (("a", idp_a, "/oauth2redirect/a"), ("b", idp_b, "/oauth2redirect/idp-b")):
        p = by_name[name]
        assert p["display_name"] == f"IdP {name.upper()}"
        assert p["kind"] == "oidc"
        assert p["issuer"] == idp.issuer
        assert p["redirect"] == "loopback"
        assert p["redirect_uri"].startswith("http://127.0.0.1") and p["redirect_uri"].endswith(path), p
        assert p["source"], p
        assert (p["grant"], p["registration"]) == ("authorization_code", "static"), p
    assert (by_name["a"]["par"], by_name["a"]["dpop"]) == ("auto", "auto")
    assert (by_name["b"]["par"], by_name["b"]["dpop"]) == ("never", "always")


def test_an_unknown_key_is_reported_with_file_line_and_key_and_the_good_file_still_loads(lk, idp_a):
    lk.add_provider("a", idp_a)
    broken = lk.write_provider_text(
        "broken",
        'display_name = "Broken"\n'
        'kind = "oidc"\n'
        'the_key = "misspelt"\n'
        f'issuer = "{idp_a.issuer}"\n'
        'client_id = "latchkey-test"\n'
        'redirect_path = "/oauth2redirect/broken"\n',
    )
    check = lk.run("providers", "check")
    assert check.code == EX_PROVIDER_FILE, check
    assert re.search(rf"(^|\s|/){re.escape(broken.name)}:3: the_key: \S", check.stderr, re.MULTILINE), check
    assert "a.toml" not in check.stderr, f"the good file has no errors\n{check}"

    doc = listing(lk)
    assert [p["name"] for p in doc["providers"]] == ["a"]
    (error,) = doc["errors"]
    assert error["file"].endswith("broken.toml") and error["line"] == 3 and error["field"] == "the_key", error
    assert error["message"], error


def test_two_providers_with_the_same_redirect_path_are_both_rejected_and_each_names_the_other(lk, idp_a, idp_b):
    lk.add_provider("a", idp_a)
    lk.add_provider("one", idp_a, redirect_path="/oauth2redirect/shared")
    lk.add_provider("two", idp_b, redirect_path="/oauth2redirect/shared")
    check = lk.run("providers", "check")
    assert check.code == EX_PROVIDER_FILE, check
    lines = [line for line in check.stderr.splitlines() if "redirect_path" in line]
    about_one = [line for line in lines if re.search(r"one\.toml:\d+: redirect_path:", line)]
    about_two = [line for line in lines if re.search(r"two\.toml:\d+: redirect_path:", line)]
    assert about_one and "two.toml" in about_one[0], check
    assert about_two and "one.toml" in about_two[0], check

    doc = listing(lk)
    assert [p["name"] for p in doc["providers"]] == ["a"], doc
    assert {e["field"] for e in doc["errors"]} == {"redirect_path"}, doc


def test_the_shipped_presets_all_load_cleanly(lk):
    presets = sorted(p.stem for p in PRESETS.glob("*.toml"))
    assert presets, f"no presets in {PRESETS}"
    env = {"LATCHKEY_PROVIDERS_DIR": PRESETS}
    check = lk.run("providers", "check", env=env)
    assert check.code == EX_OK, check
    result = lk.run("providers", "--json", env=env)
    assert result.code == EX_OK, result
    doc = result.json()
    assert doc["errors"] == [], doc["errors"]
    assert sorted(p["name"] for p in doc["providers"]) == presets


def test_providers_json_gives_a_firebase_provider_a_null_redirect_not_a_placeholder(lk):
    lk.write_provider_text(
        "fb", 'display_name = "Firebase"\nkind = "firebase"\napi_key = "k"\nproject_id = "demo-project"\n')
    doc = listing(lk)
    assert doc["errors"] == [], doc
    (fb,) = doc["providers"]
    assert fb["kind"] == "firebase" and fb["issuer"] == "https://securetoken.google.com/demo-project", fb
    assert "redirect_uri" in fb and fb["redirect_uri"] is None, fb
    assert "redirect" in fb and fb["redirect"] is None, fb
    assert "—" not in lk.run("providers").stdout
