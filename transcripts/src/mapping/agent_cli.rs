//! From the coding CLIs' transcripts (Claude Code, Codex, Gemini CLI) to trace events, the way
//! `loopguard hook <cli>` sees the same session.
//!
//! Why a mapper of its own: these CLIs run loopguard as a hook, one process per hook event, and
//! the hook sees what the CLI hands it, not what OpenClaw's guard saw. So a replay of a CLI's
//! transcript must give the policy the same calls and outcomes the hook gives it, for the block
//! to land on the same call number:
//!
//! | hook event | trace event | from the transcript |
//! |---|---|---|
//! | `PreToolUse` / `BeforeTool` | `tool_call`: `session` = the CLI's session id, `tool` = the tool name the hook gets (not normalized), `args` = the hook's `tool_input` | the model's tool call |
//! | `PostToolUse` / `AfterTool` | `tool_result` with `result` = [`cli_tool_result`] of the output the hook gets | the tool's recorded output (see each reader) |
//! | `PostToolUseFailure` / an error response | `tool_result` with `error` = the error text | the error result |
//! | `PostCompact` / compression | `compaction` | the CLI's compaction marker |
//! | a call the hook denied | nothing: no post hook fires for it (counted in `unrecorded_outcomes`) | the CLI's "blocked by hook" result |
//!
//! The result is wrapped as `{"content":[{"type":"text","text":…}]}` rather than passed as the
//! raw output because the policy's outcome hash reads `content[].text` and `details`
//! (docs/spec/tool-loop.md §1.3): a bare object such as Claude's `{stdout, stderr}` would hash to
//! the same value for every output, and every repeated call would look like no progress.
//! Results pair with the oldest unanswered call of the same id, as in [`super::Mapper`].

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Value};

use super::stats::SessionStats;
use crate::error::Location;
use crate::event::{Compaction, EventRef, ImportedEvent, Outcome, Recorded, ToolCall, ToolResult, TraceEvent};
use crate::session::SessionInfo;

/// The `result` of a trace event for the output a post-tool hook gets (`tool_response` of
/// Claude Code's and Codex's `PostToolUse`, `returnDisplay` of Gemini CLI's `AfterTool`), shaped
/// the way the policy's outcome hash reads results (docs/spec/tool-loop.md §1.3): a string
/// becomes the one text part, `{"content":[{"type":"text","text":…}]}`; an object is kept whole
/// as `{"details":…}`; an array (content parts) becomes `{"content":…}`; anything else is kept
/// as `{"details":{"value":…}}`. `loopguard hook` and the transcript readers both use it, so a
/// replay of a transcript hashes the outcomes the hook hashed.
pub fn cli_tool_result(response: &Value) -> Value {
    match response {
        Value::String(text) => json!({"content": [{"type": "text", "text": text}]}),
        Value::Object(_) => json!({ "details": response }),
        Value::Array(_) => json!({ "content": response }),
        other => json!({"details": {"value": other}}),
    }
}

/// Splits Copilot CLI's shell result, `<output>\n<shellId: N completed with exit code X>`, into
/// the output (its trailing newlines dropped) and X; a text without the footer is all output.
/// Why one function: the footer's N changes on every call, so the hook (`loopguard hook copilot`)
/// and the transcript reader must both read it away, the same way, to see the same outcomes.
pub fn copilot_shell_footer(text: &str) -> (&str, Option<i64>) {
    let trimmed = text.trim_end();
    let Some(start) = trimmed.rfind("<shellId: ").filter(|_| trimmed.ends_with('>')) else { return (text, None) };
    let footer = &trimmed[start..trimmed.len() - 1];
    let code = footer.rsplit_once("exit code ").and_then(|(_, code)| code.trim().parse().ok());
    match code {
        Some(code) => (trimmed[..start].trim_end_matches('\n'), Some(code)),
        None => (text, None),
    }
}

/// What a CLI recorded as a tool call's outcome.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CliOutcome {
    /// The tool ran: the trace `result` ([`cli_tool_result`] of what the post-tool hook gets).
    Output(Value),
    /// The tool failed: the error text.
    Failed(String),
    /// The tool failed, and the guard got the error as this value (an in-process plugin hands
    /// the policy the tool's own error value, not a text).
    FailedWith(Value),
    /// A hook denied the call (the CLI's "blocked by hook" result): the guard recorded no outcome.
    Denied,
}

struct Pending {
    index: u32,
    tool: String,
    args: Value,
}

/// Most unanswered calls kept for pairing (as in [`super::Mapper`]).
const MAX_PENDING: usize = 4096;

