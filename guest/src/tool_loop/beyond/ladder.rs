//! `ladder`: warn, then block, then end the run when the agent repeats what was blocked.
//!
//! The most common complaint about loop guards is a block that never ends the loop: the model is
//! told no and simply sends the same call again, for hours. The detectors already warn before
//! they block; the ladder adds the last rung, and only for that case. It remembers the calls that
//! were blocked (by their fold, [`super::look::fold`]: up to cosmetics); when one of them is
//! blocked for the `abortAfterBlocks`-th time since the agent last changed course, the block is
//! the ladder's, its text says the run ends, and the session's next outcome gets the `abort`
//! verdict (the path every host honours by ending the run where it can, as for the
//! post-compaction guard). A call that passes with no finding is a change of course: the count
//! starts again.
//!
//! What never ends a run: a block followed by something else. An agent that is blocked and then
//! reads a file, lists a folder or tries another query is doing what the block asked.
//!
//! This rule was the agent-CLI hooks' own ("the second block ends the session"); it lives here so
//! that every host and `loopguard replay` decide it alike.
//!
//! Settings: `loopguard.detectors.ladder.abortAfterBlocks`. State: the blocked calls and one
//! counter in the session's [`Trail`].

use std::num::NonZeroU32;

use super::trail::{Trail, MAX_BLOCKED};
use crate::tool_loop::decision::{Detector, OutcomeVerdict, ToolAction, ToolVerdict};

/// Climbs (a block of a call blocked before), remembers (a first block) or leaves (a call with no
/// finding) the ladder after `verdict` on the call with `fold`; the ladder's own block when the
/// run must end.
pub fn after_call(
    trail: &mut Trail,
    fold: u64,
    tool: &str,
    verdict: &ToolVerdict,
    abort_after: NonZeroU32,
) -> Option<ToolVerdict> {
    let n = match verdict.action {
        ToolAction::Block => match trail.blocked.iter_mut().find(|(f, _)| *f == fold) {
            Some((_, n)) => {
                *n = n.saturating_add(1);
                *n
            }
            None => {
                if trail.blocked.len() >= MAX_BLOCKED {
                    trail.blocked.pop_front();
                }
                trail.blocked.push_back((fold, 1));
                1
            }
        },
        ToolAction::Allow if verdict.detector.is_none() => {
            trail.blocked.iter_mut().for_each(|(_, n)| *n = 0);
            return None;
        }
        _ => return None,
    };
    if n < abort_after.get() {
        return None;
    }
    trail.blocked.retain(|(f, _)| *f != fold);
    trail.abort_pending = true;
    let message = format!(
        "loopguard: {tool} was blocked {n} times and sent again each time; ending the run. The same \
         call will not get a different answer."
    );
    Some(ToolVerdict {
        action: ToolAction::Block,
        detector: Some(Detector::Ladder),
        count: n,
        message: Some(message),
        notify: false,
    })
}

/// The `abort` verdict for the first outcome after the ladder ended the run.
pub fn on_outcome(trail: &mut Trail) -> Option<OutcomeVerdict> {
    if !std::mem::take(&mut trail.abort_pending) {
        return None;
    }
    let message = "loopguard: a blocked call was sent again and again; the run was ended.".to_string();
    Some(OutcomeVerdict::Abort { detector: Detector::Ladder, count: 1, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREE: NonZeroU32 = NonZeroU32::new(3).unwrap();

    fn v(action: ToolAction) -> ToolVerdict {
        let detector = (action != ToolAction::Allow).then_some(Detector::SameResult);
        ToolVerdict { action, detector, count: 0, message: None, notify: false }
    }

    #[test]
    fn the_third_block_of_the_same_call_ends_the_run() {
        let mut t = Trail::default();
        assert_eq!(after_call(&mut t, 7, "grep", &v(ToolAction::Block), THREE), None);
        assert_eq!(after_call(&mut t, 7, "grep", &v(ToolAction::Block), THREE), None);
        let end = after_call(&mut t, 7, "grep", &v(ToolAction::Block), THREE).expect("the ladder's block");
        assert_eq!((end.detector, end.count), (Some(Detector::Ladder), 3));
        assert!(matches!(on_outcome(&mut t), Some(OutcomeVerdict::Abort { .. })));
        assert_eq!(on_outcome(&mut t), None, "once");
    }

    #[test]
    fn blocks_of_different_calls_and_a_change_of_course_never_end_the_run() {
        let mut t = Trail::default();
        for fold in 1..=6 {
            assert_eq!(after_call(&mut t, fold, "grep", &v(ToolAction::Block), THREE), None, "six spellings");
        }
        assert_eq!(after_call(&mut t, 1, "grep", &v(ToolAction::Block), THREE), None);
        assert_eq!(after_call(&mut t, 9, "read", &v(ToolAction::Allow), THREE), None, "a read: the count starts again");
        assert_eq!(after_call(&mut t, 1, "grep", &v(ToolAction::Block), THREE), None);
        assert_eq!(on_outcome(&mut t), None);
    }
}
