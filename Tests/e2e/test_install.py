"""scripts/install and the installed layout: where each file goes, that the installed commands
find each other, the manual pages, the presets, and shell completion (bash's completion function
called as bash calls it; fish and zsh typed into in tmux).

The install takes the products of the build under test (``--from`` the directory of
``$LATCHKEY_BIN``), so no release build runs here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import EX_NO_ACCOUNT, EX_OK, EX_USAGE, LATCHKEY_BIN, REPO
from tui_support import tmux  # noqa: F401 (a fixture)

BUILD_DIR = LATCHKEY_BIN.parent
EX_NOINPUT, EX_CANTCREAT = 66, 73
SELECTOR_COMMANDS = ("login", "token", "exec", "refresh", "default", "logout", "kubectl-credential", "kubeconfig", "proof",
                     "aws-credential", "aws-config", "gcp-credential", "gcp-config", "openbao-token")

PRESETS = sorted(p.name for p in (REPO / "providers.d").glob("*.toml"))
MAN_PAGES = sorted(p.name for p in (REPO / "man").iterdir() if p.suffix[1:].isdigit())
EXPECTED = {
    "bin/latchkey": 0o755,
    "bin/docker-credential-latchkey": 0o777,  # a symbolic link to latchkey (checked below)
    "libexec/latchkey/latchkey-cli": 0o755,
    **{f"share/man/man{page.rsplit('.', 1)[1]}/{page}": 0o644 for page in MAN_PAGES},
    **{f"share/latchkey/providers.d/{preset}": 0o644 for preset in PRESETS},
    "share/bash-completion/completions/latchkey": 0o644,
    "share/zsh/site-functions/_latchkey": 0o644,
    "share/fish/vendor_completions.d/latchkey.fish": 0o644,
    "share/systemd/user/latchkey-agent.service": 0o644,
}


def install(prefix: Path, *options: str, destdir: Path | None = None, expect: int = EX_OK):
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    if destdir is not None:
        env["DESTDIR"] = str(destdir)
    result = subprocess.run(
        [str(REPO / "scripts" / "install"), *options, str(prefix)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == expect, f"exit {result.returncode}\n{result.stderr}"
    return result


def tree(root: Path) -> dict[str, int]:
    """Every file under root with its permission bits."""
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in root.rglob("*") if not p.is_dir()}


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    prefix = tmp_path_factory.mktemp("install") / "prefix"
    install(prefix, "--from", str(BUILD_DIR))
    return prefix


def installed_env(lk, prefix: Path, **extra) -> dict:
    """lk's private environment with the install first on PATH and no presets but the install's."""
    return lk.env(PATH=f"{prefix}/bin:{os.environ.get('PATH', '/usr/bin:/bin')}", XDG_DATA_DIRS=lk.root / "no-data-dirs", **extra)


def run(lk, prefix: Path, program: Path | str, *args: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(program), *args], env=installed_env(lk, prefix, **env), cwd=lk.root, capture_output=True, text=True, timeout=60)


# --------------------------------------------------------------------------- the layout


def test_install_puts_each_file_where_a_unix_user_looks_for_it_with_sane_modes(prefix):
    assert tree(prefix) == EXPECTED
    directories = [p for p in prefix.rglob("*") if p.is_dir()]
    assert directories and all(stat.S_IMODE(d.stat().st_mode) == 0o755 for d in directories), directories


def test_the_installed_programs_are_stripped_and_the_whole_tree_stays_under_100_mb(prefix):
    for program in (prefix / "bin" / "latchkey", prefix / "libexec" / "latchkey" / "latchkey-cli"):
        sections = subprocess.run(["readelf", "-S", "-W", str(program)], capture_output=True, text=True, check=True).stdout
        assert ".symtab" not in sections and ".debug_info" not in sections, f"{program} is not stripped"
    size = sum(p.lstat().st_size for p in prefix.rglob("*") if p.is_file() and not p.is_symlink())
    assert size <= 100 * 1024 * 1024, f"the installed tree is {size / 1024 / 1024:.1f} MB"


def test_the_installed_latchkey_runs_latchkey_cli_from_libexec(lk, prefix):
    lk.add_provider("alpha")
    version = run(lk, prefix, prefix / "bin" / "latchkey", "--version")
    assert version.returncode == EX_OK, version
    built = subprocess.run([str(BUILD_DIR / "latchkey-cli"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout == built.stdout and version.stdout.strip(), version

    listing = run(lk, prefix, prefix / "bin" / "latchkey", "providers")
    assert listing.returncode == EX_OK, listing
    assert listing.stdout.startswith("alpha\toidc\t"), listing
    # The full command answers what the fast path cannot: no account is signed in.
    token = run(lk, prefix, prefix / "bin" / "latchkey", "token", "alpha")
    assert token.returncode == EX_NO_ACCOUNT and token.stdout == "", token


def test_docker_credential_latchkey_is_a_link_to_the_launcher_that_runs_the_credential_helper(lk, prefix):
    link = prefix / "bin" / "docker-credential-latchkey"
    assert os.readlink(link) == "latchkey", "a relative link, so a DESTDIR-staged tree works where it lands"
    lk.add_provider("alpha", registry_hosts=["registry.example.test"])
    listing = run(lk, prefix, link, "list")
    assert listing.returncode == EX_OK, listing
    assert json.loads(listing.stdout) == {"registry.example.test": "oauth2accesstoken"}, listing


def test_a_symlink_to_the_installed_latchkey_still_finds_latchkey_cli(lk, prefix):
    link = lk.home / "bin" / "latchkey"
    link.parent.mkdir()
    link.symlink_to(prefix / "bin" / "latchkey")
    result = run(lk, prefix, link, "--version")
    assert result.returncode == EX_OK and result.stdout.strip(), result


def test_latchkey_cli_in_libexec_wins_over_a_stale_one_beside_the_launcher(lk, prefix):
    root = lk.root / "old-install"
    (root / "bin").mkdir(parents=True)
    (root / "libexec" / "latchkey").mkdir(parents=True)
    shutil.copy2(prefix / "bin" / "latchkey", root / "bin" / "latchkey")
    (root / "libexec" / "latchkey" / "latchkey-cli").symlink_to(prefix / "libexec" / "latchkey" / "latchkey-cli")
    stale = root / "bin" / "latchkey-cli"
    stale.write_text("#!/bin/sh\necho stale\n")
    stale.chmod(0o755)
    result = run(lk, prefix, root / "bin" / "latchkey", "--version")
    assert result.returncode == EX_OK and "stale" not in result.stdout and result.stdout.strip(), result


def test_a_launcher_without_latchkey_cli_names_both_places_it_looked(lk, prefix):
    alone = lk.root / "alone" / "bin" / "latchkey"
    alone.parent.mkdir(parents=True)
    shutil.copy2(prefix / "bin" / "latchkey", alone)
    result = run(lk, prefix, alone, "providers")
    assert result.returncode == 1, result
    assert f"{lk.root}/alone/libexec/latchkey/latchkey-cli" in result.stderr, result
    assert f"{lk.root}/alone/bin/latchkey-cli" in result.stderr, result


def test_the_manual_pages_are_found_by_man_and_render_without_warnings(prefix):
    located = subprocess.run(
        ["man", "-w", "-M", str(prefix / "share" / "man"), "latchkey"], capture_output=True, text=True, timeout=60)
    assert located.stdout.strip() == str(prefix / "share/man/man1/latchkey.1"), located
    for page in (p for p in EXPECTED if p.startswith("share/man/")):
        lint = subprocess.run(["mandoc", "-T", "lint", "-W", "warning", str(prefix / page)], capture_output=True, text=True)
        assert lint.returncode == 0 and lint.stdout == "", lint
        rendered = subprocess.run(
            ["man", "-l", "-P", "cat", str(prefix / page)], capture_output=True, text=True, timeout=60,
            env={**os.environ, "MANWIDTH": "80"})
        assert rendered.returncode == 0 and "NAME" in rendered.stdout and "SEE ALSO" in rendered.stdout, page


# --------------------------------------------------------------------------- presets


def test_presets_come_from_the_install_and_are_never_loaded_as_providers(lk, prefix):
    env = {"LATCHKEY_PROVIDERS_DIR": None}
    latchkey = prefix / "bin" / "latchkey"
    presets = run(lk, prefix, latchkey, "providers", "presets", **env)
    assert presets.returncode == EX_OK, presets
    rows = [line.split("\t") for line in presets.stdout.splitlines()]
    assert [row[0] for row in rows] == [name.removesuffix(".toml") for name in PRESETS], presets
    google = next(row for row in rows if row[0] == "google")
    assert google[1:] == ["Google", str(prefix / "share/latchkey/providers.d/google.toml")], google

    providers = run(lk, prefix, latchkey, "providers", "--json", **env)
    assert providers.returncode == EX_OK and json.loads(providers.stdout) == {"providers": [], "errors": []}, providers

    added = run(lk, prefix, latchkey, "providers", "add", "google", "--client-id", "1234-abc.apps.example", **env)
    assert added.returncode == EX_OK, added
    copy = lk.config / "latchkey" / "providers.d" / "google.toml"
    assert str(copy) in added.stderr and "latchkey login google" in added.stderr, added
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert 'client_id = "1234-abc.apps.example"\n' in copy.read_text()
    listing = run(lk, prefix, latchkey, "providers", **env)
    assert listing.stdout.startswith("google\toidc\thttps://accounts.google.com\t"), listing

    before = copy.read_bytes()
    again = run(lk, prefix, latchkey, "providers", "add", "google", **env)
    assert again.returncode == EX_CANTCREAT and "already exists" in again.stderr, again
    assert copy.read_bytes() == before

    unknown = run(lk, prefix, latchkey, "providers", "add", "nope", **env)
    assert unknown.returncode == EX_NOINPUT and "presets: auth0, github" in unknown.stderr, unknown


def test_providers_add_writes_into_latchkey_providers_dir_when_it_is_set(lk, prefix):
    added = run(lk, prefix, prefix / "bin" / "latchkey", "providers", "add", "github")
    assert added.returncode == EX_OK, added
    assert (lk.providers_dir / "github.toml").read_bytes() == (REPO / "providers.d" / "github.toml").read_bytes()
    assert "set its client_id" in added.stderr, added


# --------------------------------------------------------------------------- completion


def bash_complete(lk, prefix: Path, *words: str, **env) -> list[str]:
    """What the installed bash completion offers for the last word, through the installed latchkey;
    the completion function is called as `complete -F` calls it: command, word, previous word."""
    line = " ".join(shlex.quote(w) for w in words[:-1]) + " " + words[-1]
    script = f"""
        source {shlex.quote(str(prefix / "share/bash-completion/completions/latchkey"))}
        COMP_WORDS=({" ".join(shlex.quote(w) for w in words)})
        COMP_CWORD={len(words) - 1}
        COMP_LINE={shlex.quote(line)}
        COMP_POINT=${{#COMP_LINE}}
        _latchkey "${{COMP_WORDS[0]}}" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD - 1]}}"
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    result = run(lk, prefix, "bash", "--norc", "--noprofile", "-c", script, **env)
    assert result.returncode == 0, result
    return sorted(filter(None, result.stdout.splitlines()))


