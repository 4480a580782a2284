//! The time the store loop reads: when an episode began, when the store is tried again, how
//! long a decision has spent on conflicts, and the short pause between conflicts.
//!
//! Why a trait: backoff, episodes and the deadline are all about time, and a test that waits
//! for real milliseconds is slow and fails on a busy machine. [`SystemClock`] is the default
//! of [`super::StoredGateway::new`]; a test passes its own clock to
//! [`super::StoredGateway::with_clock`] and moves it forward by hand.

use std::time::{Duration, Instant};

/// A monotonic clock and a way to wait on it.
pub trait Clock: Send {
    /// The time now.
    fn now(&self) -> Instant;
    /// Waits `d` (the loop waits a few microseconds between conflicting writes).
    fn sleep(&self, d: Duration);
}

/// The machine's clock: [`Instant::now`] and [`std::thread::sleep`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}
