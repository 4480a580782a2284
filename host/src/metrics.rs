//! The metrics' vocabulary (docs/METRICS.md), and a decision counter for hosts that count in
//! Rust on behalf of another language (the Python package).
//!
//! Why here: the CLI's Prometheus text and the Python package's OpenTelemetry instruments must
//! carry the same label values, so the lists live once, beside the embedding both build on.

use std::sync::atomic::{AtomicU64, Ordering};

/// The detectors a label may name (the policy's decision-line vocabulary, `wit/policy.wit`);
/// `none` for an allow, `other` for a name not on this list.
pub const DETECTORS: [&str; 12] = [
    "generic_repeat",
    "known_poll_no_progress",
    "ping_pong",
    "unknown_tool_repeat",
    "global_circuit_breaker",
    "argument_churn",
    "same_error",
    "same_result",
    "cycle",
    "growing_args",
    "ladder",
    "compaction_loop_persisted",
];

/// The actions a label may name: the tool-call, outcome and bot verdicts of the policy.
pub const ACTIONS: [&str; 7] = ["allow", "warn", "block", "recorded", "ignored", "abort", "suppress"];

/// The kinds of decision a label may name (the decision lines' `kind`).
pub const KINDS: [&str; 5] = ["tool_call", "tool_result", "bot_message", "group_message", "compaction"];

/// The upper bounds of the decision-latency buckets, in seconds: one in-process decision takes
/// tens of microseconds, a stored one a network round trip (docs/PERFORMANCE.md).
pub const LATENCY_BUCKETS: [f64; 12] =
    [0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.1, 1.0];

/// `word` when it is on `list`, else `other` (the cardinality bound).
pub fn bounded(word: &str, list: &[&'static str]) -> &'static str {
    list.iter().copied().find(|w| *w == word).unwrap_or("other")
}

const K: usize = KINDS.len() + 1;
const A: usize = ACTIONS.len() + 1;
const D: usize = DETECTORS.len() + 2;

/// Decisions counted by kind, action and detector, each bounded to its list (so the counter is a
/// fixed array: no map to cap, nothing allocated per decision).
///
/// Why a host counts here rather than in its own language: in Python a dict update under a lock
/// costs about a microsecond per decision, 5% of one (docs/PERFORMANCE.md); an atomic increment
/// costs nanoseconds. The counts are read when the metrics are collected.
pub struct DecisionCounts {
    counts: Vec<AtomicU64>,
}

impl Default for DecisionCounts {
    fn default() -> Self {
        Self { counts: (0..K * A * D).map(|_| AtomicU64::new(0)).collect() }
    }
}

impl DecisionCounts {
    /// Counts one decision in the policy's words.
    pub fn add(&self, kind: &str, action: &str, detector: Option<&str>) {
        let d = detector.map_or(0, |d| 1 + index(d, &DETECTORS));
        let at = (index(kind, &KINDS) * A + index(action, &ACTIONS)) * D + d;
        self.counts[at].fetch_add(1, Ordering::Relaxed);
    }

    /// Every count above zero: (kind, action, detector, count); `detector` is `none` for none.
    pub fn snapshot(&self) -> Vec<(&'static str, &'static str, &'static str, u64)> {
        let word = |list: &[&'static str], i: usize| list.get(i).copied().unwrap_or("other");
        let mut out = Vec::new();
        for (at, n) in self.counts.iter().enumerate() {
            let n = n.load(Ordering::Relaxed);
            if n > 0 {
                let (k, a, d) = (at / (A * D), at / D % A, at % D);
                let detector = if d == 0 { "none" } else { word(&DETECTORS, d - 1) };
                out.push((word(&KINDS, k), word(&ACTIONS, a), detector, n));
            }
        }
        out
    }
}

/// The position of `word` in `list`, or `list.len()` (`other`).
fn index(word: &str, list: &[&str]) -> usize {
    list.iter().position(|w| *w == word).unwrap_or(list.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_counted_under_their_bounded_words() {
        let c = DecisionCounts::default();
        c.add("tool_call", "block", Some("same_result"));
        c.add("tool_call", "block", Some("same_result"));
        c.add("tool_call", "allow", None);
        c.add("tool_result", "recorded", Some("a newer policy's detector"));
        c.add("a kind of 2030", "an action of 2030", None);
        let mut got = c.snapshot();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("other", "other", "none", 1),
                ("tool_call", "allow", "none", 1),
                ("tool_call", "block", "same_result", 2),
                ("tool_result", "recorded", "other", 1),
            ]
        );
    }
}
