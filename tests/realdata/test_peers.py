"""The peers' rules as eval.py runs them (scripts/realdata/peers.py), on hand-made trajectories:
each rule fires where its documentation says and stays quiet on a healthy run."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "realdata"))
from peers import gemini_cli, hermes, openhands  # noqa: E402


def run(calls):
    """Trace events for [(tool, args, text, is_error)]."""
    evs = []
    for i, (tool, args, text, err) in enumerate(calls, start=1):
        base = {"session": "s", "call_id": f"c{i}", "tool": tool, "args": args}
        evs.append({"kind": "tool_call", **base})
        out = {"error": text} if err else {"result": {"content": [{"type": "text", "text": text}]}}
        evs.append({"kind": "tool_result", **base, **out})
    return evs


SAME = [("read", {"path": "/a"}, "x", False)] * 6
HEALTHY = [("read", {"path": f"/f{i}"}, f"content {i}", False) for i in range(8)]


def test_gemini_cli_stops_the_fifth_identical_call_in_a_row():
    assert gemini_cli(run(SAME)) == [(5, "block")]
    assert gemini_cli(run(HEALTHY)) == []


def test_openhands_is_stuck_after_four_identical_pairs_or_three_identical_errors():
    assert openhands(run(SAME)) == [(5, "block")]
    errors = [("bash", {"command": "make"}, "Error: no rule", True)] * 4
    assert openhands(run(errors)) == [(4, "block")]
    alternating = [("a", {}, "1", False), ("b", {}, "2", False)] * 4
    assert openhands(run(alternating)) == [(7, "block")]
    assert openhands(run(HEALTHY)) == []


def test_hermes_notes_the_third_identical_call_and_halts_the_fifth():
    acts = hermes(run(SAME))
    assert acts[0] == (4, "warn"), acts
    assert (6, "block") in acts
    assert hermes(run(HEALTHY)) == []
