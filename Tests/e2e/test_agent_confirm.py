"""
Confirmation: an account marked confirm = true gets a token from the agent only after a person
agrees, with `latchkey approve ID` (or `deny ID`), on the agent's own terminal (`y ID`), or in the open
screen (y/n). A
request nobody answers is refused after [agent] confirm_timeout seconds (60 unless set). Every
outcome is in the agent's log.
"""

from __future__ import annotations

import re
import time

from agent_support import AgentProcess, agent_env, agents, runtime, wait_for  # noqa: F401  (fixtures)
from conftest import ALICE, EX_NO_ACCOUNT, EX_OK, EX_VAULT, LATCHKEY_BIN, assert_userinfo
from tui_support import screen_command, screen_env, tmux  # noqa: F401  (fixture)


def confirmed_account(lk, idp, timeout: int | None = None) -> None:
    """alice at a, whose provider file says confirm = true."""
    lk.add_provider("a", idp, confirm=True)
    assert lk.login("a").code == EX_OK
    if timeout is not None:
        path = lk.config / "latchkey" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"[agent]\nconfirm_timeout = {timeout}\n")


def waiting_request(running) -> int:
    """The number of the request the client says it waits on."""
    said = wait_for(lambda: re.search(r"request (\d+) waits", running.stderr_so_far()) or not running.running(), what="the waiting line")
    assert said is not True, running.finish()
    return int(said.group(1))


def test_a_confirm_account_waits_for_latchkey_approve_and_then_prints_the_token(lk, idp_a, agents):
    confirmed_account(lk, idp_a)
    agent = agents()
    client = lk.start("token", "a", env=agent_env(agent))
    request = waiting_request(client)
    time.sleep(0.5)
    assert client.running(), "no token before a person agreed"
    assert f"request {request}: release a token of a:{ALICE} to local: " in agent.stderr()
    approved = lk.run("approve", str(request), env=agent_env(agent))
    assert approved.code == EX_OK and f"Approved request {request}." in approved.stderr, approved
    result = client.finish(30)
    assert result.code == EX_OK, result
    assert_userinfo(idp_a, result.stdout.strip(), ALICE)
    entry = lk.run("agent", "log", "--json").json()[-1]
    assert entry["outcome"] == "released" and entry["account"] == f"a:{ALICE}", entry
    again = lk.run("approve", str(request), env=agent_env(agent))
    assert again.code == EX_NO_ACCOUNT and f"no request {request} waits for approval" in again.stderr, again


def test_latchkey_deny_refuses_the_release(lk, idp_a, agents):
    confirmed_account(lk, idp_a)
    agent = agents()
    client = lk.start("token", "a", env=agent_env(agent))
    request = waiting_request(client)
    assert lk.run("deny", str(request), env=agent_env(agent)).code == EX_OK
    result = client.finish(30)
    assert result.code == EX_VAULT and result.stdout == "", result
    assert f"the release of a token of a:{ALICE} was denied" in result.stderr, result
    assert lk.run("agent", "log", "--json").json()[-1]["outcome"] == "denied"


def test_a_request_nobody_answers_is_refused_after_confirm_timeout(lk, idp_a, agents):
    confirmed_account(lk, idp_a, timeout=2)
    agent = agents()
    started = time.monotonic()
    result = lk.run("token", "a", env=agent_env(agent), timeout=30)
    elapsed = time.monotonic() - started
    assert result.code == EX_VAULT and result.stdout == "", result
    assert f"nobody approved the release of a token of a:{ALICE} within 2 s" in result.stderr, result
    assert 1.5 < elapsed < 10, f"refused after {elapsed:.1f} s"
    assert lk.run("agent", "log", "--json").json()[-1]["outcome"] == "not approved"


def test_the_agents_own_terminal_answers_y_id(tmux, lk, idp_a, runtime):
    confirmed_account(lk, idp_a)
    env = lk.env(XDG_RUNTIME_DIR=runtime, TERM="tmux-256color")
    tmux.start(f"{LATCHKEY_BIN} agent", env)
    tmux.wait_text("listening on", timeout=30)
    client = lk.start("token", "a", env={"LATCHKEY_AGENT": runtime / "latchkey" / "agent.sock", "LATCHKEY_PASSPHRASE_FILE": None})
    request = waiting_request(client)
    tmux.wait_for(lambda _: f"type y {request} or n {request} here" in tmux.capture(joined=True), timeout=10, what="the prompt")
    tmux.send(f"y {request}", "Enter")
    result = client.finish(30)
    assert result.code == EX_OK, result
    assert_userinfo(idp_a, result.stdout.strip(), ALICE)
    tmux.wait_for(lambda _: f"approved request {request}" in tmux.capture(joined=True), timeout=10, what="the answer")


