//! The counts a mapper keeps for one session; their own file because both mappers (OpenClaw's
//! records in `mod.rs`, the agent CLIs' in `agent_cli.rs`) fill them.

/// Counts for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Records read (header included), on or off the active branch.
    pub records: u64,
    /// Canonical records left out because they are off the active branch.
    pub off_branch: u64,
    /// `tool_call` events produced.
    pub tool_calls: u64,
    /// `tool_result` events produced.
    pub tool_results: u64,
    /// `compaction` events produced.
    pub compactions: u64,
    /// Tool results whose outcome the guard never saw (see [`crate::event::Recorded::NotRecorded`]).
    pub unrecorded_outcomes: u64,
    /// Tool results with no matching call on the branch (left out).
    pub orphan_results: u64,
    /// Records that could not be read (each one is also an error).
    pub bad_records: u64,
    /// Tool calls with no result in the transcript. A call at the end of a run that has none is
    /// usually one the gateway aborted: the post-compaction guard aborts on an outcome that is
    /// then never persisted (the 2026.9.6 fixture's session (b) ends that way), so a replay
    /// cannot see that last outcome.
    pub unanswered_calls: u64,
}
