//! A session's tool-call history (docs/spec/tool-loop.md §2).
//!
//! Every detector reads the same short history: the last `historySize` calls of the session,
//! each with its outcome hash once the tool has returned. Runs share one history and are kept
//! apart by filtering on the run id, so the size limit counts the whole session.

use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};

use crate::digest::{name_id, Digest};
use crate::js::js_trim;

/// One call (and, once known, its outcome).
///
/// Names are kept as [`name_id`]s, and the call id only until the outcome is attached (an
/// attached record is never matched again), so a record is a few dozen bytes with no heap
/// allocation in the common case.
///
/// The last three fields exist only under openclaw 2026.9's rules and are not part of the
/// format-1/2 snapshot encoding (they are skipped there; format 3 writes them, see
/// [`crate::snapshot`]). Under the documented profile they always keep their defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// [`name_id`] of the tool name.
    pub tool: u64,
    /// `argsHash` (tool name + canonical params).
    pub args: Digest,
    /// The provider's tool-call id, while the record waits for its outcome.
    pub call_id: Option<Box<str>>,
    /// [`name_id`] of the normalized run id.
    pub run: Option<u64>,
    /// The outcome hash, once attached.
    pub result: Option<Digest>,
    /// The missing tool's name, when the outcome said the tool does not exist.
    pub unknown_tool: Option<Box<str>>,
    /// A blocked call's veto record (`outcomeKind: "tool-loop-veto"`, NOTES §2.4): no outcome
    /// ever attaches to it.
    #[serde(skip)]
    pub veto: bool,
    /// The outcome was an error or an unchanged write (`noProgress`, NOTES §2.5).
    #[serde(skip)]
    pub no_progress: bool,
    /// A terminal exec failure's identity (`failureIdentityHash`, NOTES §2.6).
    #[serde(skip)]
    pub failure: Option<Digest>,
}

/// The outcome facts [`History::record_outcome`] attaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attached<'a> {
    /// The outcome hash.
    pub result: Digest,
    /// The missing tool's name.
    pub unknown_tool: Option<&'a str>,
    /// [`Record::no_progress`].
    pub no_progress: bool,
    /// [`Record::failure`].
    pub failure: Option<Digest>,
}

impl<'a> Attached<'a> {
    /// An outcome with only a hash and maybe a missing tool's name (the documented facts).
    pub fn plain(result: Digest, unknown_tool: Option<&'a str>) -> Self {
        Attached { result, unknown_tool, no_progress: false, failure: None }
    }
}

/// Run id normalization: trimmed; empty means no run.
pub fn normalize_run(run: Option<&str>) -> Option<&str> {
    run.map(js_trim).filter(|r| !r.is_empty())
}

/// The scope id of a (raw) run id: the [`name_id`] of its normalized form.
pub fn run_scope(run: Option<&str>) -> Option<u64> {
    normalize_run(run).map(name_id)
}

/// The records of one session, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    records: Vec<Record>,
}

impl History {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records whose run matches `run` (already normalized), oldest first.
    pub fn scoped(&self, run: Option<u64>) -> impl DoubleEndedIterator<Item = &Record> + Clone + '_ {
        self.records.iter().filter(move |r| r.run == run)
    }

    /// `recordToolCall`: pushes a call with no outcome, then trims.
    pub fn record_call(
        &mut self,
        tool: u64,
        args: Digest,
        call_id: Option<&str>,
        run: Option<u64>,
        size: NonZeroUsize,
    ) {
        let call_id = call_id.filter(|c| !c.is_empty()).map(Into::into);
        self.push(Record { tool, args, call_id, run, ..Record::default() }, size);
    }

    /// `recordLoopVeto` (openclaw 2026.9, NOTES §2.4): pushes a record of the blocked call that
    /// no outcome will attach to, then trims.
    pub fn record_veto(&mut self, tool: u64, args: Digest, run: Option<u64>, size: NonZeroUsize) {
        self.push(Record { tool, args, run, veto: true, ..Record::default() }, size);
    }

    /// Appends a record and trims to `size`.
    fn push(&mut self, record: Record, size: NonZeroUsize) {
        self.records.push(record);
        self.trim(size);
    }

    /// `recordToolCallOutcome`: attaches the outcome to the newest matching open record (one
    /// with no outcome and no veto), or pushes an outcome-only record; then trims.
    pub fn record_outcome(
        &mut self,
        tool: u64,
        args: Digest,
        call_id: Option<&str>,
        run: Option<u64>,
        outcome: Attached<'_>,
        size: NonZeroUsize,
    ) {
        let call_id = call_id.filter(|c| !c.is_empty());
        let open = self.records.iter_mut().rev().find(|r| {
            r.result.is_none()
                && !r.veto
                && r.run == run
                && r.args == args
                && r.tool == tool
                && call_id.is_none_or(|id| r.call_id.as_deref() == Some(id))
        });
        let unknown_tool = outcome.unknown_tool.map(Into::into);
        match open {
            Some(r) => {
                r.result = Some(outcome.result);
                r.unknown_tool = unknown_tool;
                r.no_progress = outcome.no_progress;
                r.failure = outcome.failure;
                r.call_id = None; // an attached record is never matched again
            }
            None => {
                let record = Record {
                    tool,
                    args,
                    run,
                    result: Some(outcome.result),
                    unknown_tool,
                    no_progress: outcome.no_progress,
                    failure: outcome.failure,
                    ..Record::default()
                };
                self.push(record, size);
                return;
            }
        }
        self.trim(size);
    }

    /// The records, oldest first (for snapshots).
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// A history of these records (a snapshot's), oldest first.
    pub fn from_records(records: Vec<Record>) -> Self {
        History { records }
    }

    /// True when some record holds a fact of openclaw 2026.9's rules (which format 1/2
    /// snapshots cannot carry).
    pub fn has_extended_records(&self) -> bool {
        self.records.iter().any(|r| r.veto || r.no_progress || r.failure.is_some())
    }

    /// Drops the oldest records past `size`.
    fn trim(&mut self, size: NonZeroUsize) {
        let excess = self.records.len().saturating_sub(size.get());
        self.records.drain(..excess);
    }
}

