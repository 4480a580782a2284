//! `cycle`: a sequence of 2 to `maxPeriod` calls repeated as a unit, with the same outcomes each
//! lap.
//!
//! OpenClaw's ping-pong sees period 2 only, and only from its 10th call; gemini-cli looks for
//! periods up to 5. Real agents go round in longer circles (OpenClaw #108056: five commands,
//! repeated for hours; a period of 30). A lap is the same sequence of calls (tool and
//! arguments); no progress is shown by every call of a lap having the same outcome class as in
//! the lap before (results with volatile fields stripped, errors by class). The current call
//! must continue the cycle. The smallest period that repeats is the one reported.
//!
//! Settings: `loopguard.detectors.cycle` (`warnAt`, `blockAt`: the lap, counting the one this
//! call starts or continues; `maxPeriod`). State: the session's [`Trail`](super::trail::Trail),
//! which must hold `maxPeriod × blockAt` calls (checked when the config is read).

use std::collections::VecDeque;

use super::look::Look;
use super::trail::Entry;
use crate::config::detection::CycleSettings;
use crate::digest::{key_digest, tag, Digest};
use crate::tool_loop::decision::{Detector, Finding};

/// A cycle the current call continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    /// Calls per lap.
    pub period: u32,
    /// The lap the current call is in (the completed laps + 1).
    pub lap: u32,
}

/// Checks the call with `args`; `None` when this detector has nothing to say.
pub fn check(look: &Look<'_>, s: &CycleSettings) -> Option<Finding> {
    let args = &look.call.args;
    let c = find(look.entries, args, s.max_period, s.laps.warn_at)?;
    let (p, lap) = (c.period, c.lap);
    if lap >= s.laps.block_at {
        let m = format!(
            "loopguard: the same {p} calls have now run {} times with the same results; blocked. \
             The cycle is not making progress: stop it and change approach.",
            lap - 1
        );
        return Some(Finding::block(Detector::Cycle, lap, m));
    }
    let m = format!(
        "loopguard: you are repeating the same {p} calls ({} laps so far) with the same results. \
         Break the cycle.",
        lap - 1
    );
    Some(Finding::warn(Detector::Cycle, lap, key_digest(tag::WARN_KEY, &[b"cycle", &p.to_le_bytes(), args]), m))
}

/// The smallest period in 2..=`max_period` whose lap count reaches `min_lap` and that the call
/// with `args` continues.
pub fn find(entries: &VecDeque<Entry>, args: &Digest, max_period: u32, min_lap: u32) -> Option<Cycle> {
    let n = entries.len();
    (2..=max_period as usize).filter(|p| *p <= n).find_map(|p| {
        if entries[n - p].args != *args || entries.range(n - p..).all(|e| e.args == *args) {
            return None;
        }
        // The longest suffix in which every call equals the call one lap before it.
        let same = (p..n).rev().take_while(|&i| same_call(&entries[i], &entries[i - p])).count();
        let lap = ((same + p) / p) as u32 + 1;
        (lap >= min_lap).then_some(Cycle { period: p as u32, lap })
    })
}

/// The same call with the same outcome class (a call with no outcome yet matches nothing).
fn same_call(a: &Entry, b: &Entry) -> bool {
    a.args == b.args && a.out == b.out && !a.out.is_unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::detection::Levels;
    use crate::tool_loop::beyond::look::Call;
    use crate::tool_loop::beyond::sketch::Sketch;
    use crate::tool_loop::beyond::trail::{entry, res, Out};

    const S: CycleSettings = CycleSettings { laps: Levels { warn_at: 3, block_at: 5 }, max_period: 30 };

    /// `laps` laps of `period` different calls, each with its own result.
    fn laps(period: u8, laps: usize) -> VecDeque<Entry> {
        (0..laps).flat_map(|_| (0..period).map(|i| entry(1, i, res(i)))).collect()
    }

    fn of(es: &VecDeque<Entry>, args: u8) -> Option<(bool, u32)> {
        let call =
            Call { tool: "t", tool_id: 1, args: [args; 16], fold: args as u64, sketch: Sketch::default(), payload: 0 };
        check(&Look { entries: es, call, growth: 0 }, &S).map(|f| (f.critical, f.count))
    }

    #[test]
    fn a_cycle_of_five_commands_is_warned_on_the_third_lap_and_blocked_on_the_fifth() {
        assert_eq!(of(&laps(5, 1), 0), None);
        assert_eq!(of(&laps(5, 2), 0), Some((false, 3)));
        assert_eq!(of(&laps(5, 4), 0), Some((true, 5)));
    }

    #[test]
    fn a_cycle_of_thirty_calls_is_seen() {
        let es = laps(30, 4);
        assert_eq!(find(&es, &[0; 16], 30, 3), Some(Cycle { period: 30, lap: 5 }));
        assert_eq!(find(&es, &[0; 16], 29, 3), None, "longer than maxPeriod");
    }

    #[test]
    fn laps_whose_outcomes_change_are_progress() {
        let mut es = laps(3, 2);
        es[4].out = res(99); // the second lap's middle call learnt something new
        assert_eq!(of(&es, 0), None);
        // The call that would continue the cycle differs: no cycle.
        assert_eq!(of(&laps(3, 2), 2), None);
    }

    #[test]
    fn one_call_repeated_is_not_a_cycle_and_pending_outcomes_match_nothing() {
        let same: VecDeque<Entry> = (0..8).map(|_| entry(1, 1, res(1))).collect();
        assert_eq!(of(&same, 1), None, "period 1 is same_result's");
        let pending: VecDeque<Entry> = (0..8).map(|i| entry(1, i % 2, Out::Pending)).collect();
        assert_eq!(of(&pending, 0), None);
    }
}
