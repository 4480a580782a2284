"""Cline's CLI 3.0.65 with loopguard's in-process plugin (packages/cline-plugin, npm
`cline-loopguard`), installed with `cline plugin install`. A block skips the call: the model reads
`{"error":"<the policy's message>"}` as its result; a warning reaches the model in a
`<hook_context>` user message; an end of run stops the task.

Cline checks exact repeats itself first: a recovery notice at the 3rd identical consecutive call
and the task stopped at the 5th (its CLI's loop detection, asked before the plugin). The
scenarios stay under that where they need more calls: a poll of at most 4 identical calls in a
row, or interleaved with another command."""

import json
import re

import pytest

import clis
import plugin_clis
import scenarios as sc
import work
from scenarios import POLL

OTHER = "echo other"


def deny_text(message):
    return json.dumps({"error": message}, separators=(",", ":"))


def entry(command, out, code=0):
    """One command's item in run_commands' output, as Cline reports it."""
    if code == 0:
        return {"query": command, "result": out, "success": True}
    return {"query": command, "result": out or f"[Command exited with code {code}]", "error": f"Command exited with code {code}", "success": False}


def shell(command, out):
    return ("run_commands", {"commands": [command]}, {"result": [entry(command, out)]})


OUT = {POLL: "still-running\n", OTHER: "other\n", "cat a.txt": "alpha\n", "cat b.txt": "beta\n"}


def calls(cmds):
    return [[shell(c, OUT[c])] for c in cmds]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    assert (clis.CLIS / "cline").exists(), "the CLIs are missing: . scripts/setup-agent-clis.sh"
    return plugin_clis.install_cline_plugin(tmp_path_factory.mktemp("cline-home"))


@pytest.fixture(autouse=True)
def replay_on_the_plugins_policy(monkeypatch):
    """The replay runs the policy the plugin runs: the npm package's (packages/node)."""
    monkeypatch.setattr(sc, "run_replay", plugin_clis.node_replay)


@pytest.fixture
def cline(tmp_path, template):
    return plugin_clis.Cline(tmp_path, None).install(template)


def notes(reqs, turn):
    """The plugin's notes the model read in the request of `turn` (the whole conversation)."""
    req = next(r for r in reqs if r["turn"] == turn)
    return re.findall(r"<hook_context[^>]*>\\n(loopguard: [^<]*?)\\n</hook_context>", req["all"])


def test_the_same_echo_polled_is_blocked_at_the_replayed_call_with_the_policy_text(cline, tmp_path):
    """No config: four identical polls (Cline's own stop comes at the 5th): the cautious preset
    warns at the 3rd (one `<hook_context>` note) and blocks the 4th with its message; the tool ran
    3 times; the task goes on to the final answer."""
    n = 4
    p, reqs = cline.session({"FAKE_TURNS": n})
    decisions = sc.replay(tmp_path, sc.DEFAULT, calls([POLL] * n))
    block = sc.first(decisions, "block")
    assert (block.call, block.detector) == sc.POLL_BLOCK
    sc.assert_calls(cline, reqs, decisions, deny_text, n)
    warn = sc.first(decisions, "warn", notify=True)
    assert notes(reqs, warn.call) == [] and notes(reqs, n + 1) == [warn.message], cline.describe()
    assert max(r["turn"] for r in reqs) == n + 1 and p.returncode == 0, cline.describe()
    # Cline's task history, read by `loopguard transcripts`, blocks where the plugin did.
    assert sc.transcripts_first_block(tmp_path, cline.home / ".cline" / "data")["call"] == block.call


