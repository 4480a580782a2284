//! `same_error`: the same error again and again, across arguments and tools.
//!
//! An agent that calls a tool 29 times with slightly different input and gets the same failure
//! each time never repeats a call, so nothing keyed on arguments sees it. Errors are compared by
//! their class ([`Normalizer::error_class`](crate::config::volatile::Normalizer::error_class): numbers,
//! paths, line numbers, hex ids, timestamps, quoted text and the call's own arguments set aside);
//! rate limits, 5xx answers and timeouts are never counted. The count is the number of errors of
//! one class among the last [`LOOKBACK`] calls, for a class this tool has produced: the attempts
//! may be interleaved with reads, thinking or other tools.
//!
//! Settings: `loopguard.detectors.sameError` (`warnAt`, `blockAt`: the attempt, counting this
//! call, that warns and blocks). State: the session's [`Trail`](super::trail::Trail).

use std::collections::VecDeque;

use super::decision::{Detector, Finding};
use super::sketch::{Aims, Sketch};
use super::trail::{Entry, Out};
use crate::config::detection::Thresholds;
use crate::digest::{key_digest, tag, Digest};

/// Calls looked back over: enough for five attempts with a read or a thought between each two.
pub const LOOKBACK: usize = 12;

/// Checks a call of `tool`; `None` when this detector has nothing to say.
pub fn check(entries: &VecDeque<Entry>, tool: &str, tool_id: u64, aim: &Sketch, t: &Thresholds) -> Option<Finding> {
    // A block needs the same entities only; a warning also needs overlapping texts.
    let (n, _) = streak(entries, tool_id, aim, 0)?;
    let attempt = n + 1;
    if attempt >= t.block_at {
        let m = format!(
            "loopguard: {tool} has failed {n} times with the same error; blocked. Retrying with small \
             changes will fail again: fix the cause, try a different approach, or report the failure."
        );
        return Some(Finding::block(Detector::SameError, attempt, m));
    }
    let (n, class) = streak(entries, tool_id, aim, t.aim_overlap)?;
    let attempt = n + 1;
    (attempt >= t.warn_at).then(|| {
        let m = format!(
            "loopguard: the same error {n} times ({tool}). Do not retry with small variations; find \
             out why it fails first."
        );
        Finding::warn(Detector::SameError, attempt, key_digest(tag::WARN_KEY, &[b"same-error", &class]), m)
    })
}

/// The largest count of one error class among the last [`LOOKBACK`] calls, over the classes
/// `tool_id` produced, with that class. Calls of this tool aimed elsewhere (`aim`: another
/// entity, or a text overlapping by less than `overlap` percent) are not counted: trying each
/// payment method once is exploration, unless the error is word for word the newest one.
pub fn streak(entries: &VecDeque<Entry>, tool_id: u64, aim: &Sketch, overlap: u8) -> Option<(u32, Digest)> {
    let mut aims = Aims::new(aim, overlap);
    // The newest error of this tool, word for word: its repeats count whatever their aim.
    let exact = entries.iter().rev().take(LOOKBACK).find(|e| e.tool == tool_id && e.exact != 0).map(|e| e.exact);
    let kept: Vec<&Entry> = entries
        .iter()
        .rev()
        .take(LOOKBACK)
        .filter(|e| {
            let on_aim = e.tool != tool_id || aims.includes(&e.sketch) || Some(e.exact) == exact;
            if on_aim && e.tool == tool_id {
                aims.add(e.sketch);
            }
            on_aim
        })
        .collect();
    let recent = || kept.iter().copied();
    let mut best: Option<(u32, Digest)> = None;
    for e in recent().filter(|e| e.tool == tool_id) {
        let Out::Error(class) = e.out else { continue };
        if best.is_some_and(|(_, c)| c == class) {
            continue;
        }
        let n = recent().filter(|x| x.out == Out::Error(class)).count() as u32;
        if best.is_none_or(|(m, _)| n > m) {
            best = Some((n, class));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::trail::{entry, err, res};

    const T: Thresholds = Thresholds { warn_at: 3, block_at: 5, aim_overlap: 20 };

    fn of(es: &[Entry], tool: u8) -> Option<(bool, u32)> {
        check(&es.iter().copied().collect(), "book", tool as u64, &Sketch::default(), &T).map(|f| (f.critical, f.count))
    }

    #[test]
    fn the_same_error_with_different_arguments_and_a_thought_between() {
        // book(x) fails, think, book(y) fails the same way, think: the third booking is warned.
        let mut es =
            vec![entry(1, 1, err(7)), entry(2, 2, Out::Neutral), entry(1, 3, err(7)), entry(2, 4, Out::Neutral)];
        assert_eq!(of(&es, 1), Some((false, 3)));
        es.extend([entry(1, 5, err(7)), entry(1, 6, err(7))]);
        assert_eq!(of(&es, 1), Some((true, 5)));
    }

    #[test]
    fn the_same_error_across_tools_counts_for_a_tool_that_produced_it() {
        let es = [entry(1, 1, err(7)), entry(2, 2, err(7))];
        assert_eq!(of(&es, 2), Some((false, 3)));
        assert_eq!(of(&es, 3), None, "a tool that never failed so is not warned");
    }

    #[test]
    fn another_entity_is_exploration_unless_the_error_is_word_for_word_the_same() {
        let pay = |p: &str| {
            let text = format!(r#"{{"payment_id":"{p}"}}"#);
            Sketch::of(&crate::input::json_value_with(&text, "a", Default::default()).expect("JSON"))
        };
        let attempt = |p: &str, exact: u64| Entry { sketch: pay(p), exact, ..entry(1, 1, err(7)) };
        let es: VecDeque<Entry> = [attempt("card_1", 11), attempt("card_2", 12)].into_iter().collect();
        assert_eq!(
            streak(&es, 1, &pay("card_3"), 10).map(|s| s.0),
            Some(1),
            "each card tried once: only the newest counts"
        );
        let es: VecDeque<Entry> = [attempt("card_1", 11), attempt("card_2", 11)].into_iter().collect();
        assert_eq!(streak(&es, 1, &pay("card_1"), 10).map(|s| s.0), Some(2), "the same error word for word");
    }

    #[test]
    fn different_errors_old_errors_and_successes_are_not_a_loop() {
        assert_eq!(of(&[entry(1, 1, err(1)), entry(1, 2, err(2)), entry(1, 3, err(3))], 1), None);
        assert_eq!(of(&[entry(1, 1, err(1)), entry(1, 2, res(2))], 1), None);
        let mut old = vec![entry(1, 1, err(1)), entry(1, 2, err(1))];
        old.extend((0..LOOKBACK as u8).map(|i| entry(2, 10 + i, res(i))));
        assert_eq!(of(&old, 1), None, "errors older than the look-back window");
    }
}
