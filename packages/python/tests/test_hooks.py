"""The LoopGuard hooks on small cases (docs/spec/tool-loop.md, docs/spec/bot-loop.md), errors, snapshots and
closing. The example traces are covered by test_replay.py."""

import copy
import dataclasses
import pickle

import pytest

from loopguard import (
    BotMessage,
    CompactionVerdict,
    GroupDecision,
    GroupThread,
    LoopGuard,
    LoopGuardError,
    OutcomeVerdict,
    ToolCall,
    ToolVerdict,
    replay,
    versions,
)

TIGHT = {"tools": {"loopDetection": {"enabled": True, "warningThreshold": 3, "criticalThreshold": 5, "globalCircuitBreakerThreshold": 8}}}
SEARCH = ToolCall(session="s1", tool="web_search", args={"q": "nightly build red"})
SAME = {"content": [{"type": "text", "text": "no results"}]}


@pytest.fixture
def guard():
    with LoopGuard(TIGHT) as g:
        yield g


def test_first_call_is_allowed_and_its_outcome_recorded(guard: LoopGuard) -> None:
    assert guard.before_tool_call(SEARCH) == ToolVerdict(action="allow")
    assert guard.after_tool_outcome(SEARCH, result=SAME) == OutcomeVerdict("recorded")
    assert guard.stats().sessions == 1


def test_warns_then_blocks_identical_calls_with_identical_outcomes(guard: LoopGuard) -> None:
    seen = []
    for _ in range(6):
        v = guard.before_tool_call(SEARCH)
        seen.append(f"{v.action}{v.count or ''}")
        if v.action != "allow":
            assert v.detector == "generic_repeat"
            assert "web_search" in (v.message or "")
        if v.action != "block":
            guard.after_tool_outcome(SEARCH, result=SAME)
    assert seen == ["allow", "allow", "allow", "warn3", "warn4", "block5"]


def test_off_by_default() -> None:
    with LoopGuard() as g:
        assert all(g.before_tool_call(SEARCH).action == "allow" for _ in range(25))


def test_mappings_and_args_json_are_the_same_call(guard: LoopGuard) -> None:
    guard.before_tool_call(SEARCH)
    guard.before_tool_call({"session": "s1", "tool": "web_search", "args_json": '{ "q" : "nightly build red" }'})
    guard.before_tool_call({"session": "s1", "tool": "web_search", "args": {"q": "nightly build red"}})
    assert guard.before_tool_call(SEARCH).count == 3


def test_tool_call_is_a_frozen_dataclass_with_its_fields_in_order() -> None:
    names = ["session", "tool", "args", "run", "agent", "call_id", "args_json"]
    assert [f.name for f in dataclasses.fields(ToolCall) if f.init] == names
    values = ["s", "t", {"a": 1}, "r", "g", "c", '{"a":1}']
    by_position, by_name = ToolCall(*values), ToolCall(**dict(zip(names, values)))
    assert by_position == by_name and [getattr(by_position, n) for n in names] == values
    assert ToolCall("s", "t") == ToolCall("s", "t", None, None, None, None, None)
    assert dataclasses.replace(by_position, tool="u").tool == "u"
    assert repr(ToolCall("s", "t")) == "ToolCall(session='s', tool='t', args=None, run=None, agent=None, call_id=None, args_json=None)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        by_position.tool = "u"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolCall("s")  # type: ignore[call-arg]


def test_a_checked_call_compares_equal_to_an_unchecked_one_and_pickles(guard: LoopGuard) -> None:
    call = ToolCall(session="s1", tool="web_search", args={"q": "nightly build red"})
    guard.before_tool_call(call)
    assert call == ToolCall(session="s1", tool="web_search", args={"q": "nightly build red"})
    again = pickle.loads(pickle.dumps(call))
    assert again == call and copy.copy(call) == call
    assert guard.before_tool_call(again).count == 0 and guard.before_tool_call(call).action == "allow"


def test_non_ascii_and_lone_surrogate_args_read_as_javascript_reads_them(guard: LoopGuard) -> None:
    # A Python str may hold a lone surrogate; it reaches the policy as JSON.stringify writes it.
    call = ToolCall(session="s3", tool="web_search", args={"q": "h\u00e9llo \ud800 w\u00f6rld"})
    guard.before_tool_call(call)
    guard.before_tool_call(ToolCall(session="s3", tool="web_search", args={"q": "h\u00e9llo \ud800 w\u00f6rld"}))
    guard.before_tool_call({"session": "s3", "tool": "web_search", "args_json": '{"q":"h\\u00e9llo \\ud800 w\u00f6rld"}'})
    assert guard.before_tool_call(call).count == 3


