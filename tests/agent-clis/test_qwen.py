"""Qwen Code 0.24.4 with loopguard's Claude Code plugin (`qwen extensions install`): Qwen Code
runs a Claude Code plugin's hooks in Claude Code's protocol, so the plugin and `loopguard hook
claude-code` serve it unchanged. Qwen Code stops exact repeats itself: it halts a run at the 5th
identical call in a row, before any hook is asked (always on), so loopguard's ladder (the 6th
poll under `recommended`) is never reached there; its block at the 4th is."""

import json

import pytest

import clis
import scenarios as sc
import work
from scenarios import POLL


# What the hook reads from Qwen Code's PostToolUse for a shell command (tool_response: the
# model's text and the display text), as the replay's outcome.
def shell_response(command, output):
    return {"llmContent": f"Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
                          "Exit Code: 0\nSignal: (none)\nProcess Group PGID: (none)",
            "returnDisplay": output}


POLL_RESPONSE = shell_response(POLL, "still-running")
SHELL = ("run_shell_command", {"command": POLL, "description": "Check build status"}, {"result": POLL_RESPONSE})


def reported_session(qwen, fake_env, env=None, attempts=3):
    """A session whose every shell command reported its output. Qwen Code now and then reports a
    fast command's output as `(empty)` on a busy machine (its own capture race, seen in 1 of ~10
    runs); the hook records what Qwen Code reports, so the replay of the real output is then not
    the session's oracle, and the session is run again."""
    for _ in range(attempts):
        p, reqs = qwen.session(fake_env, env=env)
        shown = [r["text"] for q in reqs for r in q["results"] if r["text"].startswith("Command: ")]
        if not any("Output: (empty)" in text for text in shown):
            return p, reqs
    raise AssertionError(f"Qwen Code reported an empty output in each of {attempts} sessions\n{qwen.describe()}")


def poll_session(qwen, turns, parallel=1):
    # Two commands at once meet the race more often (all of 3 sessions in one loaded CI run;
    # none of 3 alone): more tries there.
    return reported_session(qwen, {"FAKE_TURNS": turns, "FAKE_PARALLEL": parallel}, attempts=3 if parallel == 1 else 8)


@pytest.fixture
def qwen(tmp_path, plugins):
    return clis.Qwen(tmp_path, plugins).install()


def test_the_same_poll_is_denied_at_the_replayed_call_with_the_policys_text(qwen, tmp_path):
    """The default (no config): calls 1–3 run, the 4th is denied with the policy's text (the
    replay's block), then Qwen Code's own repeat rule halts the run at the 5th."""
    p, reqs = poll_session(qwen, 6)
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * 6)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    warn = sc.first(decisions, "warn", notify=True)
    for d in decisions[:block.call]:
        results = sc.results_of_call(reqs, d.call)
        assert results and len(results) == 1, qwen.describe()
        text = results[0]["text"]
        if d.action == "block":
            # The deny's reason is the result, word for word.
            assert text == d.message, qwen.describe()
        else:
            # A warning rides in the result, after the output (Qwen Code appends the hook's context).
            output, _, note = text.partition("\n\nloopguard: ")
            assert POLL_RESPONSE["llmContent"] == output, qwen.describe()
            assert ("loopguard: " + note if note else None) == (warn.message if d is warn else None), qwen.describe()
    assert {r["turn"]: r["all"] for r in reqs}[warn.call + 1].count(warn.message) == 1, qwen.describe()
    assert "Loop detection halted the run" in p.stdout + p.stderr, qwen.describe()
    # The chat Qwen Code recorded, read by `loopguard transcripts`, blocks where the hook did.
    assert sc.transcripts_first_block(tmp_path, qwen.home / ".qwen" / "projects")["call"] == block.call


def qwen_deny(message):
    """Qwen Code hands the model a hook's deny reason as the call's result, word for word."""
    return message


def test_a_ping_pong_between_two_reads_is_blocked(qwen, tmp_path):
    """Two reads in turn (not an exact repeat: Qwen Code's own rule never fires) are blocked as a
    ping-pong at the replay's call, with its text."""
    (qwen.proj / "a.txt").write_text("alpha\n")
    (qwen.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json5"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = reported_session(qwen, {"FAKE_TURNS": 10, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    calls = [[("run_shell_command", {"command": c, "description": "Check build status"}, {"result": shell_response(c, out)})]
             for c, out in [(cmds[i % 2], ["alpha", "beta"][i % 2]) for i in range(10)]]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    assert sc.first(decisions, "block").detector == "ping_pong"
    sc.assert_calls(qwen, reqs, decisions, qwen_deny, 10)


