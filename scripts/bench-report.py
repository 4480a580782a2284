#!/usr/bin/env python3
"""`loopguard report` on 1,000,000 calls against `loopguard transcripts --json` on the same
input, and how fast the page opens in headless Chromium: the report figures of
docs/PERFORMANCE.md.

    python3 scripts/bench-report.py [--sessions N] [--calls N] [--pairs N] [--opens N] [--bin PATH]

The input (made once, kept under target/bench-report/input): N synthetic Claude Code sessions
(~/.claude/projects layout, 100 sessions a project folder) of --calls calls each; every tenth
session loops (its last 60% of calls one identical command with one identical output), the
others call varied commands with varied outputs. Deterministic: same arguments, same files.

What it measures:
  - wall time of `loopguard report --agent-default -o FILE INPUT` and of `loopguard transcripts
    --agent-default --json INPUT > /dev/null`, whole process, in alternating pairs (A B, B A, ...)
    so that load that comes and goes on a shared machine hits both alike; the ratio is the median
    of the per-pair ratios. Target: <= 1.5x.
  - the page in headless Chromium (tests/report/paint.mjs, the system chromium of
    scripts/setup-chromium.sh, playwright-core from tests/report): first-contentful-paint of the
    overview on a file:// URL (target: <= 3 s), the load event, opening one session.

Builds nothing: the CLI is --bin (default target/dist/loopguard: `cargo build --profile dist -p
loopguard-cli`). Needs Node 22 (scripts/node22.sh) and `npm ci` in tests/report.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench-report"
LOOP_EVERY = 10
PER_PROJECT = 100


def session_lines(s, calls):
    """One session's records: an assistant `tool_use` and a user `tool_result` per call."""
    sid = f"00000000-0000-4000-8000-{s:012d}"
    loops = s % LOOP_EVERY == 0
    loop_from = calls * 2 // 5
    parent = None
    for i in range(calls):
        if loops and i >= loop_from:
            cmd, out = "npm test --silent", "FAIL src/app.test.js: expected 200, received 500 (1 failed, 41 passed)"
        else:
            cmd = f"sed -n '{i * 10},{i * 10 + 9}p' src/module_{s % 97}/file_{i}.ts"
            out = f"// file_{i}.ts lines {i * 10}-{i * 10 + 9}: export const value{i} = compute({s}, {i});"
        ts = f"2026-12-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
        call, res, tid = f"{sid}-c{i}", f"{sid}-r{i}", f"toolu_{s}_{i}"
        yield json.dumps({"type": "assistant", "uuid": call, "parentUuid": parent, "sessionId": sid, "timestamp": ts,
                          "message": {"role": "assistant", "content": [
                              {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}]}})
        yield json.dumps({"type": "user", "uuid": res, "parentUuid": call, "sessionId": sid, "timestamp": ts,
                          "message": {"role": "user", "content": [
                              {"tool_use_id": tid, "type": "tool_result", "content": out, "is_error": False}]},
                          "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False}})
        parent = res


def make_input(sessions, calls):
    root = OUT / "input" / f"{sessions}x{calls}"
    done = root / ".complete"
    if done.is_file():
        return root
    tty = sys.stderr.isatty()
    for s in range(sessions):
        folder = root / f"-work-project-{s // PER_PROJECT:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"00000000-0000-4000-8000-{s:012d}.jsonl", "w") as f:
            f.write("\n".join(session_lines(s, calls)) + "\n")
        if tty and s % 100 == 0:
            print(f"\rbench-report: writing sessions {s}/{sessions}", end="", file=sys.stderr)
    if tty:
        print(file=sys.stderr)
    done.write_text("")
    return root


def timed(cmd, stdout):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=stdout, check=True)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--opens", type=int, default=3)
    ap.add_argument("--bin", default=str(ROOT / "target/dist/loopguard"))
    args = ap.parse_args()
    lg = Path(args.bin)
    if not lg.is_file():
        sys.exit(f"bench-report: no CLI at {lg} (cargo build --profile dist -p loopguard-cli, or --bin)")
    root = make_input(args.sessions, args.calls)
    page = OUT / "report.html"
    report = [lg, "report", "--agent-default", "-o", page, root]
    transcripts = [lg, "transcripts", "--agent-default", "--json", root]
    print(f"input: {args.sessions} sessions x {args.calls} calls under {root.relative_to(ROOT)}")
    ratios, times = [], {"report": [], "transcripts": []}
    with open(os.devnull, "w") as null:
        for p in range(args.pairs):
            order = [("transcripts", transcripts), ("report", report)]
            if p % 2:
                order.reverse()
            got = {name: timed(cmd, null) for name, cmd in order}
            for name, t in got.items():
                times[name].append(t)
            ratios.append(got["report"] / got["transcripts"])
            print(f"pair {p + 1}: transcripts --json {got['transcripts']:.2f} s, report {got['report']:.2f} s, "
                  f"ratio {ratios[-1]:.2f}", flush=True)
    size = page.stat().st_size
    print(f"report / transcripts --json: median ratio {statistics.median(ratios):.2f} "
          f"(report median {statistics.median(times['report']):.2f} s, transcripts median "
          f"{statistics.median(times['transcripts']):.2f} s); page {size / 1e6:.1f} MB")
    node = Path(os.environ.get("NODE22_BIN", ROOT / ".venv/node22/bin")) / "node"
    out = subprocess.run([node, ROOT / "tests/report/paint.mjs", page, str(args.opens)],
                         check=True, capture_output=True, text=True).stdout
    opens = [json.loads(line) for line in out.splitlines() if line.strip()]
    for o in opens:
        print(f"open: first-contentful-paint {o['fcp_ms']:.0f} ms, load {o['load_ms']:.0f} ms, "
              f"one session opened in {o['open_session_ms']:.0f} ms ({o['sessions']} session rows, {o['errors']} errors)")
    med = lambda k: statistics.median(o[k] for o in opens)  # noqa: E731
    print(f"page: median first-contentful-paint {med('fcp_ms'):.0f} ms, load {med('load_ms'):.0f} ms, "
          f"open a session {med('open_session_ms'):.0f} ms")


if __name__ == "__main__":
    main()
