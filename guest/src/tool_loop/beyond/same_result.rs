//! `same_result`: a call that keeps coming back with the same result (a poll that never
//! changes, a test re-run after edits that change nothing, a search that keeps finding nothing).
//!
//! OpenClaw's detectors key on identical arguments and exact digests, and act at the 10th and
//! 20th call. Here results are compared after volatile fields are stripped
//! ([`crate::config::volatile`]), and the strength of the evidence sets the action
//! ([`super::streak`]):
//! - the same call (up to cosmetics) with the same result: warns at `warnAt`, blocks at
//!   `blockAt`;
//! - other arguments aimed at the same thing with the same informative result (or nothing found,
//!   from any tool): only weak evidence, since an agent exploring gets "not found" for good
//!   reasons; warns at `variedWarnAt`, blocks only at `variedBlockAt`.
//!
//! A result that carries no information (`OK`, `0`, an exit status around an empty output) is
//! compared only with the same call's: different commands that each succeed silently are
//! progress, not a loop.
//!
//! Settings: `loopguard.detectors.sameResult` ([`StreakSettings`]). State: the session's
//! [`Trail`](super::trail::Trail).

use super::look::Look;
use super::streak::{streak, verdict, Family};
use super::trail::Out;
use crate::config::detection::StreakSettings;
use crate::digest::{key_digest, tag};
use crate::tool_loop::decision::{Detector, Finding};

/// Checks the call in `look`; `None` when this detector has nothing to say.
pub fn check(look: &Look<'_>, s: &StreakSettings) -> Option<Finding> {
    let st = streak(look, Family::Results, s.aim_overlap);
    let (block, attempt, evidence) = verdict(&st, s)?;
    let tool = look.call.tool;
    let what = if st.out == Some(Out::Nothing) { "found nothing" } else { "returned the same result" };
    let n = attempt - 1;
    let how = evidence.wording();
    if block {
        let m = format!(
            "loopguard: {tool} {what} {n} times in a row {how}; blocked. Calling it again will not change \
             the answer: use what you already have, try a different approach, or report that it cannot be done."
        );
        return Some(Finding::block(Detector::SameResult, attempt, m));
    }
    let m = format!(
        "loopguard: {tool} {what} {n} times in a row {how}. Another try is unlikely to change it; change approach."
    );
    let key = key_digest(tag::WARN_KEY, &[b"same-result", &look.call.tool_id.to_le_bytes()]);
    Some(Finding::warn(Detector::SameResult, attempt, key, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::beyond::look::looking;
    use crate::tool_loop::beyond::streak::TEST_SETTINGS;
    use crate::tool_loop::beyond::trail::{entry, res, Entry};

    const S: StreakSettings = TEST_SETTINGS;

    fn of(es: &[Entry], args: u8) -> Option<(bool, u32)> {
        looking(es, args, |look| check(look, &S)).map(|f| (f.critical, f.count))
    }

    #[test]
    fn an_unchanged_poll_is_warned_on_the_third_call_and_blocked_on_the_fifth() {
        let es: Vec<Entry> = (0..4).map(|_| entry(1, 1, res(5))).collect();
        assert_eq!(of(&es[..1], 1), None);
        assert_eq!(of(&es[..2], 1), Some((false, 3)));
        assert_eq!(of(&es, 1), Some((true, 5)));
    }

    #[test]
    fn different_searches_that_find_nothing_warn_late_and_block_much_later() {
        let es: Vec<Entry> = (1..=7).map(|i| entry(1, i, Out::Nothing)).collect();
        assert_eq!(of(&es[..2], 20), None);
        assert_eq!(of(&es[..3], 20), Some((false, 4)));
        assert_eq!(of(&es[..6], 20), Some((false, 7)), "seven greps for different names: not denied");
        assert_eq!(of(&es, 20), Some((true, 8)), "the variedBlockAt of these settings");
    }

    #[test]
    fn silent_successes_of_different_commands_are_progress() {
        let ok = Out::Quiet([1; 16]);
        let es: Vec<Entry> = (1..=12).map(|i| entry(1, i, if i % 2 == 0 { ok } else { Out::Neutral })).collect();
        assert_eq!(of(&es, 20), None, "a dozen scaffolding commands, eight checks printing OK");
    }
}
