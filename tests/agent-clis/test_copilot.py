"""GitHub Copilot CLI 1.0.102 with loopguard's command hooks (packages/copilot-hooks, installed
by its install.sh into ~/.copilot/settings.json), BYOK against the scripted model. Copilot CLI
cannot end a run from a hook: a stop is a deny of every later call of the session."""

import json
import re

import pytest

import clis
import scenarios as sc
import work
from scenarios import POLL

SHELL = ("bash", {"command": POLL, "description": "Check build status"}, {"result": "still-running"})


def deny_text(message):
    return f"Denied by preToolUse hook: {message}"


@pytest.fixture
def copilot(tmp_path, plugins):
    return clis.Copilot(tmp_path, plugins).install()


def test_the_same_poll_is_denied_from_the_replayed_call_on_and_the_session_goes_on(copilot, tmp_path):
    """The default (no config): the cautious preset blocks the unchanged poll at the replayed
    call and every one after it; the warning before it reaches the model once, in the result."""
    n = 8
    p, reqs = copilot.session({"FAKE_TURNS": n})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * n)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    assert sc.the_end(decisions) is None
    sc.assert_calls(copilot, reqs, decisions, deny_text, n)
    assert max(r["turn"] for r in reqs) == n + 1 and p.returncode == 0, copilot.describe()
    warn = sc.first(decisions, "warn", notify=True)
    shown, notes = work.CopilotShape(copilot.proj).shown(sc.results_of_call(reqs, warn.call)[0]["text"])
    assert notes == [warn.message] and "still-running" in shown, copilot.describe()
    assert {r["turn"]: r["all"] for r in reqs}[n + 1].count(warn.message) == 1, copilot.describe()
    # The session log Copilot CLI wrote, read by `loopguard transcripts`, blocks where the hook did.
    assert sc.transcripts_first_block(tmp_path, copilot.home / ".copilot" / "session-state")["call"] == block.call


def test_under_the_recommended_preset_the_ladders_stop_denies_every_later_call(copilot, tmp_path):
    """The ladder's block would end the run; Copilot CLI has no way for a hook to do that, so the
    stop's text answers every later call and the model is told why."""
    config = tmp_path / "recommended.json5"
    config.write_text(sc.RECOMMENDED)
    n = 9
    p, reqs = copilot.session({"FAKE_TURNS": n}, env={"LOOPGUARD_CONFIG": config})
    decisions = sc.as_the_hook_ends(sc.replay(tmp_path, sc.RECOMMENDED_FILLED, [[SHELL]] * n))
    end = sc.the_end(decisions)
    assert (end.call, end.detector) == sc.POLL_END_RECOMMENDED
    sc.assert_calls(copilot, reqs, decisions, deny_text, n)
    assert all(sc.results_of_call(reqs, c)[0]["text"] == deny_text(end.message) for c in range(end.call, n + 1))


def test_a_ping_pong_between_two_reads_is_blocked(copilot, tmp_path):
    (copilot.proj / "a.txt").write_text("alpha\n")
    (copilot.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json5"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = copilot.session({"FAKE_TURNS": 10, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    outs = {"cat a.txt": "alpha", "cat b.txt": "beta"}
    calls = [[("bash", {"command": cmds[i % 2], "description": "Check build status"}, {"result": outs[cmds[i % 2]]})]
             for i in range(10)]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    assert sc.first(decisions, "block").detector == "ping_pong"
    sc.assert_calls(copilot, reqs, decisions, deny_text, 10)


def test_three_parallel_calls_per_turn_lose_no_count(copilot, tmp_path):
    n = 4
    p, reqs = copilot.session({"FAKE_TURNS": n, "FAKE_PARALLEL": 3})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL] * 3] * n)
    blocks = [d for d in decisions if d.action == "block"]
    assert blocks and max(r["turn"] for r in reqs) == n + 1, copilot.describe()
    for turn in range(1, n + 1):
        results = next(r for r in reqs if r["turn"] == turn + 1)["results"]
        expected = [d for d in blocks if 3 * turn - 3 < d.call <= 3 * turn]
        denied = [r for r in results if r["text"].startswith("Denied by preToolUse hook: loopguard")]
        assert len(results) == 3 and len(denied) == len(expected), f"turn {turn}: {results}\n{copilot.describe()}"


def test_a_resumed_session_keeps_its_counts(copilot, tmp_path):
    n = 6
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * n)
    k = sc.resume_split(decisions)
    p, first_reqs = copilot.session({"FAKE_TURNS": k})
    session = re.search(r"--resume=([0-9a-f-]{36})", p.stdout + p.stderr)
    assert session and max(r["turn"] for r in first_reqs) == k + 1, copilot.describe()
    p, reqs = copilot.session({"FAKE_TURNS": n}, args=[f"--resume={session.group(1)}"], prompt="go on")
    assert min(r["turn"] for r in reqs) == k + 1, copilot.describe()
    sc.assert_calls(copilot, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions, deny_text, n)


def test_healthy_work_is_never_denied_nor_ended(copilot, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test: one session, the default config, nothing denied."""
    work.assert_healthy(copilot, work.CopilotShape(copilot.proj), tmp_path, copilot.home / ".copilot" / "loopguard")


def test_a_blocked_streak_the_agent_leaves(copilot, tmp_path):
    """Six spellings of one absent name are denied from the replay's block on, with the policy's
    text; `cat` and `ls` after them go through, and the session goes on."""
    shape = work.CopilotShape(copilot.proj)
    steps = work.leaving(read=False)
    p, reqs, decisions = work.session(copilot, shape, tmp_path, steps)
    block = sc.first(decisions, "block")
    assert block.call == work.SPELLING_BLOCK[0], sc.findings(decisions)
    assert [d.action == "block" for d in decisions] == [block.call <= d.call <= len(work.SPELLINGS) for d in decisions], sc.findings(decisions)
    work.assert_as_replayed(copilot, shape, reqs, steps, decisions)


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("what", ["config", "policy"])
def test_a_broken_config_or_policy_answers_in_the_fail_mode(copilot, tmp_path, mode, what):
    env, said = sc.broken(tmp_path, what, mode)
    p, reqs = copilot.session({"FAKE_TURNS": 2}, env=env)
    for call in (1, 2):
        results = sc.results_of_call(reqs, call)
        assert results and len(results) == 1, copilot.describe()
        if mode == "open":
            assert "still-running" in results[0]["text"] and "Denied" not in results[0]["text"], copilot.describe()
        else:
            assert said in results[0]["text"] and "fail mode is closed" in results[0]["text"], copilot.describe()
