"""Gemini CLI 0.61.0 with loopguard's extension (gemini extensions install). Its own loop
detection is switched off in these runs (model.disableLoopDetection), so that every decision
the model sees is loopguard's."""

import json

import pytest

import clis
import scenarios as sc
from scenarios import POLL

SHELL = ("run_shell_command", {"command": POLL, "description": "Check build status"})


def deny_text(message):
    return json.dumps({"error": f"Tool execution blocked: {message}"}, separators=(",", ":"))


@pytest.fixture
def gemini(tmp_path, plugins):
    return clis.Gemini(tmp_path, plugins).install()


def chat_turns(gemini):
    """The tool calls of each model turn, from the chat the CLI saved
    (~/.gemini/tmp/<project>/chats/session-*.jsonl): [[(id, response), ...], ...]."""
    turns = {}
    for path in sorted((gemini.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("toolCalls"):
                turns[record["id"]] = [(c["id"], c["result"][0]["functionResponse"]["response"]) for c in record["toolCalls"]]
    return list(turns.values())


def test_the_same_echo_polled_is_blocked_at_the_replayed_call_and_the_session_ends(gemini, tmp_path):
    p, reqs = gemini.session({"FAKE_TURNS": 30})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * 30)
    blocks = [d for d in decisions if d.action == "block"]
    assert (blocks[0].call, blocks[0].detector) == sc.POLL_BLOCK
    sc.assert_calls(gemini, reqs, decisions, deny_text, blocks[1].call - 1)
    # The second block ended the session: no request after it, and the chat says why.
    assert max(r["turn"] for r in reqs) == blocks[1].call and p.returncode == 0, gemini.describe()
    last = chat_turns(gemini)[-1]
    assert last[0][1] == {"error": f"Agent execution stopped by hook: {blocks[1].message}"}, last
    warn = sc.first(decisions, "warn", notify=True)
    by_turn = {r["turn"]: r["all"] for r in reqs}
    assert warn.message not in by_turn[warn.call], gemini.describe()
    assert by_turn[blocks[1].call].count(warn.message) == 1, gemini.describe()
    # loopguard transcripts on the history the CLI wrote finds the block at the same call.
    assert sc.transcripts_first_block(tmp_path, gemini.home / ".gemini" / "tmp")["call"] == blocks[0].call


def test_a_ping_pong_between_two_reads_is_blocked(gemini, tmp_path):
    (gemini.proj / "a.txt").write_text("alpha\n")
    (gemini.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json5"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = gemini.session({"FAKE_TURNS": 30, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    calls = [[("run_shell_command", {"command": cmds[i % 2], "description": "Check build status"})] for i in range(30)]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    blocks = [d for d in decisions if d.action == "block"]
    assert blocks[0].detector == "ping_pong"
    sc.assert_calls(gemini, reqs, decisions, deny_text, blocks[1].call - 1)
    assert max(r["turn"] for r in reqs) == blocks[1].call, gemini.describe()


def test_three_parallel_calls_per_turn_lose_no_count(gemini, tmp_path):
    p, reqs = gemini.session({"FAKE_TURNS": 12, "FAKE_PARALLEL": 3})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL] * 3] * 12)
    blocks = [d for d in decisions if d.action == "block"]
    last_turn = (blocks[1].call - 1) // 3 + 1
    turns = chat_turns(gemini)
    assert len(turns) == last_turn, f"{turns}\n{gemini.describe()}"
    for turn, calls in enumerate(turns, start=1):
        expected = [d for d in blocks if 3 * turn - 3 < d.call <= 3 * turn]
        denied = [r for _, r in calls if "error" in r]
        assert len(calls) == 3 and len(denied) == len(expected), f"turn {turn}: {calls}\n{gemini.describe()}"


def test_a_resumed_session_keeps_its_counts(gemini, tmp_path):
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * 30)
    blocks = [d for d in decisions if d.action == "block"]
    k = sc.resume_split(decisions)
    p, first_reqs = gemini.session({"FAKE_TURNS": k})
    assert max(r["turn"] for r in first_reqs) == k + 1, gemini.describe()
    p, reqs = gemini.session({"FAKE_TURNS": 30}, args=["--resume", "latest"], prompt="go on")
    assert min(r["turn"] for r in reqs) == k + 1, gemini.describe()
    sc.assert_calls(gemini, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions, deny_text, blocks[1].call - 1)
    assert max(r["turn"] for r in reqs) == blocks[1].call, gemini.describe()


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("what", ["config", "policy"])
def test_a_broken_config_or_policy_answers_in_the_fail_mode(gemini, tmp_path, mode, what):
    env, said = sc.broken(tmp_path, what, mode)
    p, reqs = gemini.session({"FAKE_TURNS": 3}, env=env)
    for call in (1, 2, 3):
        results = sc.results_of_call(reqs, call)
        assert results and len(results) == 1, gemini.describe()
        if mode == "open":
            assert "still-running" in results[0]["text"] and not results[0]["error"], gemini.describe()
        else:
            assert said in results[0]["text"] and "fail mode is closed" in results[0]["text"], gemini.describe()
