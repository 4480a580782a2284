//! The history the detectors beyond OpenClaw read: one bounded trail of calls and their outcome
//! classes per session.
//!
//! Why a second history: OpenClaw's [`History`](crate::tool_loop::history::History) keeps exact digests
//! scoped to one run, and its size and scope are part of the decisions that must not change. The
//! recommended detectors compare outcomes after normalisation ([`crate::config::volatile`]), may look
//! across runs (`loopguard.scope: "session"`), and need several laps of a 30-call cycle. Only
//! sessions with the preset or a detector on ever fill one.
//!
//! Bounded: at most `loopguard.historySize` entries of 80 bytes (oldest dropped), one argument text of at most
//! [`MAX_ARG_TEXT`] bytes, and three counters.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::sketch::Sketch;
use crate::config::detection::HistoryScope;
use crate::digest::Digest;

/// The longest argument text kept for [`super::growing_args`].
pub const MAX_ARG_TEXT: usize = 16 * 1024;

/// What a call's outcome says about progress. (Variants are only ever appended: snapshots
/// encode them by position.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Out {
    /// No outcome yet (or the call was never run: a blocked call).
    Pending,
    /// An empty result: a command with no output, which may well have changed something.
    Neutral,
    /// The result says nothing was found.
    Nothing,
    /// A result, by the digest of its text with volatile fields stripped.
    Result(Digest),
    /// An error, by the digest of its class (see [`crate::config::volatile::Normalizer::error_class`]).
    Error(Digest),
    /// A rate limit, server error or timeout: not the agent's doing, never counted.
    Infrastructure,
    /// A result that carries next to no information (`OK`, `True`, `0`, an exit status around an
    /// empty output), by digest. Two different calls that both answer `OK` have not returned
    /// "the same result": only the same call answering it again is compared.
    Quiet(Digest),
    /// The call was blocked: it never ran and never gets an outcome.
    Blocked,
}

impl Out {
    /// True when the call did not run or its failure was not the agent's ([`Out::Pending`],
    /// [`Out::Blocked`], [`Out::Infrastructure`]): such entries are skipped as if they were not
    /// there.
    pub fn is_unknown(self) -> bool {
        matches!(self, Out::Pending | Out::Infrastructure | Out::Blocked)
    }

    /// True for a result that tells something (a result with content, or nothing found): the
    /// only outcomes that different calls can share as "the same result".
    pub fn is_informative(self) -> bool {
        matches!(self, Out::Result(_) | Out::Nothing)
    }

    /// True when the call succeeded (any result but nothing found).
    pub fn succeeded(self) -> bool {
        matches!(self, Out::Result(_) | Out::Quiet(_) | Out::Neutral)
    }
}

/// One call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// [`name_id`](crate::digest::name_id) of the tool.
    pub tool: u64,
    /// `argsHash` of the call.
    pub args: Digest,
    /// The call with its cosmetics folded away ([`super::look::fold`]): two calls with the same
    /// fold are the same call re-quoted, re-cased or re-ordered.
    pub fold: u64,
    /// What the call aims at ([`Sketch::similar`]).
    pub sketch: Sketch,
    /// Its outcome class.
    pub out: Out,
}

/// One session's trail. Snapshots carry it (format 5 of [`crate::snapshot`]): a hot swap, a
/// state file, a hook process or a store replica that rebuilds the session from a snapshot
/// must see the same trail, or the preset's detectors would start from nothing each time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trail {
    entries: VecDeque<Entry>,
    /// The run the entries belong to, when the scope is one run.
    run: Option<Option<u64>>,
    /// The previous call's tool and longest string argument.
    last_arg: Option<(u64, String)>,
    /// Successive calls whose argument grew by repeating itself.
    pub growth: u32,
    /// The folds of the newest blocked calls (at most [`MAX_BLOCKED`]) and how many times each
    /// was blocked since the agent last changed course, for [`super::ladder`].
    pub blocked: VecDeque<(u64, u32)>,
    /// The ladder ended the run: the next outcome reported gets the `abort` verdict.
    pub abort_pending: bool,
}

/// Blocked calls the ladder remembers.
pub const MAX_BLOCKED: usize = 8;

