//! One session's tool-loop state and the order in which a call is decided.

use serde::{Deserialize, Serialize};

use super::beyond::trail::{Trail, TrailV4};
use super::decision::{
    CompactionVerdict, Detector, Finding, OutcomeVerdict, Scope, ToolAction, ToolVerdict, MAX_GUARDS_PER_SESSION,
};
use super::facts::{tool_name, CallFacts, ToolCall};
use super::history::{Attached, History, Record};
use super::openclaw::post_compaction::CompactionGuard;
use super::openclaw::recovery::Recovery;
use super::openclaw::warnings::WarningBuckets;
use super::openclaw::{
    argument_churn, circuit_breaker, generic_repeat, known_poll, no_progress, ping_pong, unknown_tool,
};
use super::outcome::Outcome;
use super::outcome::{self, Hashing};
use crate::config::profile::RecordCalls;
use crate::config::tool::LoopSettings;

/// All tool-loop state of one session.
///
/// Serialized (formats 1 and 2 of [`crate::snapshot`]) as history, warnings and guards; the
/// recovery state and the records' openclaw 2026.9 facts travel in format 3 ([`SessionWire`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    history: History,
    warnings: WarningBuckets,
    /// Post-compaction guards by run id exactly as given (absent = ""), least recently used first.
    guards: Vec<(Box<str>, CompactionGuard)>,
    /// openclaw 2026.9's per-attempt recovery state.
    #[serde(skip)]
    recovery: Recovery,
    /// The history of the detectors beyond OpenClaw ([`super::beyond`]); format 5 carries it.
    #[serde(skip)]
    trail: Trail,
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

    /// The history of the detectors beyond OpenClaw (empty unless they are on).
    pub fn trail(&self) -> &Trail {
        &self.trail
    }

    /// The history of the detectors beyond OpenClaw, to record into.
    pub fn trail_mut(&mut self) -> &mut Trail {
        &mut self.trail
    }

    /// The per-attempt recovery state (openclaw 2026.9).
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// Checks a call (its `facts` from [`CallFacts::of`]) before it runs, and records it unless
    /// it is blocked or the profile's recording rule says no. Under openclaw 2026.9's rules a block leaves a veto record and is
    /// worded by [`Recovery`].
    pub fn check(&mut self, call: &ToolCall<'_>, facts: &CallFacts, s: &LoopSettings) -> ToolVerdict {
        let name = tool_name(call.tool, s.rules);
        let call = &ToolCall { tool: &name, ..*call };
        let verdict = match self.detect(call, facts, s) {
            None => ToolVerdict { action: ToolAction::Allow, detector: None, count: 0, message: None, notify: false },
            Some(f) if f.critical => {
                if s.rules.record_blocked_calls {
                    self.history.record_veto(facts.tool_id, facts.args, facts.run, s.history_size);
                }
                let message = self.recovery.block_text(call.run, f.message, s.texts);
                return ToolVerdict {
                    action: ToolAction::Block,
                    detector: Some(f.detector),
                    count: f.count,
                    message: Some(message),
                    notify: false,
                };
            }
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
        let record = match s.rules.record_calls {
            RecordCalls::UnlessDisabled => s.enabled != Some(false),
            RecordCalls::WhenEnabled => s.enabled == Some(true),
        };
        if record {
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
        let mut streak = no_progress::streak(&records, &facts.args);
        if s.rules.exec_failure_identity && call.tool == "exec" {
            let terminal = no_progress::terminal_streak(&records, facts.tool_id, &facts.args);
            if terminal.count > streak.count {
                streak = no_progress::Streak { same_args: streak.same_args, ..terminal };
            }
        }
        let known_poll = known_poll::is_known_poll(call.tool, facts.action.as_deref());
        let scope = Scope { tool: call.tool, tool_id: facts.tool_id, args: facts.args, known_poll, records, streak };
        unknown_tool::check(&scope, s)
            .or_else(|| circuit_breaker::check(&scope, s))
            .or_else(|| known_poll::check(&scope, s))
            .or_else(|| ping_pong::check(&scope, s))
            .or_else(|| generic_repeat::critical(&scope, s))
            .or_else(|| argument_churn::check(&scope, s))
            .or_else(|| generic_repeat::warning(&scope, s))
    }

    /// Records the outcome of the call with `facts` (whatever `enabled` says) and feeds the
    /// post-compaction guard.
    pub fn outcome(
        &mut self,
        call: &ToolCall<'_>,
        facts: &CallFacts,
        outcome: Outcome<'_>,
        s: &LoopSettings,
        send_tools: &[String],
    ) -> OutcomeVerdict {
        let name = tool_name(call.tool, s.rules);
        let call = &ToolCall { tool: &name, ..*call };
        let how = Hashing { rules: s.rules, send_tools };
        let Some(hashed) = outcome::hash_outcome_with(call.tool, facts.action.as_deref(), outcome, &how) else {
            return OutcomeVerdict::Ignored;
        };
        let attached = Attached {
            result: hashed.digest,
            unknown_tool: hashed.unknown_tool.as_deref(),
            no_progress: hashed.no_progress,
            failure: hashed.failure,
        };
        self.history.record_outcome(facts.tool_id, facts.args, call.call_id, facts.run, attached, s.history_size);
        match self.guard(call.run, s).observe(call.tool, facts.args, hashed.digest, s.texts) {
            Some(abort) => OutcomeVerdict::Abort {
                detector: Detector::CompactionLoopPersisted,
                count: abort.count,
                message: abort.message,
            },
            None => OutcomeVerdict::Recorded,
        }
    }

    /// A compaction succeeded and the run is retried: a new attempt; arms its guard.
    pub fn compaction(&mut self, run: Option<&str>, s: &LoopSettings) -> CompactionVerdict {
        self.recovery.new_attempt(run);
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
        match self.guards.iter().position(|(r, _)| **r == *key) {
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

    /// True when the session holds state that formats 1 and 2 cannot carry (openclaw 2026.9's).
    pub fn needs_wire(&self) -> bool {
        !self.recovery.is_empty() || self.history.has_extended_records()
    }

    /// The session in format 3's encoding.
    pub fn to_wire(&self) -> SessionWire {
        SessionWire {
            records: self.history.records().iter().map(RecordWire::from).collect(),
            warnings: self.warnings.clone(),
            guards: self.guards.clone(),
            recovery: self.recovery.clone(),
        }
    }

    /// True when the session holds a trail of the detectors beyond OpenClaw (format 5).
    pub fn has_trail(&self) -> bool {
        !self.trail.is_empty()
    }

    /// The session in format 5's encoding: format 3's and the trail.
    pub fn to_wire_with_trail(&self) -> SessionWithTrail {
        SessionWithTrail { session: self.to_wire(), trail: self.trail.clone() }
    }

    /// A session from format 5's encoding.
    pub fn from_wire_with_trail(w: SessionWithTrail) -> Self {
        Session { trail: w.trail, ..Session::from_wire(w.session) }
    }

    /// A session from format 4's encoding (policy 1.0's trail, converted).
    pub fn from_wire_with_trail_v4(w: SessionWithTrailV4) -> Self {
        Session { trail: w.trail.into(), ..Session::from_wire(w.session) }
    }

    /// A session from format 3's encoding.
    pub fn from_wire(w: SessionWire) -> Self {
        Session {
            history: History::from_records(w.records.into_iter().map(Record::from).collect()),
            warnings: w.warnings,
            guards: w.guards,
            recovery: w.recovery,
            trail: Trail::default(),
        }
    }
}

/// A session as snapshot format 3 writes it: every field, the records with openclaw 2026.9's
/// facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionWire {
    records: Vec<RecordWire>,
    warnings: WarningBuckets,
    guards: Vec<(Box<str>, CompactionGuard)>,
    recovery: Recovery,
}

/// A session as snapshot format 5 writes it: format 3's and the trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionWithTrail {
    session: SessionWire,
    trail: Trail,
}

/// A session as snapshot format 4 wrote it (policy 1.0): format 3's and the trail of then.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionWithTrailV4 {
    session: SessionWire,
    trail: TrailV4,
}

/// A [`Record`] with every field (format 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RecordWire {
    tool: u64,
    args: crate::digest::Digest,
    call_id: Option<Box<str>>,
    run: Option<u64>,
    result: Option<crate::digest::Digest>,
    unknown_tool: Option<Box<str>>,
    veto: bool,
    no_progress: bool,
    failure: Option<crate::digest::Digest>,
}

impl From<&Record> for RecordWire {
    fn from(r: &Record) -> Self {
        RecordWire {
            tool: r.tool,
            args: r.args,
            call_id: r.call_id.clone(),
            run: r.run,
            result: r.result,
            unknown_tool: r.unknown_tool.clone(),
            veto: r.veto,
            no_progress: r.no_progress,
            failure: r.failure,
        }
    }
}

impl From<RecordWire> for Record {
    fn from(w: RecordWire) -> Self {
        Record {
            tool: w.tool,
            args: w.args,
            call_id: w.call_id,
            run: w.run,
            result: w.result,
            unknown_tool: w.unknown_tool,
            veto: w.veto,
            no_progress: w.no_progress,
            failure: w.failure,
        }
    }
}
