#!/usr/bin/env python3
"""Evaluate loop guards on the labelled real-trajectory corpus (issue 50, point 3).

Replays every trajectory of the corpus through `loopguard replay` under each loopguard config
(OpenClaw's defaults, the `recommended` preset, each detector alone) and runs the peers' rules
(scripts/realdata/peers.py) on the same events, then prints a markdown table per split:

- loops warned by nudge: labelled loops with a warning or block at a call <= `nudge_at`;
- loops blocked by stop: labelled loops with a stop point and a block at a call <= `stop_at`;
- calls saved: over those loops, the calls from the first block to the end of the recorded run;
- healthy warned / blocked: trajectories labelled healthy with any warning (or block) / block;
- F1: "this trajectory loops" = any warning or block.

`--tune` prints the threshold grid on the tune split (how `recommended` was chosen); figures are
reported on the report split. Python 3.11 standard library only.

Usage:
  python3 scripts/realdata/eval.py [--data DIR] [--cli PATH] [--policy FILE.wasm] [--split report|tune|all] [--tune]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from candidates import data_dir  # noqa: E402
from peers import PEERS  # noqa: E402

ROOT = HERE.parents[1]
OPENCLAW = {"tools": {"loopDetection": {"enabled": True}}}
ALL_OFF = {"sameError": False, "sameResult": False, "cycle": False, "growingArgs": False, "ladder": False}


def lg(extra: dict) -> dict:
    return OPENCLAW | {"loopguard": extra}


def alone(name: str) -> dict:
    return lg({"scope": "session", "detectors": ALL_OFF | {name: True}})


CONFIGS = {
    "openclaw defaults (today)": OPENCLAW,
    "recommended": lg({"preset": "recommended"}),
    "recommended without ladder": lg({"preset": "recommended", "detectors": {"ladder": False}}),
    "same_error alone": alone("sameError"),
    "same_result alone": alone("sameResult"),
    "cycle alone": alone("cycle"),
    "growing_args alone": alone("growingArgs"),
}


def progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)


def load(d: Path) -> tuple[dict[str, list[dict]], dict[str, Path]]:
    """Events per session, and each framework's plain trace file (written to a temp dir)."""
    sessions: dict[str, list[dict]] = {}
    files: dict[str, Path] = {}
    tmp = Path(tempfile.mkdtemp(prefix="lg-eval-"))
    for f in sorted(d.glob("*.jsonl.gz")):
        text = gzip.decompress(f.read_bytes()).decode()
        plain = tmp / f.name.removesuffix(".gz")
        plain.write_text(text)
        files[f.name] = plain
        for line in text.splitlines():
            ev = json.loads(line)
            sessions.setdefault(ev["session"], []).append(ev)
    return sessions, files


def replay(cli: list[str], config: dict, files: dict[str, Path], policy: str | None) -> dict[str, list]:
    """Actions per session: [(call_index, action)] for warn/block/abort."""
    acts: dict[str, list] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as c:
        json.dump(config, c)
    for plain in files.values():
        cmd = [*cli, "replay", "--config", c.name, "--jobs", "1"]
        if policy:
            cmd += ["--policy", policy]
        run = subprocess.run([*cmd, str(plain)], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} {plain} failed ({run.returncode}): {run.stderr.strip()}")
        out = run.stdout
        events = [json.loads(x) for x in plain.read_text().splitlines()]
        calls: dict[str, int] = {}
        for ev, dec in zip(events, (json.loads(x) for x in out.splitlines()), strict=True):
            s = ev["session"]
            if ev["kind"] == "tool_call":
                calls[s] = calls.get(s, 0) + 1
            a = dec.get("action")
            if a in ("warn", "block", "abort"):
                acts.setdefault(s, []).append((calls.get(s, 0), "block" if a == "abort" else a))
    Path(c.name).unlink()
    return acts


