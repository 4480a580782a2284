#!/usr/bin/env python3
"""Surface loop candidates in the real-trajectory corpus, to help a person label it.

This script decides nothing: it prints, per trajectory, the signals an operator would look at
(repeated identical calls, repeated outcomes, error streaks, searches that find nothing, short
cycles), and with --show prints a trajectory one line per call so that it can be read. Labels
are written by hand in tests/realdata/labels.jsonl following tests/realdata/RUBRIC.md.

Usage:
  python3 scripts/realdata/candidates.py [--data DIR] [--framework NAME]
  python3 scripts/realdata/candidates.py --show ID [--width 160]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert import read_sessions  # noqa: E402

NOTHING = re.compile(r"(?i)could not find|not found|no such file|no matches|nothing happens|"
                     r"invalid action|^\s*$|\[\]|error")
VOLATILE = re.compile(r"\d+(\.\d+)?|0x[0-9a-f]+|/tmp/\S+")


def data_dir(arg: Path | None) -> Path:
    import os
    for cand in (arg, os.environ.get("LOOPGUARD_REALDATA"), "tests/realdata/data",
                 Path(__file__).resolve().parents[2].parent / "shared" / "realdata"):
        if cand and Path(cand, "index.jsonl").exists():
            return Path(cand)
    sys.exit("no corpus found: run scripts/realdata/convert.py first (see tests/realdata/README.md)")


def calls(evs):
    """Pairs each tool_call with its result: [(tool, args-json, outcome-text, is_error)]."""
    out = []
    for ev in evs:
        if ev["kind"] == "tool_result":
            if "error" in ev:
                text, err = str(ev["error"]), True
            else:
                res = ev["result"]
                text = res["content"][0]["text"] if isinstance(res, dict) else json.dumps(res)
                err = False
            out.append((ev["tool"], json.dumps(ev["args"], sort_keys=True), text, err))
    return out


def signals(cs) -> dict:
    keys = [(t, a) for t, a, _, _ in cs]
    outs = [(t, a, VOLATILE.sub("#", o)) for t, a, o, _ in cs]
    same_call = max(Counter(keys).values(), default=0)
    same_out = max(Counter(outs).values(), default=0)
    nothing = sum(1 for _, _, o, e in cs if e or NOTHING.search(o[:200]))
    streak = best = 0
    prev = None
    for t, a, o, e in cs:
        norm = (t, VOLATILE.sub("#", o[:300]))
        streak = streak + 1 if norm == prev else 1
        prev = norm
        best = max(best, streak)
    cyc = 0
    for p in range(2, 7):
        run = 0
        for i in range(p, len(keys)):
            run = run + 1 if keys[i] == keys[i - p] else 0
            cyc = max(cyc, (run + p) // p if run >= p else 0)
    return {"calls": len(cs), "same_call": same_call, "same_outcome": same_out,
            "nothing": nothing, "same_result_streak": best, "cycle_laps": cyc}


def show(cs, width: int) -> None:
    """One line per call. `[=c7]`: the same call (tool and arguments) as call 7; `[=o7]`: the
    same outcome as call 7 once numbers, hex ids and /tmp paths are set aside."""
    seen_call: dict[tuple, int] = {}
    seen_out: dict[str, int] = {}
    for i, (t, a, o, e) in enumerate(cs, 1):
        o1 = " ".join(o.split())
        norm = VOLATILE.sub("#", o1)
        marks = "".join(f"[={k}{seen[key]}]" for k, seen, key in
                        (("c", seen_call, (t, a)), ("o", seen_out, norm)) if key in seen)
        seen_call.setdefault((t, a), i)
        seen_out.setdefault(norm, i)
        a1 = " ".join(a.split())
        print(f"{i:3d} {'E' if e else ' '}{marks} {t}({a1[:width // 2]}) -> {o1[:width // 2]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path)
    ap.add_argument("--framework")
    ap.add_argument("--show", action="append", help="trajectory id to print (repeatable)")
    ap.add_argument("--width", type=int, default=160)
    ap.add_argument("--blind", action="store_true", help="do not print how the run ended")
    a = ap.parse_args()
    d = data_dir(a.data)
    index = {json.loads(line)["id"]: json.loads(line) for line in open(d / "index.jsonl")}
    wanted = set(a.show or [])
    for f in sorted(d.glob("*.jsonl.gz")):
        if a.framework and f.name != f"{a.framework}.jsonl.gz":
            continue
        for sid, evs in read_sessions(f):
            cs = calls(evs)
            if wanted:
                if sid in wanted:
                    print(f"== {sid}" + ("" if a.blind else f" ({index[sid]['outcome']})"))
                    show(cs, a.width)
                continue
            print(json.dumps({"id": sid, "outcome": index[sid]["outcome"], **signals(cs)}))


if __name__ == "__main__":
    main()
