//! `same_error`: the same error again and again.
//!
//! An agent that calls a tool with slightly different input and gets the same failure each time
//! never repeats a call byte for byte, so nothing keyed on exact arguments sees it. Errors are
//! compared by their class ([`Normalizer::error_class`](crate::config::volatile::Normalizer::error_class):
//! numbers, paths, line numbers, hex ids, timestamps, quoted text and the call's own arguments
//! set aside); rate limits, 5xx answers and timeouts are never counted. The strength of the
//! evidence sets the action ([`super::streak`]):
//! - the same call (up to cosmetics) failing the same way: warns at `warnAt`, blocks at
//!   `blockAt`;
//! - other arguments aimed at the same thing failing the same way: warns at `variedWarnAt`,
//!   blocks only at `variedBlockAt` (trying each payment method once is exploration).
//!
//! Settings: `loopguard.detectors.sameError` ([`StreakSettings`]). State: the session's
//! [`Trail`](super::trail::Trail).

use super::look::Look;
use super::streak::{streak, verdict, Family};
use super::trail::Out;
use crate::config::detection::StreakSettings;
use crate::digest::{key_digest, tag};
use crate::tool_loop::decision::{Detector, Finding};

/// Checks the call in `look`; `None` when this detector has nothing to say.
pub fn check(look: &Look<'_>, s: &StreakSettings) -> Option<Finding> {
    let st = streak(look, Family::Errors, s.aim_overlap);
    let Some(Out::Error(class)) = st.out else { return None };
    let (block, attempt, evidence) = verdict(&st, s)?;
    let tool = look.call.tool;
    let n = attempt - 1;
    let how = evidence.wording();
    if block {
        let m = format!(
            "loopguard: {tool} has failed {n} times in a row with the same error {how}; blocked. It will \
             fail again: fix the cause, try a different approach, or report the failure."
        );
        return Some(Finding::block(Detector::SameError, attempt, m));
    }
    let m = format!(
        "loopguard: {tool} failed {n} times in a row with the same error {how}. Do not retry it as it is; \
         find out why it fails first."
    );
    Some(Finding::warn(Detector::SameError, attempt, key_digest(tag::WARN_KEY, &[b"same-error", &class]), m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::beyond::look::looking;
    use crate::tool_loop::beyond::streak::TEST_SETTINGS;
    use crate::tool_loop::beyond::trail::{entry, err, res, Entry};

    const S: StreakSettings = TEST_SETTINGS;

    fn of(es: &[Entry], args: u8) -> Option<(bool, u32)> {
        looking(es, args, |look| check(look, &S)).map(|f| (f.critical, f.count))
    }

    #[test]
    fn the_same_call_failing_the_same_way_is_blocked_on_the_fifth_attempt() {
        let es: Vec<Entry> = (0..4).map(|_| entry(1, 1, err(7))).collect();
        assert_eq!(of(&es[..2], 1), Some((false, 3)));
        assert_eq!(of(&es, 1), Some((true, 5)));
    }

    #[test]
    fn varied_attempts_with_the_same_error_warn_and_block_later() {
        let es: Vec<Entry> = (1..=7).map(|i| entry(1, i, err(7))).collect();
        assert_eq!(of(&es[..2], 20), None);
        assert_eq!(of(&es[..3], 20), Some((false, 4)));
        assert_eq!(of(&es, 20), Some((true, 8)));
    }

    #[test]
    fn different_errors_and_a_success_of_this_call_are_not_a_loop() {
        assert_eq!(of(&[entry(1, 1, err(1)), entry(1, 1, err(2)), entry(1, 1, err(3))], 1), None);
        assert_eq!(of(&[entry(1, 1, err(1)), entry(1, 1, err(1)), entry(1, 1, res(2))], 1), None);
    }
}
