#!/usr/bin/env python3
"""`loopguard replay` against OpenClaw's own TypeScript guard, and transcript import: the replay
and import floors of docs/PERFORMANCE.md, side by side in one run.

    python3 scripts/bench-replay.py [--runs N] [--events N] [--seeds N] [--skip-import]

What it compares, on the same traces (tests/oracle/gen-trace.mjs, fixed seeds):
  - `loopguard replay` (target/release/loopguard, `cargo build --release -p loopguard-cli`)
    against OpenClaw's TypeScript guard (tests/oracle/driver.mjs on
    tests/openclaw/node_modules/openclaw, Node 24) on a 200,000-event tool trace, bot-pair trace
    and burst-budget trace: whole process, wall time, paired alternating runs (A B, B A, ...) so
    that load that comes and goes hits both sides alike; the ratio is the median of the per-pair
    ratios. Floor: >= 5x.
  - importing transcripts: the transcripts crate's import_bench on a 200,000-call store with zstd
    rows (tool calls per second; floor >= 50,000/s), and peak RSS of `loopguard transcripts
    --trace` on that store (/usr/bin/time -v; bounded: it streams).

Many sessions and pairs: gen-trace keeps 8 sessions and a handful of bot pairs per trace, so the
traces here are SEEDS independent gen-trace runs interleaved, each with its session keys and bot
accounts suffixed by its seed (every session's and conversation's own order is kept).

Installs nothing. Needs the release CLI built, Node 24 (scripts/node24.sh puts it in .venv/node24)
and the OpenClaw package (scripts/setup-openclaw.sh).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench-replay"
# (trace name, gen-trace --mix, gen-trace --profile, first seed)
TRACES = (("tool", "tool", "default", 1000), ("bot", "bot", "default", 2000), ("burst", "bot", "burst", 3000))


def sh(cmd):
    return " ".join(str(c) if " " not in str(c) else f"'{c}'" for c in cmd)


def node_bin():
    for p in [os.environ.get("NODE24_BIN", ""), ROOT / ".venv/node24/bin"]:
        if p and (Path(p) / "node").is_file():
            return Path(p) / "node"
    sys.exit("bench-replay: Node 24 not found (scripts/node24.sh installs it into .venv/node24)")


def gen_interleaved(node, path, config, mix, profile, events, seeds, first_seed):
    """SEEDS gen-trace runs, keys suffixed per seed, interleaved in blocks that keep each run's order."""
    per = events // seeds
    runs = []
    for k in range(seeds):
        seed = first_seed + k
        cmd = [node, ROOT / "tests/oracle/gen-trace.mjs", "--seed", seed, "--events", per, "--mix", mix]
        cmd += ["--profile", profile, "--config-out", config]
        lines = subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout.splitlines()
        out = []
        for line in lines:
            ev = json.loads(line)
            if "session" in ev:
                ev["session"] = f"{ev['session']}#{seed}"
            if ev.get("kind") == "bot_message":
                ev["account"] = f"{ev['account']}-{seed}"
            # ASCII escapes: gen-trace writes lone surrogates (`\ud800`), which UTF-8 cannot carry raw.
            out.append(json.dumps(ev, separators=(",", ":")))
        runs.append(out)
    merged, pos, block = [], [0] * seeds, 7
    while any(p < len(r) for p, r in zip(pos, runs)):
        for k, r in enumerate(runs):
            merged.extend(r[pos[k] : pos[k] + block])
            pos[k] += block
    path.write_text("\n".join(merged) + "\n")
    return len(merged)