@pytest.fixture
def two_providers(lk):
    lk.add_provider("alpha")
    lk.add_provider("beta")


@pytest.mark.parametrize("command", SELECTOR_COMMANDS)
def test_bash_completes_provider_names_for_every_command_taking_a_selector(lk, prefix, two_providers, command):
    latchkey = str(prefix / "bin" / "latchkey")
    assert bash_complete(lk, prefix, latchkey, command, "") == ["alpha", "beta"]
    assert bash_complete(lk, prefix, latchkey, command, "al") == ["alpha"]


def test_bash_completes_commands_presets_git_operations_and_keystores(lk, prefix, two_providers):
    latchkey = str(prefix / "bin" / "latchkey")
    assert {"login", "token", "exec", "providers", "doctor"} <= set(bash_complete(lk, prefix, latchkey, ""))
    assert bash_complete(lk, prefix, latchkey, "providers", "add", "g") == ["github", "gitlab", "google"]
    assert bash_complete(lk, prefix, latchkey, "git-credential", "") == ["erase", "get", "store"]
    assert bash_complete(lk, prefix, latchkey, "status", "--keystore", "") == ["openbao", "secret-service", "vault"]


def test_completion_answers_with_the_vault_locked_and_no_passphrase_to_open_it(lk, prefix, two_providers):
    lk.ok("unlock")
    lk.ok("lock")
    vault = lk.vault_bytes()
    latchkey = str(prefix / "bin" / "latchkey")
    # Any command that opened the vault would fail on this passphrase file.
    names = bash_complete(lk, prefix, latchkey, "token", "", LATCHKEY_PASSPHRASE_FILE=lk.root / "missing")
    assert names == ["alpha", "beta"]
    assert lk.vault_bytes() == vault


