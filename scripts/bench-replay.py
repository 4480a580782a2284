#!/usr/bin/env python3
"""Replay and import benchmarks, side by side in one run, with the command behind every figure.

Figures are wall times (medians); the CPU seconds (user + sys of all threads) beside them show
how much of a wall time was waiting for a core that other work held.

    python3 scripts/bench-replay.py [--runs N] [--events N] [--seeds N] [--ts-runs N] [--skip-baseline] [--skip-ts] [--skip-import]

Paired, alternating runs (A B, B A, A B, ...) so that load that comes and goes hits both sides
alike; each figure is the median wall time, each ratio the median of the per-pair ratios. The
load average is printed before and after: the machine may be shared, and a figure taken under
load says so.

What it compares (all on the same traces, generated with tests/oracle/gen-trace.mjs, fixed seeds):
  - the previous release CLI ($LOOPGUARD_BASELINE, default /work/baseline/loopguard-0.2.0, which
    scripts/build-baseline.sh builds from the repository's history) vs this
    release's (target/release/loopguard, `cargo build --release -p loopguard-host`) with --jobs 1,
    on a 200,000-event tool trace and a 200,000-event bot trace;
  - this release with --jobs 1 vs --jobs 2 on the tool trace (many sessions), and beside it
    what two cores give at best here: one --jobs 1 run vs two at once;
  - OpenClaw's TypeScript guard (tests/oracle/driver.mjs on tests/openclaw/node_modules/openclaw,
    Node 24) on the same traces: total wall time (the target is judged on it), and the per-event
    rate without its start-up (the same driver on a one-line trace);
  - importing transcripts: the transcripts crate's import_bench on a 200,000-call store with
    zstd rows, and `loopguard transcripts --trace` / the report on that store, peak RSS from
    /usr/bin/time -v.

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
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench-replay"


def sh(cmd):
    return " ".join(str(c) if " " not in str(c) else f"'{c}'" for c in cmd)


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def node_bin():
    for p in [os.environ.get("NODE24_BIN", ""), ROOT / ".venv/node24/bin", Path("/work/main/.venv/node24/bin")]:
        if p and (Path(p) / "node").is_file():
            return Path(p) / "node"
    return Path(shutil.which("node") or "node")


def gen_interleaved(node, path, config, mix, events, seeds, first_seed):
    """SEEDS gen-trace runs, keys suffixed per seed, interleaved in blocks that keep each run's order."""
    per = events // seeds
    runs = []
    for k in range(seeds):
        seed = first_seed + k
        cfg = OUT / f"config-{mix}.json"
        cmd = [node, ROOT / "tests/oracle/gen-trace.mjs", "--seed", seed, "--events", per, "--mix", mix, "--config-out", cfg]
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
    shutil.copy(OUT / f"config-{mix}.json", config)
    merged, pos, block = [], [0] * seeds, 7
    while any(p < len(r) for p, r in zip(pos, runs)):
        for k, r in enumerate(runs):
            merged.extend(r[pos[k] : pos[k] + block])
            pos[k] += block
    path.write_text("\n".join(merged) + "\n")
    return len(merged)


CPU = {}  # command -> CPU seconds (user + sys) of each run


