"""The history reader of the LiteLLM guardrail (issue 51): the same conversation in OpenAI chat,
Anthropic messages and Responses form gives the same trace events and the same decisions."""
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
    steps = _history.history(data)
    lines, _ = _history.events("s", steps)
    lines += _history.proposed("s", [("next", "exec", json.dumps(ARGS))])
    with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as g:
        return [json.loads(x) for x in g.apply_events("\n".join(lines)).splitlines()][-1]


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
    lines, calls = _history.events("s", _history.history(data))
    assert calls == [0] and len(lines) == 1
    assert json.loads(lines[0])["args"] == "{not json"