def interactive_shell(lk, prefix: Path, shell: str) -> str:
    """The command line starting `shell` with the installed completion loaded and `$ ` as prompt.
    Interactive, in tmux: fish's `complete -C` in a script gets no cursor position, which the
    generated fish script asks for."""
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed (scripts/setup installs it)")
    if shell == "fish":
        setup = f"function fish_prompt; echo '$ '; end; source {shlex.quote(str(prefix / 'share/fish/vendor_completions.d/latchkey.fish'))}"
        return f"fish --no-config -C {shlex.quote(setup)}"
    zdotdir = lk.root / "zsh"
    zdotdir.mkdir()
    (zdotdir / ".zshrc").write_text(
        f"fpath=({shlex.quote(str(prefix / 'share/zsh/site-functions'))} $fpath)\n"
        "autoload -U compinit && compinit -u -D\nPROMPT='$ '\n")
    return f"ZDOTDIR={shlex.quote(str(zdotdir))} zsh -i"


@pytest.mark.parametrize("shell", ["fish", "zsh"])
def test_fish_and_zsh_complete_provider_and_preset_names_on_tab(lk, prefix, two_providers, shell, tmux):
    tmux.start(interactive_shell(lk, prefix, shell), installed_env(lk, prefix, TERM="tmux-256color"))
    tmux.wait_text("$")
    tmux.send("latchkey logout al", "Tab")
    tmux.wait_text("$ latchkey logout alpha")
    tmux.send("C-u", "latchkey providers add goo", "Tab")
    tmux.wait_text("$ latchkey providers add google")


