//! The calls logged since the last snapshot, in order (the journal's log).
//!
//! Why tool calls are packed: a gateway's traffic is mostly tool-call checks and outcomes, and
//! copying each into its own allocations (the call's strings, the outcome, an `Arc`) and freeing
//! them all at the next snapshot was ~8 % of a Python decision's time in glibc's `malloc`,
//! `free` and the consolidation of thousands of freed blocks (`perf record`).
//! Packed, a logged tool call is a few copies into one buffer, which a snapshot empties and keeps.
//! Every other call is kept as a [`Call`] value; a swap reads the log back as [`Call`]s.
//! Measured with the Python package's benchmark (`bench/decision.py`, paired runs): a decision
//! 10.2 µs with every call copied, 9.0 µs packed, 8.6 µs without a log at all.

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
    Compaction { session: String, run: Option<String>, agent: Option<String> },
    EndSession(String),
    Events { events: String, first_line: u32 },
    Bot(BotMessage),
    GroupStart { thread: GroupThread, peer: String, text: String },
    GroupFinish { thread: GroupThread, replies: Vec<GroupReply> },
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

/// Kept by an emptied log at most: what the log may hold before a snapshot is forced
/// ([`MAX_LOG_BYTES`]), plus a quarter for the call that passes it. Why keep it at all: at a high
/// call rate the log fills to that bound between snapshots, and a buffer given back each time
/// is grown again (copies and page faults): a Python decision 9.1-9.7 µs with 4 MiB kept,
/// 8.7-9.1 µs with this (`bench/decision.py`, paired). A gateway at ordinary rates logs a few
/// hundred kilobytes between snapshots, and that is what it keeps.
const KEEP_PACKED_BYTES: usize = MAX_LOG_BYTES + MAX_LOG_BYTES / 4;
/// The length written for a `None`.
const NONE: u32 = u32::MAX;

/// Logged calls in order.
#[derive(Default)]
pub(super) struct Log {
    entries: Vec<Entry>,
    /// The packed tool calls (see [`Log::push_tool`]).
    packed: Vec<u8>,
}

enum Entry {
    /// A tool call (check or outcome) packed from this offset of [`Log::packed`].
    Tool(usize),
    Other(Arc<Call>),
}

/// What follows a packed tool call's fields.
const CHECK: u8 = 0;
const RETURNED: u8 = 1;
const THREW: u8 = 2;

impl Log {
    /// Logs a tool call's check (`outcome` `None`) or outcome; returns the bytes it took.
    pub fn push_tool(&mut self, call: &ToolCall, outcome: Option<&ToolOutcome>) -> usize {
        let start = self.packed.len();
        let (kind, text) = match outcome {
            None => (CHECK, None),
            Some(ToolOutcome::Returned(t)) => (RETURNED, Some(t.as_str())),
            Some(ToolOutcome::Threw(t)) => (THREW, Some(t.as_str())),
        };
        let fields = [Some(call.session.as_str()), Some(&call.tool), Some(&call.args_json)];
        let optional = [call.run.as_deref(), call.agent.as_deref(), call.call_id.as_deref(), text];
        if fields.iter().chain(&optional).flatten().any(|s| u32::try_from(s.len()).is_err()) {
            // Too large to pack (the policy refuses far smaller inputs): kept as a value.
            let call = match outcome {
                None => Call::CheckTool(call.clone()),
                Some(o) => Call::Outcome(call.clone(), o.clone()),
            };
            let bytes = call.bytes();
            self.push(call);
            return bytes;
        }
        self.packed.push(kind);
        for field in fields.iter().chain(&optional) {
            self.put(*field);
        }
        self.entries.push(Entry::Tool(start));
        self.packed.len() - start
    }

    fn put(&mut self, field: Option<&str>) {
        match field {
            // Lengths checked by the caller.
            Some(s) => {
                self.packed.extend_from_slice(&(s.len() as u32).to_le_bytes());
                self.packed.extend_from_slice(s.as_bytes());
            }
            None => self.packed.extend_from_slice(&NONE.to_le_bytes()),
        }
    }

    /// Logs any other call.
    pub fn push(&mut self, call: Call) {
        self.entries.push(Entry::Other(Arc::new(call)));
    }

    /// Calls logged.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The logged calls from the `from`-th, at most `n`, as values.
    pub fn calls(&self, from: usize, n: usize) -> Vec<Arc<Call>> {
        let entries = self.entries.get(from..).unwrap_or_default();
        entries.iter().take(n).map(|e| self.call(e)).collect()
    }

    fn call(&self, entry: &Entry) -> Arc<Call> {
        match entry {
            Entry::Other(call) => call.clone(),
            Entry::Tool(start) => Arc::new(self.unpack(*start)),
        }
    }

    /// The tool call packed at `start`.
    fn unpack(&self, start: usize) -> Call {
        let mut at = start + 1;
        let mut next = || {
            let len = self.packed.get(at..at + 4).map_or(NONE, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            at += 4;
            if len == NONE {
                return None;
            }
            let text = self.packed.get(at..at + len as usize).unwrap_or_default();
            at += len as usize;
            // Packed from `&str`s by `push_tool`.
            Some(String::from_utf8_lossy(text).into_owned())
        };
        let call = ToolCall {
            session: next().unwrap_or_default(),
            tool: next().unwrap_or_default(),
            args_json: next().unwrap_or_default(),
            run: next(),
            agent: next(),
            call_id: next(),
        };
        let text = next();
        match (self.packed.get(start), text) {
            (Some(&RETURNED), Some(t)) => Call::Outcome(call, ToolOutcome::Returned(t)),
            (Some(&THREW), Some(t)) => Call::Outcome(call, ToolOutcome::Threw(t)),
            _ => Call::CheckTool(call),
        }
    }

    /// Forgets every call, keeping the packed buffer's memory for the next ones (up to
    /// [`KEEP_PACKED_BYTES`]).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.packed.clear();
        self.packed.shrink_to(KEEP_PACKED_BYTES);
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
    fn packed_calls_read_back_as_they_were_logged_in_order() {
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
                Call::CheckTool(t) => drop(log.push_tool(t, None)),
                Call::Outcome(t, o) => drop(log.push_tool(t, Some(o))),
                other => log.push(other.clone()),
            }
        }
        assert_eq!(log.len(), 5);
        let back = log.calls(0, usize::MAX);
        assert!(logged.iter().zip(&back).all(|(a, b)| same(a, b)), "{back:?}");
        let middle = log.calls(1, 2);
        assert!(same(&middle[0], &logged[1]) && same(&middle[1], &logged[2]));
        assert!(log.calls(9, 1).is_empty());
    }

    #[test]
    fn clearing_keeps_the_buffer_up_to_a_bound() {
        let mut log = Log::default();
        for i in 0..4 {
            assert!(log.push_tool(&call(Some(&format!("r{i}")), None), None) > 0);
        }
        let capacity = log.packed.capacity();
        log.clear();
        assert_eq!((log.len(), log.packed.len(), log.packed.capacity()), (0, 0, capacity));
        log.push(Call::EndSession("x".repeat(2 * KEEP_PACKED_BYTES)));
        let large = ToolCall { args_json: "x".repeat(2 * KEEP_PACKED_BYTES), ..call(None, None) };
        assert!(log.push_tool(&large, None) > 2 * KEEP_PACKED_BYTES);
        log.clear();
        assert!(log.packed.capacity() <= KEEP_PACKED_BYTES);
    }
}
