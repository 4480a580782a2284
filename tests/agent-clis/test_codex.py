"""Codex CLI 0.171.0 with loopguard's plugin (codex plugin marketplace add + plugin add + the
trust step). Codex cannot end a session from a hook: where the policy's ladder ends a run
(`loopguard: {preset: "recommended"}`), every later call is denied with the ladder's message, and
the session goes on to the model's final answer. The default (`cautious`) never ends one."""

import json

import pytest

import clis
import scenarios as sc
import work
from scenarios import POLL


def deny_text(cmd):
    return lambda message: f"Command blocked by PreToolUse hook: {message}. Command: {cmd}"


@pytest.fixture
def codex(tmp_path, plugins):
    return clis.Codex(tmp_path, plugins).install()


def test_the_same_echo_polled_is_blocked_at_the_replayed_call_and_denied_to_the_end(codex, tmp_path):
    n = sc.POLL_TURNS
    p, reqs = codex.session({"FAKE_TURNS": n})
    decisions = sc.as_the_hook_ends(sc.replay(tmp_path, sc.DEFAULT, [[("Bash", {"command": POLL})]] * n))
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    sc.assert_calls(codex, reqs, decisions, deny_text(POLL), n)
    assert max(r["turn"] for r in reqs) == n + 1 and p.returncode == 0, codex.describe()
    warn = sc.first(decisions, "warn", notify=True)
    by_turn = {r["turn"]: r["all"] for r in reqs}
    assert warn.message not in by_turn[warn.call], codex.describe()
    assert by_turn[n + 1].count(warn.message) == 1, codex.describe()
    # loopguard transcripts on the history the CLI wrote finds the block at the same call.
    assert sc.transcripts_first_block(tmp_path, codex.home / ".codex" / "sessions")["call"] == sc.first(decisions, "block").call


def test_under_the_recommended_preset_every_call_after_the_ladders_block_is_denied_with_its_message(codex, tmp_path):
    """`loopguard: {preset: "recommended"}`: the ladder's block (the third of the same call)
    would end the run; Codex cannot end it, so every later call is denied with that message."""
    config = tmp_path / "recommended.json5"
    config.write_text(sc.RECOMMENDED)
    p, reqs = codex.session({"FAKE_TURNS": 10}, env={"LOOPGUARD_CONFIG": config})
    replayed = sc.replay(tmp_path, sc.RECOMMENDED_FILLED, [[("Bash", {"command": POLL})]] * 10)
    end = sc.the_end(replayed)
    assert (end.call, end.detector) == sc.POLL_END_RECOMMENDED
    decisions = sc.as_the_hook_ends(replayed)
    # After the end the policy alone would deny with another message (same_result's).
    assert decisions[end.call].message != replayed[end.call].message, replayed
    sc.assert_calls(codex, reqs, decisions, deny_text(POLL), 10)
    assert max(r["turn"] for r in reqs) == 11 and p.returncode == 0, codex.describe()


def test_a_ping_pong_between_two_reads_is_blocked(codex, tmp_path):
    (codex.proj / "a.txt").write_text("alpha\n")
    (codex.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = codex.session({"FAKE_TURNS": 12, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    calls = [[("Bash", {"command": cmds[i % 2]})] for i in range(12)]
    decisions = sc.as_the_hook_ends(sc.replay(tmp_path, sc.LOW_FILLED, calls))
    assert sc.first(decisions, "block").detector == "ping_pong"
    for d in decisions:
        sc.assert_calls(codex, reqs, [d], deny_text(cmds[(d.call - 1) % 2]), 1)


def test_three_parallel_calls_per_turn_lose_no_count(codex, tmp_path):
    n = 6
    p, reqs = codex.session({"FAKE_TURNS": n, "FAKE_PARALLEL": 3})
    decisions = sc.as_the_hook_ends(sc.replay(tmp_path, sc.DEFAULT, [[("Bash", {"command": POLL})] * 3] * n))
    blocks = {d.call for d in decisions if d.action == "block"}
    for turn in range(1, n + 1):
        results = next(r["results"] for r in reqs if r["turn"] == turn + 1)
        denied = sum(r["text"].startswith("Command blocked by PreToolUse hook") for r in results)
        assert len(results) == 3, codex.describe()
        assert denied == len([c for c in blocks if 3 * turn - 3 < c <= 3 * turn]), f"turn {turn}: {results}"


def test_a_resumed_session_keeps_its_counts(codex, tmp_path):
    n = sc.POLL_TURNS
    decisions = sc.as_the_hook_ends(sc.replay(tmp_path, sc.DEFAULT, [[("Bash", {"command": POLL})]] * n))
    k = sc.resume_split(decisions)
    p, first_reqs = codex.session({"FAKE_TURNS": k})
    thread = next(json.loads(line)["thread_id"] for line in p.stdout.splitlines() if '"thread.started"' in line)
    assert max(r["turn"] for r in first_reqs) == k + 1, codex.describe()
    p, reqs = codex.session({"FAKE_TURNS": n}, args=["resume", thread], prompt="go on")
    assert min(r["turn"] for r in reqs) == k + 1, codex.describe()
    sc.assert_calls(codex, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions, deny_text(POLL), n)


def test_healthy_work_is_never_denied(codex, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test: one session, the default config, nothing denied."""
    work.assert_healthy(codex, work.CodexShape(codex.proj), tmp_path, codex.home / ".codex" / "loopguard")


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("what", ["config", "policy"])
def test_a_broken_config_or_policy_answers_in_the_fail_mode(codex, tmp_path, mode, what):
    env, said = sc.broken(tmp_path, what, mode)
    p, reqs = codex.session({"FAKE_TURNS": 3}, env=env)
    for call in (1, 2, 3):
        results = sc.results_of_call(reqs, call)
        assert results and len(results) == 1, codex.describe()
        if mode == "open":
            assert results[0]["text"].endswith("still-running\n"), codex.describe()
        else:
            assert said in results[0]["text"] and "fail mode is closed" in results[0]["text"], codex.describe()
