#!/usr/bin/env python3
"""Evaluate loop guards on the labelled real-trajectory corpora.

Reads both corpora: `tests/realdata/labels.jsonl` over the traces of `../shared/realdata/` (chat
and short agent runs) and `tests/realdata/labels-extra.jsonl` over `../shared/realdata-extra/`
(long coding-agent runs). Replays every labelled trajectory through `loopguard replay` under each
loopguard config (OpenClaw's defaults, the `recommended` preset, each detector alone) and runs
the peers' rules (scripts/realdata/peers.py) on the same events, then prints markdown tables for
the split, overall and per framework:

- loops warned by nudge: labelled loops with a warning or block at a call <= `nudge_at`;
- loops blocked by stop: labelled loops with a stop point and a block at a call <= `stop_at`;
- calls saved: over those loops, the calls from the first block to the end of the recorded run;
- healthy warned / blocked: trajectories labelled healthy with any warning (or block) / block;
- F1: "this trajectory loops" = any warning or block.

`--tune` prints the level grid on the tune split (how the presets' levels were chosen); figures
are reported on the report split. Python 3.11 standard library only.

Usage:
  python3 scripts/realdata/eval.py [--data DIR] [--extra DIR] [--cli PATH | --replayer 'CMD {config} {trace}']
                                   [--policy FILE.wasm] [--split report|tune|all] [--tune] [--set JSON]
`--set '{"loopguard":{...}}'` evaluates one more config (merged over `recommended`) beside the others.
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
from select_extra import extra_dir  # noqa: E402
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
    "cautious (the agent-facing default)": lg({"preset": "cautious"}),
    "same_error alone": alone("sameError"),
    "same_result alone": alone("sameResult"),
    "cycle alone": alone("cycle"),
    "growing_args alone": alone("growingArgs"),
}


def progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)


def load(dirs: list[Path], wanted: set[str]) -> tuple[dict[str, list[dict]], dict[str, Path]]:
    """Events per labelled session, and one plain trace file per corpus file holding only the
    labelled sessions (written to a temp dir)."""
    sessions: dict[str, list[dict]] = {}
    files: dict[str, Path] = {}
    tmp = Path(tempfile.mkdtemp(prefix="lg-eval-"))
    for n, d in enumerate(dirs):
        for f in sorted(d.glob("*.jsonl.gz")):
            kept = []
            for line in gzip.decompress(f.read_bytes()).decode().splitlines():
                ev = json.loads(line)
                if ev["session"] in wanted:
                    sessions.setdefault(ev["session"], []).append(ev)
                    kept.append(line)
            if kept:
                plain = tmp / f"{n}-{f.name.removesuffix('.gz')}"
                plain.write_text("\n".join(kept) + "\n")
                files[plain.name] = plain
    return sessions, files


def replay(cli: list[str], config: dict, files: dict[str, Path], policy: str | None) -> dict[str, list]:
    """Actions per session: [(call_index, action)] for warn/block/abort. `cli` is the binary, or
    a command template with `{config}` and `{trace}`."""
    acts: dict[str, list] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as c:
        json.dump(config, c)
    for plain in files.values():
        if any("{trace}" in part for part in cli):
            cmd = [part.replace("{config}", c.name).replace("{trace}", str(plain)) for part in cli]
        else:
            cmd = [*cli, "replay", "--config", c.name, "--jobs", "1"] + (["--policy", policy] if policy else [])
            cmd.append(str(plain))
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr.strip()}")
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
            if a == "abort" or dec.get("detector") == "ladder":
                acts.setdefault(s, []).append((calls.get(s, 0), "end"))
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
    fe = sum(1 for lab in healthy if first(lab["id"], ("end",)))
    flagged = {lab["id"] for lab in labels if first(lab["id"], ("warn", "block"))}
    tp = sum(1 for lab in loops if lab["id"] in flagged)
    prec = tp / len(flagged) if flagged else 0.0
    rec = tp / len(loops) if loops else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"loops": len(loops), "stop": len(stop), "healthy": len(healthy), "warned": len(warned),
            "blocked": len(blocked), "saved": saved, "fw": fw, "fb": fb, "fe": fe, "f1": f1, "p": prec, "r": rec}


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def table(rows: list[tuple[str, dict]]) -> str:
    out = ["| guard | loops warned by nudge | loops blocked by stop | calls saved | healthy warned | "
           "healthy blocked | healthy ended | F1 (P / R) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, m in rows:
        out.append(f"| {name} | {pct(m['warned'], m['loops'])} | {pct(m['blocked'], m['stop'])} | "
                   f"{m['saved']} | {pct(m['fw'], m['healthy'])} | {pct(m['fb'], m['healthy'])} | "
                   f"{pct(m['fe'], m['healthy'])} | {m['f1']:.2f} ({m['p']:.2f} / {m['r']:.2f}) |")
    return "\n".join(out)


def grid(cli, files, policy, labels, ncalls) -> None:
    """The levels tried on the tune split for `cautious` (how its levels were chosen): when the
    same call back to back blocks, when a re-run after changes blocks, when other arguments with
    the same answer warn."""
    rows = []
    for same in (4, 5):
        for rerun in (5, 6, 8):
            for varied in (3, 4):
                levels = {"blockAt": same, "rerunBlockAt": rerun, "variedWarnAt": varied}
                dets = {"sameError": levels, "sameResult": levels}
                progress(f"grid blockAt={same} rerunBlockAt={rerun} variedWarnAt={varied}")
                acts = replay(cli, lg({"preset": "cautious", "detectors": dets}), files, policy)
                rows.append((f"blockAt {same}, rerunBlockAt {rerun}, variedWarnAt {varied}", score(labels, acts, ncalls)))
    progress("")
    print("### Level grid (tune split, preset cautious)\n")
    print(table(rows) + "\n")


def framework(i: str) -> str:
    return i.split("/", 1)[0]


def targets(m: dict) -> str:
    """The "do no harm" targets (docs/REAL-LOOPS.md) on one row of the report."""
    checks = [
        ("healthy blocked <= 1%", m["fb"] <= 0.01 * m["healthy"]),
        ("healthy ended: none", m["fe"] == 0),
        ("healthy warned <= 5%", m["fw"] <= 0.05 * m["healthy"]),
        ("warned by nudge >= 80%", m["warned"] >= 0.8 * m["loops"]),
        ("blocked by stop >= 60%", m["blocked"] >= 0.6 * m["stop"]),
    ]
    return ", ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in checks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, help="the first corpus (default: tests/realdata/data or ../shared/realdata)")
    ap.add_argument("--extra", type=Path, help="the long-run corpus (default: ../shared/realdata-extra)")
    ap.add_argument("--cli", help="a built `loopguard` binary (default: the newer of target/release and target/debug)")
    ap.add_argument("--replayer", help="a replay command template instead: 'CMD {config} {trace}'")
    ap.add_argument("--policy", help="a policy component to use instead of the binary's embedded one")
    ap.add_argument("--split", default="report", choices=("report", "tune", "all"))
    ap.add_argument("--tune", action="store_true", help="print the level grid on the tune split")
    ap.add_argument("--set", help="one more config: JSON merged into `recommended`'s loopguard block")
    ap.add_argument("--only", help="only these configs (comma-separated names), peers included")
    a = ap.parse_args()
    if a.replayer:
        cli = a.replayer.split()
    else:
        built = [p for p in (ROOT / "target/release/loopguard", ROOT / "target/debug/loopguard") if p.exists()]
        path = a.cli or (str(max(built, key=lambda p: p.stat().st_mtime)) if built else None)
        if not path:
            sys.exit("no loopguard binary: build one with `cargo build -p loopguard-cli`")
        cli = [path]
    labels = []
    for name in ("labels.jsonl", "labels-extra.jsonl"):
        labels += [json.loads(x) for x in (ROOT / "tests/realdata" / name).read_text().splitlines()]
    sessions, files = load([data_dir(a.data), extra_dir(a.extra)], {lab["id"] for lab in labels})
    ncalls = {s: sum(1 for e in evs if e["kind"] == "tool_call") for s, evs in sessions.items()}
    missing = [lab["id"] for lab in labels if lab["id"] not in sessions]
    if missing:
        sys.exit(f"{len(missing)} labelled trajectories are not in the corpora (first: {missing[0]})")
    if a.tune:
        grid(cli, files, a.policy, [lab for lab in labels if lab["split"] == "tune"], ncalls)
    chosen = [lab for lab in labels if a.split == "all" or lab["split"] == a.split]
    configs = dict(CONFIGS)
    if a.set:
        configs["custom"] = lg({"preset": "recommended"} | json.loads(a.set))
    if a.only:
        configs = {k: v for k, v in configs.items() if k in a.only.split(",")}
    results: list[tuple[str, dict]] = []
    for i, (name, config) in enumerate(configs.items()):
        progress(f"[{i + 1}/{len(configs)}] {name}")
        results.append((name, replay(cli, config, files, a.policy)))
    for name, rule in PEERS.items():
        results.append((f"peer: {name}", {s: rule(evs) for s, evs in sessions.items()}))
    progress("")
    print(f"### {a.split} split: {len(chosen)} trajectories\n")
    print(table([(name, score(chosen, acts, ncalls)) for name, acts in results]) + "\n")
    for name, acts in results:
        if not name.startswith("peer") and name != "openclaw defaults (today)" and "alone" not in name:
            print(f"{name}: {targets(score(chosen, acts, ncalls))}\n")
    for fw in sorted({framework(lab["id"]) for lab in chosen}):
        part = [lab for lab in chosen if framework(lab["id"]) == fw]
        healthy = sum(1 for lab in part if not lab["loop"])
        print(f"#### {fw}: {len(part)} trajectories, {healthy} healthy\n")
        print(table([(name, score(part, acts, ncalls)) for name, acts in results]) + "\n")


if __name__ == "__main__":
    main()
