//! The report's data: one row per session, and the summary by detector.
//!
//! Separate from the builder and the printers so that both depend on these types and not on
//! each other.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

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

/// The report: rows and summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// One row per session, in import order.
    pub rows: Vec<SessionRow>,
    /// Totals.
    pub summary: Summary,
}