def test_two_parallel_calls_per_turn_lose_no_count(qwen, tmp_path):
    """Two polls per turn, two turns (Qwen Code's own rule would halt the run at a 5th identical
    call): the hook counts all four, so each call's result is what the replay of two calls a turn
    says, the warning included, on the call the replay warns at."""
    p, reqs = poll_session(qwen, 2, parallel=2)
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL] * 2] * 2)
    assert sc.first(decisions, "warn", notify=True).call == 3, sc.findings(decisions)
    results = [r for turn in (2, 3) for r in next(q for q in reqs if q["turn"] == turn)["results"]]
    assert len(results) == 4, qwen.describe()
    for d, result in zip(decisions, results):
        output, _, note = result["text"].partition("\n\nloopguard: ")
        assert output == POLL_RESPONSE["llmContent"], qwen.describe()
        assert ("loopguard: " + note if note else None) == (d.message if d.notify else None), f"call {d.call}\n{qwen.describe()}"
    assert p.returncode == 0, qwen.describe()


def test_a_resumed_session_keeps_its_counts(tmp_path, plugins):
    """`qwen --resume <id>` goes on with the same session id: the block falls at the replayed call,
    which a fresh count would reach two calls later. (A resumed run cannot be run again, so on
    Qwen Code's `(empty)` capture race the pair is made again in a fresh HOME.)"""
    n = 6
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[SHELL]] * n)
    k = sc.resume_split(decisions)
    for attempt in range(3):
        qwen = clis.Qwen(tmp_path / f"try{attempt}", plugins).install()
        p, first_reqs = qwen.session({"FAKE_TURNS": k})
        assert max(r["turn"] for r in first_reqs) == k + 1, qwen.describe()
        p, reqs = qwen.session({"FAKE_TURNS": n}, args=["--resume", qwen.last_session_id()], prompt="go on")
        shown = [r["text"] for q in first_reqs + reqs for r in q["results"]]
        if not any("Output: (empty)" in text for text in shown):
            break
    assert min(r["turn"] for r in reqs) == k + 1, qwen.describe()
    sc.assert_calls(qwen, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions, qwen_deny, k + 2)


def test_healthy_work_is_never_denied(qwen, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test, under the default config: every call runs and shows
    its own output, nothing of loopguard's reaches the model, the session ends normally."""
    parts = work.healthy()
    # Qwen Code refuses to run `sed -i` on a file the session has not read (its own rule, "has not
    # been read in this session"): the agent reads the two files before editing them.
    reads = [work.Step(read="calc.py"), work.Step(read="test_calc.py")]
    steps = work.rehearse(qwen.proj, parts["greps"] + parts["scaffold"] + parts["checks"] + reads + parts["edits"])
    cmds = [{"tool": "read_file", "input": {"file_path": str(qwen.proj / s.read)}} if s.read
            else {"command": s.command, "description": s.description} for s in steps]
    p, reqs = qwen.session({"FAKE_TURNS": len(steps), "FAKE_CMDS": json.dumps(cmds)})
    assert max(r["turn"] for r in reqs) == len(steps) + 1 and p.returncode == 0, qwen.describe()
    for call, step in enumerate(steps, start=1):
        text = sc.results_of_call(reqs, call)[0]["text"]
        shown = step.out.strip().splitlines()[-1] if step.out.strip() else ""
        assert "loopguard" not in text and shown in text, f"call {call} ({step}): {text}\n{qwen.describe()}"
    assert "loopguard" not in reqs[-1]["all"], qwen.describe()
    assert list((qwen.home / ".claude" / "loopguard").glob("*.state")), f"the hook did not run\n{qwen.describe()}"


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("what", ["config", "policy"])
def test_a_broken_config_or_policy_answers_in_the_fail_mode(qwen, tmp_path, mode, what):
    env, said = sc.broken(tmp_path, what, mode)
    p, reqs = qwen.session({"FAKE_TURNS": 2}, env=env)
    for call in (1, 2):
        text = sc.results_of_call(reqs, call)[0]["text"]
        if mode == "open":
            assert "still-running" in text and "loopguard" not in text, qwen.describe()
        else:
            assert said in text and "fail mode is closed" in text, qwen.describe()
