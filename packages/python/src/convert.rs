//! Python tuples to the host's typed calls and the verdicts back to tuples: one mapping, shared
//! by the in-process `Guard` and the `StoredGuard`, so that both answer in the same shapes.

use loopguard_host::{
    BotMessage, BotVerdict, Budget, Call, CompactionVerdict, GroupReply, GroupStart, GroupStep, GroupThread,
    OutcomeVerdict, StopReason, ToolAction, ToolCall, ToolOutcome, ToolVerdict, Verdict,
};
use pyo3::prelude::*;

/// A tool call as `_convert.py` passes it: (session, tool, args_json, run, agent, call_id).
pub(crate) type CallTuple = (String, String, String, Option<String>, Option<String>, Option<String>);

pub(crate) fn tool_call(c: CallTuple) -> ToolCall {
    ToolCall { session: c.0, tool: c.1, args_json: c.2, run: c.3, agent: c.4, call_id: c.5 }
}

pub(crate) fn thread(t: ThreadTuple) -> GroupThread {
    GroupThread { channel: t.0, account: t.1, conversation: t.2, thread: t.3, root: t.4 }
}

pub(crate) fn stop_reason(r: StopReason) -> &'static str {
    match r {
        StopReason::AllPassed => "all_passed",
        StopReason::MaxRounds => "max_rounds",
        StopReason::MaxTurns => "max_turns",
        StopReason::NoEligible => "no_eligible",
        StopReason::Cancelled => "cancelled",
    }
}

/// A group decision as (action, round, participants, reason).
pub(crate) type GroupTuple = (&'static str, u32, Vec<String>, Option<&'static str>);
/// A tool verdict as the Python side unpacks it: (action, detector, count, message, notify).
pub(crate) type VerdictTuple = (&'static str, Option<String>, u32, Option<String>, bool);
/// An outcome verdict as the Python side unpacks it: (action, detector, count, tool, message).
pub(crate) type OutcomeTuple = (&'static str, Option<String>, u32, Option<String>, Option<String>);
/// A bot message as `_convert.py` passes it: (channel, account, conversation, room, sender,
/// receiver, ts_ms, event_id).
pub(crate) type BotTuple = (String, String, String, Option<String>, String, String, i64, Option<String>);
/// A bot verdict: (action, cooldown_until_ms, budget).
pub(crate) type BotVerdictTuple = (&'static str, Option<i64>, Option<&'static str>);
/// A group thread: (channel, account, conversation, thread, root).
pub(crate) type ThreadTuple = (String, String, String, Option<String>, String);

pub(crate) fn group_step(s: GroupStep) -> GroupTuple {
    match s {
        GroupStep::Round(r) => ("round", r.round, r.participants, None),
        GroupStep::Stop(reason) => ("stop", 0, Vec::new(), Some(stop_reason(reason))),
    }
}

pub(crate) fn group_start(s: GroupStart) -> GroupTuple {
    match s {
        GroupStart::Round(r) => ("round", r.round, r.participants, None),
        GroupStart::Legacy(p) => ("legacy", 0, p, None),
        GroupStart::None => ("none", 0, Vec::new(), None),
    }
}

pub(crate) fn tool_verdict(v: ToolVerdict) -> VerdictTuple {
    let action = match v.action {
        ToolAction::Allow => "allow",
        ToolAction::Warn => "warn",
        ToolAction::Block => "block",
    };
    (action, v.detector, v.count, v.message, v.notify)
}

pub(crate) fn outcome(threw: bool, text: String) -> ToolOutcome {
    if threw {
        ToolOutcome::Threw(text)
    } else {
        ToolOutcome::Returned(text)
    }
}

pub(crate) fn outcome_verdict(v: OutcomeVerdict) -> OutcomeTuple {
    match v {
        OutcomeVerdict::Recorded => ("recorded", None, 0, None, None),
        OutcomeVerdict::Ignored => ("ignored", None, 0, None, None),
        OutcomeVerdict::Abort(a) => ("abort", Some(a.detector), a.count, Some(a.tool), Some(a.message)),
    }
}

pub(crate) fn armed(v: CompactionVerdict) -> Option<u32> {
    match v {
        CompactionVerdict::Armed(n) => Some(n),
        CompactionVerdict::Disabled => None,
    }
}

pub(crate) fn bot_message(m: BotTuple) -> BotMessage {
    BotMessage {
        channel: m.0,
        account: m.1,
        conversation: m.2,
        room: m.3,
        sender: m.4,
        receiver: m.5,
        ts_ms: m.6,
        event_id: m.7,
    }
}

pub(crate) fn bot_verdict(v: BotVerdict) -> BotVerdictTuple {
    match v {
        BotVerdict::Allow => ("allow", None, None),
        BotVerdict::Suppress(s) => (
            "suppress",
            Some(s.cooldown_until_ms),
            Some(match s.budget {
                Budget::Pair => "pair",
                Budget::Burst => "burst",
            }),
        ),
    }
}

pub(crate) fn replies(replies: Vec<(String, Option<String>)>) -> Vec<GroupReply> {
    replies.into_iter().map(|(agent, reply)| GroupReply { agent, reply }).collect()
}

/// One item of a batch (`Guard.apply_calls`): a check `(call, None)` or an outcome
/// `(call, (threw, text))`.
pub(crate) type ItemTuple = (CallTuple, Option<(bool, String)>);

/// A batch's items as typed calls.
pub(crate) fn item_calls(items: Vec<ItemTuple>) -> Vec<Call> {
    items
        .into_iter()
        .map(|(c, o)| match o {
            None => Call::CheckToolCall(tool_call(c)),
            Some((threw, text)) => Call::RecordToolOutcome((tool_call(c), outcome(threw, text))),
        })
        .collect()
}

/// A batch item's verdict: a check's `VerdictTuple` or an outcome's `OutcomeTuple`.
pub(crate) fn item_verdict(py: Python<'_>, v: Verdict) -> PyResult<Py<PyAny>> {
    match v {
        Verdict::CheckToolCall(v) => Ok(tool_verdict(v).into_pyobject(py)?.into_any().unbind()),
        Verdict::RecordToolOutcome(v) => Ok(outcome_verdict(v).into_pyobject(py)?.into_any().unbind()),
        other => {
            let reason = format!("the policy answered another call: {other:?}");
            Err(super::loopguard_error(py, "policy".into(), "policy".into(), reason))
        }
    }
}
