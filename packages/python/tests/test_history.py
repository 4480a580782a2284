"""The history reader of the LiteLLM guardrail (docs/PROXIES.md): the same conversation in OpenAI chat,
Anthropic messages and Responses form gives the same typed calls and the same decisions."""
import json

from loopguard import LoopGuard
from loopguard import _history

ARGS = {"command": "gh run view 42"}
RESULT = "run 42: in progress"


def chat(n):
    msgs = [{"role": "user", "content": "wait for CI"}]
    for i in range(n):
        msgs.append({"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function",
                     "function": {"name": "exec", "arguments": json.dumps(ARGS)}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": RESULT})
    return {"messages": msgs}


def anthropic(n):
    msgs = [{"role": "user", "content": "wait for CI"}]
    for i in range(n):
        msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"c{i}", "name": "exec", "input": ARGS}]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": RESULT}]})
    return {"messages": msgs}


def responses(n):
    items = [{"role": "user", "content": "wait for CI"}]
    for i in range(n):
        items.append({"type": "function_call", "call_id": f"c{i}", "name": "exec", "arguments": json.dumps(ARGS)})
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": RESULT})
    return {"input": items}


def decide(data):
    items, _ = _history.calls("s", _history.history(data))
    items += _history.proposed("s", [("next", "exec", json.dumps(ARGS))])
    with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as g:
        made, error = g._live().apply_calls(items)
        assert error is None and len(made) == len(items)
        return _history.verdict(made[-1])


def test_three_formats_read_alike_and_block_the_21st_identical_call():
    for build in (chat, anthropic, responses):
        steps = _history.history(build(20))
        assert [k for k, _ in steps] == ["call", "result"] * 20, build.__name__
        assert _history.last_turn_calls(steps) == 1
        assert decide(build(20))["action"] == "block", build.__name__
        assert decide(build(9))["action"] == "allow", build.__name__


def test_arguments_that_are_not_json_are_kept_as_a_string_and_unpaired_results_skipped():
    data = {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "t", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "zzz", "content": "orphan"},
    ]}
    items, checks = _history.calls("s", _history.history(data))
    assert checks == [0] and len(items) == 1
    assert _history.mend(items[0]) == (("s", "t", json.dumps("{not json"), None, None, "a"), None)
    with LoopGuard({}) as g:
        assert g._live().apply_calls(items)[1][1] == "call.args-json"
        assert g._live().apply_calls([_history.mend(items[0])]) == ([("allow", None, 0, None, False)], None)


def _agent(replays, pick, turns=24, sid="s", retry_at=None, trim_at=None):
    """A polling agent against workers `replays` (`pick(turn)` chooses one); per turn: the notes
    the request gets and the verdict on the model's call."""
    from loopguard._replay import HistoryReplay  # noqa: F401  (the module under test)

    msgs = [{"role": "system", "content": "ci"}, {"role": "user", "content": "wait for CI"}]
    seen = []
    for turn in range(1, turns + 1):
        w = replays[pick(turn)]
        rid = f"r{turn}"
        notes = [v["message"] for v in w.start(rid, sid, {"messages": msgs}) if v and v["action"] == "warn" and v.get("notify")]
        call = (f"c{turn}", "exec", json.dumps(ARGS))
        if turn == retry_at:  # the answer is lost and the client sends the same request again
            w.decide(rid, {"messages": msgs}, [call])
            rid = f"r{turn}b"
            notes = [v["message"] for v in w.start(rid, sid, {"messages": msgs}) if v and v["action"] == "warn" and v.get("notify")]
        v = w.decide(rid, {"messages": msgs}, [call])[0]
        seen.append((len(notes), v["action"], v.get("count")))
        if v["action"] == "block":
            msgs.append({"role": "assistant", "content": v["message"]})
            msgs.append({"role": "user", "content": "go on"})
        else:
            msgs.append({"role": "assistant", "tool_calls": [{"id": call[0], "type": "function",
                         "function": {"name": "exec", "arguments": call[2]}}]})
            msgs.append({"role": "tool", "tool_call_id": call[0], "content": RESULT})
        if turn == trim_at:  # the client drops old turns from its history
            del msgs[2:6]
    return seen


def test_one_worker_two_workers_and_no_session_decide_alike_and_the_cursor_is_used():
    from loopguard._replay import HistoryReplay

    cfg = {"tools": {"loopDetection": {"enabled": True}}}
    with LoopGuard(cfg) as a, LoopGuard(cfg) as b, LoopGuard(cfg) as c:
        sizes = []
        fed = HistoryReplay(a)
        real = fed._apply_calls
        fed._apply_calls = lambda cursor, items: (sizes.append(len(items)), real(cursor, items))[1]
        one = _agent([fed], lambda t: 0)
        two = _agent([HistoryReplay(b), HistoryReplay(c)], lambda t: t % 2)
        own = _agent([HistoryReplay(c)], lambda t: 0, sid=None)
    assert one == two == own
    assert one[10] == (0, "warn", 10) and one[11][0] == 1 and one[20][1] == "block"
    assert sum(n for n, _, _ in one) == 1, "the warning is told once"
    # One worker fed only what was new: at most the proposed call, or a result and its call.
    assert max(sizes) <= 2 and len(sizes) > 24


def test_a_retried_request_and_a_trimmed_history_fall_back_to_the_full_replay():
    from loopguard._replay import HistoryReplay

    cfg = {"tools": {"loopDetection": {"enabled": True}}}
    with LoopGuard(cfg) as a, LoopGuard(cfg) as b:
        for kw in ({"retry_at": 7}, {"trim_at": 5}):
            assert _agent([HistoryReplay(a)], lambda t: 0, sid="x", **kw) == _agent([HistoryReplay(b)], lambda t: 0, sid=None, **kw)


def test_cursors_and_open_requests_stay_under_their_caps():
    from loopguard._replay import HistoryReplay

    with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as g:
        r = HistoryReplay(g, max_sessions=8, max_open=16)
        for i in range(100):
            r.start(f"r{i}", f"s{i}", chat(3))
        assert len(r.cursors) <= 8 and len(r.open) <= 16
        assert g.stats().sessions <= 8 + 16


def test_arguments_that_are_not_json_are_replayed_as_strings_not_dropped():
    from loopguard._replay import HistoryReplay

    broken = {"messages": [{"role": "user", "content": "x"}]}
    for i in range(20):
        broken["messages"] += [
            {"role": "assistant", "tool_calls": [{"id": f"c{i}", "function": {"name": "exec", "arguments": "{oops"}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": RESULT},
        ]
    with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as g:
        r = HistoryReplay(g)
        r.start("r1", "s", broken)
        assert r.decide("r1", broken, [("next", "exec", "{oops")])[0]["action"] == "block"
