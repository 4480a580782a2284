//! What reading one session gives besides its events, and the builder every reader fills.
//!
//! Separate from the collector ([`super`]) so that each reader (`sqlite`, `jsonl`,
//! `trajectory`) takes the same `&mut ReadBuilder` without importing the collector that calls it.

use crate::error::Error;
use crate::mapping::SessionStats;

/// Knobs for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportOptions {
    /// Most errors kept per session; more are counted in [`SessionRead::errors_dropped`] (a store
    /// with a million damaged rows must not build a million error values).
    pub max_errors_per_session: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { max_errors_per_session: 100 }
    }
}

/// What reading one session gave besides its events.
#[derive(Debug, Default)]
pub struct SessionRead {
    /// Counts.
    pub stats: SessionStats,
    /// Errors, each naming the file, the session and the row or line (at most
    /// [`ImportOptions::max_errors_per_session`]).
    pub errors: Vec<Error>,
    /// Errors beyond the cap.
    pub errors_dropped: u64,
}

impl SessionRead {
    /// No errors at all.
    pub fn is_clean(&self) -> bool {
        self.errors.is_empty() && self.errors_dropped == 0
    }
}

/// What a reader fills while it reads one session: its errors up to the cap, and its stats.
pub(crate) struct ReadBuilder {
    cap: usize,
    pub errors: Vec<Error>,
    pub dropped: u64,
    pub stats: SessionStats,
}

impl ReadBuilder {
    pub(crate) fn new(cap: usize) -> Self {
        ReadBuilder { cap, errors: Vec::new(), dropped: 0, stats: SessionStats::default() }
    }

    pub(crate) fn push(&mut self, e: Error) {
        if self.errors.len() < self.cap {
            self.errors.push(e);
        } else {
            self.dropped += 1;
        }
    }

    pub(crate) fn finish(self) -> SessionRead {
        SessionRead { stats: self.stats, errors: self.errors, errors_dropped: self.dropped }
    }
}
