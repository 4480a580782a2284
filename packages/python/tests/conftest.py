"""Lists the example traces; the tests import the installed `loopguard` package by name."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
TRACES = ROOT / "examples" / "traces"
EXAMPLES = sorted(p.name for p in TRACES.iterdir() if (p / "trace.jsonl").is_file())
REPLAY_PY = ROOT / "examples" / "python-gateway" / "replay.py"
