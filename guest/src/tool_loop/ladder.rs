//! `ladder`: warn, then block, then end the run when blocks are ignored.
//!
//! The most common complaint about loop guards is a block that never ends the loop: the model is
//! told no and simply tries again, for hours. The detectors already warn before they block; the
//! ladder adds the last rung. Every block in a row (a call that passes without any finding
//! resets the count: the agent did something else) climbs it, and once `abortAfterBlocks` blocks
//! are reached the next outcome the session reports gets the `abort` verdict, the one every host
//! in this project honours by ending the run where it can (the same path as the post-compaction
//! guard's abort).
//!
//! Settings: `loopguard.detectors.ladder.abortAfterBlocks`. State: one counter in the session's
//! [`Trail`].

use std::num::NonZeroU32;

use super::decision::{Detector, OutcomeVerdict, ToolAction};
use super::trail::Trail;

/// Climbs (a block) or leaves (a call with no finding) the ladder after a call's verdict.
pub fn after_call(trail: &mut Trail, action: ToolAction, finding: bool) {
    match action {
        ToolAction::Block => trail.blocks_in_a_row = trail.blocks_in_a_row.saturating_add(1),
        ToolAction::Allow if !finding => trail.blocks_in_a_row = 0,
        _ => {}
    }
}

/// The abort once `abort_after` blocks in a row were ignored (the ladder starts again after it).
pub fn on_outcome(trail: &mut Trail, abort_after: NonZeroU32) -> Option<OutcomeVerdict> {
    let n = trail.blocks_in_a_row;
    if n < abort_after.get() {
        return None;
    }
    trail.blocks_in_a_row = 0;
    let message = format!(
        "loopguard: {n} blocks in a row were ignored; the agent keeps retrying what was blocked. \
         Ending the run."
    );
    Some(OutcomeVerdict::Abort { detector: Detector::Ladder, count: n, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREE: NonZeroU32 = NonZeroU32::new(3).unwrap();

    #[test]
    fn the_third_ignored_block_ends_the_run() {
        let mut t = Trail::default();
        for _ in 0..2 {
            after_call(&mut t, ToolAction::Block, true);
            assert_eq!(on_outcome(&mut t, THREE), None);
        }
        after_call(&mut t, ToolAction::Warn, true);
        after_call(&mut t, ToolAction::Block, true);
        assert!(matches!(on_outcome(&mut t, THREE), Some(OutcomeVerdict::Abort { count: 3, .. })));
        assert_eq!(on_outcome(&mut t, THREE), None, "once");
    }

    #[test]
    fn an_agent_that_changes_course_after_a_block_is_not_ended() {
        let mut t = Trail::default();
        after_call(&mut t, ToolAction::Block, true);
        after_call(&mut t, ToolAction::Block, true);
        after_call(&mut t, ToolAction::Allow, false);
        after_call(&mut t, ToolAction::Block, true);
        assert_eq!(on_outcome(&mut t, THREE), None);
    }
}
