//! Tool-call loop detection and the post-compaction guard (spec/tool-loop.md).
//!
//! ## Why
//! An agent that polls a command that never changes, alternates between two calls, or retries a
//! tool that does not exist burns tokens until someone notices. OpenClaw's answer is a short
//! per-session history of call and outcome fingerprints and a handful of detectors over it:
//! warnings are logged, and a block replaces the tool result with a message that tells the model
//! to stop. This module reproduces that decision for decision.
//!
//! ## How
//! - [`outcome`] hashes what a tool returned, per tool family, so volatile fields do not hide a
//!   loop; [`history`] keeps the records; one file per detector ([`unknown_tool`],
//!   [`no_progress`], [`ping_pong`]) and [`detect`] runs them in OpenClaw's order.
//! - [`warnings`] de-duplicates warnings in buckets of ten; [`compaction`] is the guard that
//!   watches the first outcomes after a context compaction.
//! - [`Session`] ties them together for one session: `check` before a call, `outcome` after it.

pub mod compaction;
pub mod detect;
pub mod history;
pub mod memo;
pub mod no_progress;
pub mod outcome;
pub mod ping_pong;
pub mod unknown_tool;
pub mod warnings;

use serde::{Deserialize, Serialize};

use crate::config::tool::LoopSettings;
use crate::digest::{args_digest, Digest};
use crate::json::Json;
use compaction::CompactionGuard;
pub use detect::Detector;
use history::History;
pub use memo::CallFacts;
pub use outcome::{HashedOutcome, Outcome};
use warnings::WarningBuckets;

/// Post-compaction guards kept per session (one per run; the least recently used goes first).
pub const MAX_GUARDS_PER_SESSION: usize = 32;

/// A tool call as the gateway passes it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The session key.
    pub session: &'a str,
    /// The tool name.
    pub tool: &'a str,
    /// The call's arguments.
    pub args: &'a Json<'a>,
    /// The run id, exactly as passed.
    pub run: Option<&'a str>,
    /// The agent id.
    pub agent: Option<&'a str>,
    /// The provider's tool-call id.
    pub call_id: Option<&'a str>,
}

/// A tool call without its arguments: what the hooks pass besides the args, whose
/// [`CallFacts`] are computed (or recalled) separately.
#[derive(Debug, Clone, Copy)]
pub struct CallRef<'a> {
    /// The session key.
    pub session: &'a str,
    /// The tool name.
    pub tool: &'a str,
    /// The run id, exactly as passed.
    pub run: Option<&'a str>,
    /// The agent id.
    pub agent: Option<&'a str>,
    /// The provider's tool-call id.
    pub call_id: Option<&'a str>,
}

impl<'a> ToolCall<'a> {
    /// The call without its arguments.
    pub fn meta(&self) -> CallRef<'a> {
        CallRef { session: self.session, tool: self.tool, run: self.run, agent: self.agent, call_id: self.call_id }
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

impl ToolVerdict {
    const ALLOW: ToolVerdict =
        ToolVerdict { action: ToolAction::Allow, detector: None, count: 0, message: None, notify: false };
}

/// What happened to an outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutcomeVerdict {
    /// Attached or pushed.
    Recorded,
    /// No hash: nothing recorded.
    Ignored,
    /// The post-compaction guard fired.
    Abort {
        /// Matching observations.
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

/// All tool-loop state of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    history: History,
    warnings: WarningBuckets,
    /// Post-compaction guards by run id exactly as given (absent = ""), least recently used first.
    guards: Vec<(Box<str>, CompactionGuard)>,
}

/// `argsHash` of a call, with `update_plan` params reduced to their shape.
pub(crate) fn call_digest(tool: &str, params: &Json<'_>) -> Digest {
    if tool == "update_plan" {
        args_digest(tool, &outcome::plan_shape(params))
    } else {
        args_digest(tool, params)
    }
}

impl Session {
    /// The history (for tests and stats).
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Checks a call before it runs and records it unless it is blocked or the guard is
    /// explicitly disabled.
    pub fn check(&mut self, call: &ToolCall<'_>, s: &LoopSettings) -> ToolVerdict {
        self.check_facts(&call.meta(), &memo::facts(call.tool, call.args, call.run), s)
    }

