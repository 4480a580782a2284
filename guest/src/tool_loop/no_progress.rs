//! No-progress streak: the same call keeps returning the same outcome.
//!
//! Calls to other tools in between do not reset it: an agent that checks a deploy, reads a log,
//! and checks the deploy again is still stuck if the deploy check never changes.

use super::history::Record;
use crate::digest::Digest;

/// Walks newest to oldest, skipping other calls and records without an outcome; the first
/// remaining record fixes the outcome and each earlier equal one adds 1 until one differs.
/// Returns `(streak, latest outcome)`.
pub fn streak<'a>(scoped: impl DoubleEndedIterator<Item = &'a Record>, args: &Digest) -> (u32, Option<Digest>) {
    let mut latest: Option<Digest> = None;
    let mut count = 0;
    for r in scoped.rev() {
        let (true, Some(result)) = (&r.args == args, r.result) else { continue };
        match latest {
            None => latest = Some(result),
            Some(l) if l != result => break,
            Some(_) => {}
        }
        count += 1;
    }
    (count, latest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::history::test_record as rec;

    #[test]
    fn skips_other_calls_and_open_records() {
        let h = [rec(1, Some(9)), rec(2, Some(5)), rec(1, None), rec(1, Some(9)), rec(3, None)];
        assert_eq!(streak(h.iter(), &[1; 16]), (2, Some([9; 16])));
    }

    #[test]
    fn breaks_on_a_different_outcome() {
        let h = [rec(1, Some(9)), rec(1, Some(8)), rec(1, Some(9)), rec(1, Some(9))];
        assert_eq!(streak(h.iter(), &[1; 16]), (2, Some([9; 16])));
        assert_eq!(streak(h.iter(), &[7; 16]), (0, None));
    }
}
