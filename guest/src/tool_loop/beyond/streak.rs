//! The no-progress streak that [`super::same_result`] and [`super::same_error`] read: the
//! attempts before this call that came back with the same outcome, sorted by how strong the
//! evidence is.
//!
//! Why one walk with two counts: the strength of the evidence sets the action. The same call
//! (up to cosmetics, [`super::look::fold`]) answered the same way again is strong evidence that
//! nothing changes; other arguments aimed at the same thing with the same answer is weak evidence
//! (an agent exploring gets "not found" for good reasons). Both are counted in one pass:
//! `same` for the first, `all` for both.
//!
//! What counts, from the newest entry back:
//! - calls that never ran or failed for the infrastructure's sake are skipped;
//! - an attempt is this call again with the streak's outcome (`same`), or another call of the
//!   same tool (any tool for "nothing found") aimed at the same thing with the same
//!   *informative* outcome (`all` only): two different commands that both print `OK`, or both
//!   succeed silently, have not "returned the same result";
//! - this call with another outcome ends the streak: it learnt something;
//! - attempts must follow each other closely: more than [`MAX_GAP`] other calls between two of
//!   them end the streak (the agent went elsewhere and came back);
//! - a call answered exactly as the same call (up to cosmetics) was answered earlier in the
//!   trail (a file read again, unchanged) learnt nothing: it is neither a gap nor progress, so
//!   re-reads between re-runs of a failing test do not hide them;
//! - a call without arguments that failed never ran (its arguments were missing or rejected):
//!   it too is neither a gap nor progress;
//! - progress elsewhere weakens a streak: after a call that found something or changed
//!   something (for errors: changed something; a read between two failing edits is not
//!   progress on them), older attempts with other arguments no longer count, and older attempts
//!   of this same call count as re-runs (`rerun`) rather than back-to-back repeats (`same`):
//!   still strong evidence (an edit that changes nothing for the failure, then the same test
//!   re-run, is the rubric's edit-rerun loop), but the change may not have reached the call
//!   yet, so it is acted on later.

use super::look::{fold, Look};
use super::sketch::Aims;
use super::trail::Out;
use crate::config::detection::StreakSettings;

/// The most other calls between two attempts of one streak.
pub const MAX_GAP: u32 = 3;

/// How much (percent) the free texts of two calls with the same entities must overlap for a
/// failure or a "nothing found" to count as the same call's ([`super::sketch::Sketch::similar_at`]): a query
/// with a word added, an edit of the same lines with one character changed. Below it, the
/// attempt aims at the same thing with other arguments: weak evidence.
pub const NEAR_OVERLAP: u8 = 50;

/// Which outcomes a streak is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Results: content, nothing found, quiet or empty answers.
    Results,
    /// Errors.
    Errors,
}

/// The attempts before this call that had the streak's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Streak {
    /// Attempts that were this call again (up to cosmetics), with no progress between.
    pub same: u32,
    /// Attempts that were this call again, `same` included.
    pub rerun: u32,
    /// All attempts, `same` included.
    pub all: u32,
    /// The streak's outcome (`None` when there is no streak).
    pub out: Option<Out>,
}

/// For tests: block the same call at 5, a re-run at 8, other arguments warned at 4 and blocked at
/// 8.
#[cfg(test)]
pub(crate) const TEST_SETTINGS: StreakSettings = StreakSettings {
    same: crate::config::detection::Levels { warn_at: 3, block_at: 5 },
    rerun: crate::config::detection::Levels { warn_at: 4, block_at: 8 },
    varied: crate::config::detection::Levels { warn_at: 4, block_at: 8 },
    aim_overlap: 10,
};

/// How strong the evidence of a streak is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// This same call answered the same way, back to back.
    Same,
    /// This same call answered the same way, re-run after other calls changed something.
    Rerun,
    /// Other arguments aimed at the same thing, answered the same way.
    Varied,
}

impl Evidence {
    /// How the messages say where the attempts came from.
    pub fn wording(self) -> &'static str {
        match self {
            Evidence::Same => "for this same call",
            Evidence::Rerun => "for this same call, re-run after changes",
            Evidence::Varied => "with these and other arguments",
        }
    }
}

