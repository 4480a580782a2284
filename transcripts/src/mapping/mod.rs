//! From pi session records to trace events, the way OpenClaw 2026.9.6's own loop guard saw them.
//!
//! The guard sees a call before it runs and the outcome after; the transcript stores what the
//! *model* saw. The two differ in three places (the appended loop warning, blocked calls, thrown
//! errors), and [`outcome`] undoes each of them, with the evidence. This file walks the records
//! and pairs calls with results.
//!
//! Order: events follow the records. An assistant message's tool calls come first (in part
//! order), then each `toolResult` message as it was stored, which is how batch admission
//! checks a whole assistant turn before any tool runs. A result is paired with the oldest
//! unanswered call of the same id (`createToolCallOccurrenceQueue`).

mod agent_cli;
mod outcome;
mod stats;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, ErrorKind, Location};
use crate::event::{Compaction, EventKind, EventRef, ImportedEvent, Recorded, ToolCall, ToolResult, TraceEvent};
use crate::record::{is_tool_call_type, parse_parts, Entry, Member, Message};
use crate::session::SessionInfo;
use crate::timestamp::parse_iso_ms;
use loopguard_policy::config::profile::releases::normalize_tool_name;

pub use agent_cli::{cli_tool_result, copilot_shell_footer};
pub(crate) use agent_cli::{CliMapper, CliOutcome};
use outcome::classify;
pub use stats::SessionStats;

struct PendingCall {
    index: u32,
    tool: String,
    args: Value,
    run: Option<String>,
}

/// Most unanswered calls kept for pairing; a transcript with more lost results drops the oldest.
const MAX_PENDING: usize = 4096;

/// Maps one session's records, in order.
pub(crate) struct Mapper {
    info: Arc<SessionInfo>,
    key: Arc<str>,
    agent: Option<Arc<str>>,
    calls: u32,
    pending: HashMap<String, VecDeque<PendingCall>>,
    pending_order: VecDeque<String>,
    pub(crate) stats: SessionStats,
}

impl Mapper {
    /// The session's counts, once every record was mapped.
    pub(crate) fn finish(mut self) -> SessionStats {
        self.stats.unanswered_calls = self.pending.values().map(|q| q.len() as u64).sum();
        self.stats
    }

    pub(crate) fn new(info: Arc<SessionInfo>) -> Self {
        let key: Arc<str> = info.session_key.as_str().into();
        let agent = info.agent_id.as_deref().map(Arc::from);
        Mapper {
            info,
            key,
            agent,
            calls: 0,
            pending: HashMap::new(),
            pending_order: VecDeque::new(),
            stats: SessionStats::default(),
        }
    }

    fn error(&self, kind: ErrorKind, at: Location) -> Error {
        Error::new(kind, &self.info.file).in_session(&self.info.session_id).at(at)
    }