    /// [`Session::check`] with the call's facts already computed (see [`memo`]).
    pub fn check_facts(&mut self, call: &CallRef<'_>, f: &CallFacts, s: &LoopSettings) -> ToolVerdict {
        let known_poll = detect::is_known_poll(call.tool, f.action.as_deref());
        let verdict = match detect::detect(&self.history, call.tool, f.tool_id, &f.args, known_poll, f.run, s) {
            Some(stuck) if stuck.critical => {
                return ToolVerdict {
                    action: ToolAction::Block,
                    detector: Some(stuck.detector),
                    count: stuck.count,
                    message: Some(stuck.message),
                    notify: false,
                };
            }
            Some(stuck) => {
                let notify = stuck.warning_key.is_some_and(|k| self.warnings.should_emit(&k, call.run, stuck.count));
                ToolVerdict {
                    action: ToolAction::Warn,
                    detector: Some(stuck.detector),
                    count: stuck.count,
                    message: Some(stuck.message),
                    notify,
                }
            }
            None => ToolVerdict::ALLOW,
        };
        if s.enabled != Some(false) {
            self.history.record_call(f.tool_id, f.args, call.call_id, f.run, s.history_size);
        }
        verdict
    }

    /// Records an outcome (whatever `enabled` says) and feeds the post-compaction guard.
    pub fn outcome(
        &mut self,
        call: &ToolCall<'_>,
        outcome: Outcome<'_>,
        s: &LoopSettings,
        send_tools: &[String],
    ) -> OutcomeVerdict {
        self.outcome_facts(&call.meta(), &memo::facts(call.tool, call.args, call.run), outcome, s, send_tools)
    }

    /// [`Session::outcome`] with the call's facts already computed (see [`memo`]).
    pub fn outcome_facts(
        &mut self,
        call: &CallRef<'_>,
        f: &CallFacts,
        outcome: Outcome<'_>,
        s: &LoopSettings,
        send_tools: &[String],
    ) -> OutcomeVerdict {
        let hashed = outcome::hash_outcome(call.tool, f.action.as_deref(), outcome, send_tools);
        self.record_hashed(call, f, hashed, s)
    }

    /// Records an outcome already hashed (`None`: nothing to record, see [`outcome::hash_outcome`]).
    pub fn record_hashed(
        &mut self,
        call: &CallRef<'_>,
        f: &CallFacts,
        hashed: Option<HashedOutcome>,
        s: &LoopSettings,
    ) -> OutcomeVerdict {
        let Some(hashed) = hashed else {
            return OutcomeVerdict::Ignored;
        };
        self.history.record_outcome(
            f.tool_id,
            f.args,
            call.call_id,
            f.run,
            hashed.digest,
            hashed.unknown_tool.as_deref(),
            s.history_size,
        );
        match self.guard(call.run, s).observe(call.tool, f.args, hashed.digest) {
            Some(abort) => OutcomeVerdict::Abort { count: abort.count, message: abort.message },
            None => OutcomeVerdict::Recorded,
        }
    }

    /// A compaction succeeded and the run is retried: arms its guard.
    pub fn compaction(&mut self, run: Option<&str>, s: &LoopSettings) -> CompactionVerdict {
        let guard = self.guard(run, s);
        if !guard.enabled() {
            return CompactionVerdict::Disabled;
        }
        guard.arm();
        CompactionVerdict::Armed(guard.window())
    }

    /// The guard of `run` (as given), created with `s` on first use and kept most recent.
    fn guard(&mut self, run: Option<&str>, s: &LoopSettings) -> &mut CompactionGuard {
        let key = run.unwrap_or("");
        match self.guards.iter().position(|(r, _)| &**r == key) {
            // Already the most recent (the usual case: one run at a time): nothing to move.
            Some(i) if i + 1 == self.guards.len() => {}
            Some(i) => {
                let g = self.guards.remove(i);
                self.guards.push(g);
            }
            None => {
                if self.guards.len() >= MAX_GUARDS_PER_SESSION {
                    self.guards.remove(0);
                }
                let g = CompactionGuard::new(s.enabled != Some(false), s.window_size);
                self.guards.push((key.into(), g));
            }
        }
        let last = self.guards.len() - 1;
        &mut self.guards[last].1
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
