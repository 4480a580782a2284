//! Tool-loop recovery (openclaw 2026.9, tests/oracle/NOTES.md §2.3): what the model receives
//! for a block.
//!
//! In 2026.9 a block is not the detector's message alone. The first critical of an *attempt*
//! adds a paragraph asking the model to reassess; every later critical of the same attempt says
//! that recovery failed and the run is stopping. An attempt is one `Agent.prompt()`: the state
//! belongs to (session, run as given) and a compaction retry starts a new attempt. Profiles
//! without [`RecoveryTexts`](crate::config::profile::RecoveryTexts) keep no state and return the message unchanged.
//!
//! State: the runs of the session whose current attempt has seen a critical, at most
//! [`MAX_RUNS`] (the least recently blocked is forgotten first: its next block gets the first
//! text again).

use serde::{Deserialize, Serialize};

use crate::config::profile::{render, ToolTexts};

/// Runs per session whose attempt state is kept.
pub const MAX_RUNS: usize = 32;

/// The runs (as given, absent = "") whose current attempt has seen a critical, least recently
/// blocked first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    runs: Vec<Box<str>>,
}

impl Recovery {
    /// The text of a block in `run` with the detector's `reason`; records that this attempt has
    /// seen a critical.
    pub fn block_text(&mut self, run: Option<&str>, reason: String, texts: &ToolTexts) -> String {
        let Some(recovery) = &texts.recovery else { return reason };
        let key = run.unwrap_or("");
        let seen = match self.runs.iter().position(|r| &**r == key) {
            Some(i) => {
                let r = self.runs.remove(i);
                self.runs.push(r);
                true
            }
            None => {
                if self.runs.len() >= MAX_RUNS {
                    self.runs.remove(0);
                }
                self.runs.push(key.into());
                false
            }
        };
        render(if seen { recovery.failed } else { recovery.first }, &[("reason", &reason)])
    }

    /// A compaction retried `run`: a new attempt.
    pub fn new_attempt(&mut self, run: Option<&str>) {
        let key = run.unwrap_or("");
        self.runs.retain(|r| &**r != key);
    }

    /// True when no run has seen a critical.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Runs held (at most [`MAX_RUNS`]).
    pub fn len(&self) -> usize {
        self.runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profile::{DOCUMENTED, OPENCLAW_2026_9};

    /// The texts of the 2026.9.6 package (agent-core `completeToolLoopInterventionBatch`, NOTES
    /// §2.3; case `exec-repeat-block-recovery` lines 41, 43 and 67).
    #[test]
    fn first_block_of_an_attempt_asks_to_reassess_later_ones_say_recovery_failed() {
        let t = &OPENCLAW_2026_9.texts;
        let mut r = Recovery::default();
        assert_eq!(
            r.block_text(Some("r1"), "CRITICAL: x".into(), t),
            "CRITICAL: x\n\nDo not repeat this exact tool action. Reassess the task. You may answer the user, ask for clarification, or continue with a different tool or different arguments."
        );
        let failed = "CRITICAL: y\n\nCritical tool-loop recovery failed because another critical loop was detected. This run is stopping now.";
        assert_eq!(r.block_text(Some("r1"), "CRITICAL: y".into(), t), failed);
        assert!(r.block_text(Some("r2"), "z".into(), t).contains("Reassess"), "another run is another attempt");
        assert!(r.block_text(None, "z".into(), t).contains("Reassess"));
        r.new_attempt(Some("r1"));
        assert!(r.block_text(Some("r1"), "z".into(), t).contains("Reassess"), "a compaction starts a new attempt");
    }

    #[test]
    fn documented_blocks_are_the_message_and_keep_no_state() {
        let mut r = Recovery::default();
        assert_eq!(r.block_text(Some("r"), "CRITICAL: x".into(), &DOCUMENTED.texts), "CRITICAL: x");
        assert!(r.is_empty());
    }

    #[test]
    fn at_most_32_runs_are_remembered() {
        let mut r = Recovery::default();
        for i in 0..40 {
            r.block_text(Some(&format!("r{i}")), "x".into(), &OPENCLAW_2026_9.texts);
        }
        assert_eq!(r.len(), MAX_RUNS);
        assert!(r.block_text(Some("r0"), "x".into(), &OPENCLAW_2026_9.texts).contains("Reassess"), "forgotten");
        assert!(r.block_text(Some("r39"), "x".into(), &OPENCLAW_2026_9.texts).contains("recovery failed"));
    }
}
