#!/usr/bin/env python3
"""Choose which long coding-agent runs of `../shared/realdata-extra/` get labelled (tests/realdata/README.md).

The choice depends on nothing a detector computes: per source, trajectories are ordered by the
SHA-256 of their id and the first N of each stratum (>= 20 calls, < 20 calls) are taken, N from
QUOTA below. Every source (and so every framework) is represented and at least 300 of the chosen
runs have 20 calls or more, because long runs are where the guard went wrong.

The split is by task, so that all runs of one task land on the same side: `report` when the first
byte of SHA-256(task) is odd, else `tune`. The task is the benchmark instance (`django__django-11001`;
a Terminal-Bench task without its run suffix). OpenHands' session folders name only the repository
and version (`django__django__4.1-00395a33`), so each OpenHands session is its own task.

Usage:
  python3 scripts/realdata/select_extra.py [--data DIR] > ids.jsonl    # {"id", "task", "split"} per line
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# source id -> (runs with >= 20 calls, runs with < 20 calls)
QUOTA = {
    "msb-java-sweagent": (60, 15),
    "sweb-verified-sweagent": (65, 10),
    "coder-lite": (65, 10),
    "openhands-glm46-lite": (72, 3),
    "tbench-mini-sonnet4": (45, 15),
    "acr-repo-sweagent-gpt4": (5, 20),
    "acr-lite-gpt4": (5, 25),
}
LONG = 20


def extra_dir(arg: Path | None) -> Path:
    for cand in (arg, HERE.parents[2] / "shared" / "realdata-extra"):
        if cand and Path(cand, "index.jsonl").exists():
            return Path(cand)
    sys.exit("no ../shared/realdata-extra/index.jsonl beside the clone (or pass --data DIR)")


def task(row: dict) -> str:
    """The benchmark task a run belongs to (see the module doc)."""
    if row["source_id"].startswith("tbench"):
        return re.sub(r"\.\d+-of-\d+\..*$", "", row["item"])
    return row["item"]


def split_of(task_name: str) -> str:
    return "report" if hashlib.sha256(task_name.encode()).digest()[0] % 2 else "tune"


def choose(index: list[dict]) -> list[dict]:
    out = []
    for source, (n_long, n_short) in QUOTA.items():
        rows = sorted((r for r in index if r["source_id"] == source),
                      key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
        out += [r for r in rows if r["calls"] >= LONG][:n_long]
        out += [r for r in rows if 0 < r["calls"] < LONG][:n_short]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path)
    a = ap.parse_args()
    index = [json.loads(x) for x in (extra_dir(a.data) / "index.jsonl").read_text().splitlines()]
    for r in choose(index):
        t = task(r)
        print(json.dumps({"id": r["id"], "task": t, "split": split_of(t), "calls": r["calls"]}))


if __name__ == "__main__":
    main()
