//! `ping_pong`: the agent alternates between two calls (read a file, list a dir, read, list…).
//!
//! Each call alone looks harmless, so the generic repeat count never gets high; the pattern is
//! the alternation itself. Warning needs only the pattern; blocking also needs evidence that
//! neither side is making progress (each side always returned the same outcome).
//!
//! Settings: `warningThreshold`, `criticalThreshold`, `detectors.pingPong`. State: the session's
//! history.

use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::digest::{key_digest, tag, Digest};
use crate::tool_loop::decision::{Detector, Finding, Scope};
use crate::tool_loop::history::Record;

/// The ping-pong count and its facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingPong {
    /// `tail + 1` (the current call included), or 0 when there is no alternation to continue.
    pub count: u32,
    /// The other side's `argsHash` (the newest record's).
    pub paired: Option<Digest>,
    /// Every tail record has an outcome and each side always had the same one.
    pub no_progress_evidence: bool,
}

const NONE: PingPong = PingPong { count: 0, paired: None, no_progress_evidence: false };

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    if !s.ping_pong {
        return None;
    }
    let pp = streak(&scope.records, &scope.args);
    let values = [("n", pp.count.to_string())];
    let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    if pp.count >= s.critical && pp.no_progress_evidence {
        return Some(Finding::block(Detector::PingPong, pp.count, render(s.texts.ping_pong_critical, &values)));
    }
    if pp.count >= s.warning {
        let key = warning_key(&scope.args, pp.paired);
        return Some(Finding::warn(Detector::PingPong, pp.count, key, render(s.texts.ping_pong_warning, &values)));
    }
    None
}

/// `getPingPongStreak(history, current argsHash)` over the scoped records (oldest first).
pub fn streak(records: &[&Record], current: &Digest) -> PingPong {
    let newest = records.iter().rev();
    let Some(last) = newest.clone().next() else { return NONE };
    let Some(other) = newest.clone().find(|r| r.args != last.args) else { return NONE };
    let side = |k: usize| if k.is_multiple_of(2) { &last.args } else { &other.args };
    let tail = newest.clone().enumerate().take_while(|(k, r)| r.args == *side(*k)).count();
    if tail < 2 || *current != other.args {
        return NONE;
    }
    let (mut a, mut b): (Option<Digest>, Option<Digest>) = (None, None);
    let mut evidence = true;
    for r in newest.take(tail) {
        let Some(result) = r.result else {
            evidence = false;
            break;
        };
        let seen = if r.args == last.args { &mut a } else { &mut b };
        match seen {
            None => *seen = Some(result),
            Some(s) if *s != result => {
                evidence = false;
                break;
            }
            Some(_) => {}
        }
    }
    PingPong {
        count: tail as u32 + 1,
        paired: Some(last.args),
        no_progress_evidence: evidence && a.is_some() && b.is_some(),
    }
}

/// `pingpong:<sorted(cur, paired) joined with "|">`: the same key from either side.
fn warning_key(args: &Digest, paired: Option<Digest>) -> Digest {
    match paired {
        Some(p) => {
            let (lo, hi) = if p < *args { (p, *args) } else { (*args, p) };
            key_digest(tag::WARN_KEY, &[b"pingpong", &lo, &hi])
        }
        None => key_digest(tag::WARN_KEY, &[b"pingpong-single", args]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::history::test_record as rec;

    fn of(h: &[Record], current: u8) -> PingPong {
        streak(&h.iter().collect::<Vec<_>>(), &[current; 16])
    }

    #[test]
    fn count_is_tail_plus_one_when_current_continues_the_pattern() {
        // History A B A B (newest B); the current call A continues it: tail 4, count 5.
        let h = [rec(1, Some(8)), rec(2, Some(9)), rec(1, Some(8)), rec(2, Some(9))];
        assert_eq!(of(&h, 1), PingPong { count: 5, paired: Some([2; 16]), no_progress_evidence: true });
        // The current call B repeats the newest: not a continuation.
        assert_eq!(of(&h, 2).count, 0);
    }

    #[test]
    fn tail_stops_where_the_alternation_breaks() {
        let h = [rec(3, Some(1)), rec(3, Some(1)), rec(1, Some(8)), rec(2, Some(9))];
        assert_eq!(of(&h, 1).count, 3);
    }

    /// NOTES §2.4, case `ping-pong-not-sticky`: the blocked call's veto record becomes the
    /// newest record. Repeating the blocked call no longer continues the alternation; continuing
    /// the alternation has no outcome on the veto record, so no evidence to block on.
    #[test]
    fn a_veto_record_breaks_a_ping_pong_block() {
        use crate::tool_loop::history::test_veto as veto;
        let h = [rec(1, Some(8)), rec(2, Some(9)), rec(1, Some(8)), rec(2, Some(9)), veto(1)];
        assert_eq!(of(&h, 1).count, 0, "the repeat of the blocked call");
        let on = of(&h, 2);
        assert_eq!((on.count, on.no_progress_evidence), (6, false), "the alternation goes on, warnings only");
    }

    #[test]
    fn tail_below_two_is_nothing() {
        assert_eq!(of(&[rec(1, Some(8))], 2).count, 0);
        assert_eq!(of(&[rec(1, Some(8)), rec(1, Some(8))], 2).count, 0, "no other record");
    }

    #[test]
    fn evidence_needs_outcomes_on_every_tail_record_and_stable_sides() {
        assert!(!of(&[rec(1, Some(8)), rec(2, None), rec(1, Some(8)), rec(2, Some(9))], 1).no_progress_evidence);
        assert!(!of(&[rec(1, Some(7)), rec(2, Some(9)), rec(1, Some(8)), rec(2, Some(9))], 1).no_progress_evidence);
        // Records outside the tail do not matter.
        let p = of(&[rec(1, None), rec(5, None), rec(1, Some(8)), rec(2, Some(9))], 1);
        assert_eq!((p.count, p.no_progress_evidence), (3, true));
    }
}
