//! What the detectors find about a call and what the session answers: the vocabulary every
//! detector file and the session share (here, so that none of them imports the module root).

use super::history::Record;
use super::openclaw::no_progress;
use crate::digest::Digest;

/// Post-compaction guards kept per session (one per run; the least recently used goes first).
pub const MAX_GUARDS_PER_SESSION: usize = 32;

/// The detector that warned, blocked or aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detector {
    /// [`generic_repeat`](super::openclaw::generic_repeat).
    GenericRepeat,
    /// [`known_poll`](super::openclaw::known_poll).
    KnownPollNoProgress,
    /// [`ping_pong`](super::openclaw::ping_pong).
    PingPong,
    /// [`unknown_tool`](super::openclaw::unknown_tool).
    UnknownToolRepeat,
    /// [`circuit_breaker`](super::openclaw::circuit_breaker).
    GlobalCircuitBreaker,
    /// [`post_compaction`](super::openclaw::post_compaction).
    CompactionLoopPersisted,
    /// [`argument_churn`](super::openclaw::argument_churn) (openclaw 2026.9).
    ArgumentChurn,
    /// [`same_error`](super::beyond::same_error).
    SameError,
    /// [`same_result`](super::beyond::same_result).
    SameResult,
    /// [`lap_cycle`](super::beyond::lap_cycle).
    Cycle,
    /// [`growing_args`](super::beyond::growing_args).
    GrowingArgs,
    /// [`ladder`](super::beyond::ladder): the run ended because blocks were ignored.
    Ladder,
}

impl Detector {
    /// The name used in decisions and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Detector::GenericRepeat => "generic_repeat",
            Detector::KnownPollNoProgress => "known_poll_no_progress",
            Detector::PingPong => "ping_pong",
            Detector::UnknownToolRepeat => "unknown_tool_repeat",
            Detector::GlobalCircuitBreaker => "global_circuit_breaker",
            Detector::CompactionLoopPersisted => "compaction_loop_persisted",
            Detector::ArgumentChurn => "argument_churn",
            Detector::SameError => "same_error",
            Detector::SameResult => "same_result",
            Detector::Cycle => "cycle",
            Detector::GrowingArgs => "growing_args",
            Detector::Ladder => "ladder",
        }
    }
}

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolAction {
    /// Run it.
    Allow,
    /// Run it, and log the warning.
    Warn,
    /// Do not run it.
    Block,
}

/// The verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolVerdict {
    /// Allow, warn or block.
    pub action: ToolAction,
    /// The detector, for warn and block.
    pub detector: Option<Detector>,
    /// The detector's count (0 for allow).
    pub count: u32,
    /// The exact message, for warn and block.
    pub message: Option<String>,
    /// For warn: newly emitted under bucketed de-duplication.
    pub notify: bool,
}

/// What happened to an outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutcomeVerdict {
    /// Attached or pushed.
    Recorded,
    /// No hash: nothing recorded.
    Ignored,
    /// End the run: the post-compaction guard fired, or the ladder saw its blocks ignored.
    Abort {
        /// Which: [`Detector::CompactionLoopPersisted`] or [`Detector::Ladder`].
        detector: Detector,
        /// Matching observations (ignored blocks, for the ladder).
        count: u32,
        /// The exact message.
        message: String,
    },
}

/// The guard's state after a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionVerdict {
    /// Armed for this many outcomes.
    Armed(u32),
    /// This session+run's guard is off.
    Disabled,
}

/// A detector's finding before warning de-duplication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// True for a block, false for a warning.
    pub critical: bool,
    /// Which detector.
    pub detector: Detector,
    /// Its count.
    pub count: u32,
    /// The exact message.
    pub message: String,
    /// The warning key (without the run prefix), for bucketing; only set on warnings.
    pub warning_key: Option<Digest>,
}

impl Finding {
    /// A block.
    pub fn block(detector: Detector, count: u32, message: String) -> Self {
        Finding { critical: true, detector, count, message, warning_key: None }
    }

    /// A warning under `key`.
    pub fn warn(detector: Detector, count: u32, key: Digest, message: String) -> Self {
        Finding { critical: false, detector, count, message, warning_key: Some(key) }
    }
}

/// Everything the detectors know about the current call: its fingerprint, the records of its
/// run, and the no-progress streak three of them share.
pub struct Scope<'h> {
    /// The tool name, for messages.
    pub tool: &'h str,
    /// [`name_id`](crate::digest::name_id) of the tool name.
    pub tool_id: u64,
    /// `argsHash` of the call.
    pub args: Digest,
    /// `command_status`, or `process` with action `poll` or `log`.
    pub known_poll: bool,
    /// The records of the call's run, oldest first.
    pub records: Vec<&'h Record>,
    /// The no-progress streak of this call.
    pub streak: no_progress::Streak,
}