def test_a_bare_y_on_the_agents_terminal_answers_nothing_while_two_requests_wait(tmux, lk, idp_a, runtime):
    """Not the oldest: one that arrived a moment before the key (from a forwarded host, say)
    would get the approval meant for the other."""
    confirmed_account(lk, idp_a)
    env = lk.env(XDG_RUNTIME_DIR=runtime, TERM="tmux-256color")
    tmux.start(f"{LATCHKEY_BIN} agent", env)
    tmux.wait_text("listening on", timeout=30)
    client_env = {"LATCHKEY_AGENT": runtime / "latchkey" / "agent.sock", "LATCHKEY_PASSPHRASE_FILE": None}
    first = lk.start("token", "a", env=client_env)
    older = waiting_request(first)
    second = lk.start("token", "a", env=client_env)
    newer = waiting_request(second)
    tmux.wait_for(lambda _: f"type y {newer} or n {newer} here" in tmux.capture(joined=True), timeout=10, what="the second prompt")
    tmux.send("y", "Enter")
    tmux.wait_for(lambda _: f"requests {older}, {newer} wait: answer one with y N" in tmux.capture(joined=True), timeout=10,
                  what="the agent asking which")
    time.sleep(0.5)
    assert first.running() and second.running(), "a bare y released a token while two requests waited"
    tmux.send(f"y {newer}", "Enter")
    result = second.finish(30)
    assert result.code == EX_OK, result
    assert first.running(), "only the request named was answered"
    tmux.send(f"n {older}", "Enter")
    assert first.finish(30).code == EX_VAULT


def test_the_open_screen_asks_naming_the_requester_and_y_releases_the_token(tmux, lk, idp_a, agents, runtime):
    confirmed_account(lk, idp_a)
    agent = agents()
    tmux.start(screen_command(), screen_env(lk, XDG_RUNTIME_DIR=runtime))
    tmux.wait_text(ALICE, timeout=30)
    client = lk.start("token", "a", env=agent_env(agent))
    request = waiting_request(client)
    screen = tmux.wait_for(lambda text: "Release a token of" in text, timeout=10, what="the screen's prompt")
    assert f"a:{ALICE}" in tmux.capture(joined=True) and "local: " in tmux.capture(joined=True), screen
    tmux.send("y")
    result = client.finish(30)
    assert result.code == EX_OK, result
    assert_userinfo(idp_a, result.stdout.strip(), ALICE)
    tmux.wait_text(f"Approved request {request}.", timeout=10)
    entry = lk.run("agent", "log", "--json").json()[-1]
    assert entry["outcome"] == "released", entry


def test_with_no_agent_and_no_terminal_a_confirm_account_is_refused_though_the_launcher_could_read_it(lk, idp_a):
    confirmed_account(lk, idp_a)
    # The vault is unlocked (its key cached) and status, as every command, made the token copies.
    assert lk.run("status").code == EX_OK
    result = lk.run("token", "a")
    assert result.code == EX_VAULT and result.stdout == "", result
    assert f"a:{ALICE} is marked confirm = true and there is nobody to ask here" in result.stderr, result
    assert "start `latchkey agent`" in result.stderr, result
    handing_on = [
        ("exec", "a", "--", "/bin/sh", "-c", "echo $LATCHKEY_ACCESS_TOKEN"),
        ("proof", "a", "--method", "GET", "--url", "https://api.example.test/"),
    ]
    for command in handing_on:
        refused = lk.run(*command)
        assert refused.code == EX_VAULT and refused.stdout == "", refused
    log = lk.run("agent", "log", "--json").json()
    assert [(e["outcome"], e["reason"], e["forwarded"]) for e in log] == [("refused", "nobody to ask", False)] * 3, log


def test_with_no_agent_the_person_at_the_terminal_is_asked_and_y_releases_n_refuses(tmux, lk, idp_a, tmp_path):
    confirmed_account(lk, idp_a)
    assert lk.run("status").code == EX_OK
    runs = [(tmp_path / f"out{n}", tmp_path / f"rc{n}") for n in (1, 2)]
    tmux.start("; ".join(f"{LATCHKEY_BIN} token a > {out}; echo $? > {rc}" for out, rc in runs), lk.env(TERM="tmux-256color"))
    question = f"release a token of a:{ALICE} to local: "
    for number, (answer, (out, rc)) in enumerate(zip(("y", "n"), runs), start=1):
        tmux.wait_for(lambda text: text.count(question) == number, timeout=30, what=f"question {number}")
        assert "[y/N] (refused in 60 s)" in tmux.capture(joined=True)
        tmux.send(answer, "Enter")
        tmux.wait_for(lambda _: rc.exists() and rc.stat().st_size > 0, timeout=30, what="the command's end")
    assert runs[0][1].read_text().strip() == "0", tmux.capture(joined=True)
    assert_userinfo(idp_a, runs[0][0].read_text().strip(), ALICE)
    assert runs[1][1].read_text().strip() == str(EX_VAULT) and runs[1][0].read_text() == "", tmux.capture(joined=True)
    assert f"the release of a token of a:{ALICE} was denied" in tmux.capture(joined=True)
    log = lk.run("agent", "log", "--json").json()
    assert [e["outcome"] for e in log] == ["released", "denied"], log
    assert all(e["account"] == f"a:{ALICE}" and e["requester"].startswith("local: ") for e in log), log


def test_the_agent_on_its_default_socket_asks_though_LATCHKEY_AGENT_is_unset_and_the_launcher_holds_copies(lk, idp_a, agents, runtime):
    confirmed_account(lk, idp_a)
    agent = agents()
    assert lk.run("status").code == EX_OK
    client = lk.start("token", "a", env={"XDG_RUNTIME_DIR": runtime})
    request = waiting_request(client)
    assert lk.run("approve", str(request), env=agent_env(agent)).code == EX_OK
    result = client.finish(30)
    assert result.code == EX_OK, result
    assert_userinfo(idp_a, result.stdout.strip(), ALICE)