/// What a streak calls for under `s`: (block?, the attempt counting this call, the evidence);
/// a block on any evidence wins over a warning, stronger evidence first.
pub fn verdict(st: &Streak, s: &StreakSettings) -> Option<(bool, u32, Evidence)> {
    let counts =
        [(st.same, s.same, Evidence::Same), (st.rerun, s.rerun, Evidence::Rerun), (st.all, s.varied, Evidence::Varied)];
    let reached = |block: bool| {
        counts.iter().find_map(|&(n, l, e)| {
            let at = if block { l.block_at } else { l.warn_at };
            (n > 0 && n + 1 >= at).then_some((block, n + 1, e))
        })
    };
    reached(true).or_else(|| reached(false))
}

/// The streak of `family` before the call in `look`; texts aimed at the same thing overlap by
/// `overlap` percent ([`super::sketch::Sketch::similar_at`]).
pub fn streak(look: &Look<'_>, family: Family, overlap: u8) -> Streak {
    let call = &look.call;
    let mut s = Streak::default();
    let mut aims = Aims::new(&call.sketch, overlap);
    let mut near = Aims::new(&call.sketch, NEAR_OVERLAP);
    let mut gap = 0;
    let mut progress = false;
    for (i, e) in look.entries.iter().enumerate().rev() {
        if e.out.is_unknown() {
            // This call, blocked: the agent tried it again, so the streak goes on (the calls
            // around a blocked attempt are not a gap); nothing else is learnt from it.
            if e.out == Out::Blocked && call.same_as(e) {
                gap = 0;
            }
            continue;
        }
        let in_family = match family {
            Family::Results => !matches!(e.out, Out::Error(_)),
            Family::Errors => matches!(e.out, Out::Error(_)),
        };
        let same_outcome = s.out.is_none_or(|o| o == e.out);
        // The same failure or the same "nothing found" for a near-identical call is the same
        // call's: the target is the same, the arguments differ only in detail.
        let near_same =
            matches!(e.out, Out::Error(_) | Out::Nothing) && e.tool == call.tool_id && near.includes(&e.sketch);
        if call.same_as(e) || (near_same && in_family && same_outcome) {
            if !in_family || !same_outcome {
                break;
            }
            near.add(e.sketch);
            s.out = Some(e.out);
            // After progress elsewhere, the same call answered the same way again is only weak
            // evidence: the change may not have reached it yet (an edit, then the test re-run).
            s.same += u32::from(!progress);
            s.rerun += 1;
            s.all += 1;
            gap = 0;
            aims.add(e.sketch);
            continue;
        }
        let varied = !progress
            && in_family
            && same_outcome
            && (e.out.is_informative() || matches!(e.out, Out::Error(_)))
            && (e.tool == call.tool_id || e.out == Out::Nothing)
            && aims.includes(&e.sketch);
        if varied {
            s.out = Some(e.out);
            s.all += 1;
            gap = 0;
            aims.add(e.sketch);
            continue;
        }
        // A call without arguments that failed never ran (its arguments were rejected): it is
        // neither progress nor a gap.
        if matches!(e.out, Out::Error(_)) && e.fold == fold(e.tool, None) {
            continue;
        }
        // A call answered exactly as the same call was answered before (a file read again, a
        // listing run again) learnt nothing: it is neither progress nor a gap.
        if look.entries.range(..i).any(|o| o.tool == e.tool && o.fold == e.fold && o.out == e.out) {
            continue;
        }
        gap += 1;
        if gap > MAX_GAP {
            break;
        }
        progress |= match family {
            // Something was found, or something changed.
            Family::Results => e.out.succeeded(),
            // Something changed (a read between two failing edits is not progress on them).
            Family::Errors => matches!(e.out, Out::Quiet(_) | Out::Neutral),
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::beyond::look::looking;
    use crate::tool_loop::beyond::sketch::Sketch;
    use crate::tool_loop::beyond::trail::{entry, err, res, Entry};

    fn of(es: &[Entry], args: u8, family: Family) -> (u32, u32) {
        let s = looking(es, args, |look| streak(look, family, 10));
        (s.same, s.all)
    }

    #[test]
    fn the_same_call_with_the_same_result_is_strong_evidence() {
        let es = [entry(1, 1, res(5)), entry(1, 1, res(5)), entry(1, 1, res(5))];
        assert_eq!(of(&es, 1, Family::Results), (3, 3));
    }

    #[test]
    fn a_re_run_after_edits_that_change_nothing_still_counts_as_weak_evidence() {
        let es = [entry(1, 1, res(5)), entry(1, 2, Out::Neutral), entry(1, 1, res(5)), entry(1, 3, Out::Neutral)];
        assert_eq!(of(&es, 1, Family::Results), (0, 2));
        let back_to_back = [entry(1, 1, res(5)), entry(1, 1, res(5))];
        assert_eq!(of(&back_to_back, 1, Family::Results), (2, 2));
    }

    #[test]
    fn a_near_identical_call_failing_the_same_way_is_strong_evidence() {
        let near = |args: u8| Entry { sketch: Sketch::test_aim(1), ..entry(1, args, err(4)) };
        assert_eq!(of(&[near(2), near(3)], 1, Family::Errors), (2, 2));
    }

    #[test]
    fn other_calls_with_the_same_informative_result_are_weak_evidence() {
        let es = [entry(1, 2, Out::Nothing), entry(1, 3, Out::Nothing)];
        assert_eq!(of(&es, 1, Family::Results), (0, 2));
    }

    #[test]
    fn quiet_and_empty_answers_of_other_calls_are_not_the_same_result() {
        let ok = Out::Quiet([7; 16]);
        assert_eq!(of(&[entry(1, 2, ok), entry(1, 3, ok), entry(1, 4, ok)], 1, Family::Results), (0, 0));
        let empty = [entry(1, 2, Out::Neutral), entry(1, 3, Out::Neutral)];
        assert_eq!(of(&empty, 1, Family::Results), (0, 0));
        assert_eq!(of(&[entry(1, 1, ok), entry(1, 1, ok)], 1, Family::Results), (2, 2), "the same call: compared");
    }

    #[test]
    fn progress_elsewhere_ends_the_weak_part_of_a_streak() {
        let es = [entry(1, 2, Out::Nothing), entry(1, 3, Out::Nothing), entry(1, 9, res(1)), entry(1, 4, Out::Nothing)];
        assert_eq!(of(&es, 1, Family::Results), (0, 1));
    }

    #[test]
    fn a_new_outcome_of_this_call_or_a_long_gap_ends_the_streak() {
        let es = [entry(1, 1, res(5)), entry(1, 1, res(6)), entry(1, 1, res(5))];
        assert_eq!(of(&es, 1, Family::Results), (1, 1));
        let mut es = vec![entry(1, 1, res(5))];
        es.extend((0..=MAX_GAP as u8).map(|i| entry(1, 20 + i, err(i))));
        es.push(entry(1, 1, res(5)));
        assert_eq!(of(&es, 1, Family::Results), (1, 1));
    }

    #[test]
    fn a_call_answered_as_it_was_before_is_neither_progress_nor_a_gap() {
        let read = entry(2, 9, res(1));
        let es = [read, entry(1, 1, res(5)), read, entry(1, 1, res(5)), read, read, read, read];
        assert_eq!(of(&es, 1, Family::Results), (2, 2), "the first read is new, the others are not");
        let new_reads = [entry(1, 1, res(5)), entry(2, 8, res(2)), entry(1, 1, res(5)), entry(2, 9, res(3))];
        assert_eq!(of(&new_reads, 1, Family::Results), (0, 2), "a new answer is progress");
    }

    #[test]
    fn a_call_without_arguments_that_failed_never_ran_and_is_not_a_gap() {
        let bare = |o: u8| Entry { fold: fold(2, None), ..entry(2, 0, err(o)) };
        let edit = |i: u8| entry(3, i, Out::Neutral);
        let es = [entry(1, 1, res(5)), edit(1), bare(8), edit(2), bare(9), edit(3)];
        assert_eq!(of(&es, 1, Family::Results), (0, 1), "the run before the bare calls still counts");
        let with_args = [entry(1, 1, res(5)), edit(1), entry(2, 7, err(8)), edit(2), entry(2, 8, err(9)), edit(3)];
        assert_eq!(of(&with_args, 1, Family::Results), (0, 0), "failed calls with arguments are gaps");
    }

    #[test]
    fn errors_are_their_own_family() {
        let es = [entry(1, 1, err(3)), entry(1, 2, err(3)), entry(1, 1, err(3))];
        assert_eq!(of(&es, 1, Family::Errors), (2, 3));
        assert_eq!(of(&es, 1, Family::Results), (0, 0), "an error of this call ends a result streak");
    }
}
