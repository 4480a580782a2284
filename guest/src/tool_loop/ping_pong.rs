//! Ping-pong: the agent alternates between two calls (read a file, list a dir, read, list…).
//!
//! Each call alone looks harmless, so the generic repeat count never gets high; the pattern is
//! the alternation itself. Warning needs only the pattern; blocking also needs evidence that
//! neither side is making progress (each side always returned the same outcome).

use super::history::Record;
use crate::digest::{same, Digest};

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

/// `getPingPongStreak(history, current argsHash)`.
pub fn streak<'a>(scoped: impl DoubleEndedIterator<Item = &'a Record> + Clone, current: &Digest) -> PingPong {
    let mut newest = scoped.clone().rev();
    let Some(last) = newest.next() else { return NONE };
    let Some(other) = newest.find(|r| !same(&r.args, &last.args)) else { return NONE };
    let tail = scoped
        .clone()
        .rev()
        .enumerate()
        .take_while(|(k, r)| same(&r.args, if k % 2 == 0 { &last.args } else { &other.args }))
        .count();
    if tail < 2 || !same(current, &other.args) {
        return NONE;
    }
    let (mut a, mut b): (Option<Digest>, Option<Digest>) = (None, None);
    let mut evidence = true;
    for r in scoped.rev().take(tail) {
        let Some(result) = r.result else {
            evidence = false;
            break;
        };
        let side = if same(&r.args, &last.args) { &mut a } else { &mut b };
        match side {
            None => *side = Some(result),
            Some(s) if !same(s, &result) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::history::test_record as rec;

    #[test]
    fn count_is_tail_plus_one_when_current_continues_the_pattern() {
        // History A B A B (newest B); the current call A continues it: tail 4, count 5.
        let h = [rec(1, Some(8)), rec(2, Some(9)), rec(1, Some(8)), rec(2, Some(9))];
        let p = streak(h.iter(), &[1; 16]);
        assert_eq!(p, PingPong { count: 5, paired: Some([2; 16]), no_progress_evidence: true });
        // The current call B repeats the newest: not a continuation.
        assert_eq!(streak(h.iter(), &[2; 16]).count, 0);
    }

    #[test]
    fn tail_stops_where_the_alternation_breaks() {
        let h = [rec(3, Some(1)), rec(3, Some(1)), rec(1, Some(8)), rec(2, Some(9))];
        assert_eq!(streak(h.iter(), &[1; 16]).count, 3);
    }

    #[test]
    fn tail_below_two_is_nothing() {
        let h = [rec(1, Some(8))];
        assert_eq!(streak(h.iter(), &[2; 16]).count, 0);
        let h = [rec(1, Some(8)), rec(1, Some(8))];
        assert_eq!(streak(h.iter(), &[2; 16]).count, 0, "no other record");
    }

    #[test]
    fn evidence_needs_outcomes_on_every_tail_record_and_stable_sides() {
        let h = [rec(1, Some(8)), rec(2, None), rec(1, Some(8)), rec(2, Some(9))];
        assert!(!streak(h.iter(), &[1; 16]).no_progress_evidence);
        let h = [rec(1, Some(7)), rec(2, Some(9)), rec(1, Some(8)), rec(2, Some(9))];
        assert!(!streak(h.iter(), &[1; 16]).no_progress_evidence);
        // Records outside the tail do not matter.
        let h = [rec(1, None), rec(5, None), rec(1, Some(8)), rec(2, Some(9))];
        let p = streak(h.iter(), &[1; 16]);
        assert_eq!((p.count, p.no_progress_evidence), (3, true));
    }
}
