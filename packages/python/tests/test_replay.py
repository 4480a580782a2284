"""Every example trace (examples/traces/*/) through Python, against expected.jsonl: the replay
export, apply_events in batches, check_many, one hook call per event, and replay.py's bytes."""

import json
import subprocess
import sys

import pytest
from conftest import EXAMPLES, REPLAY_PY, TRACES
from trace_events import feed_trace

from loopguard import LoopGuard, replay


def _read(name: str, file: str) -> str:
    with open(TRACES / name / file, encoding="utf-8", newline="") as f:
        return f.read()


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_replay_export(name: str) -> None:
    assert replay(_read(name, "config.json5"), _read(name, "trace.jsonl")) == _read(name, "expected.jsonl")


@pytest.mark.parametrize("name", EXAMPLES)
def test_apply_events_in_batches(name: str) -> None:
    lines = _read(name, "trace.jsonl").split("\n")
    with LoopGuard(_read(name, "config.json5")) as guard:
        out = "".join(guard.apply_events("\n".join(lines[i : i + 7]), i + 1) for i in range(0, len(lines), 7))
    assert out == _read(name, "expected.jsonl")


@pytest.mark.parametrize("name", EXAMPLES)
def test_check_many(name: str) -> None:
    events = [json.loads(line) for line in _read(name, "trace.jsonl").splitlines() if line.strip()]
    expected = [json.loads(line) for line in _read(name, "expected.jsonl").splitlines()]
    with LoopGuard(_read(name, "config.json5")) as guard:
        got = guard.check_many(events)
    # check_many numbers the events 1..n; the traces have no blank lines, so the numbers match
    assert got == expected


@pytest.mark.parametrize("name", EXAMPLES)
def test_one_hook_call_per_event(name: str) -> None:
    with LoopGuard(_read(name, "config.json5")) as guard:
        assert feed_trace(guard, _read(name, "trace.jsonl")) == _read(name, "expected.jsonl")


@pytest.mark.parametrize("name", EXAMPLES)
def test_replay_py_prints_the_same_bytes(name: str) -> None:
    run = subprocess.run(
        [sys.executable, str(REPLAY_PY), "--config", str(TRACES / name / "config.json5"), str(TRACES / name / "trace.jsonl")],
        capture_output=True,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout == (TRACES / name / "expected.jsonl").read_bytes()


def test_replay_py_exits_2_with_one_line_for_a_bad_trace() -> None:
    run = subprocess.run(
        [sys.executable, str(REPLAY_PY), "--config", str(TRACES / EXAMPLES[0] / "config.json5"), "-"],
        input=b'{"kind":"nope"}\n',
        capture_output=True,
    )
    assert run.returncode == 2
    assert run.stdout == b""
    assert run.stderr.decode().startswith("replay.py: line 1: kind: ")
    assert run.stderr.decode().count("\n") == 1
