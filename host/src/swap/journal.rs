//! The last good snapshot and the calls made since: what the active state is, in a form that
//! another instance can be brought to.
//!
//! Why a journal: exporting and importing a large state takes tens of milliseconds, far too long
//! to hold every call. But the policy is deterministic (time is an argument, there is no clock
//! and no randomness in the guest), so the snapshot plus the calls applied since describe the
//! state exactly. A swap imports the snapshot and applies the logged calls to the new instance
//! while calls go on, and holds the lock only for the few calls that arrived last (live
//! migration); a recovery restores the snapshot alone.
//!
//! The journal is bounded: a snapshot clears it, and one is taken after
//! [`Supervision::snapshot_every`] calls (spaced by [`Supervision::snapshot_spacing`]) or as
//! soon as the logged calls hold more than [`MAX_LOG_BYTES`] (the calls themselves are kept in
//! `log.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{ToolCall, ToolOutcome};

use super::log::{Call, Log, MAX_LOG_BYTES};
use super::Supervision;

/// The last good snapshot and the calls since, with the bookkeeping of the snapshot cadence.
pub(super) struct Journal {
    /// The last good snapshot: what a recovery restores, and where a swap starts from.
    pub base: Arc<Vec<u8>>,
    /// Bumped whenever `base` is replaced (a standby is prepared for one base).
    pub base_gen: u64,
    /// Bumped whenever the active state stops being `base` + the logged calls as an earlier
    /// reader saw them (a new base, a recovery, an import): a copy made from an older lineage is
    /// no longer a copy.
    pub lineage: u64,
    log: Log,
    bytes: usize,
    /// Successful calls (logged or not) since the last snapshot.
    since_snapshot: u32,
    /// When the last snapshot was taken and how long its export held the calls.
    last: Option<(Instant, Duration)>,
}

impl Journal {
    /// A journal whose state is `base` (a snapshot taken at start).
    pub fn new(base: Vec<u8>) -> Self {
        Journal {
            base: Arc::new(base),
            base_gen: 0,
            lineage: 0,
            log: Log::default(),
            bytes: 0,
            since_snapshot: 0,
            last: None,
        }
    }

    /// Logs a call that the active instance completed. Failed calls are not logged: the guest
    /// checks its input before it changes anything.
    pub fn extend(&mut self, call: Call) {
        self.bytes += call.bytes();
        self.log.push(call);
    }

    /// Logs a tool call's check (`outcome` `None`) or outcome that the active instance completed.
    pub fn extend_tool(&mut self, call: &ToolCall, outcome: Option<&ToolOutcome>) {
        self.bytes += self.log.push_tool(call, outcome) + 128;
    }

    /// Counts a successful call.
    pub fn count(&mut self) {
        self.since_snapshot = self.since_snapshot.saturating_add(1);
    }

    /// The logged calls from the `from`-th on.
    pub fn calls_from(&self, from: usize) -> Vec<Arc<Call>> {
        self.log.calls(from, usize::MAX)
    }

    /// The logged calls from the `from`-th, at most `n`.
    pub fn calls_between(&self, from: usize, n: usize) -> Vec<Arc<Call>> {
        self.log.calls(from, n)
    }

    /// Calls logged since the base.
    pub fn len(&self) -> usize {
        self.log.len()
    }

    /// Whether a snapshot is due: the log is over [`MAX_LOG_BYTES`], or `snapshot_every` calls
    /// were made and the last snapshot is at least `snapshot_spacing` times its own export time
    /// ago. Never while a swap copies the state (`swapping`): the swap reads the log.
    pub fn due(&self, s: &Supervision, swapping: bool) -> bool {
        if swapping {
            return false;
        }
        if self.bytes > MAX_LOG_BYTES {
            return true;
        }
        if self.since_snapshot < s.snapshot_every {
            return false;
        }
        match self.last {
            Some((at, took)) => at.elapsed() >= took.saturating_mul(s.snapshot_spacing),
            None => true,
        }
    }

    /// A new base: the log starts over. `exported` is how long the export held the calls
    /// (`None` for a snapshot that was imported, not exported).
    pub fn rebase(&mut self, snapshot: Vec<u8>, exported: Option<Duration>) {
        self.base = Arc::new(snapshot);
        self.base_gen += 1;
        if let Some(took) = exported {
            self.last = Some((Instant::now(), took));
        }
        self.reset();
    }

    /// A new base taken after the first `at` logged calls (exported in `took`, not by the active
    /// instance): those calls go, the later ones stay.
    pub fn rebase_at(&mut self, at: usize, snapshot: Vec<u8>, took: Duration) {
        let kept = self.log.calls(at, usize::MAX);
        self.rebase(snapshot, Some(took));
        self.since_snapshot = u32::try_from(kept.len()).unwrap_or(u32::MAX);
        self.bytes = kept.iter().map(|c| c.bytes()).sum();
        for call in kept {
            self.log.push(Arc::unwrap_or_clone(call));
        }
    }

    /// The state went back to `base` (a recovery): the calls since are gone.
    pub fn reset(&mut self) {
        self.lineage += 1;
        self.log.clear();
        self.bytes = 0;
        self.since_snapshot = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(session: &str) -> Call {
        Call::EndSession(session.into())
    }

    fn journal_with(calls: usize) -> Journal {
        let mut j = Journal::new(b"base".to_vec());
        for i in 0..calls {
            j.extend(end(&format!("s{i}")));
            j.count();
        }
        j
    }

    #[test]
    fn a_snapshot_is_due_after_snapshot_every_calls() {
        let s = Supervision { snapshot_every: 3, ..Supervision::default() };
        assert!(!journal_with(2).due(&s, false));
        assert!(journal_with(3).due(&s, false));
        assert!(!journal_with(3).due(&s, true), "never while a swap copies");
    }

    #[test]
    fn snapshots_are_spaced_by_their_export_time() {
        let s = Supervision { snapshot_every: 1, snapshot_spacing: 50, ..Supervision::default() };
        let mut j = journal_with(0);
        j.rebase(b"next".to_vec(), Some(Duration::from_secs(1)));
        j.count();
        assert!(!j.due(&s, false), "the last export held the calls 1 s: wait 50 s");
        assert!(j.due(&Supervision { snapshot_spacing: 0, ..s }, false));
        j.rebase(b"cheap".to_vec(), Some(Duration::ZERO));
        j.count();
        assert!(j.due(&s, false));
    }

    #[test]
    fn a_large_log_forces_a_snapshot_whatever_the_spacing() {
        let s = Supervision { snapshot_every: u32::MAX, ..Supervision::default() };
        let mut j = journal_with(0);
        j.extend(Call::Events { events: "x".repeat(MAX_LOG_BYTES), first_line: 1 });
        assert!(j.due(&s, false));
    }

    #[test]
    fn a_new_base_clears_the_log_and_a_mid_log_base_keeps_the_rest() {
        let mut j = journal_with(5);
        let lineage = j.lineage;
        j.rebase_at(2, b"at 2".to_vec(), Duration::ZERO);
        assert_eq!(j.calls_from(0).len(), 3);
        assert!(matches!(&*j.calls_from(0)[0], Call::EndSession(s) if s == "s2"));
        assert_eq!((j.base.as_slice(), j.base_gen, j.since_snapshot), (&b"at 2"[..], 1, 3));
        assert_ne!(j.lineage, lineage);
        j.reset();
        assert!(j.calls_from(0).is_empty());
        assert_eq!(j.base_gen, 1, "a recovery keeps the base");
    }
}
