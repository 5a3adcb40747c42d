"""Per-project accounts: `[directories."PATH"]` in config.toml says which account a bare provider
name means in and below a directory, for every consumer, the launcher's fast path included."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import ALICE, BOB, EX_OK, LATCHKEY_BIN, assert_userinfo

GIT_HOST = "git.example.test"


def write_config(lk, text: str):
    path = lk.config / "latchkey" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def two_accounts(lk, idp_a):
    """alice and bob at provider a, bob the default; work/ maps a to alice."""
    lk.add_provider("a", idp_a, git_hosts=[GIT_HOST])
    assert lk.login("a", user="alice").code == EX_OK
    assert lk.login("a", user="bob").code == EX_OK
    lk.ok("default", f"a:{BOB}")
    work = lk.root / "work"
    (work / "src").mkdir(parents=True)
    (lk.root / "elsewhere").mkdir()
    write_config(lk, f'[directories."{work}"]\na = "{ALICE}"\n')
    return work


def token_in(lk, directory) -> str:
    result = lk.run("token", "a", cwd=directory)
    assert result.code == EX_OK, result
    return result.stdout.strip()


def test_a_bare_provider_means_the_mapped_account_inside_the_directory_and_the_default_outside(lk, idp_a, two_accounts):
    work = two_accounts
    for _ in range(2):  # the second time the launcher answers from its copies
        assert_userinfo(idp_a, token_in(lk, work / "src"), ALICE)
        assert_userinfo(idp_a, token_in(lk, lk.root / "elsewhere"), BOB)
    assert_userinfo(idp_a, lk.run("token", f"a:{BOB}", cwd=work).stdout.strip(), BOB), "an explicit account always wins"


def test_the_longest_matching_directory_wins_and_a_symlinked_way_in_counts(lk, idp_a, two_accounts):
    work = two_accounts
    inner = work / "personal"
    inner.mkdir()
    write_config(lk, f'[directories."{work}"]\na = "{ALICE}"\n\n[directories."{inner}"]\na = "{BOB}"\n')
    assert_userinfo(idp_a, token_in(lk, inner), BOB)
    assert_userinfo(idp_a, token_in(lk, work / "src"), ALICE)
    link = lk.root / "link-to-work"
    link.symlink_to(work)
    assert_userinfo(idp_a, token_in(lk, link / "src"), ALICE)


def test_exec_git_credential_and_status_honour_the_mapping(lk, idp_a, two_accounts):
    work = two_accounts
    shown = lk.run("exec", "a", "--", "sh", "-c", 'printf %s "$LATCHKEY_ACCESS_TOKEN"', cwd=work)
    assert shown.code == EX_OK, shown
    assert_userinfo(idp_a, shown.stdout, ALICE)
    answer = lk.run("git-credential", "get", input=f"protocol=https\nhost={GIT_HOST}\n\n".encode(), cwd=work)
    password = re.search(r"^password=(.+)$", answer.stdout, re.M).group(1)
    assert_userinfo(idp_a, password, ALICE)
    for _ in range(2):  # from latchkey-cli, then from the launcher's vault answer
        accounts = lk.run("status", "--json", cwd=work).json()["accounts"]
        assert {a["account"]: a["applies_here"] for a in accounts} == {ALICE: True, BOB: False}, accounts
    human = lk.run("status", cwd=work)
    assert f"{ALICE} (applies here)" in human.stdout, human
    elsewhere = lk.run("status", "--json", cwd=lk.root / "elsewhere").json()["accounts"]
    assert not any(a["applies_here"] for a in elsewhere)


def test_editing_config_toml_takes_effect_at_once_even_on_the_fast_path(lk, idp_a, two_accounts):
    work = two_accounts
    assert_userinfo(idp_a, token_in(lk, work), ALICE)
    assert_userinfo(idp_a, token_in(lk, work), ALICE)
    write_config(lk, f'[directories."{work}"]\na = "{BOB}"\n')
    assert_userinfo(idp_a, token_in(lk, work), BOB)


def test_a_mapping_to_an_account_or_provider_that_does_not_exist_is_a_warning_with_the_line_and_the_rest_works(lk, idp_a, two_accounts):
    work = two_accounts
    config = write_config(lk, f'keystore = "vault"\n\n[directories."{work}"]\na = "carol@example.test"\nnope = "x"\n')
    result = lk.run("token", "a", cwd=work)
    assert result.code == EX_OK, result
    assert_userinfo(idp_a, result.stdout.strip(), BOB)
    assert f"{config}:3:" in result.stderr and "carol@example.test" in result.stderr, result
    status = lk.run("status", cwd=work)
    assert status.code == EX_OK, status
    assert "nope, which is not a configured provider" in status.stderr and f"{config}:3:" in status.stderr, status


def test_a_mapping_whose_directory_does_not_exist_or_climbs_through_a_missing_one_is_a_warning_with_the_line(lk, idp_a, two_accounts):
    work = two_accounts
    missing, climbing = lk.root / "not-yet", lk.root / "gone" / ".." / "work"
    config = write_config(lk, f'[directories."{work}"]\na = "{ALICE}"\n\n[directories."{missing}"]\na = "{BOB}"\n\n'
                              f'[directories."{climbing}"]\na = "{BOB}"\n')
    status = lk.run("status", cwd=work)
    assert status.code == EX_OK, status
    assert f"{config}:4: [directories.\"{missing}\"] does not exist" in status.stderr, status
    assert f"{config}:7: [directories.\"{climbing}\"] goes through . or .." in status.stderr, status
    assert f"{config}:1:" not in status.stderr, status
    assert_userinfo(idp_a, token_in(lk, work), ALICE)


def test_the_launcher_alone_answers_by_the_mapping_and_answers_nothing_once_config_toml_changed(lk, idp_a, two_accounts):
    """The fast path is where most `token` calls end: it applies the same mapping from the copy
    the full command leaves in the keyring, and never one older than config.toml."""
    work = two_accounts
    lk.ok("status", cwd=work)  # the full command writes the token copies and the mapping's copy
    lk.leave_only_the_launcher()
    assert_userinfo(idp_a, token_in(lk, work / "src"), ALICE)
    assert_userinfo(idp_a, token_in(lk, lk.root / "elsewhere"), BOB)
    drop = lk.run("status", "--json", cwd=work)
    assert drop.code == EX_OK and {a["account"]: a["applies_here"] for a in drop.json()["accounts"]} == {ALICE: True, BOB: False}
    write_config(lk, f'[directories."{work}"]\na = "{BOB}"\n')
    stale = lk.run("token", "a", cwd=work)
    assert stale.code != EX_OK and stale.stdout == "", f"answered by a mapping config.toml no longer has\n{stale}"


def test_the_launcher_alone_answers_with_many_mappings_whose_copy_outgrows_a_small_keyring_read(lk, idp_a, two_accounts):
    """The full command's keyring reader stopped at 256 bytes, so a copy of a few mappings was
    never read and the launcher answered nothing wherever config.toml mapped more than that."""
    work = two_accounts
    projects = [lk.root / f"project-{i:02d}-with-a-longer-name" for i in range(20)]
    for project in projects:
        project.mkdir()
    others = "".join(f'[directories."{project}"]\na = "{BOB}"\n' for project in projects)
    write_config(lk, f'[directories."{work}"]\na = "{ALICE}"\n' + others)
    lk.ok("status", cwd=work)
    lk.leave_only_the_launcher()
    assert_userinfo(idp_a, token_in(lk, work / "src"), ALICE)
    assert_userinfo(idp_a, token_in(lk, lk.root / "elsewhere"), BOB)
