//! The post-compaction guard (docs/spec/tool-loop.md §6).
//!
//! A context compaction is supposed to break a loop: the model loses the repetitive history and
//! gets a summary. Incident #77474 showed a loop surviving it. So after each successful compaction
//! the guard watches the next `windowSize` outcomes, and if every one of them is the same call
//! with the same result, it aborts the run.
//!
//! Settings: `enabled` (off only when explicitly false), `postCompactionGuard.windowSize`. State:
//! one [`CompactionGuard`] per (session, run), fixed at its creation.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use crate::config::profile::{render, ToolTexts};
use crate::digest::Digest;

/// One guard per (session, run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionGuard {
    enabled: bool,
    window: NonZeroU32,
    remaining: u32,
    seen: Vec<(Digest, Digest)>,
}

/// The abort verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abort {
    /// Matching observations in the window.
    pub count: u32,
    /// The exact message.
    pub message: String,
}

impl CompactionGuard {
    /// A dormant guard; `enabled` is false only when the config says `enabled: false`.
    pub fn new(enabled: bool, window: NonZeroU32) -> Self {
        Self { enabled, window, remaining: 0, seen: Vec::new() }
    }

    /// Whether the guard is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The window size.
    pub fn window(&self) -> u32 {
        self.window.get()
    }

    /// Attempts left in the armed window (0 = dormant).
    pub fn remaining(&self) -> u32 {
        self.remaining
    }

    /// `armPostCompaction`: a fresh window, whatever was there before.
    pub fn arm(&mut self) {
        self.remaining = self.window.get();
        self.seen.clear();
    }

    /// `observe`: one outcome (`args` includes the tool name); `texts` word the abort.
    pub fn observe(&mut self, tool: &str, args: Digest, result: Digest, texts: &ToolTexts) -> Option<Abort> {
        if !self.enabled || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        self.seen.push((args, result));
        let matches = self.seen.iter().filter(|s| **s == (args, result)).count() as u32;
        if self.remaining == 0 {
            self.seen.clear(); // disarmed: dormant until the next arm
        }
        (matches >= self.window.get()).then(|| Abort {
            count: matches,
            message: render(
                texts.compaction_abort,
                &[("tool", tool), ("n", &matches.to_string()), ("window", &self.window.to_string())],
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profile::DOCUMENTED;

    fn nz(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    const A: Digest = [1; 16];
    const R: Digest = [2; 16];

    #[test]
    fn aborts_when_the_whole_window_repeats() {
        let mut g = CompactionGuard::new(true, nz(3));
        g.arm();
        assert_eq!(g.observe("exec", A, R, &DOCUMENTED.texts), None);
        assert_eq!(g.observe("exec", A, R, &DOCUMENTED.texts), None);
        let abort = g.observe("exec", A, R, &DOCUMENTED.texts).unwrap();
        assert_eq!(abort.count, 3);
        assert_eq!(abort.message, "CRITICAL: tool exec repeated 3 times with identical arguments and identical results within 3 attempts after auto-compaction. The compaction did not break the loop. Aborting to prevent runaway resource use.");
        assert_eq!(g.remaining(), 0);
        assert_eq!(g.observe("exec", A, R, &DOCUMENTED.texts), None, "disarmed after the window");
    }

    #[test]
    fn any_difference_in_the_window_means_no_abort_and_the_window_closes() {
        let mut g = CompactionGuard::new(true, nz(3));
        g.arm();
        g.observe("exec", A, R, &DOCUMENTED.texts);
        g.observe("exec", A, [3; 16], &DOCUMENTED.texts);
        assert_eq!(g.observe("exec", A, R, &DOCUMENTED.texts), None);
        assert_eq!(g.remaining(), 0);
    }

    #[test]
    fn dormant_or_disabled_guards_observe_nothing() {
        let mut g = CompactionGuard::new(true, nz(1));
        assert_eq!(g.observe("t", A, R, &DOCUMENTED.texts), None, "not armed");
        let mut off = CompactionGuard::new(false, nz(1));
        off.arm();
        assert_eq!(off.observe("t", A, R, &DOCUMENTED.texts), None);
    }

    #[test]
    fn rearming_mid_window_resets_everything() {
        let mut g = CompactionGuard::new(true, nz(2));
        g.arm();
        g.observe("t", A, R, &DOCUMENTED.texts);
        g.arm();
        assert_eq!(g.remaining(), 2);
        assert_eq!(g.observe("t", A, R, &DOCUMENTED.texts), None);
        assert_eq!(g.observe("t", A, R, &DOCUMENTED.texts).map(|a| a.count), Some(2));
    }
}
