#!/usr/bin/env python3
"""Replays a trace with the installed ``loopguard`` package and prints the decisions: the same
bytes as ``loopguard replay --config FILE TRACE`` (the parity test holds every host to that).

Usage: python replay.py --config FILE TRACE|-
Exit codes: 0 success, 2 any error (one line ``replay.py: <message>`` on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from loopguard import LoopGuardError, replay


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, like the other hosts
        raise SystemExit(_fail(f"{message}; usage: python replay.py --config FILE TRACE|-"))


def _fail(message: str) -> int:
    sys.stderr.write(f"replay.py: {message}\n")
    return 2


def _read(path: str, what: str) -> str:
    try:
        # newline="" keeps \r\n as it is: the policy handles line endings itself.
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise LoopGuardError(f"{what} {path}", str(e)) from None


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="replay.py", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="OpenClaw-style config (JSON or JSON5)")
    parser.add_argument("trace", help="trace file (JSON Lines), or - for stdin")
    args = parser.parse_args(argv)
    try:
        # The config is passed through as text: the policy parses JSON and JSON5 itself.
        out = replay(_read(args.config, "config"), _read(args.trace, "trace"))
    except LoopGuardError as e:
        return _fail(str(e))
    sys.stdout.buffer.write(out.encode("utf-8"))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
