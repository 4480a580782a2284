//! The operator's report: per session, where the guard warned, blocked and aborted, beside what
//! the gateway itself did; and a summary by detector.
//!
//! Built from the events' references and the decision lines a replay produced for them (one
//! per event, in order). It keeps one small row per session, never the events, so it can follow
//! an import of any size.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::event::{EventKind, EventRef, Recorded};
use crate::reader::{SessionRead, SessionTrace};
use crate::session::SessionInfo;

/// The fields of a decision line (spec/trace-format.md) a report reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Decision {
    /// The trace line it answers.
    #[serde(default)]
    pub line: Option<u64>,
    /// `tool_call`, `tool_result` or `compaction`.
    pub kind: String,
    /// `allow`/`warn`/`block`, `recorded`/`ignored`/`abort`, `armed`/`disabled`.
    pub action: String,
    /// The detector, for `warn`, `block` and `abort`.
    #[serde(default)]
    pub detector: Option<String>,
    /// The detector's count.
    #[serde(default)]
    pub count: Option<u64>,
}

impl Decision {
    /// Parses one decision line.
    pub fn parse(line: &str) -> Result<Decision, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// A decision stream that does not fit the events it is said to answer.
#[derive(Debug)]
pub struct DecisionError {
    /// The session id.
    pub session: String,
    /// 0-based index of the event in the session (or the count, for a length mismatch).
    pub index: u64,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for DecisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "session {}: decision {}: {} (the decisions must be the replay's output for exactly this session's events, in order)",
            self.session,
            self.index + 1,
            self.reason
        )
    }
}

impl std::error::Error for DecisionError {}

/// Where something happened: the tool call's index in its session, the detector, the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// 1-based index of the tool call within the session.
    pub call: u32,
    /// The detector (for a gateway block with no known detector: its `deniedReason`).
    pub detector: String,
    /// The tool name as written in the transcript.
    pub tool: String,
    /// The detector's count, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {} {}", self.call, self.detector, self.tool)
    }
}

/// Per-detector counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DetectorCounts {
    /// Warn decisions.
    pub warnings: u64,
    /// Block decisions.
    pub blocks: u64,
    /// Abort decisions.
    pub aborts: u64,
}

/// One session's line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionRow {
    /// The agent id.
    pub agent: Option<String>,
    /// The session key.
    pub session_key: String,
    /// The session id.
    pub session_id: String,
    /// The source file.
    pub file: PathBuf,
    /// `sqlite`, `jsonl` or `trajectory`.
    pub format: &'static str,
    /// Tool calls replayed.
    pub tool_calls: u64,
    /// Warn decisions.
    pub warnings: u64,
    /// The first warn decision.
    pub first_warning: Option<Finding>,
    /// Block decisions.
    pub blocks: u64,
    /// The first block decision.
    pub first_block: Option<Finding>,
    /// Abort decisions (post-compaction guard).
    pub aborts: u64,
    /// The first abort.
    pub first_abort: Option<Finding>,
    /// The first call the gateway itself blocked (from the transcript), for comparison.
    pub gateway_block: Option<Finding>,
    /// The first call on which the gateway itself appended a loop warning.
    pub gateway_warning: Option<Finding>,
    /// Errors met while reading the session (see the import's error list).
    pub read_errors: u64,
    /// Tool calls without a result in the transcript (see [`crate::SessionStats::unanswered_calls`]).
    pub unanswered_calls: u64,
    /// Counts by detector.
    pub by_detector: BTreeMap<String, DetectorCounts>,
}

/// Folds one session's decisions into its [`SessionRow`].
#[derive(Debug, Clone)]
pub struct SessionTally {
    row: SessionRow,
    seen: u64,
}

impl SessionTally {
    /// An empty tally for `info`.
    pub fn new(info: &SessionInfo) -> Self {
        let row = SessionRow {
            agent: info.agent_id.clone(),
            session_key: info.session_key.clone(),
            session_id: info.session_id.clone(),
            file: info.file.clone(),
            format: info.format.name(),
            tool_calls: 0,
            warnings: 0,
            first_warning: None,
            blocks: 0,
            first_block: None,
            aborts: 0,
            first_abort: None,
            gateway_block: None,
            gateway_warning: None,
            read_errors: 0,
            unanswered_calls: 0,
            by_detector: BTreeMap::new(),
        };
        SessionTally { row, seen: 0 }
    }

