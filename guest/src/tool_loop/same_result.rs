//! `same_result`: different arguments, the same result (a search that keeps finding nothing, a
//! test re-run after edits that change nothing).
//!
//! OpenClaw's detectors key on identical arguments, so an agent that rephrases its query each
//! time is never caught. Here a streak is the run of this tool's newest results that are equal
//! after volatile fields are stripped, whatever the arguments; a "nothing found" answer from any
//! tool counts as the same result as any other (Search and Lookup both finding nothing). Other
//! tools' results neither break nor extend a streak of one tool (an edit between two test runs),
//! empty results and infrastructure errors are skipped, and an error of this tool ends it
//! ([`super::same_error`] counts errors).
//!
//! Settings: `loopguard.detectors.sameResult` (`warnAt`, `blockAt`: the attempt, counting this
//! call, that warns and blocks). State: the session's [`Trail`](super::trail::Trail).

use std::collections::VecDeque;

use super::decision::{Detector, Finding};
use super::sketch::{Aims, Sketch};
use super::trail::{Entry, Out};
use crate::config::detection::Thresholds;
use crate::digest::{key_digest, tag};

/// Checks a call of `tool` (its `tool_id`); `None` when this detector has nothing to say.
pub fn check(entries: &VecDeque<Entry>, tool: &str, tool_id: u64, aim: &Sketch, t: &Thresholds) -> Option<Finding> {
    // A block needs the same entities only; a warning also needs overlapping texts.
    let (n, nothing) = streak(entries, tool_id, aim, 0);
    let attempt = n + 1;
    let what = if nothing { "found nothing" } else { "returned the same result" };
    let key = key_digest(tag::WARN_KEY, &[b"same-result", &tool_id.to_le_bytes()]);
    if n > 0 && attempt >= t.block_at {
        let m = format!(
            "loopguard: {tool} {what} {n} times in a row; blocked. Calling it again, with these or other \
             arguments, does not help: use what you already have, try a different approach, or report \
             that it cannot be done."
        );
        return Some(Finding::block(Detector::SameResult, attempt, m));
    }
    let (n, _) = streak(entries, tool_id, aim, t.aim_overlap);
    let attempt = n + 1;
    (n > 0 && attempt >= t.warn_at).then(|| {
        let m = format!(
            "loopguard: {tool} {what} {n} times in a row. Another call, with these or other arguments, \
             is unlikely to help; change approach."
        );
        Finding::warn(Detector::SameResult, attempt, key, m)
    })
}

/// The number of newest results of `tool_id` equal to each other (and whether they are
/// "nothing found"), over the calls that aim where this one does or where a call of the streak
/// did (`aim`, [`Aims`], texts overlapping by `overlap` percent); calls aimed elsewhere neither
/// extend nor break the streak.
pub fn streak(entries: &VecDeque<Entry>, tool_id: u64, aim: &Sketch, overlap: u8) -> (u32, bool) {
    let mut class: Option<Out> = None;
    let mut n = 0;
    // Another tool found something since: progress for a streak of nothing found.
    let mut found_since = false;
    let mut aims = Aims::new(aim, overlap);
    for e in entries.iter().rev().filter(|e| !e.out.is_silent()) {
        // Before the streak starts, another tool's result is looked at whatever its aim (it may
        // be the progress that ends a streak of nothing found).
        let progress_elsewhere = class.is_none() && matches!(e.out, Out::Result(_)) && e.tool != tool_id;
        if !(aims.includes(&e.sketch) || progress_elsewhere) {
            continue;
        }
        let mine = e.tool == tool_id;
        match class {
            None if matches!(e.out, Out::Error(_)) && mine => return (0, false),
            None if e.out == Out::Nothing && found_since => return (0, false),
            None if mine || e.out == Out::Nothing => {
                class = Some(e.out);
                n = 1;
                aims.add(e.sketch);
            }
            None => found_since |= matches!(e.out, Out::Result(_)),
            Some(c) if e.out == c && (mine || c == Out::Nothing) => {
                n += 1;
                aims.add(e.sketch);
            }
            Some(_) if mine => break,
            // Another tool found something while this streak was of nothing found: progress.
            Some(Out::Nothing) if !matches!(e.out, Out::Error(_)) => break,
            Some(_) => {}
        }
    }
    (n, class == Some(Out::Nothing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::trail::{entry, err, res};

    const T: Thresholds = Thresholds { warn_at: 3, block_at: 5, aim_overlap: 20 };

    fn of(es: &[Entry], tool: u8) -> Option<(bool, u32)> {
        check(&es.iter().copied().collect(), "search", tool as u64, &Sketch::default(), &T)
            .map(|f| (f.critical, f.count))
    }

    #[test]
    fn a_search_that_keeps_finding_nothing_is_warned_on_the_third_try_and_blocked_on_the_fifth() {
        let mut es: Vec<Entry> = (1..=2).map(|i| entry(1, i, Out::Nothing)).collect();
        assert_eq!(of(&es, 1), Some((false, 3)));
        es.push(entry(2, 9, Out::Nothing)); // a lookup on another tool finding nothing as well
        es.push(entry(1, 4, Out::Nothing));
        assert_eq!(of(&es, 1), Some((true, 5)));
    }

    #[test]
    fn a_test_rerun_after_edits_that_change_nothing() {
        // run (fails the same way), edit, run, edit: the edits' results do not break the streak.
        let es = [entry(1, 1, res(5)), entry(2, 2, res(6)), entry(1, 1, res(5)), entry(2, 3, res(7))];
        assert_eq!(of(&es, 1), Some((false, 3)));
    }

    #[test]
    fn healthy_exploration_is_not_flagged() {
        // Different results each time; a repeat of two; a found page after nothing found.
        assert_eq!(of(&[entry(1, 1, res(1)), entry(1, 2, res(2)), entry(1, 3, res(3))], 1), None);
        assert_eq!(of(&[entry(1, 1, res(1)), entry(1, 2, res(1))], 1).map(|f| f.0), Some(false));
        assert_eq!(of(&[entry(1, 1, res(1)), entry(1, 1, res(1)), entry(1, 2, res(2))], 1), None);
        assert_eq!(of(&[entry(1, 1, Out::Nothing), entry(1, 2, Out::Nothing), entry(2, 3, res(4))], 1), None);
        // An error of this tool ends the streak; empty results say nothing.
        assert_eq!(of(&[entry(1, 1, res(1)), entry(1, 1, res(1)), entry(1, 1, err(1))], 1), None);
        assert_eq!(of(&[entry(1, 1, Out::Neutral), entry(1, 2, Out::Neutral), entry(1, 3, Out::Neutral)], 1), None);
    }
}