/// Maps one CLI session's calls, results and compactions, in the order the reader finds them.
pub(crate) struct CliMapper {
    info: Arc<SessionInfo>,
    key: Arc<str>,
    calls: u32,
    pending: HashMap<String, VecDeque<Pending>>,
    order: VecDeque<String>,
    pub(crate) stats: SessionStats,
}

impl CliMapper {
    pub(crate) fn new(info: Arc<SessionInfo>) -> Self {
        let key: Arc<str> = info.session_key.as_str().into();
        CliMapper {
            info,
            key,
            calls: 0,
            pending: HashMap::new(),
            order: VecDeque::new(),
            stats: SessionStats::default(),
        }
    }

    /// The session's counts, once every record was mapped.
    pub(crate) fn finish(mut self) -> SessionStats {
        self.stats.unanswered_calls = self.pending.values().map(|q| q.len() as u64).sum();
        self.stats
    }

    fn imported(
        &self,
        event: TraceEvent,
        call: Option<(u32, &str)>,
        tool: Option<&str>,
        at: Location,
        recorded: Option<Recorded>,
    ) -> ImportedEvent {
        let reference = EventRef {
            session: self.info.clone(),
            kind: event.kind(),
            call_index: call.map(|c| c.0),
            call_id: call.map(|c| c.1.to_string()),
            tool: tool.map(str::to_string),
            location: at,
            recorded,
        };
        ImportedEvent { event, reference }
    }

    /// A tool call `id` of `tool` with `args`.
    pub(crate) fn call(
        &mut self,
        id: &str,
        tool: &str,
        args: Value,
        ts: Option<i64>,
        at: Location,
        sink: &mut dyn FnMut(ImportedEvent),
    ) {
        self.calls += 1;
        self.stats.tool_calls += 1;
        let index = self.calls;
        if self.order.len() >= MAX_PENDING {
            if let Some(old) = self.order.pop_front() {
                if let Some(q) = self.pending.get_mut(&old) {
                    q.pop_front();
                    if q.is_empty() {
                        self.pending.remove(&old);
                    }
                }
            }
        }
        self.order.push_back(id.to_string());
        self.pending.entry(id.to_string()).or_default().push_back(Pending {
            index,
            tool: tool.to_string(),
            args: args.clone(),
        });
        let event = TraceEvent::ToolCall(ToolCall {
            session: self.key.clone(),
            tool: tool.to_string(),
            args,
            run: None,
            agent: None,
            call_id: Some(id.to_string()),
            ts_ms: ts,
        });
        sink(self.imported(event, Some((index, id)), Some(tool), at, None));
    }

    /// The outcome of call `id`.
    pub(crate) fn result(
        &mut self,
        id: &str,
        outcome: CliOutcome,
        ts: Option<i64>,
        at: Location,
        sink: &mut dyn FnMut(ImportedEvent),
    ) {
        let Some(call) = self.claim(id) else {
            self.stats.orphan_results += 1;
            return;
        };
        let (outcome, recorded) = match outcome {
            CliOutcome::Output(result) => (Outcome::Result(result), Recorded::Completed { loop_warning: None }),
            CliOutcome::Failed(text) => (Outcome::Error(Value::String(text)), Recorded::Failed),
            CliOutcome::FailedWith(error) => (Outcome::Error(error), Recorded::Failed),
            CliOutcome::Denied => {
                // No post-tool hook fires for a denied call: the guard saw no outcome.
                self.stats.unrecorded_outcomes += 1;
                return;
            }
        };
        self.stats.tool_results += 1;
        let event = TraceEvent::ToolResult(ToolResult {
            session: self.key.clone(),
            tool: call.tool.clone(),
            args: call.args,
            outcome,
            run: None,
            agent: None,
            call_id: Some(id.to_string()),
            ts_ms: ts,
        });
        sink(self.imported(event, Some((call.index, id)), Some(&call.tool), at, Some(recorded)));
    }

    /// A compaction (Claude Code's `compact_boundary`, Codex's `compacted`).
    pub(crate) fn compaction(&mut self, at: Location, sink: &mut dyn FnMut(ImportedEvent)) {
        self.stats.compactions += 1;
        let event = TraceEvent::Compaction(Compaction { session: self.key.clone(), run: None, agent: None });
        sink(self.imported(event, None, None, at, None));
    }

    fn claim(&mut self, id: &str) -> Option<Pending> {
        let q = self.pending.get_mut(id)?;
        let call = q.pop_front()?;
        if q.is_empty() {
            self.pending.remove(id);
        }
        if let Some(pos) = self.order.iter().position(|x| x == id) {
            self.order.remove(pos);
        }
        Some(call)
    }
}