/// A record of tool 0 with `args` and (optionally) `result` digests filled with one byte, for
/// the detector tests.
#[cfg(test)]
pub(crate) fn test_record(args: u8, result: Option<u8>) -> Record {
    Record { tool: 0, args: [args; 16], result: result.map(|r| [r; 16]), ..Record::default() }
}

/// A veto record of tool 0 with `args` filled with one byte, for the detector tests.
#[cfg(test)]
pub(crate) fn test_veto(args: u8) -> Record {
    Record { tool: 0, args: [args; 16], veto: true, ..Record::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).expect("a size above zero")
    }

    fn d(n: u8) -> Digest {
        [n; 16]
    }

    fn id(s: &str) -> u64 {
        name_id(s)
    }

    fn run(s: &str) -> Option<u64> {
        Some(name_id(s))
    }

    #[test]
    fn run_ids_are_trimmed_and_empty_means_none() {
        assert_eq!(normalize_run(Some("  r1 ")), Some("r1"));
        assert_eq!(normalize_run(Some(" \u{FEFF} ")), None);
        assert_eq!(normalize_run(None), None);
        assert_eq!(run_scope(Some(" r1\t")), run_scope(Some("r1")));
        assert_ne!(run_scope(Some("r1")), run_scope(Some("r2")));
        assert_eq!(run_scope(Some("  ")), None);
    }

    #[test]
    fn call_ids_are_dropped_once_the_outcome_is_attached() {
        let mut h = History::default();
        h.record_call(id("read"), d(1), Some("c1"), None, nz(30));
        assert_eq!(h.scoped(None).next().and_then(|r| r.call_id.as_deref()), Some("c1"));
        h.record_outcome(id("read"), d(1), Some("c1"), None, Attached::plain(d(9), None), nz(30));
        assert_eq!(h.scoped(None).next().and_then(|r| r.call_id.as_deref()), None);
    }

    #[test]
    fn outcome_attaches_to_newest_open_matching_record() {
        let mut h = History::default();
        h.record_call(id("read"), d(1), None, None, nz(30));
        h.record_call(id("read"), d(1), None, None, nz(30));
        h.record_outcome(id("read"), d(1), None, None, Attached::plain(d(9), None), nz(30));
        let results: Vec<_> = h.scoped(None).map(|r| r.result).collect();
        assert_eq!(results, vec![None, Some(d(9))], "newest first");
        h.record_outcome(id("read"), d(1), None, None, Attached::plain(d(8), None), nz(30));
        assert_eq!(h.scoped(None).map(|r| r.result).collect::<Vec<_>>(), vec![Some(d(8)), Some(d(9))]);
        // Nothing open any more: an outcome-only record is pushed.
        h.record_outcome(id("read"), d(1), None, None, Attached::plain(d(7), None), nz(30));
        assert_eq!(h.len(), 3);
    }

    #[test]
    fn call_ids_and_runs_must_match() {
        let mut h = History::default();
        h.record_call(id("read"), d(1), Some("c1"), run("r"), nz(30));
        h.record_call(id("read"), d(1), None, run("r"), nz(30));
        // An outcome with a call id skips the newer record that has none.
        h.record_outcome(id("read"), d(1), Some("c1"), run("r"), Attached::plain(d(9), None), nz(30));
        let v: Vec<_> = h.scoped(run("r")).map(|r| r.result).collect();
        assert_eq!(v, vec![Some(d(9)), None]);
        // An outcome without a call id may attach to a record that has one... or none here.
        h.record_outcome(id("read"), d(1), None, run("r"), Attached::plain(d(8), None), nz(30));
        assert_eq!(h.len(), 2);
        // Another run never matches.
        h.record_outcome(id("read"), d(1), None, None, Attached::plain(d(7), None), nz(30));
        assert_eq!(h.len(), 3);
        assert_eq!(h.scoped(None).count(), 1);
    }

    #[test]
    fn the_history_keeps_the_newest_records() {
        let mut h = History::default();
        for i in 0..=255u8 {
            let size: u8 = if i < 200 { 30 } else { 7 };
            h.record_call(id("t"), d(i), None, None, nz(size.into()));
            let want: Vec<Digest> = (i.saturating_sub(size - 1)..=i).map(d).collect();
            let got: Vec<Digest> = h.scoped(None).map(|r| r.args).collect();
            assert_eq!(got, want, "after call {i}");
        }
        // A snapshot holds the records, and reads back equal.
        let bytes = postcard::to_allocvec(&h).expect("serializes");
        let back: History = postcard::from_bytes(&bytes).expect("deserializes");
        assert_eq!(back, h);
        assert_eq!(back.records.len(), 7);
        let plain = postcard::to_allocvec(&h.records().to_vec()).expect("serializes");
        assert_eq!(bytes, plain, "the same bytes as a plain list of the records");
    }

    #[test]
    fn size_limit_counts_the_whole_session_and_applies_after_attach() {
        let mut h = History::default();
        for i in 0..5 {
            h.record_call(id("t"), d(i), None, if i % 2 == 0 { run("a") } else { None }, nz(30));
        }
        h.record_outcome(id("t"), d(4), None, run("a"), Attached::plain(d(9), None), nz(3));
        assert_eq!(h.len(), 3, "trimmed even though the outcome attached");
        assert_eq!(h.scoped(run("a")).count() + h.scoped(None).count(), 3);
    }
}