def test_outcome_kinds(guard: LoopGuard) -> None:
    assert guard.after_tool_outcome(SEARCH) == OutcomeVerdict("ignored")  # no result at all
    assert guard.after_tool_outcome(SEARCH, result=None).action == "recorded"
    assert guard.after_tool_outcome(SEARCH, error=RuntimeError("boom")).action == "recorded"
    assert guard.after_tool_outcome(SEARCH, error=None).action == "recorded"


def test_a_loop_that_survives_compaction_aborts_the_run() -> None:
    exec_call = ToolCall(session="s2", run="r1", tool="exec", args={"command": "npm test"})
    with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as g:
        assert g.after_compaction_retry("s2", "r1") == CompactionVerdict("armed", 3)
        outs = []
        for _ in range(3):
            g.before_tool_call(exec_call)
            outs.append(g.after_tool_outcome(exec_call, result={"content": [{"type": "text", "text": "FAIL"}]}))
    assert [o.action for o in outs] == ["recorded", "recorded", "abort"]
    assert (outs[2].detector, outs[2].count, outs[2].tool) == ("compaction_loop_persisted", 3, "exec")


def test_disabled_post_compaction_guard() -> None:
    with LoopGuard({"tools": {"loopDetection": {"enabled": False}}}) as g:
        assert g.after_compaction_retry("s3") == CompactionVerdict("disabled")


def test_bot_pair_past_its_budget_is_suppressed() -> None:
    with LoopGuard({"channels": {"discord": {"botLoopProtection": {"maxEventsPerWindow": 3}}}}) as g:
        got = [g.on_bot_message(BotMessage("discord", "default", "c1", "b1", "b2", 1000 + i)) for i in range(4)]
        assert [v.action for v in got] == ["allow", "allow", "allow", "suppress"]
        assert got[3].budget == "pair"
        assert isinstance(got[3].cooldown_until_ms, int) and got[3].cooldown_until_ms > 1003
        assert g.stats().bot_pairs == 1


def test_group_thread_round_by_round() -> None:
    config = {"agents": {"list": [{"id": "planner"}, {"id": "coder"}]}, "broadcast": {"slack:C1": {"agents": ["planner", "coder"], "maxRounds": 2}}}
    thread = GroupThread("slack", "default", "C1", "m1")
    with LoopGuard(config) as g:
        assert g.start_group_thread(thread, "C1", "hello all") == GroupDecision("round", 1, ("planner", "coder"))
        assert g.stats().group_threads == 1
        assert g.finish_group_round(thread, [{"agent": "planner", "reply": None}, {"agent": "coder"}]) == GroupDecision("stop", reason="all_passed")
        m2 = GroupThread("slack", "default", "C1", "m2")
        assert g.start_group_thread(m2, "C1", "again").action == "round"
        assert g.cancel_group_thread(m2) == GroupDecision("stop", reason="cancelled")
        assert g.start_group_thread(GroupThread("slack", "default", "C9", "x"), "C9", "x") == GroupDecision("none")


def _raises_at(path: str, fn) -> LoopGuardError:
    with pytest.raises(LoopGuardError) as info:
        fn()
    e = info.value
    assert e.path == path
    assert e.reason
    assert str(e) == f"{e.path}: {e.reason}"
    return e


def test_bad_config_names_the_config_path() -> None:
    _raises_at("tools.loopDetection.historySize", lambda: LoopGuard('{tools: {loopDetection: {historySize: "x"}}}'))


def test_config_syntax_error_is_a_loopguard_error() -> None:
    with pytest.raises(LoopGuardError):
        LoopGuard("{tools: ")


def test_malformed_args_json_names_the_field(guard: LoopGuard) -> None:
    _raises_at("call.args-json", lambda: guard.before_tool_call(ToolCall("s", "t", args_json="{")))


def test_unserializable_args_name_call_args(guard: LoopGuard) -> None:
    _raises_at("call.args", lambda: guard.before_tool_call(ToolCall("s", "t", args={"x": object()})))
    looped: dict = {}
    looped["self"] = looped
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    for bad in (looped, nested, {"x": float("nan")}, [float("inf")], [10**5000]):
        assert _raises_at("call.args", lambda: guard.before_tool_call(ToolCall("s", "t", args=bad))).kind == "input"