def score(labels: list[dict], acts: dict[str, list], ncalls: dict[str, int]) -> dict:
    loops = [lab for lab in labels if lab["loop"]]
    healthy = [lab for lab in labels if not lab["loop"]]
    stop = [lab for lab in loops if lab["stop_at"]]

    def first(i: str, kinds: tuple[str, ...]) -> int | None:
        return min((c for c, a in acts.get(i, []) if a in kinds), default=None)

    warned = [lab for lab in loops if (f := first(lab["id"], ("warn", "block"))) and f <= lab["nudge_at"]]
    blocked = [lab for lab in stop if (f := first(lab["id"], ("block",))) and f <= lab["stop_at"]]
    saved = sum(ncalls[lab["id"]] - first(lab["id"], ("block",)) + 1 for lab in blocked)
    fw = sum(1 for lab in healthy if first(lab["id"], ("warn", "block")))
    fb = sum(1 for lab in healthy if first(lab["id"], ("block",)))
    flagged = {lab["id"] for lab in labels if first(lab["id"], ("warn", "block"))}
    tp = sum(1 for lab in loops if lab["id"] in flagged)
    prec = tp / len(flagged) if flagged else 0.0
    rec = tp / len(loops) if loops else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"loops": len(loops), "stop": len(stop), "healthy": len(healthy), "warned": len(warned),
            "blocked": len(blocked), "saved": saved, "fw": fw, "fb": fb, "f1": f1, "p": prec, "r": rec}


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def table(rows: list[tuple[str, dict]]) -> str:
    out = ["| guard | loops warned by nudge | loops blocked by stop | calls saved | healthy warned | "
           "healthy blocked | F1 (P / R) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, m in rows:
        out.append(f"| {name} | {pct(m['warned'], m['loops'])} | {pct(m['blocked'], m['stop'])} | "
                   f"{m['saved']} | {pct(m['fw'], m['healthy'])} | {pct(m['fb'], m['healthy'])} | "
                   f"{m['f1']:.2f} ({m['p']:.2f} / {m['r']:.2f}) |")
    return "\n".join(out)


def grid(cli, files, policy, labels, ncalls) -> None:
    """The thresholds tried on the tune split: warnAt/blockAt for every detector, and how much
    two calls' texts must overlap to aim at the same thing (sameError, sameResult)."""
    rows = []
    for w, b in ((2, 4), (3, 4), (3, 5), (4, 5)):
        for overlap in (0, 10, 20, 30):
            t = {"warnAt": w, "blockAt": b}
            o = t | {"aimOverlap": overlap}
            dets = {"sameError": o, "sameResult": o, "growingArgs": t, "cycle": t}
            progress(f"grid warnAt={w} blockAt={b} aimOverlap={overlap}")
            acts = replay(cli, lg({"preset": "recommended", "detectors": dets}), files, policy)
            rows.append((f"warnAt {w}, blockAt {b}, aimOverlap {overlap}", score(labels, acts, ncalls)))
    progress("")
    print("### Threshold grid (tune split)\n")
    print(table(rows) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path)
    ap.add_argument("--cli", help="a built `loopguard` binary (default: the newer of target/release and target/debug)")
    ap.add_argument("--policy", help="a policy component to use instead of the binary's embedded one")
    ap.add_argument("--split", default="report", choices=("report", "tune", "all"))
    ap.add_argument("--tune", action="store_true", help="print the threshold grid on the tune split")
    a = ap.parse_args()
    built = [p for p in (ROOT / "target/release/loopguard", ROOT / "target/debug/loopguard") if p.exists()]
    cli = a.cli or (str(max(built, key=lambda p: p.stat().st_mtime)) if built else None)
    if not cli:
        sys.exit("no loopguard binary: build one with `cargo build -p loopguard-host --bin loopguard`")
    sessions, files = load(data_dir(a.data))
    labels = [json.loads(x) for x in (ROOT / "tests/realdata/labels.jsonl").read_text().splitlines()]
    ncalls = {s: sum(1 for e in evs if e["kind"] == "tool_call") for s, evs in sessions.items()}
    missing = [lab["id"] for lab in labels if lab["id"] not in sessions]
    if missing:
        sys.exit(f"{len(missing)} labelled trajectories are not in the corpus (first: {missing[0]})")
    if a.tune:
        grid([cli], files, a.policy, [lab for lab in labels if lab["split"] == "tune"], ncalls)
    chosen = [lab for lab in labels if a.split == "all" or lab["split"] == a.split]
    rows = []
    for i, (name, config) in enumerate(CONFIGS.items()):
        progress(f"[{i + 1}/{len(CONFIGS)}] {name}")
        rows.append((name, score(chosen, replay([cli], config, files, a.policy), ncalls)))
    for name, rule in PEERS.items():
        rows.append((f"peer: {name}", score(chosen, {s: rule(evs) for s, evs in sessions.items()}, ncalls)))
    progress("")
    print(f"### {a.split} split: {len(chosen)} trajectories\n")
    print(table(rows))


if __name__ == "__main__":
    main()
