"""What the policy itself says about a session: the same calls as a trace, `loopguard replay`
under the same config. The tests compare what the model received with these decisions, so that
no expected value comes from the hook under test."""

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import clis

POLL = "echo still-running"
RESULT = {"stdout": "still-running"}
# What each command prints, as the replay's results: the detectors beyond OpenClaw compare the
# outcomes of different calls, so `cat a.txt` and `cat b.txt` must not read alike.
RESULTS = {POLL: RESULT, "cat a.txt": {"stdout": "alpha"}, "cat b.txt": {"stdout": "beta"}}


@dataclass
class Decision:
    call: int  # 1-based call number in the session
    action: str
    detector: str | None
    message: str | None
    notify: bool


def replay(wd: Path, config: str, turns: list[list[tuple]]) -> list[Decision]:
    """Replays `turns` (each a list of calls made in parallel: all checks, then all outcomes, as
    the CLIs run them) and returns the decision of every call. A call is (tool, args), its
    outcome then RESULTS[args["command"]], or (tool, args, outcome) with the outcome as the
    trace's `{"result": …}` or `{"error": …}`. A blocked call has no outcome (the CLIs report
    none), so the trace is replayed until the blocks it leaves out no longer change."""
    blocked: set[int] = set()
    while True:
        decisions = replay_once(wd, config, turns, blocked)
        now = {d.call for d in decisions if d.action == "block"}
        if now == blocked:
            return decisions
        blocked = now


def run_replay(config: Path, trace: Path) -> str:
    """`loopguard replay` of the binary the hooks run. The in-process plugins' tests replace it
    with plugin_clis.node_replay: the policy of the `loopguard` npm package they run on."""
    return subprocess.run([str(clis.BIN), "replay", "--config", str(config), str(trace)],
                          capture_output=True, text=True, check=True).stdout


def replay_once(wd, config, turns, blocked):
    trace, n = [], 0
    for calls in turns:
        ids = []
        for tool, args, *outcome in calls:
            n += 1
            ids.append((f"c{n}", tool, args, outcome[0] if outcome else {"result": RESULTS[args["command"]]}))
            trace.append({"kind": "tool_call", "session": "s", "call_id": f"c{n}", "tool": tool, "args": args})
        for cid, tool, args, outcome in ids:
            if int(cid[1:]) in blocked:
                continue
            trace.append({"kind": "tool_result", "session": "s", "call_id": cid, "tool": tool, "args": args, **outcome})
    (wd / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in trace))
    (wd / "replay-config.json").write_text(config)
    out = run_replay(wd / "replay-config.json", wd / "trace.jsonl")
    lines = [json.loads(line) for line in out.splitlines()]
    calls = [d for d in lines if d["kind"] == "tool_call"]
    return [Decision(i + 1, d["action"], d.get("detector"), d.get("message"), d.get("notify", False)) for i, d in enumerate(calls)]


# The identical poll under the default config: the cautious preset's `sameResult` (the same
# call with the same outcome: warnAt 3, blockAt 4, guest/src/config/detection.rs) blocks the 4th
# call that returns the same result; OpenClaw's rules alone would wait for the 21st
# (criticalThreshold 20). Under `recommended` the ladder (abortAfterBlocks 3) ends the run at the
# third block of the same call, the 6th poll; `cautious` has no ladder and never ends one. Pinned
# here, from the levels, so that a replay that went wrong the same way as the hook would not pass.
POLL_BLOCK = (4, "same_result")
POLL_BLOCK_OPENCLAW = (21, "generic_repeat")
POLL_END_RECOMMENDED = (6, "ladder")
# Turns of a polling session: the block, and a run of denials after it.
POLL_TURNS = 12


def resume_split(decisions):
    """How many calls the first run of a resume test makes: two fewer than the replay's first
    block, so that the block falls in the resumed run at the replayed call only if the session
    kept its counts (a fresh count would block that many calls later)."""
    calls = first(decisions, "block").call - 2
    assert calls >= 1, decisions
    return calls


def findings(decisions):
    """The decisions that are not an allow, short, for failure messages."""
    return [(d.call, d.action, d.detector, d.message) for d in decisions if d.action != "allow"]


def first(decisions, action, notify=None):
    return next(d for d in decisions if d.action == action and (notify is None or d.notify == notify))


def results_of_call(requests, call: int):
    """The tool results of turn `call` (one call per turn): carried by the request of turn call+1."""
    req = next((r for r in requests if r["turn"] == call + 1), None)
    return None if req is None else req["results"]


