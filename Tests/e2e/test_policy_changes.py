"""
A change to the release policy (`forward`, `confirm`) takes effect at every door at once, however
the file was edited: the agent and the launcher fingerprint config.toml and each provider file
(device, inode, size, times to the nanosecond), so a provider file rewritten in place, as `>` and
most editors do, within the same second, is seen as surely as one replaced. A policy that cannot
be read does not fail open:

* `confirm = true` added in place to a provider file: the agent asks, the launcher no longer
  answers from its copies nor from the vault, and the full command refuses with nobody to ask;
* `forward = true` removed in place: a forwarded request is refused;
* config.toml that stops parsing: every forwarded release is refused and every local one waits for
  a person, until it parses again; a provider file that stops parsing: its accounts wait likewise.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_support import agents, ask, runtime  # noqa: F401  (fixtures)
from conftest import ALICE, EX_OK, EX_VAULT, assert_userinfo


def rewrite_in_place(path: Path, text: str) -> None:
    """`printf … > path`: the same inode, new contents, at once."""
    inode = path.stat().st_ino
    subprocess.run(["sh", "-c", 'printf "%s" "$1" > "$2"', "sh", text, str(path)], check=True)
    assert path.stat().st_ino == inode, "not an edit in place"


def config_file(lk, text: str) -> Path:
    path = lk.config / "latchkey" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def token_request(selector: str = "a") -> dict:
    return {"op": "token", "selector": selector}


def assert_released(lines: list[dict], idp) -> None:
    assert len(lines) == 1 and lines[0]["ok"] is True, lines
    assert_userinfo(idp, lines[0]["access_token"], ALICE)


def assert_waited_for_a_person(lines: list[dict]) -> None:
    """A pending line, then the refusal when nobody approved within confirm_timeout (1 s)."""
    assert lines and lines[0].get("pending") is True, lines
    assert lines[-1]["ok"] is False and "access_token" not in lines[-1], lines
    assert "nobody approved the release" in lines[-1]["message"], lines


def test_confirm_added_in_place_to_a_provider_file_makes_the_agent_ask(lk, idp_a, agents):
    provider = lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    config_file(lk, "[agent]\nconfirm_timeout = 1\n")
    agent = agents()
    assert_released(ask(agent.socket, token_request()), idp_a)
    rewrite_in_place(provider, provider.read_text() + "confirm = true\n")
    assert_waited_for_a_person(ask(agent.socket, token_request(), timeout=20))


def test_forward_removed_in_place_from_a_provider_file_is_refused_to_a_forwarded_request(lk, idp_a, agents, runtime):
    provider = lk.add_provider("a", idp_a, forward=True)
    assert lk.login("a").code == EX_OK
    forward = runtime / "latchkey" / "forward.sock"
    agents("--forward-socket", str(forward))
    assert_released(ask(forward, token_request()), idp_a)
    rewrite_in_place(provider, provider.read_text().replace("forward = true\n", ""))
    (refused,) = ask(forward, token_request())
    assert refused["ok"] is False and "access_token" not in refused, refused


def test_confirm_added_in_place_to_a_provider_file_stops_the_launchers_answers(lk, idp_a):
    provider = lk.add_provider("a", idp_a)
    assert lk.login("a").code == EX_OK
    token = lk.token("a")
    lk.ok("status")  # the copies and the withheld list are written after every read of the unlocked vault
    lk.leave_only_the_launcher()
    assert lk.token("a") == token, "the launcher did not answer from its copy"
    rewrite_in_place(provider, provider.read_text() + "confirm = true\n")
    # Neither its copy nor the vault (whose withheld list was written before the edit) may answer.
    alone = lk.run("token", "a")
    assert alone.code != EX_OK and alone.stdout == "", alone
    lk.restore_the_full_command()
    refused = lk.run("token", "a")
    assert refused.code == EX_VAULT and refused.stdout == "", refused
    assert f"a:{ALICE} is marked confirm = true and there is nobody to ask here" in refused.stderr, refused
    lk.leave_only_the_launcher()
    again = lk.run("token", "a")
    assert again.code != EX_OK and again.stdout == "", again


def test_a_config_toml_that_stops_parsing_refuses_forwarded_releases_and_asks_for_every_account(lk, idp_a, agents, runtime):
    lk.add_provider("a", idp_a, forward=True)
    assert lk.login("a").code == EX_OK
    config = config_file(lk, "[agent]\nconfirm_timeout = 1\n")
    forward = runtime / "latchkey" / "forward.sock"
    agent = agents("--forward-socket", str(forward))
    assert_released(ask(forward, token_request()), idp_a)
    assert_released(ask(agent.socket, token_request()), idp_a)

    rewrite_in_place(config, "[agent\nconfirm_timeout = 1\n")
    (refused,) = ask(forward, token_request())
    assert refused["ok"] is False and "access_token" not in refused, refused
    assert_waited_for_a_person(ask(agent.socket, token_request(), timeout=20))
    assert "config.toml was changed and cannot be used: until it is fixed, no forwarded connection gets a token" in agent.stderr()

    rewrite_in_place(config, "[agent]\nconfirm_timeout = 1\n")
    assert_released(ask(forward, token_request()), idp_a)
    assert "config.toml can be used again" in agent.stderr()


def test_a_provider_file_that_stops_parsing_leaves_its_accounts_waiting_for_a_person(lk, idp_a, agents, runtime):
    provider = lk.add_provider("a", idp_a, forward=True)
    assert lk.login("a").code == EX_OK
    config_file(lk, "[agent]\nconfirm_timeout = 1\n")
    forward = runtime / "latchkey" / "forward.sock"
    agent = agents("--forward-socket", str(forward))
    assert_released(ask(agent.socket, token_request()), idp_a)
    rewrite_in_place(provider, provider.read_text() + "confirm = \n")
    assert_waited_for_a_person(ask(agent.socket, token_request(), timeout=20))
    (refused,) = ask(forward, token_request())
    assert refused["ok"] is False and "access_token" not in refused, refused
