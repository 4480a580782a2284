"""Gemini CLI 0.61.0 with loopguard's extension (gemini extensions install). Its own loop
detection is switched off in these runs (model.disableLoopDetection), so that every decision
the model sees is loopguard's."""

import json

import pytest

import clis
import scenarios as sc
import work
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


def assert_to_the_end(gemini, reqs, decisions, turns):
    """Every call ran or was denied as the replay says, with the policy's text, and the session
    was not ended: the model got the result of every call and was asked once more."""
    assert sc.the_end(decisions) is None, decisions
    sc.assert_calls(gemini, reqs, decisions, deny_text, turns)
    assert max(r["turn"] for r in reqs) == turns + 1 and gemini.last.returncode == 0, gemini.describe()


def test_the_same_echo_polled_is_denied_from_the_replayed_call_on_and_the_session_goes_on(gemini, tmp_path):
    """The default (no config): the cautious preset blocks the unchanged poll at the replayed
    call and every one after it, and never ends the session."""
    n = sc.POLL_TURNS
    p, reqs = gemini.session({"FAKE_TURNS": n})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * n)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    assert_to_the_end(gemini, reqs, decisions, n)
    warn = sc.first(decisions, "warn", notify=True)
    by_turn = {r["turn"]: r["all"] for r in reqs}
    assert warn.message not in by_turn[warn.call], gemini.describe()
    assert by_turn[n + 1].count(warn.message) == 1, gemini.describe()
    # loopguard transcripts on the history the CLI wrote finds the block at the same call.
    assert sc.transcripts_first_block(tmp_path, gemini.home / ".gemini" / "tmp")["call"] == block.call


def test_under_the_recommended_preset_the_ladder_ends_the_session(gemini, tmp_path):
    """`loopguard: {preset: "recommended"}`: the ladder's block (the third of the same call)
    ends the session, and the chat says why."""
    config = tmp_path / "recommended.json5"
    config.write_text(sc.RECOMMENDED)
    p, reqs = gemini.session({"FAKE_TURNS": sc.POLL_TURNS}, env={"LOOPGUARD_CONFIG": config})
    decisions = sc.replay(tmp_path, sc.RECOMMENDED_FILLED, [[SHELL]] * sc.POLL_TURNS)
    end = sc.the_end(decisions)
    assert (sc.first(decisions, "block").call, (end.call, end.detector)) == (sc.POLL_BLOCK[0], sc.POLL_END_RECOMMENDED)
    sc.assert_calls(gemini, reqs, decisions, deny_text, end.call - 1)
    # No request after the ladder's block, and the chat says why.
    assert max(r["turn"] for r in reqs) == end.call and p.returncode == 0, gemini.describe()
    last = chat_turns(gemini)[-1]
    assert last[0][1] == {"error": f"Agent execution stopped by hook: {end.message}"}, last
    warn = sc.first(decisions, "warn", notify=True)
    assert {r["turn"]: r["all"] for r in reqs}[end.call].count(warn.message) == 1, gemini.describe()


def test_a_ping_pong_between_two_reads_is_blocked(gemini, tmp_path):
    (gemini.proj / "a.txt").write_text("alpha\n")
    (gemini.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json5"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = gemini.session({"FAKE_TURNS": 12, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    calls = [[("run_shell_command", {"command": cmds[i % 2], "description": "Check build status"})] for i in range(12)]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    assert sc.first(decisions, "block").detector == "ping_pong"
    assert_to_the_end(gemini, reqs, decisions, 12)


def test_three_parallel_calls_per_turn_lose_no_count(gemini, tmp_path):
    n = 6
    p, reqs = gemini.session({"FAKE_TURNS": n, "FAKE_PARALLEL": 3})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL] * 3] * n)
    blocks = [d for d in decisions if d.action == "block"]
    assert blocks and sc.the_end(decisions) is None, decisions
    turns = chat_turns(gemini)
    assert len(turns) == n and max(r["turn"] for r in reqs) == n + 1, f"{turns}\n{gemini.describe()}"
    for turn, calls in enumerate(turns, start=1):
        expected = [d for d in blocks if 3 * turn - 3 < d.call <= 3 * turn]
        denied = [r for _, r in calls if "error" in r]
        assert len(calls) == 3 and len(denied) == len(expected), f"turn {turn}: {calls}\n{gemini.describe()}"


def test_a_resumed_session_keeps_its_counts(gemini, tmp_path):
    n = sc.POLL_TURNS
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * n)
    k = sc.resume_split(decisions)
    p, first_reqs = gemini.session({"FAKE_TURNS": k})
    assert max(r["turn"] for r in first_reqs) == k + 1, gemini.describe()
    p, reqs = gemini.session({"FAKE_TURNS": n}, args=["--resume", "latest"], prompt="go on")
    assert min(r["turn"] for r in reqs) == k + 1, gemini.describe()
    assert_to_the_end(gemini, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions, n)


def test_healthy_work_is_never_denied_nor_ended(gemini, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test: one session, the default config, nothing denied."""
    work.assert_healthy(gemini, work.GeminiShape(gemini.proj), tmp_path, gemini.home / ".gemini" / "loopguard")


def test_a_blocked_streak_the_agent_leaves(gemini, tmp_path):
    """Six spellings of one absent name (each `Command exited with code: 1`) are denied from the
    replay's block on, with the policy's text; read_file and `ls` after them go through, and the
    session goes on."""
    steps = work.leaving()
    p, reqs, decisions = work.session(gemini, work.GeminiShape(gemini.proj), tmp_path, steps)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == work.SPELLING_BLOCK
    assert [d.action == "block" for d in decisions] == [block.call <= d.call <= len(work.SPELLINGS) for d in decisions], sc.findings(decisions)
    work.assert_as_replayed(gemini, work.GeminiShape(gemini.proj), reqs, steps, decisions)


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
