//! The calls logged since the last snapshot, in order (the journal's log): a swap reads them back
//! and applies them to the new instance.

use std::sync::Arc;

use crate::error::Result;
use crate::gateway::Gateway;
use crate::{BotMessage, GroupReply, GroupThread, ToolCall, ToolOutcome};

/// Logged calls beyond this many bytes (inputs copied) force a snapshot, whatever the spacing.
pub const MAX_LOG_BYTES: usize = 16 << 20;

/// One call that may have changed the state, with its inputs, so that it can be applied again
/// to another instance. Read-only calls (`stats`, `export-state`, …) are not logged.
#[derive(Debug, Clone)]
pub(super) enum Call {
    CheckTool(ToolCall),
    Outcome(ToolCall, ToolOutcome),
    Compaction {
        session: String,
        run: Option<String>,
        agent: Option<String>,
    },
    EndSession(String),
    Events {
        events: String,
        first_line: u32,
    },
    /// Typed calls made in one batch (`apply-calls`): the ones made, up to the one that failed.
    Calls(Vec<crate::Call>),
    Bot(BotMessage),
    GroupStart {
        thread: GroupThread,
        peer: String,
        text: String,
    },
    GroupFinish {
        thread: GroupThread,
        replies: Vec<GroupReply>,
    },
    GroupCancel(GroupThread),
}

impl Call {
    /// Applies the call to `gateway` and drops the answer. Only a failure that breaks the instance
    /// is an error: a policy error (bad input) was the original call's answer too, and it changed
    /// nothing then either.
    pub(super) fn apply(&self, gw: &mut Gateway) -> Result<()> {
        let done = match self {
            Call::CheckTool(c) => gw.check_tool_call(c).map(drop),
            Call::Outcome(c, o) => gw.record_tool_outcome(c, o).map(drop),
            Call::Compaction { session, run, agent } => {
                gw.compaction_retried(session, run.as_deref(), agent.as_deref()).map(drop)
            }
            Call::EndSession(session) => gw.end_session(session),
            Call::Events { events, first_line } => gw.apply_events(events, *first_line).map(drop),
            Call::Calls(calls) => gw.apply_calls(calls).map(drop),
            Call::Bot(m) => gw.check_bot_message(m).map(drop),
            Call::GroupStart { thread, peer, text } => gw.start_group_thread(thread, peer, text).map(drop),
            Call::GroupFinish { thread, replies } => gw.finish_group_round(thread, replies).map(drop),
            Call::GroupCancel(thread) => gw.cancel_group_thread(thread).map(drop),
        };
        match done {
            Err(e) if e.breaks_instance() => Err(e),
            _ => Ok(()),
        }
    }

    /// What the call's copy costs in memory, roughly: its text plus a fixed overhead.
    pub(super) fn bytes(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        let call = |c: &ToolCall| {
            c.session.len() + c.tool.len() + c.args_json.len() + opt(&c.run) + opt(&c.agent) + opt(&c.call_id)
        };
        let thread =
            |t: &GroupThread| t.channel.len() + t.account.len() + t.conversation.len() + opt(&t.thread) + t.root.len();
        let text = match self {
            Call::CheckTool(c) => call(c),
            Call::Outcome(c, ToolOutcome::Returned(o) | ToolOutcome::Threw(o)) => call(c) + o.len(),
            Call::Compaction { session, run, agent } => session.len() + opt(run) + opt(agent),
            Call::EndSession(session) => session.len(),
            Call::Events { events, .. } => events.len(),
            Call::Calls(calls) => calls.iter().map(|c| 64 + crate::gateway::input_bytes(c)).sum(),
            Call::Bot(m) => {
                m.channel.len()
                    + m.account.len()
                    + m.conversation.len()
                    + opt(&m.room)
                    + m.sender.len()
                    + m.receiver.len()
                    + opt(&m.event_id)
            }
            Call::GroupStart { thread: t, peer, text } => thread(t) + peer.len() + text.len(),
            Call::GroupFinish { thread: t, replies } => {
                thread(t) + replies.iter().map(|r| 32 + r.agent.len() + opt(&r.reply)).sum::<usize>()
            }
            Call::GroupCancel(t) => thread(t),
        };
        text + 128
    }
}

/// Logged calls in order.
#[derive(Default)]
pub(super) struct Log {
    calls: Vec<Arc<Call>>,
}

impl Log {
    /// Logs a tool call's check (`outcome` `None`) or outcome; returns the bytes of its text (the
    /// journal adds the fixed overhead).
    pub fn push_tool(&mut self, call: &ToolCall, outcome: Option<&ToolOutcome>) -> usize {
        let call = match outcome {
            None => Call::CheckTool(call.clone()),
            Some(o) => Call::Outcome(call.clone(), o.clone()),
        };
        let bytes = call.bytes() - 128;
        self.push(call);
        bytes
    }

    /// Logs any other call.
    pub fn push(&mut self, call: Call) {
        self.calls.push(Arc::new(call));
    }

    /// Calls logged.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// The logged calls from the `from`-th, at most `n`.
    pub fn calls(&self, from: usize, n: usize) -> Vec<Arc<Call>> {
        self.calls.get(from..).unwrap_or_default().iter().take(n).cloned().collect()
    }

    /// Forgets every call.
    pub fn clear(&mut self) {
        self.calls.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(run: Option<&str>, call_id: Option<&str>) -> ToolCall {
        ToolCall {
            session: "agent:main:é".into(),
            tool: "exec".into(),
            args_json: r#"{"command":"ls"}"#.into(),
            run: run.map(Into::into),
            agent: None,
            call_id: call_id.map(Into::into),
        }
    }

    fn same(a: &Call, b: &Call) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn calls_read_back_as_they_were_logged_in_order() {
        let mut log = Log::default();
        let logged = [
            Call::CheckTool(call(Some("r1"), None)),
            Call::Outcome(call(None, Some("c")), ToolOutcome::Returned("{\"ok\":true}".into())),
            Call::EndSession("s".into()),
            Call::Outcome(call(Some(""), Some("")), ToolOutcome::Threw(String::new())),
            Call::CheckTool(call(None, None)),
        ];
        for c in &logged {
            match c {
                Call::CheckTool(t) => assert!(log.push_tool(t, None) > 0),
                Call::Outcome(t, o) => assert!(log.push_tool(t, Some(o)) > 0),
                other => log.push(other.clone()),
            }
        }
        assert_eq!(log.len(), 5);
        let back = log.calls(0, usize::MAX);
        assert!(logged.iter().zip(&back).all(|(a, b)| same(a, b)), "{back:?}");
        let middle = log.calls(1, 2);
        assert!(same(&middle[0], &logged[1]) && same(&middle[1], &logged[2]));
        assert!(log.calls(9, 1).is_empty());
        log.clear();
        assert_eq!(log.len(), 0);
    }
}
