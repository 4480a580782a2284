"""Claude Code 2.1.332 with loopguard's plugin (claude plugin marketplace add + install)."""

import json

import pytest

import clis
import scenarios as sc
import work
from scenarios import POLL

BASH = ("Bash", {"command": POLL, "description": "Check build status"})


def deny_text(message):
    return f"PreToolUse:Bash hook error: {message}"


@pytest.fixture
def claude(tmp_path, plugins):
    return clis.Claude(tmp_path, plugins).install()


def assert_ended(claude, reqs, decisions):
    """Every call before the ladder's block ran or was denied as the replay says, with the
    policy's text; the ladder's block ended the session: no request after it."""
    end = sc.the_end(decisions)
    assert end is not None, decisions
    for d in decisions[: end.call - 1]:
        results = sc.results_of_call(reqs, d.call)
        assert results and len(results) == 1, f"call {d.call}: {results}\n{claude.describe()}"
        if d.action == "block":
            assert results[0]["text"] == deny_text(d.message) and results[0]["error"], claude.describe()
        else:
            assert not results[0]["error"], f"call {d.call}: {results}\n{claude.describe()}"
    assert max(r["turn"] for r in reqs) == end.call, claude.describe()
    assert claude.last.returncode == 0, claude.describe()


def assert_to_the_end(claude, reqs, decisions, turns):
    """Every call ran or was denied as the replay says, with the policy's text, and the session
    was not ended: the model got the result of every call and was asked once more."""
    assert sc.the_end(decisions) is None, decisions
    sc.assert_calls(claude, reqs, decisions, deny_text, turns)
    for d in decisions[:turns]:
        assert sc.results_of_call(reqs, d.call)[0]["error"] == (d.action == "block"), f"call {d.call}\n{claude.describe()}"
    assert max(r["turn"] for r in reqs) == turns + 1 and claude.last.returncode == 0, claude.describe()


def assert_warned_once(claude, reqs, warn, later):
    """The warning reached the model once, with the outcome of the call it was given for, and is
    still there (once) at turn `later`."""
    by_turn = {r["turn"]: r["all"] for r in reqs}
    assert warn.message not in by_turn[warn.call], claude.describe()
    assert by_turn[warn.call + 1].count(warn.message) == 1, claude.describe()
    assert by_turn[later].count(warn.message) == 1, claude.describe()


def test_the_same_echo_polled_is_denied_from_the_replayed_call_on_and_the_session_goes_on(claude, tmp_path):
    """The default (no config): the cautious preset blocks the unchanged poll at the replayed
    call and every one after it, and never ends the session: the model gets every denial."""
    n = sc.POLL_TURNS
    p, reqs = claude.session({"FAKE_TURNS": n})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[BASH]] * n)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    assert_to_the_end(claude, reqs, decisions, n)
    assert_warned_once(claude, reqs, sc.first(decisions, "warn", notify=True), n + 1)
    # loopguard transcripts on the history the CLI wrote finds the block at the same call.
    assert sc.transcripts_first_block(tmp_path, claude.home / ".claude" / "projects")["call"] == block.call


def test_under_the_recommended_preset_the_ladder_ends_the_session(claude, tmp_path):
    """`loopguard: {preset: "recommended"}`: the poll blocked, sent again, blocked, sent again:
    the ladder's block (the third of the same call) ends the session."""
    config = tmp_path / "recommended.json5"
    config.write_text(sc.RECOMMENDED)
    p, reqs = claude.session({"FAKE_TURNS": sc.POLL_TURNS}, env={"LOOPGUARD_CONFIG": config})
    decisions = sc.replay(tmp_path, sc.RECOMMENDED_FILLED, [[BASH]] * sc.POLL_TURNS)
    end = sc.the_end(decisions)
    assert (sc.first(decisions, "block").call, (end.call, end.detector)) == (sc.POLL_BLOCK[0], sc.POLL_END_RECOMMENDED)
    assert_ended(claude, reqs, decisions)
    assert_warned_once(claude, reqs, sc.first(decisions, "warn", notify=True), end.call)


