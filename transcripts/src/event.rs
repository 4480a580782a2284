//! The trace events this crate produces (docs/spec/trace-format.md), and the reference kept beside
//! each one so that a report can point back at the transcript.

use std::io::Write;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::error::Location;
use crate::session::SessionInfo;

/// A tool call's outcome, as the trace format carries it: `result` or `error`, told apart by the
/// key, not the value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The tool returned: `{content, details}` as OpenClaw's guard hashed it.
    Result(Value),
    /// The tool threw: the error text OpenClaw's guard formatted.
    Error(Value),
}

/// An agent asks to run a tool (checked before it runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The session key.
    pub session: Arc<str>,
    /// The tool name, normalized the way OpenClaw's guard saw it (`loopguard_policy::config::profile::releases::normalize_tool_name`).
    pub tool: String,
    /// The call's arguments as the model wrote them.
    pub args: Value,
    /// `message.__openclaw.runId` of the assistant message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The agent id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Arc<str>>,
    /// The tool call part's `id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The record's timestamp in ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts_ms: Option<i64>,
}

/// The outcome of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// The session key.
    pub session: Arc<str>,
    /// The call's (normalized) tool name.
    pub tool: String,
    /// The call's arguments (from the matching tool call).
    pub args: Value,
    /// `result` or `error`.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// `message.__openclaw.runId` of the tool result (else of its call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The agent id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Arc<str>>,
    /// The tool call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The record's timestamp in ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts_ms: Option<i64>,
}

/// A context compaction (arms the post-compaction guard).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compaction {
    /// The session key.
    pub session: Arc<str>,
    /// The compaction entry's `__openclaw.runId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The agent id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Arc<str>>,
}

/// One trace event; serializes to one line of docs/spec/trace-format.md.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// `tool_call`
    ToolCall(ToolCall),
    /// `tool_result`
    ToolResult(ToolResult),
    /// `compaction`
    Compaction(Compaction),
}

impl TraceEvent {
    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            TraceEvent::ToolCall(_) => EventKind::ToolCall,
            TraceEvent::ToolResult(_) => EventKind::ToolResult,
            TraceEvent::Compaction(_) => EventKind::Compaction,
        }
    }

    /// Appends the event as one trace line (compact JSON and `\n`) to `out`.
    pub fn write_line(&self, out: &mut Vec<u8>) {
        // Serializing owned JSON values into a Vec cannot fail (no I/O, string keys only).
        if serde_json::to_writer(&mut *out, self).is_ok() {
            out.push(b'\n');
        }
    }

    /// Writes the event as one trace line to `w`.
    pub fn write_to(&self, w: &mut dyn Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *w, self)?;
        w.write_all(b"\n")
    }

    /// The event as one trace line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The three kinds of events an import produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `tool_call`
    ToolCall,
    /// `tool_result`
    ToolResult,
    /// `compaction`
    Compaction,
}

impl EventKind {
    /// The trace format's name for the kind.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::ToolCall => "tool_call",
            EventKind::ToolResult => "tool_result",
            EventKind::Compaction => "compaction",
        }
    }
}

/// What the gateway itself did with a tool call, read from its tool result record. This is
/// history, not a replay decision: it lets a report put the guard's verdicts beside what
/// actually happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Recorded {
    /// The tool ran and returned (`isError:false`). `loop_warning` is the count in the
    /// `[System note: Tool-loop warning after N repeated calls…]` part OpenClaw appended, if any.
    Completed {
        /// The warning's repeat count, when the gateway warned on this call.
        #[serde(skip_serializing_if = "Option::is_none")]
        loop_warning: Option<u64>,
    },
    /// The tool ran (or was refused inside the wrapper) and the result is an error
    /// (`isError:true`).
    Failed,
    /// The gateway blocked the call (`details.status:"blocked"`) and recorded the block as the
    /// loop outcome: `tool-loop` (its own guard), `plugin-before-tool-call` (a plugin such as
    /// loopguard) or `client-voice-confirmation`.
    Blocked {
        /// `details.deniedReason`.
        denied_reason: String,
        /// The detector, for `tool-loop` blocks (from `details.intervention`, else read off the
        /// reason text).
        #[serde(skip_serializing_if = "Option::is_none")]
        detector: Option<String>,
        /// The detector's count, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
    },
    /// The call never reached the guard's outcome path (a batch admission failure, a call
    /// skipped for steering, a synthetic result from transcript repair): no `tool_result` event
    /// is produced for it.
    NotRecorded {
        /// Why, e.g. `tool-admission`, `steering`, `synthetic-missing-result`.
        reason: String,
    },
}

/// Where an event came from, kept beside it for reports.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRef {
    /// The session (file, agent, key, id).
    pub session: Arc<SessionInfo>,
    /// The event's kind.
    pub kind: EventKind,
    /// 1-based index of the tool call within the session (for a result: of its call).
    pub call_index: Option<u32>,
    /// The tool call id.
    pub call_id: Option<String>,
    /// The tool name as written in the transcript (before normalization).
    pub tool: Option<String>,
    /// The row (`seq`) or line of the record.
    pub location: Location,
    /// For tool results: what the gateway did.
    pub recorded: Option<Recorded>,
}

/// An event and its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedEvent {
    /// The trace event.
    pub event: TraceEvent,
    /// Where it came from.
    pub reference: EventRef,
}