# The configs the hooks run under, and the same documents written out in full for the replay.
# The hook fills in `tools.loopDetection.enabled: true` and `loopguard.preset: "cautious"`
# where a document is silent (docs/AGENT-CLIS.md, host/src/agent.rs); the replay gets them
# spelled out here, by hand, so that a hook that did not fill them in (or filled in something
# else) decides differently from the replay.
ENABLED = json.dumps({"tools": {"loopDetection": {"enabled": True}}})
# No config at all (the plugin as installed): what the hook must read it as.
DEFAULT = json.dumps({"tools": {"loopDetection": {"enabled": True}}, "loopguard": {"preset": "cautious"}})
# The preset that also ends a run (its ladder), as a user writes it and as the hook reads it.
RECOMMENDED = json.dumps({"loopguard": {"preset": "recommended"}})
RECOMMENDED_FILLED = json.dumps({"tools": {"loopDetection": {"enabled": True}}, "loopguard": {"preset": "recommended"}})
# OpenClaw's rules only: the documented opt-out of the preset (`enabled` filled in by the hook).
PRESET_OFF = json.dumps({"loopguard": {"preset": "off"}})
PRESET_OFF_FILLED = json.dumps({"tools": {"loopDetection": {"enabled": True}}, "loopguard": {"preset": "off"}})
LOW_THRESHOLDS = {"warningThreshold": 3, "criticalThreshold": 6, "globalCircuitBreakerThreshold": 9}
# A user's config file that says nothing of `enabled` or the preset ...
LOW = json.dumps({"tools": {"loopDetection": LOW_THRESHOLDS}})
# ... and what the hook reads it as.
LOW_FILLED = json.dumps({"tools": {"loopDetection": {**LOW_THRESHOLDS, "enabled": True}},
                         "loopguard": {"preset": "cautious"}})


def assert_calls(cli, reqs, decisions, deny_text, upto):
    """Calls 1..upto ran, or were denied with the policy's text, exactly as the replay says."""
    for d in decisions[:upto]:
        results = results_of_call(reqs, d.call)
        assert results and len(results) == 1, f"call {d.call}: {results}\n{cli.describe()}"
        if d.action == "block":
            assert results[0]["text"] == deny_text(d.message), f"call {d.call}: {results}\n{cli.describe()}"
        else:
            assert not results[0]["error"] and "CRITICAL" not in results[0]["text"], f"call {d.call}: {results}\n{cli.describe()}"


BAD_CONFIG = "{tools: {loopDetection: {warningThreshold: 30, criticalThreshold: 10}}}"


def broken(tmp_path, what, mode):
    """The environment of a broken config or policy, and what a denial must say."""
    env = {"LOOPGUARD_FAIL_MODE": mode}
    if what == "config":
        bad = tmp_path / "bad-config.json5"
        bad.write_text(BAD_CONFIG)
        env["LOOPGUARD_CONFIG"] = bad
        return env, f"invalid config {bad}"
    bad = tmp_path / "broken.wasm"
    bad.write_bytes(b"\0asm\x01\0\0\0 not a component")
    env["LOOPGUARD_POLICY"] = bad
    return env, f"cannot load policy {bad}"


def the_end(decisions):
    """The block that ends the session: the first by the policy's ladder (`ToolVerdict::ends_run`),
    or None (the `cautious` default has no ladder and never ends one)."""
    return next((d for d in decisions if d.action == "block" and d.detector == "ladder"), None)


def as_the_hook_ends(decisions):
    """The decisions as a guarded session shows them: the ladder's block ends the session, and a
    CLI that cannot end it (Codex) gets every later call denied with that block's message (the
    hook answers every later check of the session with it)."""
    end = the_end(decisions)
    if end is None:
        return decisions
    return [d if d.call <= end.call else Decision(d.call, "block", end.detector, end.message, False) for d in decisions]


def transcripts_first_block(wd: Path, history: Path, config: str = DEFAULT):
    """`loopguard transcripts --json` on the history a CLI wrote, under the config the hooks ran
    with: the first block's call number."""
    (wd / "transcripts-config.json").write_text(config)
    out = subprocess.run([str(clis.BIN), "transcripts", "--config", str(wd / "transcripts-config.json"), "--json", str(history)],
                         capture_output=True, text=True)
    sessions = [json.loads(line) for line in out.stdout.splitlines() if '"type":"session"' in line]
    assert len(sessions) == 1 and out.returncode == 0, out
    return sessions[0]["first_block"]