def test_wrong_type_names_the_field(guard: LoopGuard) -> None:
    _raises_at("call.session", lambda: guard.before_tool_call(ToolCall(1, "t")))  # type: ignore[arg-type]
    _raises_at("call.tool", lambda: guard.before_tool_call({"session": "s"}))
    _raises_at("call.run", lambda: guard.before_tool_call(ToolCall("s", "t", run=5)))  # type: ignore[arg-type]
    _raises_at("call.agent", lambda: guard.before_tool_call({"session": "s", "tool": "t", "agent": b"a"}))
    _raises_at("call.call_id", lambda: guard.before_tool_call(ToolCall("s", "t", call_id=1.5)))  # type: ignore[arg-type]
    _raises_at("call.args_json", lambda: guard.before_tool_call(ToolCall("s", "t", args_json={})))  # type: ignore[arg-type]
    e = _raises_at("call", lambda: guard.before_tool_call(["s", "t"]))  # type: ignore[arg-type]
    assert e.reason == "must be a ToolCall or a mapping, not list"
    assert _raises_at("call.session", lambda: guard.before_tool_call(ToolCall(None, "t"))).reason == (  # type: ignore[arg-type]
        "must be a string, not NoneType"
    )


def test_a_lone_surrogate_outside_the_arguments_names_the_field(guard: LoopGuard) -> None:
    # Arguments may hold one (they go as JSON text); the other fields reach the policy as UTF-8.
    _raises_at("call.session", lambda: guard.before_tool_call(ToolCall("s\ud800", "t")))
    _raises_at("call.tool", lambda: guard.after_tool_outcome({"session": "s", "tool": "\udc00"}, result=1))


def test_a_bad_outcome_is_named_before_the_call(guard: LoopGuard) -> None:
    _raises_at("outcome.result", lambda: guard.after_tool_outcome({"session": 1}, result=object()))
    _raises_at("outcome.error", lambda: guard.after_tool_outcome(SEARCH, error={"x": {1, 2}}))
    assert guard.stats().sessions == 0


def test_negative_bot_timestamp_is_a_policy_error(guard: LoopGuard) -> None:
    with pytest.raises(LoopGuardError):
        guard.on_bot_message(BotMessage("discord", "a", "c", "x", "y", -1))


def test_bad_trace_line_names_line_and_field(guard: LoopGuard) -> None:
    _raises_at("line 8: session", lambda: guard.apply_events('\n{"kind":"tool_call"}\n', 7))


def test_replay_errors_are_loopguard_errors() -> None:
    with pytest.raises(LoopGuardError):
        replay("{}", '{"kind":"nope"}')


def test_unreadable_snapshot_keeps_the_state(guard: LoopGuard) -> None:
    guard.before_tool_call(SEARCH)
    _raises_at("snapshot", lambda: guard.import_state(b"\x01\x02\x03"))
    assert guard.stats().sessions == 1


def test_snapshot_carries_counts_into_a_new_gateway() -> None:
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        for _ in range(2):
            a.before_tool_call(SEARCH)
            a.after_tool_outcome(SEARCH, result=SAME)
        snap = a.export_state()
        assert isinstance(snap, bytes) and snap
        b.import_state(snap)
        assert b.before_tool_call(SEARCH) == a.before_tool_call(SEARCH)
        assert b.stats().sessions == 1


def test_close_releases_and_later_calls_raise() -> None:
    g = LoopGuard()
    assert not g.closed
    g.close()
    g.close()
    assert g.closed
    _raises_at("gateway", lambda: g.before_tool_call(SEARCH))
    with pytest.raises(LoopGuardError):
        g.stats()


def test_context_manager_closes() -> None:
    with LoopGuard() as g:
        pass
    assert g.closed


def test_many_guards_can_be_created_and_closed() -> None:
    for _ in range(200):
        LoopGuard(TIGHT).close()


def test_versions() -> None:
    v = versions()
    assert v["policy"].count(".") >= 2
    assert v["interface"].startswith("1.")
    assert len(v["blake3"]) == 64
    with LoopGuard() as g:
        assert (g.policy.version, g.policy.blake3) == (v["policy"], v["blake3"])
