"""ToolGate and OrderedTickets (loopguard._gate), the bookkeeping every framework adapter shares:
tickets pair an outcome with its call, a refused call never has one, a warning is handed over
once, the ladder ends the run, and every table stays bounded."""

import pytest

from loopguard import LoopGuard, LoopGuardError, OutcomeVerdict, ToolVerdict
from loopguard._gate import MAX_PENDING, After, OrderedTickets, ToolGate

RUNNING = {"content": [{"type": "text", "text": "job j1: still running"}]}


class ScriptedGuard:
    """A LoopGuard stand-in: answers `before` from a list and writes down every outcome."""

    def __init__(self, *verdicts, outcome=OutcomeVerdict("recorded")):
        self.verdicts = list(verdicts)
        self.outcome = outcome
        self.outcomes = []

    def before_tool_call(self, call):
        return self.verdicts.pop(0) if self.verdicts else ToolVerdict("allow")

    def after_tool_outcome(self, call, **outcome):
        self.outcomes.append((call["call_id"], outcome))
        return self.outcome


def test_each_outcome_goes_to_the_call_its_ticket_came_from():
    fake = ScriptedGuard()
    gate = ToolGate(guard=fake)
    a = gate.before("s1", "read", {"path": "/a"}, call_id="A")
    b = gate.before("s1", "read", {"path": "/b"}, call_id="B")
    assert a.run and b.run and a.ticket != b.ticket
    gate.after(b.ticket, result="b")
    gate.after(a.ticket, error="a failed")
    assert fake.outcomes == [("B", {"result": "b"}), ("A", {"error": "a failed"})]
    assert gate.pending == 0


def test_an_outcome_without_result_or_error_reaches_the_guard_as_none():
    fake = ScriptedGuard()
    gate = ToolGate(guard=fake)
    gate.after(gate.before("s1", "poll", call_id="A").ticket)
    assert fake.outcomes == [("A", {})]


def test_a_refused_call_has_no_outcome():
    fake = ScriptedGuard(ToolVerdict("block", 4, "known_poll_no_progress", "loopguard: blocked"))
    gate = ToolGate(guard=fake)
    refused = gate.before("s1", "poll", call_id="A")
    assert (refused.run, refused.message, refused.end_run) == (False, "loopguard: blocked", False)
    assert gate.after(refused.ticket, result="our own refusal") == After()
    assert fake.outcomes == [] and gate.pending == 0


def test_a_refused_call_is_not_recorded_by_the_real_policy():
    gate = ToolGate()
    for _ in range(3):
        gate.after(gate.before("s1", "poll", {"job": "j1"}).ticket, result=RUNNING)
    refused = gate.before("s1", "poll", {"job": "j1"})
    assert not refused.run and refused.message.startswith("loopguard: poll returned the same result 3 times")
    gate.after(refused.ticket, result=refused.message)  # an adapter's mistake: ignored, not counted
    again = gate.before("s1", "poll", {"job": "j1"})
    assert not again.run and again.message == refused.message


def test_a_warning_is_handed_over_once_with_the_outcome_of_the_call_that_warned():
    fake = ScriptedGuard(ToolVerdict("warn", 3, "known_poll_no_progress", "loopguard: same again", notify=True),
                         ToolVerdict("warn", 3, "known_poll_no_progress", "loopguard: same again", notify=False))
    gate = ToolGate(guard=fake)
    warned, quiet = gate.before("s1", "poll", call_id="A"), gate.before("s1", "poll", call_id="B")
    assert warned.run and quiet.run
    assert gate.after(warned.ticket, result="x").note == "loopguard: same again"
    assert gate.after(warned.ticket, result="x") == After()
    assert gate.after(quiet.ticket, result="x").note is None


def test_the_default_document_warns_at_the_third_unchanged_poll_and_blocks_the_fourth():
    gate = ToolGate()
    notes = [gate.after(gate.before("s1", "poll", {"job": "j1"}).ticket, result=RUNNING).note for _ in range(3)]
    assert notes[:2] == [None, None]
    assert notes[2].startswith("loopguard: poll returned the same result 2 times in a row")
    assert not gate.before("s1", "poll", {"job": "j1"}).run


def test_the_ladder_ends_the_run_when_a_blocked_call_is_sent_again_and_again():
    gate = ToolGate({"loopguard": {"preset": "recommended"}})
    seen = []
    for _ in range(6):
        verdict = gate.before("s1", "poll", {"job": "j1"})
        seen.append((verdict.run, verdict.end_run))
        if verdict.run:
            gate.after(verdict.ticket, result=RUNNING)
    assert seen == [(True, False)] * 3 + [(False, False)] * 2 + [(False, True)]


def test_an_abort_after_an_outcome_ends_the_run_with_its_message():
    fake = ScriptedGuard(outcome=OutcomeVerdict("abort", "compaction_retry", 2, "read", "loopguard: stop"))
    gate = ToolGate(guard=fake)
    assert gate.after(gate.before("s1", "read", call_id="A").ticket, result="x") == After(None, True, "loopguard: stop")


def test_calls_that_never_report_are_forgotten_oldest_first():
    fake = ScriptedGuard()
    gate = ToolGate(guard=fake)
    tickets = [gate.before("s1", "poll", call_id=str(i)).ticket for i in range(MAX_PENDING + 1)]
    assert gate.pending == MAX_PENDING
    assert gate.after(tickets[0], result="x") == After() and fake.outcomes == []
    gate.after(tickets[1], result="x")
    assert fake.outcomes == [("1", {"result": "x"})]


def test_a_config_and_a_guard_together_are_refused():
    with LoopGuard("{}") as guard, pytest.raises(LoopGuardError) as e:
        ToolGate({}, guard=guard)
    assert (e.value.kind, e.value.path) == ("config", "config")


def test_a_broken_config_names_its_path():
    with pytest.raises(LoopGuardError) as e:
        ToolGate({"loopguard": {"preset": "loud"}})
    assert (e.value.kind, e.value.path) == ("config", "loopguard.preset")
    with pytest.raises(LoopGuardError) as e:
        ToolGate({"tools": {"loopDetection": {"historySize": "many"}}})
    assert e.value.path.startswith("tools.loopDetection.historySize")
    with pytest.raises(LoopGuardError) as e:
        ToolGate({"x": object()})
    assert e.value.path == "config"


def test_ordered_tickets_pair_by_order_per_session_and_tool():
    tickets = OrderedTickets()
    for session, tool, ticket in [("s1", "poll", "t1"), ("s1", "read", "t2"), ("s1", "poll", "t3"), ("s2", "poll", "t4")]:
        tickets.push(session, tool, ticket)
    assert [tickets.shift("s1", "poll"), tickets.shift("s1", "poll"), tickets.shift("s1", "poll")] == ["t1", "t3", None]
    assert tickets.shift("s2", "poll") == "t4" and tickets.shift("s1", "read") == "t2"
    assert tickets.shift("s3", "poll") is None


def test_ordered_tickets_forget_the_oldest_past_the_cap():
    tickets = OrderedTickets()
    for i in range(MAX_PENDING + 1):
        tickets.push("s1", "poll", f"t{i}")
    assert tickets.shift("s1", "poll") == "t1"
    tickets.push("s2", "read", "r0")
    for i in range(MAX_PENDING):
        tickets.push("s3", "poll", f"u{i}")
    assert tickets.shift("s1", "poll") is None and tickets.shift("s2", "read") is None
    assert tickets.shift("s3", "poll") == "u0"