HOSTILE_NAME = "$(touch pwned)`touch pwned`"


def hostile_names(lk):
    """A preset and a provider file whose names are shell code, beside the good ones."""
    presets = lk.data / "latchkey" / "providers.d"
    presets.mkdir(parents=True, exist_ok=True)
    (presets / f"{HOSTILE_NAME}.toml").write_text('display_name = "x"\nkind = "oidc"\nissuer = "https://x.example"\n')
    (presets / "goodpreset.toml").write_text('display_name = "x"\nkind = "oidc"\nissuer = "https://x.example"\n')
    lk.write_provider_text(HOSTILE_NAME, 'display_name = "x"\nkind = "oidc"\nissuer = "https://x.example"\n')


def test_bash_tab_never_runs_a_preset_or_provider_name_as_code(lk, prefix, two_providers):
    """bash's script hands candidates to `compgen -W`, which expands them: a preset file named
    `$(cmd).toml` ran `cmd` on Tab."""
    hostile_names(lk)
    latchkey = str(prefix / "bin" / "latchkey")
    names = bash_complete(lk, prefix, latchkey, "providers", "add", "")
    assert "goodpreset" in names and "google" in names, names
    assert not [n for n in names if not re.fullmatch(r"[A-Za-z0-9._-]+", n)], names
    assert bash_complete(lk, prefix, latchkey, "providers", "add", "goo") == ["goodpreset", "google"]
    assert bash_complete(lk, prefix, latchkey, "token", "") == ["alpha", "beta"]
    assert not (lk.root / "pwned").exists(), "a name was run as a command"
    listed = run(lk, prefix, latchkey, "providers", "presets")
    assert "pwned" not in listed.stdout, "a preset named like shell code is not offered at all"