def timed(cmd):
    t = time.perf_counter()
    subprocess.run([str(c) for c in cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def paired(a, b, runs):
    """Alternating runs of commands a and b: (median a, median b, median of a/b per pair)."""
    timed(a)
    timed(b)  # warm-up: page cache, compile cache
    ta, tb = [], []
    for i in range(runs):
        if i % 2 == 0:
            ta.append(timed(a))
            tb.append(timed(b))
        else:
            tb.append(timed(b))
            ta.append(timed(a))
    return statistics.median(ta), statistics.median(tb), statistics.median([x / y for x, y in zip(ta, tb)])


def peak_rss(cmd):
    """Wall seconds and peak RSS (MiB) of one run, from /usr/bin/time -v."""
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v"] + [str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return wall, (int(m.group(1)) / 1024 if m else float("nan")), r.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="paired runs per comparison (default 5)")
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--seeds", type=int, default=50, help="gen-trace runs interleaved per trace (default 50)")
    ap.add_argument("--skip-import", action="store_true", help="leave out the transcript import")
    args = ap.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    node = node_bin()
    new = Path(os.environ.get("LOOPGUARD_BIN", ROOT / "target/release/loopguard"))
    openclaw = Path(os.environ.get("OPENCLAW_DIR", ROOT / "tests/openclaw/node_modules/openclaw"))
    for p in (new, openclaw):
        if not p.exists():
            sys.exit(f"bench-replay: {p} is missing")
    rows = []  # (figure, value, command)
    print("load average before: %.2f %.2f %.2f (cores: %d)" % (*os.getloadavg(), os.cpu_count()), flush=True)

    for name, mix, profile, seed in TRACES:
        trace, config = OUT / f"{name}-{args.events}.jsonl", OUT / f"{name}.json"
        if not trace.is_file() or not config.is_file():
            n = gen_interleaved(node, trace, config, mix, profile, args.events, args.seeds, seed)
        else:
            n = sum(1 for _ in trace.open())
        print(f"{name} trace: {n} events, {trace.stat().st_size / 1e6:.1f} MB: {trace}", flush=True)
        # OpenClaw 2026.9.6 has no burst budget: its guard replays the burst trace with the key
        # ignored (the pair guard only), the nearest work it does on the same events.
        unsupported = ["--ignore-unsupported"] if profile == "burst" else []
        ts = [node, ROOT / "tests/oracle/driver.mjs", "--openclaw", openclaw, *unsupported, "--config", config, trace]
        ours = [new, "replay", "--config", config, trace]
        t_ts, t_new, ratio = paired(ts, ours, args.runs)
        rows.append((f"{name}: OpenClaw's TS guard, whole process", f"{t_ts:.2f} s", sh(ts)))
        rows.append((f"{name}: loopguard replay, whole process", f"{t_new:.3f} s ({n / t_new / 1e3:.0f}k events/s)", sh(ours)))
        rows.append((f"{name}: TS / loopguard (floor >= 5)", f"{ratio:.1f}x", "paired, median of ratios"))
        print(rows[-3:], flush=True)

    if not args.skip_import:
        store = OUT / "import-store.sqlite"
        bench = ["cargo", "run", "-q", "--release", "-p", "loopguard-transcripts", "--example", "import_bench", "--", "200000", "400", store]
        r = subprocess.run([str(c) for c in bench], cwd=ROOT, capture_output=True, text=True)
        for line in (r.stdout + r.stderr).splitlines():
            if line.startswith(("imported", "peak")):
                rows.append(("import_bench: " + line.split(":")[0][:40], line, sh(bench)))
        cmd = [new, "transcripts", "--trace", store]
        wall, rss, code = peak_rss(cmd)
        rows.append(("transcripts --trace", f"{wall:.2f} s, {200_000 / wall / 1e3:.0f}k tool calls/s, peak RSS {rss:.0f} MiB (exit {code})", sh(["/usr/bin/time", "-v"] + cmd)))
        print(rows[-3:], flush=True)

    print("\nload average after: %.2f %.2f %.2f\n" % os.getloadavg())
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"| {'figure':<{w0}} | {'value':<{w1}} | command |")
    print(f"|{'-' * (w0 + 2)}|{'-' * (w1 + 2)}|---------|")
    for f, v, c in rows:
        print(f"| {f:<{w0}} | {v:<{w1}} | `{c}` |")


if __name__ == "__main__":
    main()
