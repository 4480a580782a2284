#!/usr/bin/env python3
"""Instructions per event by function, guest functions included, from one callgrind run.

callgrind counts instructions exactly (the machine's load does not move them) but cannot name
the code wasmtime compiles at run time; wasmtime's perf map (LOOPGUARD_PERFMAP=1) names it. This
joins the two: each address callgrind reports is looked up in the map.

    LOOPGUARD_PERFMAP=1 valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        target/release/loopguard replay --jobs 1 --config C.json TRACE.jsonl > /dev/null
    python3 scripts/callgrind-guest.py cg.out /tmp/perf-PID.map --per EVENTS [--top 40]

PID is the one valgrind prints (`==PID==`). The totals include start-up (reading the compiled
policy from the compile cache); run on enough events that it does not matter, or subtract two
runs of different lengths.
"""

import argparse
import bisect
import re
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("callgrind_out")
    ap.add_argument("perf_map")
    ap.add_argument("--per", type=float, default=1.0, help="divide by this (events or decisions)")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()

    entries = []
    for line in open(args.perf_map):
        addr, size, name = line.rstrip("\n").split(" ", 2)
        entries.append((int(addr, 16), int(size, 16), re.sub(r"(::h|17h)[0-9a-f]{16}E?$", "", name)))
    entries.sort()
    starts = [e[0] for e in entries]

    def guest(addr):
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < entries[i][0] + entries[i][1]:
            return "[guest] " + re.sub(r"^wasm\[0\]::function\[\d+\]::", "", entries[i][2])
        return "[compiled, unnamed]"

    report = subprocess.run(
        ["callgrind_annotate", "--threshold=100", args.callgrind_out], capture_output=True, text=True, check=True
    ).stdout
    totals = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)", line)
        if not m:
            continue
        cost, name = int(m.group(1).replace(",", "")), m.group(2)
        jit = re.match(r"\?\?\?:0x([0-9a-f]+)", name)
        name = guest(int(jit.group(1), 16)) if jit else re.sub(r" \[.*\]$", "", name)
        totals[name] = totals.get(name, 0) + cost
    for name, cost in sorted(totals.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{cost / args.per:10.0f}  {name[:150]}")


if __name__ == "__main__":
    main()
