#!/usr/bin/env python3
"""What one tool-call decision costs a Python gateway, on the mix of the Rust benchmark
(host/benches/decision.rs): 1 000 sessions with 30-entry histories already filled, ~300-byte
arguments, results of a few hundred bytes, sessions round-robin.

Two paths: single typed calls (before_tool_call + after_tool_outcome: four ctypes crossings of
wasmtime-py's generic value conversion each), and apply_events with 1 000 events per batch (one
crossing per batch), which is what a Python gateway should use where it can queue events.

Usage: python bench.py [--quick]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopguard import LoopGuard, ToolCall  # noqa: E402

CONFIG = '{"tools":{"loopDetection":{"enabled":true}}}'
SESSIONS, HISTORY, BATCH = 1000, 30, 1000
TOOLS = ["read", "exec", "grep", "edit", "web_fetch", "process"]


def event(session: int, step: int) -> tuple[ToolCall, dict]:
    args = {
        "path": f"/home/dev/projects/service-{session}/src/module_{step}/handler.rs",
        "command": f"cargo test -p service-{session} --lib module_{step}::tests -- --nocapture",
        "cwd": f"/home/dev/projects/service-{session}",
        "timeout_ms": 120000,
        "env": {"RUST_LOG": "debug", "CI": "false"},
        "step": step,
    }
    text = (
        f"running 12 tests\ntest module_{step}::tests::parses ... ok\ntest module_{step}::tests::rejects_empty ... ok\n"
        f"test module_{step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_{step}::tests::round_trips stdout ----\n"
        f"assertion failed: left == right (session {session})\n\ntest result: FAILED. 11 passed; 1 failed"
    )
    result = {"content": [{"type": "text", "text": text}], "exitCode": 101, "durationMs": 1000 + step * 7}
    call = ToolCall(session=f"agent:main:session-{session}", tool=TOOLS[step % len(TOOLS)], args=args, run="run-1")
    return call, result


def main() -> None:
    quick = "--quick" in sys.argv
    events = [event(s, step) for step in range(HISTORY) for s in range(SESSIONS)]
    arg_bytes = sum(len(json.dumps(c.args, separators=(",", ":"))) for c, _ in events) / len(events)
    lines = []
    for call, result in events:
        base = {"session": call.session, "run": call.run, "tool": call.tool, "args": call.args}
        lines.append(json.dumps({"kind": "tool_call", **base}, separators=(",", ":")))
        lines.append(json.dumps({"kind": "tool_result", **base, "result": result}, separators=(",", ":")))
    batches = ["\n".join(lines[i : i + BATCH]) for i in range(0, len(lines), BATCH)]

    with LoopGuard(CONFIG) as guard:
        # fill the histories through the batch path (fast), then measure both paths
        for b in batches:
            guard.apply_events(b, 1)
        print(f"{SESSIONS} sessions x {HISTORY}-entry histories filled; args ~{arg_bytes:.0f} bytes; Python {sys.version.split()[0]}")

        n = 3000 if quick else 10000
        t0 = time.perf_counter()
        for i in range(n):
            call, result = events[i % len(events)]
            guard.before_tool_call(call)
            guard.after_tool_outcome(call, result=result)
        single = (time.perf_counter() - t0) / n * 1e6
        print(f"{'single call (before_tool_call + after_tool_outcome)':58} {single:8.2f} µs per decision")

        rounds = 1 if quick else 2
        t0 = time.perf_counter()
        for _ in range(rounds):
            for b in batches:
                guard.apply_events(b, 1)
        per_event = (time.perf_counter() - t0) / (len(lines) * rounds) * 1e6
        print(f"{f'apply_events, {BATCH} events per batch':58} {per_event:8.2f} µs per event")
        print(f"{'':58} {per_event * 2:8.2f} µs per decision (call + result events)")
        # for scripts/bench-hosts.sh
        print(f"summary python single={single:.2f} batched={per_event:.2f}")


if __name__ == "__main__":
    main()
