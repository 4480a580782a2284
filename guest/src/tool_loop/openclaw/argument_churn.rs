//! `argument_churn` (openclaw 2026.9, tests/oracle/NOTES.md §2.5): one tool cycling through a
//! few argument variants that all fail the same way.
//!
//! A model that keeps editing three files that do not exist, or writing the same unchanged
//! content to a handful of paths, never repeats one call often enough for the generic repeat
//! count, yet makes no progress. The detector walks the newest contiguous run of the tool's
//! no-progress outcomes (errors and unchanged writes; open calls and veto records skipped,
//! another tool or a progressing outcome ends it): if it holds at least two variants, each seen
//! at least three times, all with one outcome, and the current call is one of them, it warns with
//! the run's length. It never blocks, and runs after the generic critical and before the generic
//! warning, so it shows only while no single variant has reached the critical threshold.
//!
//! Settings: `warningThreshold` (10), [`crate::config::profile::ToolRules::argument_churn`].
//! Warning key `argument-churn:<tool>`. State: the session's history.

use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::digest::{key_digest, tag, Digest};
use crate::tool_loop::decision::{Detector, Finding, Scope};
use crate::tool_loop::history::Record;

/// `MIN_STABLE_CALLS_PER_VARIANT`.
pub const MIN_CALLS_PER_VARIANT: u32 = 3;

/// The churn count and its variants (both 0 when there is no churn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Churn {
    /// No-progress outcomes in the run.
    pub count: u32,
    /// Argument variants seen at least [`MIN_CALLS_PER_VARIANT`] times.
    pub variants: u32,
}

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    if !s.rules.argument_churn {
        return None;
    }
    let churn = streak(&scope.records, scope.tool_id, &scope.args);
    (churn.count >= s.warning).then(|| {
        let values = [("tool", scope.tool), ("variants", &churn.variants.to_string()), ("n", &churn.count.to_string())];
        let key = key_digest(tag::WARN_KEY, &[b"argument-churn", scope.tool.as_bytes()]);
        Finding::warn(Detector::ArgumentChurn, churn.count, key, render(s.texts.argument_churn_warning, &values))
    })
}

/// `getArgumentChurnNoProgressStreak(history, tool, current argsHash)` over the scoped records
/// (oldest first).
pub fn streak(records: &[&Record], tool: u64, current: &Digest) -> Churn {
    // argsHash -> (its outcome, how often); at most one entry per record of the history.
    let mut outcomes: Vec<(Digest, Digest, u32)> = Vec::new();
    for r in records.iter().rev() {
        if r.tool != tool {
            break;
        }
        let Some(result) = r.result else { continue };
        if !r.no_progress {
            break;
        }
        match outcomes.iter_mut().find(|(args, _, _)| *args == r.args) {
            Some((_, seen, _)) if *seen != result => break,
            Some((_, _, n)) => *n += 1,
            None => outcomes.push((r.args, result, 1)),
        }
    }
    let count: u32 = outcomes.iter().map(|(_, _, n)| n).sum();
    let stable: Vec<&(Digest, Digest, u32)> = outcomes.iter().filter(|(_, _, n)| *n >= MIN_CALLS_PER_VARIANT).collect();
    let only_stable = stable.iter().map(|(_, _, n)| n).sum::<u32>() == count;
    let shared = stable.windows(2).all(|w| w[0].1 == w[1].1);
    let current_stable = outcomes.iter().any(|(args, _, n)| args == current && *n >= MIN_CALLS_PER_VARIANT);
    if stable.len() > 1 && only_stable && shared && current_stable {
        Churn { count, variants: stable.len() as u32 }
    } else {
        Churn { count: 0, variants: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::history::{test_record, test_veto};

    /// A no-progress outcome (an error or an unchanged write) of `args`.
    fn stuck(args: u8, result: u8) -> Record {
        Record { no_progress: true, ..test_record(args, Some(result)) }
    }

    fn of(h: &[Record], current: u8) -> Churn {
        streak(&h.iter().collect::<Vec<_>>(), 0, &[current; 16])
    }

    /// NOTES §2.5, cases `argument-churn-write` (A,B,C cycled) and `argument-churn-errors`
    /// (A,A,A,B,B,B,…): every variant at least three times, one outcome.
    #[test]
    fn variants_cycling_with_one_stable_outcome_churn() {
        let cycled: Vec<Record> = (0..12).map(|i| stuck(1 + i % 3, 9)).collect();
        assert_eq!(of(&cycled, 1), Churn { count: 12, variants: 3 });
        let blocks: Vec<Record> = (0..12).map(|i| stuck(1 + (i / 3) % 2, 9)).collect();
        assert_eq!(of(&blocks, 2), Churn { count: 12, variants: 2 });
    }

    #[test]
    fn churn_needs_stable_shared_no_progress_outcomes_of_the_current_variant() {
        let base: Vec<Record> = (0..9).map(|i| stuck(1 + i % 3, 9)).collect();
        assert_eq!(of(&base, 7).count, 0, "the current call is not one of the variants");
        let mut two_outcomes = base.clone();
        two_outcomes.extend([stuck(4, 8), stuck(4, 8), stuck(4, 8)]);
        assert_eq!(of(&two_outcomes, 1).count, 0, "variants with different outcomes");
        let mut thin = base.clone();
        thin.push(stuck(5, 9));
        assert_eq!(of(&thin, 1).count, 0, "a variant seen fewer than three times");
        assert_eq!(of(&[stuck(1, 9), stuck(1, 9), stuck(1, 9)], 1).count, 0, "one variant is no churn");
    }

    #[test]
    fn the_run_ends_at_another_tool_or_a_progressing_outcome_and_skips_open_and_veto_records() {
        let mut h: Vec<Record> = (0..6).map(|i| stuck(1 + i % 2, 9)).collect();
        h.extend([test_record(1, None), test_veto(2)]);
        assert_eq!(of(&h, 1), Churn { count: 6, variants: 2 });
        let mut progressed = vec![test_record(1, Some(9))];
        progressed.extend((0..6).map(|i| stuck(1 + i % 2, 9)));
        assert_eq!(of(&progressed, 1).count, 6, "the older progressing outcome ends the run");
        let other = Record { tool: 1, ..stuck(1, 9) };
        let mut cut: Vec<Record> = (0..6).map(|i| stuck(1 + i % 2, 9)).collect();
        cut.push(other);
        assert_eq!(of(&cut, 1).count, 0, "another tool is the newest record");
    }
}
