"""OpenCode 1.18.33 with loopguard's in-process plugin (packages/opencode-plugin, npm
`opencode-loopguard`), installed as its users install it: `opencode.json`
`{"plugin": ["opencode-loopguard"]}` (the npm install it triggers seeded offline: plugin_clis.OpenCode).
A block is the policy's message as the call's tool error, read by the model as is; a warning
is appended to that call's output; an end of run aborts the session (`client.session.abort`).
OpenCode has no loop check of its own on tool calls, so every decision is loopguard's."""

import json
import re

import pytest

import clis
import plugin_clis
import scenarios as sc
import work
from scenarios import POLL

BASH = ("bash", {"command": POLL, "description": "Check build status"})


def deny_text(message):
    return message


@pytest.fixture(autouse=True)
def replay_on_the_plugins_policy(monkeypatch):
    """The replay runs the policy the plugin runs: the npm package's (packages/node)."""
    monkeypatch.setattr(sc, "run_replay", plugin_clis.node_replay)


@pytest.fixture
def opencode(tmp_path):
    assert (clis.CLIS / "opencode").exists(), "the CLIs are missing: . scripts/setup-agent-clis.sh"
    return plugin_clis.OpenCode(tmp_path, None)


class OpenCodeShape(work.Shape):
    """OpenCode's `bash` tool: the output the plugin records and the model reads is stdout and
    stderr together; the plugin's note rides after it (`\\n\\n` + the note)."""

    notes_in_result = True

    def fake_call(self, step):
        assert step.command, "only shell steps here"
        return {"command": step.command, "description": step.description}

    def traced(self, step):
        return "bash", {"command": step.command, "description": step.description}, {"result": shown_output(step)}

    def denial(self, message, step):
        return message

    def shown(self, text):
        notes = re.findall(r"\n\n(loopguard: [^\n]*)$", text)
        return re.sub(r"\n\nloopguard: [^\n]*$", "", text), notes


def shown_output(step):
    """What OpenCode's bash tool returns for a command: its output as printed, or a placeholder
    where it printed nothing."""
    return step.out if step.out else "(no output)"


def poll_result():
    return {"result": "still-running\n"}


def polls(n, per_turn=1):
    return [[(*BASH, poll_result())] * per_turn] * n


def test_the_same_echo_polled_is_denied_from_the_replayed_call_on_and_the_session_goes_on(opencode, tmp_path):
    """No config: the cautious preset warns at the 3rd unchanged poll (the note appended to that
    call's output, once) and blocks the 4th and every one after it with the policy's text; the
    tool ran 3 times; the session is not ended."""
    n = 7
    p, reqs = opencode.install().session({"FAKE_TURNS": n})
    decisions = sc.replay(tmp_path, sc.DEFAULT, polls(n))
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    sc.assert_calls(opencode, reqs, decisions, deny_text, n)
    ran = [sc.results_of_call(reqs, c)[0]["text"] for c in range(1, n + 1)]
    assert sum(t.startswith("still-running") for t in ran) == block.call - 1, opencode.describe()
    warn = sc.first(decisions, "warn", notify=True)
    assert ran[warn.call - 1] == f"still-running\n\n\n{warn.message}", opencode.describe()
    assert {r["turn"]: r["all"] for r in reqs}[n + 1].count(warn.message) == 1, opencode.describe()
    assert max(r["turn"] for r in reqs) == n + 1 and p.returncode == 0, opencode.describe()
    # OpenCode's database, read by `loopguard transcripts`, blocks where the plugin did.
    assert sc.transcripts_first_block(tmp_path, opencode.home / ".local" / "share" / "opencode")["call"] == block.call


def test_under_the_recommended_preset_the_ladder_aborts_the_session(opencode, tmp_path):
    """`loopguard: {preset: "recommended"}` (a plugin option in opencode.json): blocked at the
    4th and 5th poll; the 6th is the ladder's block, which aborts the session: the model gets no
    request after it."""
    n = sc.POLL_TURNS
    p, reqs = opencode.install({"config": json.loads(sc.RECOMMENDED)}).session({"FAKE_TURNS": n})
    decisions = sc.replay(tmp_path, sc.RECOMMENDED_FILLED, polls(n))
    end = sc.the_end(decisions)
    assert (sc.first(decisions, "block").call, (end.call, end.detector)) == (sc.POLL_BLOCK[0], sc.POLL_END_RECOMMENDED)
    sc.assert_calls(opencode, reqs, decisions, deny_text, end.call - 1)
    assert max(r["turn"] for r in reqs) == end.call, opencode.describe()


