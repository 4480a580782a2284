//! Tool-call loop detection and the post-compaction guard (docs/spec/tool-loop.md).
//!
//! ## Why
//! An agent that polls a command that never changes, alternates between two calls, or retries a
//! tool that does not exist burns tokens until someone notices. OpenClaw's answer is a short
//! per-session history of call and outcome fingerprints and a handful of detectors over it:
//! warnings are logged, and a block replaces the tool result with a message that tells the model
//! to stop. This module reproduces that decision for decision.
//!
//! ## How
//! - [`facts`] fingerprints a call; [`outcome`] hashes what a tool returned, per tool family, so volatile fields do not hide a
//!   loop; [`history`] keeps the records of one session.
//! - One file per detector, each `check(&Scope, &LoopSettings) -> Option<Finding>` over the
//!   session's history, run in OpenClaw's order by [`Session::check`]: [`unknown_tool`],
//!   [`circuit_breaker`], [`known_poll`], [`ping_pong`], [`generic_repeat`] (its critical, then
//!   openclaw 2026.9's [`argument_churn`], then its warning). Three of them read the same
//!   [`no_progress`] streak, which [`Scope`] computes once.
//! - [`warnings`] de-duplicates warnings in buckets of ten; [`post_compaction`] is the guard that
//!   watches the first outcomes after a context compaction; [`recovery`] words a block the way
//!   openclaw 2026.9's tool-loop recovery does.
//! - The profile's [`ToolRules`](crate::config::profile::ToolRules) switch the rules that differ
//!   by release; each rule lives with the detector or record it belongs to.
//! - Beyond OpenClaw (issue 50, off unless `loopguard.preset` or `loopguard.detectors` turns them
//!   on): [`extended`] runs [`same_error`], [`same_result`], [`lap_cycle`] and [`growing_args`]
//!   over a session's [`trail`] (outcomes normalised by [`crate::config::volatile`], calls
//!   compared by their [`sketch`]) and climbs the [`ladder`] from block to abort.

pub mod argument_churn;
pub mod circuit_breaker;
pub mod extended;
pub mod facts;
pub mod generic_repeat;
pub mod growing_args;
pub mod history;
pub mod known_poll;
pub mod ladder;
pub mod lap_cycle;
pub mod no_progress;
pub mod outcome;
pub mod ping_pong;
pub mod post_compaction;
pub mod recovery;
pub mod same_error;
pub mod same_result;
mod session;
pub mod sketch;
pub mod trail;
pub mod unknown_tool;
pub mod warnings;

mod decision;

pub use decision::{
    CompactionVerdict, Detector, Finding, OutcomeVerdict, Scope, ToolAction, ToolVerdict, MAX_GUARDS_PER_SESSION,
};
pub use facts::{Args, CallFacts, ToolCall};
pub use outcome::{HashedOutcome, Outcome};
pub use session::{Session, SessionWire, SessionWithTrail};