def timed(cmd, stdout=subprocess.DEVNULL):
    """Wall seconds of one run; its CPU seconds (user + sys, all threads) go to CPU[cmd]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([str(c) for c in cmd], check=True, stdout=stdout, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(sh(cmd), []).append(cpu)
    return wall


def cpu(cmd):
    return statistics.median(CPU.get(sh(cmd), [float("nan")]))


def paired(a, b, runs):
    """Alternating runs of commands a and b: (median a, median b, median of a/b per pair)."""
    timed(a)
    timed(b)  # warm-up: page cache, compile cache
    ta, tb = [], []
    for i in range(runs):
        first, second = (a, b) if i % 2 == 0 else (b, a)
        x, y = timed(first), timed(second)
        if i % 2 == 0:
            ta.append(x)
            tb.append(y)
        else:
            ta.append(y)
            tb.append(x)
    return statistics.median(ta), statistics.median(tb), statistics.median([x / y for x, y in zip(ta, tb)])


def capacity(cmd, runs):
    """What two cores give this workload on this machine: 2 x the wall of one run over the wall
    of two runs at once, median over alternating pairs. `--jobs 2` cannot beat it (a VM's two
    cores may share a physical core or a memory bus with other guests)."""

    def both():
        t = time.perf_counter()
        procs = [subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        if any(p.wait() != 0 for p in procs):
            sys.exit(f"bench-replay: {sh(cmd)} failed")
        return time.perf_counter() - t

    ratios = []
    for i in range(runs):
        if i % 2 == 0:
            one, two = timed(cmd), both()
        else:
            two = both()
            one = timed(cmd)
        ratios.append(2 * one / two)
    return statistics.median(ratios)


def same_output(a, b):
    out = lambda cmd: subprocess.run([str(c) for c in cmd], capture_output=True).stdout
    return out(a) == out(b)


def peak_rss(cmd):
    """Wall seconds and peak RSS (MiB) of one run, from /usr/bin/time -v."""
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v"] + [str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return wall, (int(m.group(1)) / 1024 if m else float("nan")), r.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="paired runs per comparison (default 7)")
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--seeds", type=int, default=50, help="gen-trace runs interleaved per trace (default 50)")
    ap.add_argument("--ts-runs", type=int, default=3, help="runs of the TypeScript driver (default 3)")
    ap.add_argument("--skip-ts", action="store_true", help="leave out the TypeScript guard")
    ap.add_argument("--skip-import", action="store_true", help="leave out the transcript import")
    ap.add_argument("--skip-baseline", action="store_true", help="leave out the previous release (when its CLI is not on the machine)")
    args = ap.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    node = node_bin()
    new = Path(os.environ.get("LOOPGUARD_BIN", ROOT / "target/release/loopguard"))
    base = Path(os.environ.get("LOOPGUARD_BASELINE", "/work/baseline/loopguard-0.2.0"))
    openclaw = Path(os.environ.get("OPENCLAW_DIR", ROOT / "tests/openclaw/node_modules/openclaw"))
    if not openclaw.is_dir():
        openclaw = Path("/work/main/tests/openclaw/node_modules/openclaw")
    for p in (new, node) if args.skip_baseline else (new, base, node):
        if not Path(p).is_file():
            hint = " (build it with scripts/build-baseline.sh, set LOOPGUARD_BASELINE, or --skip-baseline)" if p == base else ""
            sys.exit(f"bench-replay: {p} is missing{hint}")
    rows = []  # (figure, value, command)
    print(f"load average before: {loadavg()}  (cores: {os.cpu_count()})", flush=True)

    traces = {}
    for mix, seed in (("tool", 1000), ("bot", 2000)):
        trace, config = OUT / f"{mix}-{args.events}.jsonl", OUT / f"{mix}.json"
        if not trace.is_file() or not config.is_file():
            n = gen_interleaved(node, trace, config, mix, args.events, args.seeds, seed)
        else:
            n = sum(1 for _ in trace.open())
        traces[mix] = (trace, config, n)
        print(f"{mix} trace: {n} events, {trace.stat().st_size / 1e6:.1f} MB: {trace}", flush=True)

    def cli(binary, mix, *extra):
        trace, config, _ = traces[mix]
        return [binary, "replay", *extra, "--config", config, trace]

    for mix in () if args.skip_baseline else ("tool", "bot"):
        n = traces[mix][2]
        a, b = cli(base, mix), cli(new, mix, "--jobs", "1")
        ta, tb, r = paired(a, b, args.runs)
        rows.append((f"{mix}: previous release 0.2.0", f"{ta:.3f} s ({n / ta / 1e3:.0f}k ev/s), CPU {cpu(a):.2f} s", sh(a)))
        rows.append((f"{mix}: this release --jobs 1", f"{tb:.3f} s ({n / tb / 1e3:.0f}k ev/s), CPU {cpu(b):.2f} s", sh(b)))
        rows.append((f"{mix}: 0.2.0 / new --jobs 1 (>= 1 = not slower)", f"{r:.2f}x", "paired, median of ratios"))
        print(rows[-3:], flush=True)

    n = traces["tool"][2]
    a, b = cli(new, "tool", "--jobs", "1"), cli(new, "tool", "--jobs", "2")
    ta, tb, r = paired(a, b, args.runs)
    rows.append(("tool: --jobs 1", f"{ta:.3f} s, CPU {cpu(a):.2f} s", sh(a)))
    rows.append(("tool: --jobs 2", f"{tb:.3f} s, CPU {cpu(b):.2f} s (all threads)", sh(b)))
    rows.append(("tool: --jobs 1 / --jobs 2 (target >= 1.8)", f"{r:.2f}x", f"identical output: {same_output(a, b)}"))
    cap = capacity(a, args.runs)
    rows.append(("tool: two --jobs 1 runs at once, 2 x one / both (the cores' ceiling)", f"{cap:.2f}x", "paired, median of ratios"))
    print(rows[-4:], flush=True)

    one = OUT / "one-line.jsonl"
    one.write_text(traces["tool"][0].open().readline())
    for mix in () if args.skip_ts else ("tool", "bot"):
        trace, config, n = traces[mix]
        ts = [node, ROOT / "tests/oracle/driver.mjs", "--openclaw", openclaw, "--config", config, trace]
        start = [node, ROOT / "tests/oracle/driver.mjs", "--openclaw", openclaw, "--config", config, one]
        best = cli(new, mix, "--jobs", "2") if mix == "tool" else cli(new, mix, "--jobs", "1")
        new_start = cli(new, mix, "--jobs", "1")[:-1] + [one]
        # Paired like the others: a load that comes and goes hits both sides alike.
        t_ts, t_new, ratio = paired(ts, best, args.ts_runs)
        t_start, t_new_start, _ = paired(start, new_start, args.ts_runs)
        rows.append((f"{mix}: OpenClaw TS guard, total", f"{t_ts:.2f} s", sh(ts)))
        rows.append((f"{mix}: OpenClaw TS start-up (1-line trace)", f"{t_start:.2f} s", sh(start)))
        per_ts = (t_ts - t_start) / n * 1e6
        per_new = max(t_new - t_new_start, 1e-9) / n * 1e6
        rows.append((f"{mix}: TS per event without start-up", f"{per_ts:.2f} us", "(total - start-up) / events"))
        rows.append((f"{mix}: loopguard total (--jobs {best[3]})", f"{t_new:.3f} s", sh(best)))
        rows.append((f"{mix}: loopguard per event without start-up", f"{per_new:.2f} us", "(total - 1-line run) / events"))
        rows.append((f"{mix}: TS / loopguard, total wall (target >= 10)", f"{ratio:.1f}x", "paired, median of ratios; judged on total wall time"))
        rows.append((f"{mix}: TS / loopguard, per event", f"{per_ts / per_new:.1f}x", ""))
        print(rows[-7:], flush=True)

    if not args.skip_import:
        store = OUT / "import-store.sqlite"
        bench = ["cargo", "run", "-q", "--release", "-p", "loopguard-transcripts", "--example", "import_bench", "--", "200000", "400", store]
        r = subprocess.run([str(c) for c in bench], cwd=ROOT, capture_output=True, text=True)
        for line in (r.stdout + r.stderr).splitlines():
            if line.startswith(("imported", "on-CPU", "peak", "generated")):
                rows.append(("import_bench: " + line.split(":")[0][:40], line, sh(bench)))
        for jobs in ("1", "2"):
            cmd = [new, "transcripts", "--trace", "--jobs", jobs, store]
            wall, rss, code = peak_rss(cmd)
            rows.append((f"transcripts --trace --jobs {jobs}", f"{wall:.2f} s, {200_000 / wall / 1e3:.0f}k tool calls/s, peak RSS {rss:.0f} MiB (exit {code})", sh(["/usr/bin/time", "-v"] + cmd)))
        on = OUT / "on.json"
        on.write_text('{"tools":{"loopDetection":{"enabled":true}}}\n')
        for jobs in ("1", "2"):
            cmd = [new, "transcripts", "--config", on, "--jobs", jobs, store]
            wall, rss, code = peak_rss(cmd)
            rows.append((f"transcripts report --jobs {jobs}", f"{wall:.2f} s, {200_000 / wall / 1e3:.0f}k tool calls/s, peak RSS {rss:.0f} MiB (exit {code})", sh(["/usr/bin/time", "-v"] + cmd)))
        print(rows[-6:], flush=True)

    print(f"\nload average after: {loadavg()}\n")
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"| {'figure':<{w0}} | {'value':<{w1}} | command |")
    print(f"|{'-' * (w0 + 2)}|{'-' * (w1 + 2)}|---------|")
    for f, v, c in rows:
        print(f"| {f:<{w0}} | {v:<{w1}} | `{c}` |")


if __name__ == "__main__":
    main()
