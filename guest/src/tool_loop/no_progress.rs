//! No-progress streak: the same call keeps returning the same outcome.
//!
//! Calls to other tools in between do not reset it: an agent that checks a deploy, reads a log,
//! and checks the deploy again is still stuck if the deploy check never changes.

use super::history::Record;
use crate::digest::{same, Digest};

/// What one walk over the scoped history finds for the current call's `argsHash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streak {
    /// The no-progress streak: walking newest to oldest, skipping other calls and records
    /// without an outcome, the first remaining record fixes the outcome and each earlier equal
    /// one adds 1 until one differs.
    pub count: u32,
    /// The outcome that fixed the streak.
    pub latest: Option<Digest>,
    /// Every record of the same call, with or without an outcome: the generic repeat count.
    /// Counted in the same walk because it visits the same records, and a walk over the history
    /// is a detector's main cost.
    pub same_args: u32,
}

/// The [`Streak`] of `args` in the scoped history.
pub fn streak<'a>(scoped: impl DoubleEndedIterator<Item = &'a Record>, args: &Digest) -> Streak {
    let mut latest: Option<Digest> = None;
    let (mut count, mut same_args, mut open) = (0, 0, true);
    for r in scoped.rev() {
        if !same(&r.args, args) {
            continue;
        }
        same_args += 1;
        let (true, Some(result)) = (open, r.result) else { continue };
        match latest {
            None => latest = Some(result),
            Some(l) if !same(&l, &result) => {
                open = false;
                continue;
            }
            Some(_) => {}
        }
        count += 1;
    }
    Streak { count, latest, same_args }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::history::test_record as rec;

    fn np(h: &[Record], args: u8) -> (u32, Option<Digest>) {
        let s = streak(h.iter(), &[args; 16]);
        (s.count, s.latest)
    }

    #[test]
    fn skips_other_calls_and_open_records() {
        let h = [rec(1, Some(9)), rec(2, Some(5)), rec(1, None), rec(1, Some(9)), rec(3, None)];
        assert_eq!(np(&h, 1), (2, Some([9; 16])));
    }

    #[test]
    fn breaks_on_a_different_outcome() {
        let h = [rec(1, Some(9)), rec(1, Some(8)), rec(1, Some(9)), rec(1, Some(9))];
        assert_eq!(np(&h, 1), (2, Some([9; 16])));
        assert_eq!(np(&h, 7), (0, None));
    }

    #[test]
    fn same_args_counts_every_record_of_the_call_past_the_streak_end() {
        // Newest last: the streak (2) stops at the differing outcome 8, the open record counts
        // for the generic repeat count but not for the streak.
        let h = [rec(1, Some(9)), rec(1, Some(8)), rec(2, Some(9)), rec(1, None), rec(1, Some(9)), rec(1, Some(9))];
        assert_eq!(streak(h.iter(), &[1; 16]), Streak { count: 2, latest: Some([9; 16]), same_args: 5 });
        assert_eq!(streak(h.iter(), &[2; 16]), Streak { count: 1, latest: Some([9; 16]), same_args: 1 });
        assert_eq!(streak(h.iter(), &[3; 16]), Streak { count: 0, latest: None, same_args: 0 });
    }
}
