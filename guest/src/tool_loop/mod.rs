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
//!   loop; [`history`] keeps the records of one session.
//! - One file per detector, each `check(&Scope, &LoopSettings) -> Option<Finding>` over the
//!   session's history, run in OpenClaw's order by [`Session::check`]: [`unknown_tool`],
//!   [`circuit_breaker`], [`known_poll`], [`ping_pong`], [`generic_repeat`]. Three of them read
//!   the same [`no_progress`] streak, which [`Scope`] computes once.
//! - [`warnings`] de-duplicates warnings in buckets of ten; [`post_compaction`] is the guard that
//!   watches the first outcomes after a context compaction.

pub mod circuit_breaker;
pub mod generic_repeat;
pub mod history;
pub mod known_poll;
pub mod no_progress;
pub mod outcome;
pub mod ping_pong;
pub mod post_compaction;
pub mod unknown_tool;
pub mod warnings;

use serde::{Deserialize, Serialize};

use crate::config::tool::LoopSettings;
use crate::digest::{args_digest, name_id, Digest};
use crate::json::Json;
use history::{History, Record};
pub use outcome::{HashedOutcome, Outcome};
use post_compaction::CompactionGuard;
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

/// The detector that warned, blocked or aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detector {
    /// [`generic_repeat`].
    GenericRepeat,
    /// [`known_poll`].
    KnownPollNoProgress,
    /// [`ping_pong`].
    PingPong,
    /// [`unknown_tool`].
    UnknownToolRepeat,
    /// [`circuit_breaker`].
    GlobalCircuitBreaker,
    /// [`post_compaction`].
    CompactionLoopPersisted,
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
    /// [`name_id`] of the tool name.
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

/// The fingerprint of a call: computed once per check and once per outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFacts {
    /// `argsHash`: tool name + canonical params (`update_plan` reduced to its shape).
    pub args: Digest,
    /// The params' string `action`, if any (what `process` and `message` outcomes look at).
    pub action: Option<String>,
    /// [`name_id`] of the tool name.
    pub tool_id: u64,
    /// Run scope: [`name_id`] of the normalized run id.
    pub run: Option<u64>,
}

impl CallFacts {
    /// The facts of `call`.
    pub fn of(call: &ToolCall<'_>) -> Self {
        let args = if call.tool == "update_plan" {
            args_digest(call.tool, &outcome::plan_shape(call.args))
        } else {
            args_digest(call.tool, call.args)
        };
        CallFacts {
            args,
            action: call.args.get("action").and_then(Json::as_str).map(str::to_string),
            tool_id: name_id(call.tool),
            run: history::run_scope(call.run),
        }
    }
}

/// All tool-loop state of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    history: History,
    warnings: WarningBuckets,
    /// Post-compaction guards by run id exactly as given (absent = ""), least recently used first.
    guards: Vec<(Box<str>, CompactionGuard)>,
}

impl Session {
    /// The history (for tests and stats).
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Post-compaction guards held (at most [`MAX_GUARDS_PER_SESSION`]).
    pub fn guard_count(&self) -> usize {
        self.guards.len()
    }

    /// Checks a call before it runs, and records it unless it is blocked or the guard is
    /// explicitly disabled.
    pub fn check(&mut self, call: &ToolCall<'_>, s: &LoopSettings) -> ToolVerdict {
        let facts = CallFacts::of(call);
        let verdict = match self.detect(call, &facts, s) {
            None => ToolVerdict { action: ToolAction::Allow, detector: None, count: 0, message: None, notify: false },
            Some(f) if f.critical => ToolVerdict {
                action: ToolAction::Block,
                detector: Some(f.detector),
                count: f.count,
                message: Some(f.message),
                notify: false,
            },
            Some(f) => {
                let notify = f.warning_key.is_some_and(|k| self.warnings.should_emit(&k, call.run, f.count));
                ToolVerdict {
                    action: ToolAction::Warn,
                    detector: Some(f.detector),
                    count: f.count,
                    message: Some(f.message),
                    notify,
                }
            }
        };
        if verdict.action == ToolAction::Block {
            return verdict;
        }
        if s.enabled != Some(false) {
            self.history.record_call(facts.tool_id, facts.args, call.call_id, facts.run, s.history_size);
        }
        verdict
    }

    /// `detectToolCallLoop`: the detectors in OpenClaw's order. The order matters: a missing
    /// tool is reported as such even when its outcomes also repeat, and the global circuit
    /// breaker applies to every tool whatever the detector switches say.
    fn detect(&self, call: &ToolCall<'_>, facts: &CallFacts, s: &LoopSettings) -> Option<Finding> {
        if s.enabled != Some(true) {
            return None;
        }
        let records: Vec<&Record> = self.history.scoped(facts.run).collect();
        let streak = no_progress::streak(&records, &facts.args);
        let known_poll = known_poll::is_known_poll(call.tool, facts.action.as_deref());
        let scope = Scope { tool: call.tool, tool_id: facts.tool_id, args: facts.args, known_poll, records, streak };
        unknown_tool::check(&scope, s)
            .or_else(|| circuit_breaker::check(&scope, s))
            .or_else(|| known_poll::check(&scope, s))
            .or_else(|| ping_pong::check(&scope, s))
            .or_else(|| generic_repeat::check(&scope, s))
    }

    /// Records an outcome (whatever `enabled` says) and feeds the post-compaction guard.
    pub fn outcome(
        &mut self,
        call: &ToolCall<'_>,
        outcome: Outcome<'_>,
        s: &LoopSettings,
        send_tools: &[String],
    ) -> OutcomeVerdict {
        let facts = CallFacts::of(call);
        let Some(hashed) = outcome::hash_outcome(call.tool, facts.action.as_deref(), outcome, send_tools) else {
            return OutcomeVerdict::Ignored;
        };
        self.history.record_outcome(
            facts.tool_id,
            facts.args,
            call.call_id,
            facts.run,
            hashed.digest,
            hashed.unknown_tool.as_deref(),
            s.history_size,
        );
        match self.guard(call.run, s).observe(call.tool, facts.args, hashed.digest, s.texts) {
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