def test_a_ping_pong_between_two_reads_is_blocked_under_a_config_file(opencode, tmp_path):
    (opencode.proj / "a.txt").write_text("alpha\n")
    (opencode.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    n = 10
    p, reqs = opencode.install().session({"FAKE_TURNS": n, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    out = {"cat a.txt": "alpha\n", "cat b.txt": "beta\n"}
    calls = [[("bash", {"command": cmds[i % 2], "description": "Check build status"}, {"result": out[cmds[i % 2]]})] for i in range(n)]
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls)
    assert sc.first(decisions, "block").detector == "ping_pong"
    sc.assert_calls(opencode, reqs, decisions, deny_text, n)
    assert max(r["turn"] for r in reqs) == n + 1, opencode.describe()


def test_parallel_calls_lose_no_count(opencode, tmp_path):
    """OpenCode runs a step's calls at once: every call is checked before any outcome of its step
    is recorded, and the count goes on into the next step: three steps of two identical polls,
    the first block in the third step, exactly as the replay (checks, then outcomes, per step). Two per step: three identical calls in one step are
    OpenCode's own `doom_loop` (a permission `opencode run` auto-rejects, ending the run)."""
    turns, per = 3, 2
    p, reqs = opencode.install().session({"FAKE_TURNS": turns, "FAKE_PARALLEL": per})
    decisions = sc.replay(tmp_path, sc.DEFAULT, polls(turns, per))
    blocks = [d for d in decisions if d.action == "block"]
    assert blocks[0].call in (5, 6), decisions
    by_turn = {r["turn"]: r["results"] for r in reqs}
    for turn in range(1, turns + 1):
        got = by_turn[turn + 1]
        assert len(got) == per, f"turn {turn}: {got}\n{opencode.describe()}"
        expected = [d for d in blocks if per * (turn - 1) < d.call <= per * turn]
        denied = [r for r in got if r["text"].startswith("loopguard:")]
        assert len(denied) == len(expected), f"turn {turn}: {got}\n{opencode.describe()}"
        assert all(r["text"] == expected[0].message for r in denied), got
    assert max(r["turn"] for r in reqs) == turns + 1, opencode.describe()


def test_healthy_work_is_never_denied_nor_ended(opencode, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test: one session, the default config, nothing denied."""
    opencode.install()
    shape = OpenCodeShape(opencode.proj)
    parts = work.healthy()
    steps = [s for part in parts.values() for s in part]
    p, reqs, decisions = work.session(opencode, shape, tmp_path, steps)
    assert [d.call for d in decisions if d.action == "block"] == [], sc.findings(decisions)
    for name, part in parts.items():
        alone = work.replay(tmp_path, shape, part)
        assert [d.call for d in alone if d.action == "block"] == [], (name, sc.findings(alone))
    work.assert_as_replayed(opencode, shape, reqs, steps, decisions)


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_a_broken_config_answers_in_the_fail_mode(opencode, tmp_path, mode):
    """A config the policy rejects (`loopguard.preset: "loud"`): open lets every call run (one
    line on stderr, naming the file and the key); closed refuses every call with that reason."""
    bad = tmp_path / "bad-config.json"
    bad.write_text(json.dumps({"loopguard": {"preset": "loud"}}))
    p, reqs = opencode.install().session({"FAKE_TURNS": 2}, env={"LOOPGUARD_CONFIG": bad, "LOOPGUARD_FAIL_MODE": mode})
    said = f"loopguard: invalid config {bad}: loopguard.preset"
    assert said in p.stderr, opencode.describe()
    results = [sc.results_of_call(reqs, call) for call in (1, 2)]
    assert all(r and len(r) == 1 for r in results), opencode.describe()
    if mode == "open":
        assert [r[0]["text"] for r in results] == ["still-running\n"] * 2, opencode.describe()
    else:
        for r in results:
            assert r[0]["text"].startswith(said) and r[0]["text"].endswith("fail mode is closed."), opencode.describe()
