"""What the policy itself says about the calls of a proxy scenario, so that no expected value
comes from the proxy under test (stdlib only: both scenario scripts import it, each in its venv).

Three sources, which the scenarios check against each other before they check the proxy:
  - `pinned`: the levels and texts of the spec, written out here (a replay that went wrong the
    same way as the proxy would not pass);
  - `replay`: `loopguard replay` of the same calls under the same document written out in full;
  - `hook`: `loopguard hook claude-code` without a config, the same calls one after the other
    (the agent-facing hosts share one default: the proxies must decide as the hook does).

A decision is reduced to what a proxy shows of it: ("block", message) for a call it answers
itself, ("warn", message) for a warning the policy says to tell (`notify`), ("pass", None) for
anything else (an allow, or a warning not to tell)."""
import json
import os
import subprocess
import tempfile

# host/src/agent.rs `AGENT_DEFAULTS` (docs/spec/beyond.md §1), written out by hand: what
# `loopguard mcp` without --config, the LiteLLM guardrail without LOOPGUARD_CONFIG and
# `loopguard hook` without a config must read. A proxy that filled in something else (OpenClaw's
# rules alone, say) decides differently from the replay under this document.
DEFAULT = {"tools": {"loopDetection": {"enabled": True}}, "loopguard": {"preset": "cautious"}}
# OpenClaw's rules only: the documented opt-out of the preset as a user writes it ...
PRESET_OFF = {"loopguard": {"preset": "off"}}
# ... and as the proxies must read it (`enabled` filled in from the default).
PRESET_OFF_FILLED = {"tools": {"loopDetection": {"enabled": True}}, "loopguard": {"preset": "off"}}

PASS = ("pass", None)


def pinned_cautious(tool, calls):
    """The same call answered the same way `calls` times under the default (`cautious`):
    sameResult's `same` levels warn 3 / block 4 (docs/spec/beyond.md §1, the presets' table;
    guest/src/config/detection.rs `CAUTIOUS` keeps `RECOMMENDED`'s), so the 3rd attempt is warned
    and the 4th and later are blocked. A blocked call has no outcome, so every later attempt is
    blocked with the same count. Texts: docs/spec/beyond.md §5.1 with n = count − 1 and the
    evidence Same ("for this same call")."""
    warn = (f"loopguard: {tool} returned the same result 2 times in a row for this same call. Another try is "
            "unlikely to change it; change approach.")
    block = (f"loopguard: {tool} returned the same result 3 times in a row for this same call; blocked. Calling it "
             "again will not change the answer: use what you already have, try a different approach, or report "
             "that it cannot be done.")
    return [PASS if i < 3 else ("warn", warn) if i == 3 else ("block", block) for i in range(1, calls + 1)]


def pinned_openclaw(tool, calls):
    """The same under OpenClaw's rules only (`preset: "off"`): warningThreshold 10 and
    criticalThreshold 20 (docs/spec/tool-loop.md), so the 11th call warns (told once), the 21st
    and later are blocked; texts of docs/spec/tool-loop.md."""
    warn = (f"WARNING: You have called {tool} 10 times with identical arguments. If this is not making "
            "progress, stop retrying and report the task as failed.")
    block = (f"CRITICAL: Called {tool} with identical arguments and identical outcomes 20 times. Session "
             "execution blocked to prevent runaway loops.")
    return [("warn", warn) if i == 11 else ("block", block) if i >= 21 else PASS for i in range(1, calls + 1)]


def summary(decisions):
    """`warned [3], blocked [4..30]`: the calls a proxy shows a decision for."""
    def calls(action):
        n = [i for i, (a, _) in enumerate(decisions, 1) if a == action]
        return "none" if not n else f"[{n[0]}..{n[-1]}]" if len(n) > 2 and n == list(range(n[0], n[-1] + 1)) else str(n)
    return f"{len(decisions)} calls, warned {calls('warn')}, blocked {calls('block')}"


def shown(d):
    if d.get("action") == "block":
        return ("block", d["message"])
    if d.get("action") == "warn" and d.get("notify"):
        return ("warn", d["message"])
    return PASS


def replay(loopguard, config, calls):
    """`loopguard replay` of `calls` ((tool, args, result) one after the other, each checked, then
    its result recorded) under `config`. A blocked call gets no result (the proxies never run
    it), so the trace is replayed until the blocks it leaves out no longer change."""
    blocked = set()
    with tempfile.TemporaryDirectory() as wd:
        cfg, trace = os.path.join(wd, "config.json"), os.path.join(wd, "trace.jsonl")
        with open(cfg, "w") as f:
            json.dump(config, f)
        while True:
            lines = []
            for i, (tool, args, result) in enumerate(calls, 1):
                lines.append({"kind": "tool_call", "session": "s", "call_id": f"c{i}", "tool": tool, "args": args})
                if i not in blocked:
                    lines.append({"kind": "tool_result", "session": "s", "call_id": f"c{i}", "tool": tool,
                                  "args": args, "result": result})
            with open(trace, "w") as f:
                f.write("".join(json.dumps(e) + "\n" for e in lines))
            out = subprocess.run([loopguard, "replay", "--config", cfg, trace], capture_output=True, text=True, check=True)
            decisions = [d for d in map(json.loads, out.stdout.splitlines()) if d["kind"] == "tool_call"]
            now = {i for i, d in enumerate(decisions, 1) if d["action"] == "block"}
            if now == blocked:
                return [shown(d) for d in decisions]
            blocked = now


def hook(loopguard, calls):
    """`loopguard hook claude-code` with no config at all, `calls` one after the other: PreToolUse
    (a deny is the block), then PostToolUse with the result for a call that ran (its
    `additionalContext` is the warning told)."""
    out = []
    with tempfile.TemporaryDirectory() as wd:
        env = dict(os.environ, LOOPGUARD_CONFIG="")

        def run(event):
            p = subprocess.run([loopguard, "hook", "claude-code", "--state-dir", os.path.join(wd, "state")],
                               input=json.dumps(event), capture_output=True, text=True, env=env, timeout=30)
            if p.returncode != 0 or p.stderr:
                raise SystemExit(f"loopguard hook: exit {p.returncode}: {p.stderr}")
            return json.loads(p.stdout).get("hookSpecificOutput") or {}

        for i, (tool, args, result) in enumerate(calls, 1):
            event = {"session_id": "proxies-default", "tool_name": tool, "tool_input": args, "tool_use_id": f"t{i}"}
            pre = run(dict(event, hook_event_name="PreToolUse"))
            if pre.get("permissionDecision") == "deny":
                out.append(("block", pre["permissionDecisionReason"]))
                continue
            post = run(dict(event, hook_event_name="PostToolUse", tool_response=result))
            out.append(("warn", post["additionalContext"]) if post.get("additionalContext") else PASS)
    return out
