//! The conversation burst budget and stage D, rule by rule (docs/spec/bot-loop.md §2.5, §0).
//! Steps read `(now_ms, "sender>receiver", event_id, expected)`, all in one conversation.

use super::{run, settings, Step, A, B, P};
use crate::bot_loop::*;

fn check(s: PairSettings, steps: &[Step]) {
    run(&mut BotGuard::new(std::num::NonZeroUsize::new(1_000).unwrap()), &s, steps);
}

/// A pair budget too large to trip, so only the burst budget decides.
fn burst_only(limit: Option<u32>) -> PairSettings {
    settings(1_000, 60_000, 10_000, limit)
}

#[rustfmt::skip]
#[test]
fn burst_budget_is_off_unless_configured() {
    let steps: Vec<Step> =
        (0..30).map(|i| (i, ["s1>r", "s2>r", "s3>r"][i as usize % 3], None, A)).collect();
    check(burst_only(None), &steps);
}

#[rustfmt::skip]
#[test]
fn trips_past_the_limit_with_two_active_senders() {
    check(burst_only(Some(3)), &[
        (0, "s1>r", None, A),
        (1, "s2>r", None, A),
        (2, "s1>r", None, A),         // 3 events: not more than the limit
        (3, "s2>r", None, B(10_003)), // 4 > 3, s1 and s2 have 2 each
    ]);
}

#[rustfmt::skip]
#[test]
fn two_bot_traffic_never_trips_it() {
    let steps: Vec<Step> = (0..20).map(|i| (i, "s1>r", None, A)).collect();
    check(burst_only(Some(3)), &steps);
}

#[rustfmt::skip]
#[test]
fn one_off_stray_posts_do_not_make_senders_active() {
    check(burst_only(Some(3)), &[
        (0, "s1>r", None, A),
        (1, "s1>r", None, A),
        (2, "s2>r", None, A),
        (3, "s3>r", None, A),
        (4, "s4>r", None, A), // 5 > 3 events but only s1 is active
        (5, "s1>r", None, A),
        (6, "s2>r", None, B(10_006)), // now s2 is active too
    ]);
}

#[rustfmt::skip]
#[test]
fn counted_per_receiving_bot() {
    check(burst_only(Some(3)), &[
        (0, "s1>r1", None, A),
        (1, "s2>r1", None, A),
        (2, "s1>r2", None, A),
        (3, "s2>r2", None, A),
        (4, "s1>r1", None, A),
        (5, "s2>r2", None, A), // 6 events in the conversation, 3 per receiver
        (6, "s2>r1", None, B(10_006)),
        (7, "s1>r2", None, B(10_007)),
    ]);
}

#[rustfmt::skip]
#[test]
fn future_dated_events_are_recorded_but_not_counted() {
    check(burst_only(Some(3)), &[
        (50_000, "s1>r", None, A),
        (50_001, "s2>r", None, A),
        (10, "s1>r", None, A),
        (11, "s2>r", None, A),
        (12, "s1>r", None, A), // 3 events at or before 12; the two future ones do not count
        (13, "s2>r", None, B(10_013)),
    ]);
}

#[rustfmt::skip]
#[test]
fn event_ids_are_deduplicated_and_a_replay_honours_the_burst_cooldown() {
    check(burst_only(Some(3)), &[
        (0, "s1>r", Some("e1"), A),
        (1, "s2>r", Some("e2"), A),
        (2, "s1>r", Some("e3"), A),
        (3, "s2>r", Some(" e2 "), A), // replay: not recorded, no trip
        (4, "s2>r", Some("e4"), B(10_004)),
        (5, "s1>r", Some("e1"), B(10_004)), // a pair and burst replay still sees the cooldown
    ]);
}

#[rustfmt::skip]
#[test]
fn events_stay_through_the_cooldown_and_re_trip_when_it_ends() {
    check(burst_only(Some(3)), &[
        (0, "s1>r", None, A),
        (1, "s2>r", None, A),
        (2, "s1>r", None, A),
        (3, "s2>r", None, B(10_003)),
        (5_000, "s1>r", None, B(10_003)), // recorded during the cooldown; no extension
        (10_003, "s2>r", None, B(20_003)), // cooldown over (exclusive end): the storm re-trips
    ]);
}

#[rustfmt::skip]
#[test]
fn a_conversation_quiet_for_ten_minutes_is_clean() {
    check(burst_only(Some(3)), &[
        (0, "s1>r", None, A),
        (1, "s2>r", None, A),
        (2, "s1>r", None, A),
        (3, "s2>r", None, B(10_003)),
        (600_003, "s1>r", None, A), // everything at or before 600003 − 600000 is gone
        (600_004, "s2>r", None, A),
    ]);
}

#[rustfmt::skip]
#[test]
fn burst_records_before_the_pair_cooldown_check() {
    // Pair budget 2, burst limit 5: s1's fourth event is dropped by the pair cooldown, yet the
    // burst bucket records it, and that sixth event is what trips the burst budget at 5.
    check(settings(2, 60_000, 10_000, Some(5)), &[
        (0, "s1>r", None, A),
        (1, "s1>r", None, A),
        (2, "s1>r", None, P(10_002)),
        (3, "s1>r", None, P(10_002)), // in pair cooldown, still recorded by the burst budget
        (4, "s2>r", None, A),         // 5 events, only s1 active
        (5, "s2>r", None, B(10_005)), // 6 > 5 (needs the event at 3), s1 and s2 active
    ]);
}

#[rustfmt::skip]
#[test]
fn stage_d_reports_the_later_deadline() {
    check(settings(1, 60_000, 10_000, Some(3)), &[
        (0, "s1>r", None, A),
        (1, "s1>r", None, P(10_001)),
        (2, "s2>r", None, A),
        (3, "s2>r", None, P(10_003)), // equal deadlines → pair
        // Pair s1-r cools until 10001, the burst until 10003: the later one, burst.
        (4, "s1>r", None, B(10_003)),
        (5, "s3>r", None, B(10_003)), // a fresh pair: only the burst suppresses
        // s3-r trips at 6 (until 10006), later than the burst: pair.
        (6, "s3>r", None, P(10_006)),
    ]);
}