    /// Maps one record on the active branch (its JSON text).
    pub(crate) fn record(
        &mut self,
        text: &str,
        at: Location,
        sink: &mut dyn FnMut(ImportedEvent),
    ) -> Result<(), Error> {
        let entry: Entry<'_> = serde_json::from_str(text).map_err(|e| {
            self.stats.bad_records += 1;
            self.error(ErrorKind::Json(e), at)
        })?;
        self.entry(&entry, at, sink)
    }

    /// Maps one record already parsed as a [`Entry`].
    pub(crate) fn entry(
        &mut self,
        entry: &Entry<'_>,
        at: Location,
        sink: &mut dyn FnMut(ImportedEvent),
    ) -> Result<(), Error> {
        match entry.ty.as_str() {
            Some("message") => {
                let Some(message) = &entry.message else { return Ok(()) };
                let ts = entry_ts(entry);
                match message.role.as_str() {
                    Some("assistant") => self.assistant(message, ts, at, sink),
                    Some("toolResult") => self.tool_result(message, ts, at, sink),
                    _ => Ok(()),
                }
            }
            Some("compaction") => {
                let run = entry.openclaw.as_ref().and_then(|m| m.run_id.as_str()).map(str::to_string);
                self.stats.compactions += 1;
                let event =
                    TraceEvent::Compaction(Compaction { session: self.key.clone(), run, agent: self.agent.clone() });
                sink(self.imported(event, EventKind::Compaction, None, None, None, at, None));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn imported(
        &self,
        event: TraceEvent,
        kind: EventKind,
        call_index: Option<u32>,
        call_id: Option<String>,
        tool: Option<String>,
        location: Location,
        recorded: Option<Recorded>,
    ) -> ImportedEvent {
        let reference = EventRef { session: self.info.clone(), kind, call_index, call_id, tool, location, recorded };
        ImportedEvent { event, reference }
    }

    fn assistant(
        &mut self,
        m: &Message<'_>,
        ts: Option<i64>,
        at: Location,
        sink: &mut dyn FnMut(ImportedEvent),
    ) -> Result<(), Error> {
        let Some(content) = m.content else { return Ok(()) };
        let run = m.openclaw.as_ref().and_then(|o| o.run_id.as_str()).map(str::to_string);
        for part in parse_parts(content) {
            if !part.ty.as_deref().is_some_and(is_tool_call_type) {
                continue;
            }
            let raw_name = part.name.as_str().unwrap_or("").to_string();
            let tool = normalize_tool_name(&raw_name).into_owned();
            let args_raw = part.arguments.or(part.input);
            let args = match args_raw {
                Some(raw) => {
                    serde_json::from_str::<Value>(raw.get()).map_err(|e| self.error(ErrorKind::Json(e), at))?
                }
                None => Value::Null,
            };
            let call_id = part.id.non_blank().map(str::to_string);
            self.calls += 1;
            self.stats.tool_calls += 1;
            let index = self.calls;
            if let Some(id) = &call_id {
                self.remember(
                    id.clone(),
                    PendingCall { index, tool: tool.clone(), args: args.clone(), run: run.clone() },
                );
            }
            let event = TraceEvent::ToolCall(ToolCall {
                session: self.key.clone(),
                tool,
                args,
                run: run.clone(),
                agent: self.agent.clone(),
                call_id: call_id.clone(),
                ts_ms: ts,
            });
            sink(self.imported(event, EventKind::ToolCall, Some(index), call_id, Some(raw_name), at, None));
        }
        Ok(())
    }

    fn remember(&mut self, id: String, call: PendingCall) {
        if self.pending_order.len() >= MAX_PENDING {
            if let Some(old) = self.pending_order.pop_front() {
                if let Some(q) = self.pending.get_mut(&old) {
                    q.pop_front();
                    if q.is_empty() {
                        self.pending.remove(&old);
                    }
                }
            }
        }
        self.pending_order.push_back(id.clone());
        self.pending.entry(id).or_default().push_back(call);
    }

    fn claim(&mut self, id: &str) -> Option<PendingCall> {
        let q = self.pending.get_mut(id)?;
        let call = q.pop_front()?;
        if q.is_empty() {
            self.pending.remove(id);
        }
        if let Some(pos) = self.pending_order.iter().position(|x| x == id) {
            self.pending_order.remove(pos);
        }
        Some(call)
    }

    fn tool_result(
        &mut self,
        m: &Message<'_>,
        ts: Option<i64>,
        at: Location,
        sink: &mut dyn FnMut(ImportedEvent),
    ) -> Result<(), Error> {
        let Some(call_id) = m.result_call_id() else {
            self.stats.orphan_results += 1;
            return Ok(());
        };
        let Some(call) = self.claim(&call_id) else {
            self.stats.orphan_results += 1;
            return Ok(());
        };
        let parse = |raw: Option<&serde_json::value::RawValue>| -> Result<Option<Value>, serde_json::Error> {
            raw.map(|r| serde_json::from_str::<Value>(r.get())).transpose()
        };
        let content = parse(m.content).map_err(|e| self.error(ErrorKind::Json(e), at))?;
        let details = parse(m.details).map_err(|e| self.error(ErrorKind::Json(e), at))?;
        let is_error = matches!(m.is_error, Some(Value::Bool(true)));
        let (outcome, recorded) = classify(content, details, is_error);
        let raw_tool = m.tool_name.as_str().map(str::to_string);
        let Some(outcome) = outcome else {
            self.stats.unrecorded_outcomes += 1;
            return Ok(());
        };
        let run = m.openclaw.as_ref().and_then(|o| o.run_id.as_str()).map(str::to_string).or(call.run);
        self.stats.tool_results += 1;
        let event = TraceEvent::ToolResult(ToolResult {
            session: self.key.clone(),
            tool: call.tool,
            args: call.args,
            outcome,
            run,
            agent: self.agent.clone(),
            call_id: Some(call_id.clone()),
            ts_ms: ts,
        });
        sink(self.imported(
            event,
            EventKind::ToolResult,
            Some(call.index),
            Some(call_id),
            raw_tool,
            at,
            Some(recorded),
        ));
        Ok(())
    }
}

/// The record's own timestamp (`timestamp`, ISO text as OpenClaw writes it).
fn entry_ts(entry: &Entry<'_>) -> Option<i64> {
    match &entry.timestamp {
        Member::Str(s) => parse_iso_ms(s),
        _ => None,
    }
}