impl Trail {
    /// True when there is nothing to carry (no preset or detector ever ran on the session).
    pub fn is_empty(&self) -> bool {
        *self == Trail::default()
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &VecDeque<Entry> {
        &self.entries
    }

    /// Starts the trail again when `scope` is one run and `run` is a new one.
    pub fn begin(&mut self, run: Option<u64>, scope: HistoryScope) {
        if scope == HistoryScope::Run && self.run != Some(run) {
            *self = Trail { run: Some(run), ..Trail::default() };
        }
    }

    /// Appends a call, dropping the oldest beyond `cap`.
    pub fn push(&mut self, entry: Entry, cap: usize) {
        while self.entries.len() >= cap.max(1) {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    /// Gives the newest pending call with `args` its outcome; `false` when there is none (a
    /// blocked call never gets one: what a host reports for it is the block's own text, or in a
    /// replayed trajectory what the call did unguarded, neither of which the agent saw).
    pub fn attach(&mut self, args: &Digest, out: Out) -> bool {
        match self.entries.iter_mut().rev().find(|e| e.args == *args && e.out == Out::Pending) {
            Some(e) => {
                e.out = out;
                true
            }
            None => false,
        }
    }

    /// The previous call's tool and longest string argument.
    pub fn last_arg(&self) -> Option<(u64, &str)> {
        self.last_arg.as_ref().map(|(t, s)| (*t, s.as_str()))
    }

    /// Remembers this call's longest string argument (dropped when longer than [`MAX_ARG_TEXT`]).
    pub fn set_last_arg(&mut self, tool: u64, arg: Option<&str>) {
        self.last_arg = arg.filter(|a| a.len() <= MAX_ARG_TEXT).map(|a| (tool, a.to_string()));
    }
}

/// Format 4's trail, as policy 1.0 wrote it into snapshots: read, then converted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TrailV4 {
    entries: VecDeque<EntryV4>,
    run: Option<Option<u64>>,
    last_arg: Option<(u64, String)>,
    growth: u32,
    blocks_in_a_row: u32,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct EntryV4 {
    tool: u64,
    args: Digest,
    sketch: Sketch,
    out: Out,
    exact: u64,
}

impl From<TrailV4> for Trail {
    /// Format 4 kept no fold: a stand-in made from the exact arguments takes its place, so a
    /// converted entry is never the same call as a new one (the detectors start over on the
    /// calls made after the swap while the old entries age out), and no call is remembered as
    /// blocked.
    fn from(t: TrailV4) -> Self {
        let fold = |e: &EntryV4| u64::from_le_bytes(e.args[..8].try_into().unwrap_or_default());
        let entries = t
            .entries
            .iter()
            .map(|e| Entry { tool: e.tool, args: e.args, fold: fold(e), sketch: e.sketch, out: e.out })
            .collect();
        Trail { entries, run: t.run, last_arg: t.last_arg, growth: t.growth, ..Trail::default() }
    }
}

/// Test helpers: an entry from small numbers. Its fold is its arguments' number; entries with
/// other arguments aim at the same thing but are not near-identical (their texts overlap by a
/// third, [`Sketch::test_aim`]).
#[cfg(test)]
pub(crate) fn entry(tool: u8, args: u8, out: Out) -> Entry {
    let sketch = Sketch::test_aim(args);
    Entry { tool: tool as u64, args: [args; 16], fold: args as u64, sketch, out }
}

/// A result class from a small number.
#[cfg(test)]
pub(crate) fn res(n: u8) -> Out {
    Out::Result([n; 16])
}

/// An error class from a small number.
#[cfg(test)]
pub(crate) fn err(n: u8) -> Out {
    Out::Error([n; 16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trail_is_capped_and_attaches_outcomes_to_the_newest_pending_call() {
        let mut t = Trail::default();
        for i in 0..10 {
            t.push(entry(1, i % 2, Out::Pending), 4);
        }
        assert_eq!(t.entries().len(), 4);
        assert!(t.attach(&[1; 16], res(7)));
        assert_eq!(t.entries()[3].out, res(7));
        assert_eq!(t.entries()[1].out, Out::Pending, "only the newest");
        assert!(!t.attach(&[9; 16], res(7)));
        t.push(entry(1, 5, Out::Blocked), 4);
        assert!(!t.attach(&[5; 16], res(7)), "a blocked call gets no outcome");
    }

    #[test]
    fn run_scope_starts_again_on_a_new_run_and_session_scope_does_not() {
        let mut t = Trail::default();
        t.begin(Some(1), HistoryScope::Run);
        t.push(entry(1, 1, res(1)), 8);
        t.begin(Some(2), HistoryScope::Run);
        assert!(t.entries().is_empty());
        t.push(entry(1, 1, res(1)), 8);
        t.begin(Some(3), HistoryScope::Session);
        assert_eq!(t.entries().len(), 1);
    }

    #[test]
    fn long_arguments_are_not_kept() {
        let mut t = Trail::default();
        t.set_last_arg(1, Some(&"x".repeat(MAX_ARG_TEXT + 1)));
        assert_eq!(t.last_arg(), None);
        t.set_last_arg(1, Some("abc"));
        assert_eq!(t.last_arg(), Some((1, "abc")));
    }
}
