//! Folding one session's decisions, one at a time, into its [`SessionRow`].
//!
//! Separate from the builder so a host can replay a session too large to hold and still get
//! its row: [`SessionTally::observe`] needs only the event's reference and its decision line,
//! never the events themselves.

use std::collections::BTreeMap;

use crate::event::{EventKind, EventRef, Recorded};
use crate::read::SessionRead;
use crate::session::SessionInfo;

use super::decision::{Decision, DecisionError};
use super::rows::{Finding, SessionRow};

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
