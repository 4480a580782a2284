//! The no-progress streak: the same call keeps returning the same outcome.
//!
//! Three detectors read it ([`super::generic_repeat`], [`super::known_poll`],
//! [`super::circuit_breaker`]), so [`super::Scope`] computes it once per check. Calls to other
//! tools in between do not reset it: an agent that checks a deploy, reads a log, and checks the
//! deploy again is still stuck if the deploy check never changes.

use super::history::Record;
use crate::digest::Digest;

/// What one walk over the scoped history finds for the current call's `argsHash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streak {
    /// The no-progress streak: walking newest to oldest, skipping other calls and records
    /// without an outcome, the first remaining record fixes the outcome and each earlier equal
    /// one adds 1 until one differs.
    pub count: u32,
    /// The outcome that fixed the streak.
    pub latest: Option<Digest>,
    /// Every record of the same call, with or without an outcome: the generic repeat count
    /// (`recentCount`).
    pub same_args: u32,
}

/// The [`Streak`] of `args` in the scoped records (oldest first).
pub fn streak(records: &[&Record], args: &Digest) -> Streak {
    let mut latest: Option<Digest> = None;
    let (mut count, mut same_args, mut open) = (0, 0, true);
    for r in records.iter().rev().filter(|r| r.args == *args) {
        same_args += 1;
        let (true, Some(result)) = (open, r.result) else { continue };
        match latest {
            None => latest = Some(result),
            Some(l) if l != result => {
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

    fn of(h: &[Record], args: u8) -> Streak {
        streak(&h.iter().collect::<Vec<_>>(), &[args; 16])
    }

    #[test]
    fn skips_other_calls_and_open_records() {
        let h = [rec(1, Some(9)), rec(2, Some(5)), rec(1, None), rec(1, Some(9)), rec(3, None)];
        assert_eq!((of(&h, 1).count, of(&h, 1).latest), (2, Some([9; 16])));
    }

    #[test]
    fn breaks_on_a_different_outcome() {
        let h = [rec(1, Some(9)), rec(1, Some(8)), rec(1, Some(9)), rec(1, Some(9))];
        assert_eq!((of(&h, 1).count, of(&h, 1).latest), (2, Some([9; 16])));
        assert_eq!((of(&h, 7).count, of(&h, 7).latest), (0, None));
    }

    #[test]
    fn same_args_counts_every_record_of_the_call_past_the_streak_end() {
        // Newest last: the streak (2) stops at the differing outcome 8; the open record counts
        // for the generic repeat count but not for the streak.
        let h = [rec(1, Some(9)), rec(1, Some(8)), rec(2, Some(9)), rec(1, None), rec(1, Some(9)), rec(1, Some(9))];
        assert_eq!(of(&h, 1), Streak { count: 2, latest: Some([9; 16]), same_args: 5 });
        assert_eq!(of(&h, 2), Streak { count: 1, latest: Some([9; 16]), same_args: 1 });
        assert_eq!(of(&h, 3), Streak { count: 0, latest: None, same_args: 0 });
    }
}
