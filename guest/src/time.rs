//! Time as a value: [`Millis`], the clock reading every deciding function takes as `now`.
//!
//! Why a newtype: the guard never reads a clock (the host passes the event's time, often the
//! platform's timestamp, so events arrive out of order), and a bare `i64` is easy to mix up with
//! a count or a duration in seconds. A `Millis` is an instant or a span in milliseconds on the
//! host's clock; its arithmetic saturates at the `i64` range, which is what the rules
//! (docs/spec/bot-loop.md §2.4, docs/spec/tool-loop.md) need: OpenClaw's JavaScript numbers never
//! wrap, and saturating keeps every realistic timestamp exact while the extremes a fuzzer or a
//! hostile trace sends stay ordered instead of wrapping around.
//!
//! ```
//! use loopguard_policy::time::Millis;
//! let now = Millis(1_000);
//! assert_eq!(now + Millis(500), Millis(1_500));
//! assert_eq!(Millis(i64::MAX) + now, Millis(i64::MAX)); // saturates, never wraps
//! assert!(now - Millis(60_000) < now);
//! ```

use std::ops::{Add, Sub};

use serde::{Deserialize, Serialize};

/// Milliseconds on the host's clock: an instant (`now`, a deadline) or a span (a window, a
/// cooldown). Serialized as the bare number, so snapshots hold plain integers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Millis(pub i64);

impl Millis {
    /// The zero instant; as a cooldown bound it means "never set".
    pub const ZERO: Millis = Millis(0);

    /// The number of milliseconds.
    pub const fn ms(self) -> i64 {
        self.0
    }

    /// A span of whole seconds, saturating.
    pub const fn from_secs(secs: i64) -> Self {
        Millis(secs.saturating_mul(1_000))
    }
}

impl Add for Millis {
    type Output = Millis;

    /// Saturating: a deadline past the end of time stays at the end of time.
    fn add(self, rhs: Millis) -> Millis {
        Millis(self.0.saturating_add(rhs.0))
    }
}

impl Sub for Millis {
    type Output = Millis;

    /// Saturating: a horizon before the start of time stays at the start of time.
    fn sub(self, rhs: Millis) -> Millis {
        Millis(self.0.saturating_sub(rhs.0))
    }
}

impl From<i64> for Millis {
    fn from(ms: i64) -> Self {
        Millis(ms)
    }
}

impl std::fmt::Display for Millis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ms", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Millis;

    #[test]
    fn arithmetic_saturates_at_both_ends() {
        assert_eq!(Millis(i64::MAX - 1) + Millis(5), Millis(i64::MAX));
        assert_eq!(Millis(i64::MIN + 1) - Millis(5), Millis(i64::MIN));
        assert_eq!(Millis(7) - Millis(10), Millis(-3));
        assert_eq!(Millis::from_secs(i64::MAX / 10), Millis(i64::MAX));
    }
}
