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
//! The same call with a payload (its longest string argument at least [`RESENT_PAYLOAD`]
//! characters: an edit, a file's content) sent back to back is warned at `warnAt` whatever it
//! returns: a change made again and again (the same insertion prepended once more each time)
//! answers differently each time, yet nothing moves on. It is blocked at `rerunBlockAt`, as late
//! as a test re-run after edits that change nothing: the call is the same byte for byte with
//! nothing between, so the evidence is the agent's own repetition, not two answers that merely
//! look alike (real runs re-apply one edit twenty or thirty times until their budget ends). A
//! poll or a scroll names its target in a few words and is not counted.
//!
//! Settings: `loopguard.detectors.sameResult` ([`StreakSettings`]). State: the session's
//! [`Trail`](super::trail::Trail).

use super::look::Look;
use super::streak::{streak, verdict, Family};
use super::trail::Out;
use crate::config::detection::StreakSettings;
use crate::digest::{key_digest, tag};
use crate::tool_loop::decision::{Detector, Finding};

/// The fewest characters in a call's longest string argument for it to count as sent again
/// back to back (`resent`).
pub const RESENT_PAYLOAD: usize = 100;

/// Checks the call in `look`; `None` when this detector has nothing to say.
pub fn check(look: &Look<'_>, s: &StreakSettings) -> Option<Finding> {
    let st = streak(look, Family::Results, s.aim_overlap);
    let Some((block, attempt, evidence)) = verdict(&st, s) else { return resent(look, s) };
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

/// The same call with a payload sent back to back (byte for byte, nothing between), whatever
/// it returned: a warning at `warnAt`, a block at `rerunBlockAt`.
fn resent(look: &Look<'_>, s: &StreakSettings) -> Option<Finding> {
    let call = &look.call;
    if call.payload < RESENT_PAYLOAD {
        return None;
    }
    let n = look.entries.iter().rev().take_while(|e| e.tool == call.tool_id && e.args == call.args).count() as u32;
    if n == 0 || n + 1 < s.same.warn_at {
        return None;
    }
    let tool = call.tool;
    if n + 1 >= s.rerun.block_at {
        let m = format!(
            "loopguard: {tool} was sent {n} times in a row with these same arguments; blocked. Sending it \
             again repeats the same change: check the last result and change the call."
        );
        return Some(Finding::block(Detector::SameResult, n + 1, m));
    }
    let m = format!(
        "loopguard: {tool} was sent {n} times in a row with these same arguments. Sending it again will \
         repeat the change or the answer: check the last result first."
    );
    let key = key_digest(tag::WARN_KEY, &[b"same-result-resent", &call.tool_id.to_le_bytes()]);
    Some(Finding::warn(Detector::SameResult, n + 1, key, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_loop::beyond::look::{looking, Call};
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
    fn a_payload_sent_back_to_back_is_warned_whatever_it_returns_and_blocked_at_the_rerun_level() {
        let es: Vec<Entry> = (0..8).map(|i| entry(1, 1, res(i))).collect();
        let sent = |n: usize, payload: usize| {
            looking(&es[..n], 1, |look| {
                let look = Look { call: Call { payload, ..look.call }, ..*look };
                check(&look, &S).map(|f| (f.critical, f.count))
            })
        };
        assert_eq!(sent(1, RESENT_PAYLOAD), None);
        assert_eq!(sent(2, RESENT_PAYLOAD), Some((false, 3)));
        assert_eq!(sent(6, RESENT_PAYLOAD), Some((false, 7)), "below rerunBlockAt (8): a warning");
        assert_eq!(sent(7, RESENT_PAYLOAD), Some((true, 8)), "the 8th send in a row: blocked");
        assert_eq!(sent(8, RESENT_PAYLOAD), Some((true, 9)), "and every one after it");
        assert_eq!(sent(8, RESENT_PAYLOAD - 1), None, "a scroll or a poll names its target in a few words");
        let between = [entry(1, 1, res(1)), entry(1, 2, res(2)), entry(1, 1, res(3))];
        let look_between = looking(&between, 1, |look| {
            check(&Look { call: Call { payload: RESENT_PAYLOAD, ..look.call }, ..*look }, &S).is_some()
        });
        assert!(!look_between, "another call between: not back to back");
    }

    #[test]
    fn silent_successes_of_different_commands_are_progress() {
        let ok = Out::Quiet([1; 16]);
        let es: Vec<Entry> = (1..=12).map(|i| entry(1, i, if i % 2 == 0 { ok } else { Out::Neutral })).collect();
        assert_eq!(of(&es, 20), None, "a dozen scaffolding commands, eight checks printing OK");
    }
}
