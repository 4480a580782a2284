//! The no-progress streak: the same call keeps returning the same outcome.
//!
//! Three detectors read it ([`super::generic_repeat`], [`super::known_poll`],
//! [`super::circuit_breaker`]), so [`crate::tool_loop::Scope`] computes it once per check. Calls to other
//! tools in between do not reset it: an agent that checks a deploy, reads a log, and checks the
//! deploy again is still stuck if the deploy check never changes.
//!
//! Under openclaw 2026.9's rules (tests/oracle/NOTES.md §2.4, §2.6) two things are added. A
//! blocked call's veto record counts as one more repeat of the outcome it stands between, so the
//! block after 20 identical outcomes reports 21, then 22, … and the global breaker takes over at
//! 30. And `exec` also has a terminal-failure streak that may cross commands: failures with the
//! same identity (volatile parts masked) continue it. Without veto records and failure
//! identities (the documented profile) both reduce to the plain streak.

use crate::digest::Digest;
use crate::tool_loop::history::Record;

/// What one walk over the scoped history finds for the current call's `argsHash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streak {
    /// The no-progress streak: walking newest to oldest, skipping other calls and records
    /// without an outcome, the first remaining record fixes the outcome and each earlier equal
    /// one adds 1 until one differs; veto records in between add 1 each.
    pub count: u32,
    /// The outcome that fixed the streak.
    pub latest: Option<Digest>,
    /// Every record of the same call, with or without an outcome: the generic repeat count
    /// (`recentCount`).
    pub same_args: u32,
}

/// The [`Streak`] of `args` in the scoped records (oldest first): `countNoProgressStreak`.
pub fn streak(records: &[&Record], args: &Digest) -> Streak {
    let mut latest: Option<Digest> = None;
    let (mut count, mut same_args, mut pending, mut open) = (0, 0, 0, true);
    for r in records.iter().rev().filter(|r| r.args == *args) {
        same_args += 1;
        if !open {
            continue;
        }
        if r.veto {
            pending += 1;
            continue;
        }
        let Some(result) = r.result else { continue };
        match latest {
            None => latest = Some(result),
            Some(l) if l != result => {
                open = false;
                continue;
            }
            Some(_) => {}
        }
        count += pending + 1;
        pending = 0;
    }
    // Only vetoes (their outcomes left the history): the count is the number of vetoes.
    let count = if latest.is_some() { count } else { pending };
    Streak { count, latest, same_args }
}

/// `countNoProgressStreak(…, terminalExecFailuresOnly = true)`: the newest run of `tool`'s
/// records (another tool ends it) made of terminal failures and vetoes. The first failure fixes
/// the outcome; an older failure continues the streak when its outcome or its failure identity
/// is the same, and the walk may pass from the current arguments to other ones once, not back.
pub fn terminal_streak(records: &[&Record], tool: u64, args: &Digest) -> Streak {
    let mut first: Option<&Record> = None;
    let (mut count, mut pending, mut crossed) = (0, 0, false);
    for r in records.iter().rev() {
        if r.tool != tool {
            break;
        }
        if r.veto {
            pending += 1;
            continue;
        }
        let Some(result) = r.result else { continue };
        if r.failure.is_none() {
            break;
        }
        match first {
            None => {
                first = Some(r);
                crossed = r.args != *args;
            }
            Some(f) => {
                if crossed && r.args == *args {
                    break;
                }
                crossed |= r.args != *args;
                if Some(result) != f.result && r.failure != f.failure {
                    break;
                }
            }
        }
        count += pending + 1;
        pending = 0;
    }
    match first {
        Some(f) => Streak { count, latest: f.result, same_args: 0 },
        None => Streak { count: 0, latest: None, same_args: 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::history::{test_record as rec, test_veto as veto};

    fn of(h: &[Record], args: u8) -> Streak {
        streak(&h.iter().collect::<Vec<_>>(), &[args; 16])
    }

    fn failure(args: u8, result: u8, identity: u8) -> Record {
        Record { failure: Some([identity; 16]), ..rec(args, Some(result)) }
    }

    fn terminal(h: &[Record], args: u8) -> u32 {
        terminal_streak(&h.iter().collect::<Vec<_>>(), 0, &[args; 16]).count
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

    /// NOTES §2.4, case `exec-repeat-block-recovery`: vetoes newer than the outcomes add one
    /// each (the block after 20 outcomes reports 21, 22, …); vetoes alone count themselves.
    #[test]
    fn veto_records_count_as_repeats_of_the_outcome() {
        let mut h: Vec<Record> = (0..20).map(|_| rec(1, Some(9))).collect();
        assert_eq!(of(&h, 1).count, 20);
        h.push(veto(1));
        assert_eq!(of(&h, 1).count, 21);
        h.push(veto(1));
        assert_eq!(of(&h, 1), Streak { count: 22, latest: Some([9; 16]), same_args: 22 });
        // Vetoes older than the streak's end, or past a differing outcome, do not count.
        let h = [veto(1), rec(1, Some(8)), veto(1), rec(1, Some(9))];
        assert_eq!(of(&h, 1).count, 1);
        assert_eq!(of(&[veto(1), veto(1), veto(1)], 1), Streak { count: 3, latest: None, same_args: 3 });
    }

    /// NOTES §2.6, case `exec-failure-identity`: equal identities continue the streak across
    /// outcomes and commands; another tool, a success or a return to the current command ends it.
    #[test]
    fn terminal_failures_continue_across_commands_with_the_same_identity() {
        let same_command: Vec<Record> = (0..5).map(|i| failure(1, 10 + i, 7)).collect();
        assert_eq!(terminal(&same_command, 1), 5, "outcomes differ, identities agree");
        let commands: Vec<Record> = (0..5).map(|i| failure(10 + i, 3, 7)).collect();
        assert_eq!(terminal(&commands, 99), 5, "five other commands, one identity");
        assert_eq!(terminal(&[failure(2, 3, 7), failure(1, 3, 7), failure(2, 3, 7)], 2), 2, "back to the current args");
        assert_eq!(terminal(&[failure(1, 3, 7), rec(1, Some(3)), failure(1, 3, 7)], 1), 1, "a success ends it");
        assert_eq!(terminal(&[failure(1, 3, 7), failure(1, 4, 8)], 1), 1, "another identity ends it");
        assert_eq!(terminal(&[failure(1, 3, 7), veto(5), veto(1)], 1), 3, "vetoes of any args count");
        let other_tool = Record { tool: 1, ..failure(1, 3, 7) };
        assert_eq!(terminal(&[failure(1, 3, 7), other_tool, failure(1, 3, 7)], 1), 1);
        assert_eq!(terminal(&[veto(1)], 1), 0, "no failure: nothing");
    }
}
