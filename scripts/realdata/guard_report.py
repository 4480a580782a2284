#!/usr/bin/env python3
"""Replay the real-trajectory corpus through the loopguard CLI and count warnings and blocks.

Each framework file is replayed as one trace (history is kept per session, so sessions do not
see each other). Prints one line per trajectory that got a warning or a block, then totals.

Usage:
  python3 scripts/realdata/guard_report.py [--data DIR] [--config FILE] [--cli PATH] [--json OUT]
Without --cli the CLI is run with `cargo run -q -p loopguard-cli --`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from candidates import data_dir  # noqa: E402

DEFAULT_CONFIG = '{"tools":{"loopDetection":{"enabled":true}}}'


def replay(cli: list[str], config: Path, trace: Path) -> list[dict]:
    out = subprocess.run([*cli, "replay", "--config", str(config), str(trace)],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path)
    ap.add_argument("--config", type=Path)
    ap.add_argument("--cli", help="path of a built `loopguard` binary")
    ap.add_argument("--json", type=Path, help="write the per-trajectory results here")
    a = ap.parse_args()
    d = data_dir(a.data)
    cli = [a.cli] if a.cli else ["cargo", "run", "-q", "-p", "loopguard-cli", "--"]
    per: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        config = a.config or Path(tmp, "config.json")
        if not a.config:
            config.write_text(DEFAULT_CONFIG)
        for f in sorted(d.glob("*.jsonl.gz")):
            plain = Path(tmp, f.stem)
            plain.write_bytes(gzip.decompress(f.read_bytes()))
            events = [json.loads(line) for line in plain.read_text().splitlines()]
            for ev, dec in zip(events, replay(cli, config, plain), strict=True):
                row = per.setdefault(ev["session"], {"id": ev["session"], "calls": 0, "warn": [],
                                                     "block": [], "abort": [], "detectors": []})
                if ev["kind"] == "tool_call":
                    row["calls"] += 1
                action = dec.get("action")
                if action in ("warn", "block", "abort"):
                    row[action].append(row["calls"])
                    row["detectors"].append(dec.get("detector"))
    totals = Counter()
    for row in per.values():
        fw = row["id"].split("/")[0]
        totals[(fw, "trajectories")] += 1
        for k in ("warn", "block", "abort"):
            if row[k]:
                totals[(fw, k)] += 1
        if row["warn"] or row["block"] or row["abort"]:
            print(json.dumps({k: row[k] for k in ("id", "calls", "warn", "block", "abort")} |
                             {"detectors": sorted(set(row["detectors"]))}))
    for fw in sorted({k[0] for k in totals}):
        print(f"{fw}: {totals[(fw, 'trajectories')]} trajectories, warned in "
              f"{totals[(fw, 'warn')]}, blocked in {totals[(fw, 'block')]}, "
              f"aborted in {totals[(fw, 'abort')]}")
    if a.json:
        a.json.write_text("".join(json.dumps(r) + "\n" for r in per.values()))


if __name__ == "__main__":
    main()
