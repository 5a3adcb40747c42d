"""The README's first command, `scripts/try`, in a fresh clone of this repository: it installs
what building needs, builds the release binaries and reaches the demo screen.

It builds from nothing (about ten minutes on two cores), so it can be left out with
LATCHKEY_SKIP_FRESH_CLONE=1 while working; scripts/test (and so CI) runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tui_support import tmux  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(os.environ.get("LATCHKEY_SKIP_FRESH_CLONE") == "1", reason="LATCHKEY_SKIP_FRESH_CLONE=1")
def test_scripts_try_in_a_fresh_clone_builds_and_opens_the_demo_screen(tmux, lk, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
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