    /// Adds the decision line `decision` for the event `r`.
    pub fn observe(&mut self, r: &EventRef, decision: &str) -> Result<(), DecisionError> {
        let d = Decision::parse(decision).map_err(|e| self.error(format!("not a decision line: {e}")))?;
        self.observe_decision(r, &d)
    }

    fn error(&self, reason: String) -> DecisionError {
        DecisionError { session: self.row.session_id.clone(), index: self.seen, reason }
    }

    /// Adds a parsed decision for the event `r`.
    pub fn observe_decision(&mut self, r: &EventRef, d: &Decision) -> Result<(), DecisionError> {
        if d.kind != r.kind.name() {
            return Err(self.error(format!("a `{}` decision for a `{}` event", d.kind, r.kind.name())));
        }
        self.seen += 1;
        let finding = || Finding {
            call: r.call_index.unwrap_or(0),
            detector: d.detector.clone().unwrap_or_default(),
            tool: r.tool.clone().unwrap_or_default(),
            count: d.count,
        };
        let row = &mut self.row;
        let detector = d.detector.clone().unwrap_or_default();
        match (r.kind, d.action.as_str()) {
            (EventKind::ToolCall, action) => {
                row.tool_calls += 1;
                match action {
                    "warn" => {
                        row.warnings += 1;
                        row.by_detector.entry(detector).or_default().warnings += 1;
                        row.first_warning.get_or_insert_with(finding);
                    }
                    "block" => {
                        row.blocks += 1;
                        row.by_detector.entry(detector).or_default().blocks += 1;
                        row.first_block.get_or_insert_with(finding);
                    }
                    _ => {}
                }
            }
            (EventKind::ToolResult, "abort") => {
                row.aborts += 1;
                row.by_detector.entry(detector).or_default().aborts += 1;
                row.first_abort.get_or_insert_with(finding);
            }
            _ => {}
        }
        match &r.recorded {
            Some(Recorded::Blocked { denied_reason, detector, count }) if row.gateway_block.is_none() => {
                row.gateway_block = Some(Finding {
                    call: r.call_index.unwrap_or(0),
                    detector: detector.clone().unwrap_or_else(|| denied_reason.clone()),
                    tool: r.tool.clone().unwrap_or_default(),
                    count: *count,
                });
            }
            Some(Recorded::Completed { loop_warning: Some(n) }) if row.gateway_warning.is_none() => {
                row.gateway_warning = Some(Finding {
                    call: r.call_index.unwrap_or(0),
                    detector: "warning".into(),
                    tool: r.tool.clone().unwrap_or_default(),
                    count: Some(*n),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// Takes the read errors and unanswered calls of the session from its [`SessionRead`].
    pub fn set_read(&mut self, read: &SessionRead) {
        self.row.read_errors = read.errors.len() as u64 + read.errors_dropped;
        self.row.unanswered_calls = read.stats.unanswered_calls;
    }

    /// The finished row.
    pub fn finish(self) -> SessionRow {
        self.row
    }
}

/// Totals over all sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Sessions in the report.
    pub sessions: u64,
    /// Tool calls replayed.
    pub tool_calls: u64,
    /// Sessions with at least one warning.
    pub sessions_with_warnings: u64,
    /// Sessions with at least one block.
    pub sessions_with_blocks: u64,
    /// Sessions with at least one abort.
    pub sessions_with_aborts: u64,
    /// Sessions in which the gateway itself blocked a call.
    pub sessions_with_gateway_blocks: u64,
    /// Read errors over all sessions.
    pub read_errors: u64,
    /// By detector: decisions, and sessions with at least one (`sessions_*`).
    pub by_detector: BTreeMap<String, DetectorSummary>,
}

/// One detector's totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DetectorSummary {
    /// Sessions it warned in.
    pub sessions_warned: u64,
    /// Sessions it blocked in.
    pub sessions_blocked: u64,
    /// Sessions it aborted.
    pub sessions_aborted: u64,
    /// Its decisions.
    #[serde(flatten)]
    pub decisions: DetectorCounts,
}

/// Collects session rows.
#[derive(Debug, Default)]
pub struct ReportBuilder {
    rows: Vec<SessionRow>,
}

impl ReportBuilder {
    /// An empty report.
    pub fn new() -> Self {
        ReportBuilder::default()
    }

    /// Adds a finished row.
    pub fn add_row(&mut self, row: SessionRow) {
        self.rows.push(row);
    }

    /// Adds a whole session: its events and the replay's decision lines for them.
    pub fn add_trace<S: AsRef<str>>(&mut self, trace: &SessionTrace, decisions: &[S]) -> Result<(), DecisionError> {
        let mut tally = SessionTally::new(&trace.info);
        if decisions.len() != trace.events.len() {
            return Err(DecisionError {
                session: trace.info.session_id.clone(),
                index: decisions.len() as u64,
                reason: format!("{} decisions for {} events", decisions.len(), trace.events.len()),
            });
        }
        for (event, decision) in trace.events.iter().zip(decisions) {
            tally.observe(&event.reference, decision.as_ref())?;
        }
        tally.set_read(&trace.read);
        self.rows.push(tally.finish());
        Ok(())
    }

    /// The report.
    pub fn finish(self) -> Report {
        let mut s = Summary::default();
        for row in &self.rows {
            s.sessions += 1;
            s.tool_calls += row.tool_calls;
            s.sessions_with_warnings += u64::from(row.warnings > 0);
            s.sessions_with_blocks += u64::from(row.blocks > 0);
            s.sessions_with_aborts += u64::from(row.aborts > 0);
            s.sessions_with_gateway_blocks += u64::from(row.gateway_block.is_some());
            s.read_errors += row.read_errors;
            for (name, c) in &row.by_detector {
                let d = s.by_detector.entry(name.clone()).or_default();
                d.sessions_warned += u64::from(c.warnings > 0);
                d.sessions_blocked += u64::from(c.blocks > 0);
                d.sessions_aborted += u64::from(c.aborts > 0);
                d.decisions.warnings += c.warnings;
                d.decisions.blocks += c.blocks;
                d.decisions.aborts += c.aborts;
            }
        }
        Report { rows: self.rows, summary: s }
    }
}

/// The report: rows and summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// One row per session, in import order.
    pub rows: Vec<SessionRow>,
    /// Totals.
    pub summary: Summary,
}

fn cell(f: &Option<Finding>) -> String {
    f.as_ref().map(Finding::to_string).unwrap_or_else(|| "-".into())
}

impl Report {
    /// An aligned text table and the summary, for terminals.
    pub fn to_table(&self) -> String {
        let header = ["AGENT", "SESSION", "CALLS", "FIRST WARNING", "FIRST BLOCK", "ABORTS", "GATEWAY BLOCKED"];
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.agent.clone().unwrap_or_else(|| "-".into()),
                    r.session_key.clone(),
                    r.tool_calls.to_string(),
                    cell(&r.first_warning),
                    cell(&r.first_block),
                    r.aborts.to_string(),
                    cell(&r.gateway_block),
                ]
            })
            .collect();
        let mut out = crate::table::render(&header, &rows);
        let s = &self.summary;
        out.push_str(&format!(
            "\n{} sessions, {} tool calls: {} with warnings, {} with blocks, {} with aborts ({} blocked by the gateway itself)",
            s.sessions, s.tool_calls, s.sessions_with_warnings, s.sessions_with_blocks, s.sessions_with_aborts, s.sessions_with_gateway_blocks
        ));
        if s.read_errors > 0 {
            out.push_str(&format!("; {} read errors", s.read_errors));
        }
        out.push('\n');
        for (name, d) in &s.by_detector {
            out.push_str(&format!(
                "  {name}: {} warnings in {} sessions, {} blocks in {} sessions, {} aborts in {} sessions\n",
                d.decisions.warnings,
                d.sessions_warned,
                d.decisions.blocks,
                d.sessions_blocked,
                d.decisions.aborts,
                d.sessions_aborted
            ));
        }
        out
    }

    /// JSON Lines: one `{"type":"session",…}` line per row, then one `{"type":"summary",…}`.
    pub fn write_jsonl(&self, w: &mut dyn Write) -> std::io::Result<()> {
        #[derive(Serialize)]
        struct Tagged<'a, T: Serialize> {
            #[serde(rename = "type")]
            ty: &'static str,
            #[serde(flatten)]
            inner: &'a T,
        }
        for row in &self.rows {
            serde_json::to_writer(&mut *w, &Tagged { ty: "session", inner: row })?;
            w.write_all(b"\n")?;
        }
        serde_json::to_writer(&mut *w, &Tagged { ty: "summary", inner: &self.summary })?;
        w.write_all(b"\n")
    }

    /// [`Report::write_jsonl`] into a string.
    pub fn to_jsonl(&self) -> String {
        let mut out = Vec::new();
        let _ = self.write_jsonl(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}