@pytest.mark.parametrize("shell", ["fish", "zsh"])
def test_fish_and_zsh_tab_never_run_a_name_as_code(lk, prefix, two_providers, shell, tmux):
    hostile_names(lk)
    tmux.start(interactive_shell(lk, prefix, shell), installed_env(lk, prefix, TERM="tmux-256color"))
    tmux.wait_text("$")
    tmux.send("latchkey providers add goodp", "Tab")
    tmux.wait_text("$ latchkey providers add goodpreset")
    tmux.send("C-u", "latchkey token ", "Tab", "Tab")
    tmux.wait_for(lambda text: "alpha" in text and "beta" in text, what="the provider names")
    assert not (lk.root / "pwned").exists(), "a name was run as a command"


# --------------------------------------------------------------------------- staging, uninstall, make


def test_destdir_stages_the_same_tree_and_nothing_outside_it(tmp_path, lk):
    stage = tmp_path / "stage"
    install(Path("/opt/latchkey-test"), "--from", str(BUILD_DIR), destdir=stage)
    assert not Path("/opt/latchkey-test").exists()
    assert tree(stage) == {f"opt/latchkey-test/{path}": mode for path, mode in EXPECTED.items()}
    staged = stage / "opt/latchkey-test/bin/latchkey"
    result = subprocess.run([str(staged), "providers"], env=lk.env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == EX_OK, result


def test_the_systemd_user_unit_runs_the_installed_agent_by_its_prefix_not_destdir(tmp_path):
    stage = tmp_path / "stage"
    install(Path("/opt/latchkey-test"), "--from", str(BUILD_DIR), destdir=stage)
    unit = (stage / "opt/latchkey-test/share/systemd/user/latchkey-agent.service").read_text()
    assert "ExecStart=/opt/latchkey-test/bin/latchkey agent\n" in unit and "@BINDIR@" not in unit and str(stage) not in unit
    if shutil.which("systemd-analyze"):
        # Verified against a copy naming the build's launcher, which exists here.
        copy = tmp_path / "latchkey-agent.service"
        copy.write_text(unit.replace("/opt/latchkey-test/bin/latchkey", str(LATCHKEY_BIN)).replace("Documentation=man:latchkey(1)\n", ""))
        verify = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60)
        assert verify.returncode == 0 and verify.stderr == "", verify


def test_uninstall_removes_exactly_what_install_put(tmp_path):
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "someone-elses").write_text("kept\n")
    install(prefix, "--from", str(BUILD_DIR))
    install(prefix, "--uninstall")
    assert list(tree(prefix)) == ["bin/someone-elses"]
    assert not (prefix / "libexec" / "latchkey").exists() and not (prefix / "share" / "latchkey").exists()
    assert not (prefix / "share" / "systemd").exists()


def test_make_install_and_uninstall_run_the_script_with_prefix_and_destdir_and_build_nothing(tmp_path):
    stage = tmp_path / "stage"
    products = [str(BUILD_DIR / "latchkey"), str(BUILD_DIR / "latchkey-cli")]
    # -o: the products count as up to date, as they are after `make`, so nothing is built here.
    make = ["make", "-s", "-C", str(REPO), f"BUILD_DIR={BUILD_DIR}", "PREFIX=/opt/latchkey-make-test", f"DESTDIR={stage}",
            *(f"-o{p}" for p in products)]
    result = subprocess.run([*make, "install"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result
    assert tree(stage) == {f"opt/latchkey-make-test/{path}": mode for path, mode in EXPECTED.items()}
    result = subprocess.run([*make, "uninstall"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result
    assert tree(stage) == {}


def test_install_refuses_a_relative_prefix_and_a_directory_without_the_products(tmp_path):
    relative = install(Path("relative/prefix"), "--from", str(BUILD_DIR), expect=EX_USAGE)
    assert "PREFIX must be an absolute path" in relative.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = install(tmp_path / "prefix", "--from", str(empty), expect=EX_NOINPUT)
    assert f"{empty}/latchkey is missing" in missing.stderr
    assert not (tmp_path / "prefix").exists()
