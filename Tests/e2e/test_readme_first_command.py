"""The README's first command, `scripts/try`, in a fresh clone of this repository: it installs
what building needs, builds the release binaries and reaches the demo screen.

When scripts/test started in a fresh clone (as CI does: it exports LATCHKEY_FRESH_CHECKOUT, the
commit, after finding nothing modified, untracked or ignored) and the checkout is still that
commit with nothing modified or untracked, this checkout *is* the fresh clone: scripts/try runs
here, on the release build this run made with scripts/try's own commands, and must find nothing
to build. Anywhere else (a working tree with its own files and builds) it runs in a new clone of
HEAD and builds from nothing (about ten minutes on two cores), so it can be left out with
LATCHKEY_SKIP_FRESH_CLONE=1 while working. docs/decisions/test-suite.md has the reasoning."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tui_support import tmux  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[2]
PRODUCTS = ("latchkey", "latchkey-cli")


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True,
                          timeout=60).stdout


def this_run_started_in_a_fresh_clone() -> bool:
    commit = os.environ.get("LATCHKEY_FRESH_CHECKOUT")
    return bool(commit) and git("rev-parse", "HEAD").strip() == commit and \
        git("status", "--porcelain", "--untracked-files=all") == ""


def built(checkout: Path) -> dict[str, int]:
    release = checkout / ".build" / "release"
    return {name: (release / name).stat().st_mtime_ns for name in PRODUCTS if (release / name).exists()}


@pytest.mark.skipif(os.environ.get("LATCHKEY_SKIP_FRESH_CLONE") == "1", reason="LATCHKEY_SKIP_FRESH_CLONE=1")
def test_scripts_try_in_a_fresh_clone_builds_and_opens_the_demo_screen(tmux, lk, tmp_path):
    in_place = this_run_started_in_a_fresh_clone()
    if in_place:
        clone = REPO
    else:
        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    before = built(clone)
    # The person's own HOME, where SwiftPM keeps its caches; the demo writes nothing there.
    env = lk.env(TERM="tmux-256color", NO_COLOR=None, BROWSER=None, LATCHKEY_PROVIDERS_DIR=None,
                 LATCHKEY_PASSPHRASE_FILE=None, PATH=os.environ["PATH"], HOME=os.environ.get("HOME", "/root"))
    rc = lk.root / "rc"
    tmux.start(f"cd {clone} && scripts/try; echo $? > {rc}", env)
    text = tmux.wait_for(lambda t: "q quit" in t or rc.exists(), timeout=40 * 60, what="the demo screen")
    assert "Demo OpenID" in text and "Demo Firebase (SMS)" in text, text
    tmux.send("q")
    tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, what="the demo to exit")
    assert rc.read_text().strip() == "0"
    assert (clone / ".build" / "release" / "latchkey").exists()
    assert not list(lk.tmp.glob("latchkey-demo.*"))
    if in_place:
        # The other tests run these very files meanwhile; scripts/try builds with the flags the
        # suite built with (Package.swift), so it has nothing to redo.
        assert set(before) == set(PRODUCTS), f"the suite's release build is missing: {before}"
        assert built(clone) == before, "scripts/try rebuilt the release products the suite had built"
