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
pub mod no_progress;
pub mod outcome;
pub mod ping_pong;
pub mod unknown_tool;
pub mod warnings;

use serde::{Deserialize, Serialize};

use crate::config::tool::LoopSettings;
use crate::digest::name_id;
use crate::digest::{args_digest, Digest};
use crate::json::Json;
use compaction::CompactionGuard;
pub use detect::Detector;
use history::{run_scope, History};
pub use outcome::Outcome;
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
    /// The last checked call's raw args text and digest (not part of snapshots).
    #[serde(skip)]
    memo: ArgsMemo,
}

/// Remembers the last checked call's args text and digest, so the outcome that follows (which
/// carries the same text) does not canonicalize and hash the arguments a second time. Only raw
/// text equality is trusted, so a hit can never give another call's digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ArgsMemo {
    tool: String,
    text: String,
    digest: Option<Digest>,
}

impl ArgsMemo {
    fn remember(&mut self, tool: &str, text: &str, digest: Digest) {
        self.tool.clear();
        self.tool.push_str(tool);
        self.text.clear();
        self.text.push_str(text);
        self.digest = Some(digest);
    }

    fn recall(&self, tool: &str, text: &str) -> Option<Digest> {
        self.digest.filter(|_| self.tool == tool && self.text == text)
    }
}

/// `argsHash` of a call, with `update_plan` params reduced to their shape.
fn call_digest(tool: &str, params: &Json<'_>) -> Digest {
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
        self.check_with_text(call, None, s)
    }

    /// [`Session::check`] for a call whose args came as JSON text: the text is remembered so that
    /// [`Session::outcome_with_text`] can reuse the digest.
    pub fn check_with_text(&mut self, call: &ToolCall<'_>, args_text: Option<&str>, s: &LoopSettings) -> ToolVerdict {
        let args = call_digest(call.tool, call.args);
        if let Some(text) = args_text {
            self.memo.remember(call.tool, text, args);
        }
        let run = run_scope(call.run);
        let action = call.args.get("action").and_then(Json::as_str);
        let known_poll = detect::is_known_poll(call.tool, action);
        let tool_id = name_id(call.tool);
        let verdict = match detect::detect(&self.history, call.tool, tool_id, &args, known_poll, run, s) {
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
            self.history.record_call(tool_id, args, call.call_id, run, s.history_size);
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
        self.outcome_with_text(call, None, outcome, s, send_tools)
    }

    /// [`Session::outcome`] for a call whose args came as JSON text (see [`ArgsMemo`]).
    pub fn outcome_with_text(
        &mut self,
        call: &ToolCall<'_>,
        args_text: Option<&str>,
        outcome: Outcome<'_>,
        s: &LoopSettings,
        send_tools: &[String],
    ) -> OutcomeVerdict {
        let Some(hashed) = outcome::hash_outcome(call.tool, call.args, outcome, send_tools) else {
            return OutcomeVerdict::Ignored;
        };
        let args =
            args_text.and_then(|t| self.memo.recall(call.tool, t)).unwrap_or_else(|| call_digest(call.tool, call.args));
        let run = run_scope(call.run);
        self.history.record_outcome(
            name_id(call.tool),
            args,
            call.call_id,
            run,
            hashed.digest,
            hashed.unknown_tool.as_deref(),
            s.history_size,
        );
        match self.guard(call.run, s).observe(call.tool, args, hashed.digest) {
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
