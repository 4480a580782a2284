//! The replay's side of the report: the decision lines it reads, and the error for a decision
//! stream that does not match the events.
//!
//! Separate because this is the report's input contract (docs/spec/trace-format.md), which changes
//! with the trace format, not with how the report is summed or printed.

use std::fmt;

use serde::Deserialize;

/// The fields of a decision line (docs/spec/trace-format.md) a report reads.
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
