"""Makes `loopguard` importable from the tests and lists the example traces."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TRACES = HERE.parent.parent / "traces"
EXAMPLES = sorted(p.name for p in TRACES.iterdir() if (p / "trace.jsonl").is_file())
