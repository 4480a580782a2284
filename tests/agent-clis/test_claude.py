"""Claude Code 2.1.332 with loopguard's plugin (claude plugin marketplace add + install)."""

import json

import pytest

import clis
import scenarios as sc
from scenarios import POLL

BASH = ("Bash", {"command": POLL, "description": "Check build status"})


def deny_text(message):
    return f"PreToolUse:Bash hook error: {message}"


@pytest.fixture
def claude(tmp_path, plugins):
    return clis.Claude(tmp_path, plugins).install()


def assert_blocked_then_stopped(claude, reqs, decisions):
    """Every call before the second block ran or was denied as the replay says, with the
    policy's text; the second block (critical twice) ended the session: no request after it."""
    blocks = [d for d in decisions if d.action == "block"]
    for d in decisions[: blocks[1].call - 1]:
        results = sc.results_of_call(reqs, d.call)
        assert results and len(results) == 1, f"call {d.call}: {results}\n{claude.describe()}"
        if d.action == "block":
            assert results[0]["text"] == deny_text(d.message) and results[0]["error"], claude.describe()
        else:
            assert not results[0]["error"], f"call {d.call}: {results}\n{claude.describe()}"
    assert max(r["turn"] for r in reqs) == blocks[1].call, claude.describe()
    assert claude.last.returncode == 0, claude.describe()


def test_the_same_echo_polled_is_blocked_at_the_replayed_call_and_the_session_ends(claude, tmp_path):
    p, reqs = claude.session({"FAKE_TURNS": 30})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[BASH]] * 30)
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    assert_blocked_then_stopped(claude, reqs, decisions)
    # The warning reached the model once, with the outcome of the call it was given for.
    warn = sc.first(decisions, "warn", notify=True)
    by_turn = {r["turn"]: r["all"] for r in reqs}
    assert warn.message not in by_turn[warn.call], claude.describe()
    assert by_turn[warn.call + 1].count(warn.message) == 1, claude.describe()
    assert by_turn[block.call + 1].count(warn.message) == 1, claude.describe()
    # loopguard transcripts on the history the CLI wrote finds the block at the same call.
    assert sc.transcripts_first_block(tmp_path, claude.home / ".claude" / "projects")["call"] == block.call


def test_a_ping_pong_between_two_reads_is_blocked_under_the_plugin_data_config(claude, tmp_path):
    (claude.proj / "a.txt").write_text("alpha\n")
    (claude.proj / "b.txt").write_text("beta\n")
    data = claude.home / ".claude" / "plugins" / "data" / "loopguard-loopguard"
    data.mkdir(parents=True, exist_ok=True)
    (data / "config.json5").write_text("// the plugin's data folder\n" + sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    p, reqs = claude.session({"FAKE_TURNS": 30, "FAKE_CMDS": json.dumps(cmds)})
    calls = [[("Bash", {"command": cmds[i % 2], "description": "Check build status"})] for i in range(30)]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    assert sc.first(decisions, "block").detector == "ping_pong"
    assert_blocked_then_stopped(claude, reqs, decisions)


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
    p, reqs = claude.session({"FAKE_TURNS": 12, "FAKE_PARALLEL": 3})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[BASH] * 3] * 12)
    blocks = [d for d in decisions if d.action == "block"]
    last_turn = (blocks[1].call - 1) // 3 + 1
    # The hooks of a turn's three calls run at once; which of them is denied is a race, how many
    # is not: the count per turn is the replay's.
    results = transcript_results(claude)
    assert len(results) == 3 * last_turn, f"{results}\n{claude.describe()}"
    for turn in range(1, last_turn + 1):
        got = results[3 * turn - 3 : 3 * turn]
        expected = [d for d in blocks if 3 * turn - 3 < d.call <= 3 * turn]
        assert sum(error for _, _, error in got) == len(expected), f"turn {turn}: {got}\n{claude.describe()}"
        assert all(text == deny_text(expected[0].message) for _, text, error in got if error), got
    # The second block ended the session.
    assert max(r["turn"] for r in reqs) == last_turn, claude.describe()


def test_a_resumed_session_keeps_its_counts(claude, tmp_path):
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[BASH]] * 30)
    k = sc.resume_split(decisions)
    p, first_reqs = claude.session({"FAKE_TURNS": k}, args=["--output-format", "json"])
    session_id = json.loads(p.stdout)["session_id"]
    assert max(r["turn"] for r in first_reqs) == k + 1, claude.describe()
    p, reqs = claude.session({"FAKE_TURNS": 30}, args=["--resume", session_id], prompt="go on")
    assert min(r["turn"] for r in reqs) == k + 1, claude.describe()
    assert_blocked_then_stopped(claude, [r for r in reqs if r["turn"] > k + 1] + first_reqs, decisions)


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
