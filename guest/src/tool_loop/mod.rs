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
//! Two families, each in its own folder, each detector one file with the same shape of `check`:
//! - [`openclaw`]: OpenClaw's detectors over a session's [`history`], in OpenClaw's order, decision
//!   for decision (docs/spec/tool-loop.md).
//! - [`beyond`]: loopguard's own detectors for the loops real agents make (docs/spec/beyond.md),
//!   off unless `loopguard.preset` or `loopguard.detectors` turns them on; they run after
//!   OpenClaw's and never weaken its block.
//!
//! Shared by both: [`facts`] fingerprints a call; [`outcome`] hashes what a tool returned, per tool
//! family; [`Session::check`] and [`Session::outcome`] run the families in order.
//! The profile's [`ToolRules`](crate::config::profile::ToolRules) switch the OpenClaw rules that
//! differ by release; each rule lives with the detector or record it belongs to.

pub mod beyond;
pub mod facts;
pub mod history;
pub mod openclaw;
pub mod outcome;
mod session;

mod decision;

pub use decision::{
    CompactionVerdict, Detector, Finding, OutcomeVerdict, Scope, ToolAction, ToolVerdict, MAX_GUARDS_PER_SESSION,
};
pub use facts::{Args, CallFacts, ToolCall};
pub use outcome::{HashedOutcome, Outcome};
pub use session::{Session, SessionWire, SessionWithTrail, SessionWithTrailV4};