def test_under_the_recommended_preset_the_ladder_stops_the_task(cline, tmp_path):
    """`loopguard: {preset: "recommended"}` (LOOPGUARD_CONFIG): poll, poll, another command, over
    and over (never 3 identical calls in a row, so Cline's own check stays quiet): the ladder's
    block stops the task: the model gets no request after it."""
    config = tmp_path / "recommended.json"
    config.write_text(sc.RECOMMENDED)
    n = 16
    cmds = [POLL, POLL, OTHER]
    p, reqs = cline.session({"FAKE_TURNS": n, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    decisions = sc.replay(tmp_path, sc.RECOMMENDED_FILLED, calls([cmds[i % 3] for i in range(n)]))
    end = sc.the_end(decisions)
    assert end is not None and end.call < n, sc.findings(decisions)
    sc.assert_calls(cline, reqs, decisions, deny_text, end.call - 1)
    assert max(r["turn"] for r in reqs) == end.call, cline.describe()


def test_a_ping_pong_between_two_reads_is_blocked_under_a_config_file(cline, tmp_path):
    (cline.proj / "a.txt").write_text("alpha\n")
    (cline.proj / "b.txt").write_text("beta\n")
    config = tmp_path / "low.json"
    config.write_text(sc.LOW)
    cmds = ["cat a.txt", "cat b.txt"]
    n = 10
    p, reqs = cline.session({"FAKE_TURNS": n, "FAKE_CMDS": json.dumps(cmds)}, env={"LOOPGUARD_CONFIG": config})
    decisions = sc.replay(tmp_path, sc.LOW_FILLED, calls([cmds[i % 2] for i in range(n)]))
    assert sc.first(decisions, "block").detector == "ping_pong"
    sc.assert_calls(cline, reqs, decisions, deny_text, n)
    assert max(r["turn"] for r in reqs) == n + 1, cline.describe()


def test_parallel_calls_are_each_checked_and_the_count_goes_on(cline, tmp_path):
    """Two steps of two identical polls: every call checked, the count goes on into the second
    step: the notes are the replay's (its warnings at calls 3 and 4), each once."""
    p, reqs = cline.session({"FAKE_TURNS": 2, "FAKE_PARALLEL": 2})
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[shell(POLL, OUT[POLL])] * 2] * 2)
    warned = [d.message for d in decisions if d.action == "warn" and d.notify]
    assert [d.call for d in decisions if d.action != "allow"] == [3, 4], sc.findings(decisions)
    for turn in (2, 3):
        got = next(r for r in reqs if r["turn"] == turn)["results"]
        assert [r["text"] for r in got] == [json.dumps([entry(POLL, OUT[POLL])], separators=(",", ":"))] * 2, cline.describe()
    assert notes(reqs, 3) == warned, cline.describe()
    assert max(r["turn"] for r in reqs) == 3, cline.describe()


class ClineShape(work.Shape):
    notes_in_result = False

    def traced(self, step):
        assert step.command, "only shell steps here"
        return "run_commands", {"commands": [step.command]}, {"result": [entry(step.command, step.out, step.code)]}

    def denial(self, message, step):
        return deny_text(message)


def test_healthy_work_is_never_denied_nor_ended(cline, tmp_path):
    """Greps for seven absent names, a dozen silent scaffolding commands, eight checks that print
    OK, `sed -i` edits then a passing test: one task, the default config, nothing denied."""
    shape = ClineShape(cline.proj)
    parts = work.healthy()
    steps = [s for part in parts.values() for s in part]
    p, reqs, decisions = work.session(cline, shape, tmp_path, steps)
    assert [d.call for d in decisions if d.action == "block"] == [], sc.findings(decisions)
    for name, part in parts.items():
        alone = work.replay(tmp_path, shape, part)
        assert [d.call for d in alone if d.action == "block"] == [], (name, sc.findings(alone))
    work.assert_as_replayed(cline, shape, reqs, steps, decisions)


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_a_broken_config_answers_in_the_fail_mode(cline, tmp_path, mode):
    """A config the policy rejects (`loopguard.preset: "loud"`): open lets every call run (one
    line on stderr, naming the file and the key); closed refuses every call with that reason."""
    bad = tmp_path / "bad-config.json"
    bad.write_text(json.dumps({"loopguard": {"preset": "loud"}}))
    p, reqs = cline.session({"FAKE_TURNS": 2, "FAKE_CMDS": json.dumps([POLL, OTHER])}, env={"LOOPGUARD_CONFIG": bad, "LOOPGUARD_FAIL_MODE": mode})
    said = f"loopguard: invalid config {bad}: loopguard.preset"
    results = [sc.results_of_call(reqs, call) for call in (1, 2)]
    assert all(r and len(r) == 1 for r in results), cline.describe()
    if mode == "open":
        assert [json.loads(r[0]["text"])[0]["result"] for r in results] == [OUT[POLL], OUT[OTHER]], cline.describe()
    else:
        for r in results:
            text = json.loads(r[0]["text"])["error"]
            assert text.startswith(said) and text.endswith("fail mode is closed."), cline.describe()