def test_a_ping_pong_between_two_reads_is_blocked_under_the_plugin_data_config(claude, tmp_path):
    (claude.proj / "a.txt").write_text("alpha\n")
    (claude.proj / "b.txt").write_text("beta\n")
    data = claude.home / ".claude" / "plugins" / "data" / "loopguard-loopguard"
    data.mkdir(parents=True, exist_ok=True)
    (data / "config.json5").write_text("// the plugin's data folder\n" + sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = claude.session({"FAKE_TURNS": 12, "FAKE_CMDS": json.dumps(cmds)})
    calls = [[("Bash", {"command": cmds[i % 2], "description": "Check build status"})] for i in range(12)]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    assert sc.first(decisions, "block").detector == "ping_pong"
    assert_to_the_end(claude, reqs, decisions, 12)


def test_healthy_work_is_never_denied_nor_ended(claude, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test: one session, the default config, nothing denied."""
    work.assert_healthy(claude, work.ClaudeShape(claude.proj), tmp_path,
                        claude.home / ".claude" / "plugins" / "data" / "loopguard-loopguard")


def test_a_blocked_streak_the_agent_leaves(claude, tmp_path):
    """Six spellings of one absent name are denied from the replay's block on, with the policy's
    text; the Read and the `ls` after them go through, and the session goes on."""
    steps = work.leaving()
    p, reqs, decisions = work.session(claude, work.ClaudeShape(claude.proj), tmp_path, steps)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == work.SPELLING_BLOCK
    assert [d.action == "block" for d in decisions] == [block.call <= d.call <= len(work.SPELLINGS) for d in decisions], sc.findings(decisions)
    work.assert_as_replayed(claude, work.ClaudeShape(claude.proj), reqs, steps, decisions)


def test_an_edit_and_rerun_loop_with_the_same_failure_is_denied_at_the_replayed_run(claude, tmp_path):
    """A failing test re-run after `sed -i` edits that change nothing relevant: denied at the
    replayed run (by the 8th), with the policy's text, and at every call the replay blocks; the
    edits are never denied and the session goes on."""
    steps = work.rerun_loop()
    p, reqs, decisions = work.session(claude, work.ClaudeShape(claude.proj), tmp_path, steps)
    block = sc.first(decisions, "block")
    runs = [d.call for d, s in zip(decisions, steps) if s.command == "python3 test_x.py"]
    assert block.detector == "same_error" and block.call in runs and block.call <= work.RERUN_BLOCK_BY, sc.findings(decisions)
    assert {d.call for d in decisions if d.action == "block"} <= set(runs), sc.findings(decisions)
    work.assert_as_replayed(claude, work.ClaudeShape(claude.proj), reqs, steps, decisions)


def transcript_results(claude):
    """The tool results in the session's transcript (~/.claude/projects/*/SESSION.jsonl), in order."""
    out = []
    for path in (claude.home / ".claude" / "projects").glob("*/*.jsonl"):
        for line in path.read_text().splitlines():
            content = (json.loads(line).get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    out.append((block["tool_use_id"], str(block.get("content")), bool(block.get("is_error"))))
    return out


def test_three_parallel_calls_per_turn_lose_no_count(claude, tmp_path):
    turns = 6
    p, reqs = claude.session({"FAKE_TURNS": turns, "FAKE_PARALLEL": 3})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[BASH] * 3] * turns)
    blocks = [d for d in decisions if d.action == "block"]
    assert blocks and sc.the_end(decisions) is None, decisions
    # The hooks of a turn's three calls run at once; which of them is denied is a race, how many
    # is not: the count per turn is the replay's.
    results = transcript_results(claude)
    assert len(results) == 3 * turns, f"{results}\n{claude.describe()}"
    for turn in range(1, turns + 1):
        got = results[3 * turn - 3 : 3 * turn]
        expected = [d for d in blocks if 3 * turn - 3 < d.call <= 3 * turn]
        assert sum(error for _, _, error in got) == len(expected), f"turn {turn}: {got}\n{claude.describe()}"
        assert all(text == deny_text(expected[0].message) for _, text, error in got if error), got
    # The default never ends the session.
    assert max(r["turn"] for r in reqs) == turns + 1, claude.describe()


def test_a_resumed_session_keeps_its_counts(claude, tmp_path):
    n = sc.POLL_TURNS
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[BASH]] * n)
    k = sc.resume_split(decisions)
    p, first_reqs = claude.session({"FAKE_TURNS": k}, args=["--output-format", "json"])
    session_id = json.loads(p.stdout)["session_id"]
    assert max(r["turn"] for r in first_reqs) == k + 1, claude.describe()
    p, reqs = claude.session({"FAKE_TURNS": n}, args=["--resume", session_id], prompt="go on")
    assert min(r["turn"] for r in reqs) == k + 1, claude.describe()
    assert_to_the_end(claude, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions, n)


BAD_CONFIG = "{tools: {loopDetection: {warningThreshold: 30, criticalThreshold: 10}}}"


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("broken", ["config", "policy"])
def test_a_broken_config_or_policy_answers_in_the_fail_mode(claude, tmp_path, mode, broken):
    env = {"LOOPGUARD_FAIL_MODE": mode}
    if broken == "config":
        bad = tmp_path / "bad-config.json5"
        bad.write_text(BAD_CONFIG)
        env["LOOPGUARD_CONFIG"] = bad
        said = f"invalid config {bad}"
    else:
        bad = tmp_path / "broken.wasm"
        bad.write_bytes(b"\0asm\x01\0\0\0 not a component")
        env["LOOPGUARD_POLICY"] = bad
        said = f"cannot load policy {bad}"
    p, reqs = claude.session({"FAKE_TURNS": 3}, env=env)
    results = [sc.results_of_call(reqs, call) for call in (1, 2, 3)]
    assert all(r and len(r) == 1 for r in results), claude.describe()
    if mode == "open":
        assert [r[0]["text"] for r in results] == ["still-running"] * 3, claude.describe()
    else:
        for r in results:
            assert r[0]["error"] and said in r[0]["text"] and "fail mode is closed" in r[0]["text"], claude.describe()
