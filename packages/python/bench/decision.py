"""The Python figures of the README: one tool-call decision (before_tool_call + after_tool_outcome,
the arguments and the result as dicts) on the Rust benchmark's workload (1,000 sessions with
30-entry histories, ~300-byte arguments, results of a few hundred bytes), the batched path
(apply_events), and the cold start (import, first guard, first decision) in a fresh process.
Medians of several timed rounds. With opentelemetry-sdk installed, also the cost of metrics
(docs/METRICS.md): the same decisions on a guard recording on an SDK meter provider and on one
without, in alternating rounds of the same process (paired). A benchmark, not a test.

Usage: python bench/decision.py   (with the loopguard wheel installed)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

if len(sys.argv) > 1 and sys.argv[1] == "--cold":
    t0 = time.perf_counter()
    from loopguard import LoopGuard, ToolCall

    g = LoopGuard({"tools": {"loopDetection": {"enabled": True}}})
    g.before_tool_call(ToolCall("s", "read", {"path": "/a"}))
    print((time.perf_counter() - t0) * 1000)
    raise SystemExit(0)

from loopguard import LoopGuard, ToolCall  # noqa: E402

SESSIONS, HISTORY = 1000, 30
TOOLS = ["read", "exec", "grep", "edit", "web_fetch", "process"]


def args(s: int, step: int) -> dict:
    return {
        "path": f"/home/dev/projects/service-{s}/src/module_{step}/handler.rs",
        "command": f"cargo test -p service-{s} --lib module_{step}::tests -- --nocapture",
        "cwd": f"/home/dev/projects/service-{s}",
        "timeout_ms": 120000,
        "env": {"RUST_LOG": "debug", "CI": "false"},
        "step": step,
    }


def result(s: int, step: int) -> dict:
    text = (
        f"running 12 tests\ntest module_{step}::tests::parses ... ok\ntest module_{step}::tests::rejects_empty ... ok\n"
        f"test module_{step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_{step}::tests::round_trips stdout ----\n"
        f"assertion failed: left == right (session {s})\n\ntest result: FAILED. 11 passed; 1 failed"
    )
    return {"content": [{"type": "text", "text": text}], "exitCode": 101, "durationMs": 1000 + step * 7}


guard = LoopGuard({"tools": {"loopDetection": {"enabled": True}}})

# The arguments and results are built before the clock starts: a gateway already holds them as
# dicts, so building them is not the guard's time. The ToolCall is made inside the timed loop, as
# a gateway makes one per call.
WORK = SESSIONS * HISTORY
calls = []
for i in range(WORK):
    step, s = (i // SESSIONS) % HISTORY, i % SESSIONS
    calls.append((f"agent:main:session-{s}", TOOLS[step % len(TOOLS)], args(s, step), result(s, step)))


def decide(i: int) -> None:
    session, tool, a, res = calls[i % WORK]
    call = ToolCall(session, tool, a, "run-1")
    guard.before_tool_call(call)
    guard.after_tool_outcome(call, result=res)


for i in range(WORK):
    decide(i)
rounds = []
for r in range(7):
    n = 5000
    t = time.perf_counter()
    for i in range(n):
        decide(r * n + i)
    rounds.append((time.perf_counter() - t) * 1e6 / n)

lines = []
for i in range(2000):
    step = i % HISTORY
    base = {"session": f"agent:main:session-{i % SESSIONS}", "run": "run-1", "tool": TOOLS[step % len(TOOLS)], "args": args(i % SESSIONS, step)}
    lines.append(json.dumps({"kind": "tool_call", **base}))
    lines.append(json.dumps({"kind": "tool_result", **base, "result": result(i % SESSIONS, step)}))
batch = "\n".join(lines)
batched = []
for _ in range(5):
    t = time.perf_counter()
    guard.apply_events(batch)
    batched.append((time.perf_counter() - t) * 1e6 / len(lines))


def metrics_overhead(pairs=60):
    """Paired rounds on one guard, its metrics off and on in turn (the same state and workload on
    both sides: two guards would differ in what they hold), the median of the per-pair ratios;
    and the same pairing with metrics off on both sides (the A/A control: how far the method
    itself strays on this machine), interleaved with them."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    except ImportError:
        return None
    recorded = LoopGuard({"tools": {"loopDetection": {"enabled": True}}},
                         meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]))
    recorder = recorded._metrics
    slices = WORK // 1000

    def timed(on, k, n=1000):
        recorded._metrics = recorder if on else None
        t = time.perf_counter()
        for i in range(n):
            session, tool, a, res = calls[(k % slices) * n + i]
            call = ToolCall(session, tool, a, "run-1")
            recorded.before_tool_call(call)
            recorded.after_tool_outcome(call, result=res)
        return (time.perf_counter() - t) * 1e6 / n

    for k in range(slices):  # warm: every session of the workload seen
        timed(False, k)
    ratios: dict[bool, list[float]] = {True: [], False: []}
    k = 0
    for r in range(2 * pairs):  # short rounds, many pairs: a load that drifts hits both sides of a pair
        real = r % 2 == 0  # a real pair, then a control pair
        first = r % 4 < 2  # which side goes first alternates; each round takes the workload's next calls
        a, b = timed(real and first, k), timed(real and not first, k + 1)
        k += 2
        on, off = (a, b) if first else (b, a)
        ratios[real].append(on / off)
    return statistics.median(ratios[True]), statistics.median(ratios[False]), pairs


overhead = metrics_overhead()
cold = [float(subprocess.check_output([sys.executable, __file__, "--cold"]).decode()) for _ in range(5)]

print(f"python {sys.version.split()[0]}")
print(f"tool-call decision, args and result as dicts: {statistics.median(rounds):.2f} µs (median of {len(rounds)} rounds; {min(rounds):.2f}-{max(rounds):.2f})")
print(f"apply_events, {len(lines)} events per batch: {statistics.median(batched):.2f} µs per event")
print(f"cold start (import, first guard, first decision): {statistics.median(cold):.0f} ms (median of {len(cold)} processes)")
if overhead is not None:
    ratio, control, pairs = overhead
    print(f"metrics on (OpenTelemetry SDK, in-memory reader) against off, per decision: {(ratio - 1) * 100:+.1f}% "
          f"(median of {pairs} paired rounds; A/A control, off against off: {(control - 1) * 100:+.1f}%)")
