//! Applying logged calls in batches: one `apply-calls` call with a thousand calls costs a
//! fraction of a thousand typed calls (each guest call has its own entry, deadline and copy).
//!
//! Why it matters: a swap copies the calls that arrive while it copies. If it applied them no
//! faster than a busy gateway makes them, the copy would never catch up, and the calls left for
//! the lock would be as many as arrived during the snapshot's import. Batches make the copy
//! faster than the traffic, so each round is shorter than the one before.
//!
//! A decision call goes in the batch as the WIT `call` of the same method (interface 1.2); the
//! others (`end-session`, a batch of trace events) are applied alone, in their place.

use std::sync::Arc;

use super::log::Call;
use crate::error::Result;
use crate::gateway::Gateway;
use crate::{Call as Typed, Compaction, GroupFinals, GroupMessage};

/// Calls per batch.
const BATCH_CALLS: usize = 1_000;

/// Applies `calls` to `gateway` in order, in as few guest calls as it can.
pub(super) fn apply_all(calls: &[Arc<Call>], gateway: &mut Gateway) -> Result<()> {
    let mut batch: Vec<Typed> = Vec::new();
    for call in calls {
        if batch.len() >= BATCH_CALLS {
            flush(&mut batch, gateway)?;
        }
        match typed(call) {
            Some(t) => batch.push(t),
            None => {
                flush(&mut batch, gateway)?;
                call.apply(gateway)?;
            }
        }
    }
    flush(&mut batch, gateway)
}

/// Applies the batch. A call that fails is skipped, as [`Call::apply`] drops its error: it was
/// the original call's answer too, and it changed nothing then either.
fn flush(batch: &mut Vec<Typed>, gateway: &mut Gateway) -> Result<()> {
    let mut next = 0;
    while next < batch.len() {
        // `apply-calls` stops after the call that failed: go on after it.
        next += gateway.apply_calls(&batch[next..])?.len().max(1);
    }
    batch.clear();
    Ok(())
}

/// The WIT call of a logged decision; `None` for the calls that are not one.
fn typed(call: &Call) -> Option<Typed> {
    Some(match call {
        Call::CheckTool(c) => Typed::CheckToolCall(c.clone()),
        Call::Outcome(c, o) => Typed::RecordToolOutcome((c.clone(), o.clone())),
        Call::Compaction { session, run, agent } => {
            Typed::CompactionRetried(Compaction { session: session.clone(), run: run.clone(), agent: agent.clone() })
        }
        Call::Bot(m) => Typed::CheckBotMessage(m.clone()),
        Call::GroupStart { thread, peer, text } => {
            Typed::StartGroupThread(GroupMessage { thread: thread.clone(), peer: peer.clone(), text: text.clone() })
        }
        Call::GroupFinish { thread, replies } => {
            Typed::FinishGroupRound(GroupFinals { thread: thread.clone(), replies: replies.clone() })
        }
        Call::GroupCancel(thread) => Typed::CancelGroupThread(thread.clone()),
        Call::EndSession(_) | Call::Events { .. } | Call::Calls(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BotMessage, Policy, ToolCall, ToolOutcome};

    const CONFIG: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;

    fn tool(session: &str, args: &str) -> ToolCall {
        let (session, args_json) = (session.into(), args.into());
        ToolCall { session, tool: "read".into(), args_json, run: None, agent: None, call_id: None }
    }

    /// Polls in two sessions with a malformed call, a session ended and a bot message in between.
    fn logged() -> Vec<Arc<Call>> {
        let mut calls = Vec::new();
        for i in 0..30 {
            let session = if i % 2 == 0 || i > 19 { "a" } else { "b" };
            calls.push(Call::CheckTool(tool(session, r#"{"path":"/x"}"#)));
            calls.push(Call::Outcome(tool(session, r#"{"path":"/x"}"#), ToolOutcome::Returned(r#""same""#.into())));
            if i == 7 {
                calls.push(Call::CheckTool(tool("a", "{oops")));
            }
            if i == 19 {
                calls.push(Call::EndSession("b".into()));
            }
        }
        let (channel, account, conversation) = ("d".into(), "acc".into(), "c".into());
        let (sender, receiver) = ("x".into(), "y".into());
        let m = BotMessage { channel, account, conversation, room: None, sender, receiver, ts_ms: 5, event_id: None };
        calls.push(Call::Bot(m));
        calls.into_iter().map(Arc::new).collect()
    }

    #[test]
    fn a_batched_copy_leaves_the_state_one_call_at_a_time_leaves() {
        let policy = Policy::embedded().expect("the embedded policy");
        let (mut batched, mut one_by_one) = (policy.gateway(CONFIG).unwrap(), policy.gateway(CONFIG).unwrap());
        apply_all(&logged(), &mut batched).unwrap();
        for call in logged() {
            call.apply(&mut one_by_one).unwrap();
        }
        let stats = batched.stats().unwrap();
        assert_eq!((stats.sessions, stats.bot_pairs), (1, 1), "session b ended, a kept, one pair");
        assert_eq!(batched.export_state().unwrap(), one_by_one.export_state().unwrap());
    }
}
