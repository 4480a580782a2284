//! The pair budget, rule by rule (docs/spec/bot-loop.md §2.4). Each step reads
//! `(now_ms, "sender>receiver", event_id, expected)`; expected values come from the spec text.

use super::*;

/// What the spec says the guard answers.
#[derive(Debug, Clone, Copy)]
pub(super) enum Want {
    /// Not suppressed.
    A,
    /// Suppressed by the pair budget until this deadline.
    P(i64),
    /// Suppressed by the burst budget until this deadline.
    B(i64),
}
pub(super) use Want::{A, B, P};

pub(super) type Step = (i64, &'static str, Option<&'static str>, Want);

pub(super) fn settings(max: u64, window_ms: i64, cooldown_ms: i64, burst: Option<u32>) -> PairSettings {
    PairSettings {
        enabled: true,
        max_events_per_window: std::num::NonZeroU64::new(max).unwrap(),
        window: Millis(window_ms),
        cooldown: Millis(cooldown_ms),
        max_conversation_bot_events: burst.and_then(std::num::NonZeroU32::new),
    }
}

/// Feeds `steps` (all in scope `acct`, conversation `c1`) and checks every decision.
pub(super) fn run(guard: &mut BotGuard, s: &PairSettings, steps: &[Step]) {
    for (i, &(now_ms, who, event_id, want)) in steps.iter().enumerate() {
        let (sender, receiver) = who.split_once('>').unwrap_or((who, ""));
        let facts = BotFacts { scope: "acct", conversation: "c1", sender, receiver, now: Millis(now_ms), event_id };
        let want = match want {
            A => BotDecision::Allow,
            P(until) => BotDecision::Suppress { cooldown_until_ms: until, budget: Budget::Pair },
            B(until) => BotDecision::Suppress { cooldown_until_ms: until, budget: Budget::Burst },
        };
        assert_eq!(guard.record_and_check(&facts, s), want, "step {i}: {now_ms} {who} {event_id:?}");
    }
}

fn check(s: PairSettings, steps: &[Step]) -> BotGuard {
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(1_000).unwrap());
    run(&mut guard, &s, steps);
    guard
}

#[rustfmt::skip]
#[test]
fn max_events_are_allowed_and_the_tripping_event_is_suppressed() {
    check(settings(3, 60_000, 30_000, None), &[
        (0, "a>b", None, A),
        (1, "a>b", None, A),
        (2, "a>b", None, A),
        (3, "a>b", None, P(30_003)),
    ]);
}

#[rustfmt::skip]
#[test]
fn the_pair_is_unordered_and_suppressed_in_both_directions() {
    check(settings(2, 60_000, 30_000, None), &[
        (0, "a>b", None, A),
        (1, "b>a", None, A),
        (2, "a>b", None, P(30_002)),
        (3, "b>a", None, P(30_002)),
        (4, "a>c", None, A), // another pair is untouched
    ]);
}

#[rustfmt::skip]
#[test]
fn sliding_window_keeps_an_event_while_ts_is_after_now_minus_window() {
    check(settings(2, 1_000, 5_000, None), &[
        (0, "a>b", None, A),
        (500, "a>b", None, A),
        (999, "a>b", None, P(5_999)), // the event at 0 is still inside (0 > 999 − 1000)
    ]);
    check(settings(2, 1_000, 5_000, None), &[
        (0, "a>b", None, A),
        (500, "a>b", None, A),
        (1_000, "a>b", None, A), // 0 ≤ 1000 − 1000: expired, so only two events count
        (1_001, "a>b", None, P(6_001)),
    ]);
}

#[rustfmt::skip]
#[test]
fn the_window_is_wiped_at_the_trip_and_refills_after_cooldown() {
    check(settings(2, 60_000, 10_000, None), &[
        (0, "a>b", None, A),
        (1, "a>b", None, A),
        (2, "a>b", None, P(10_002)),
        // Cooldown over: everything up to the trip was deleted, so a full budget of 2 again.
        (10_002, "a>b", None, A),
        (10_003, "a>b", None, A),
        (10_004, "a>b", None, P(20_004)),
    ]);
}

#[rustfmt::skip]
#[test]
fn cooldown_does_not_extend_and_events_during_it_are_not_counted() {
    check(settings(1, 60_000, 10_000, None), &[
        (0, "a>b", None, A),
        (1, "a>b", None, P(10_001)),
        (5_000, "a>b", None, P(10_001)),
        (10_000, "b>a", None, P(10_001)),
        // Nothing from the cooldown was counted: the first event after it is allowed.
        (10_001, "a>b", None, A),
    ]);
}

#[rustfmt::skip]
#[test]
fn cooldown_end_is_exclusive_and_the_event_there_is_counted() {
    check(settings(1, 60_000, 10_000, None), &[
        (0, "a>b", None, A),
        (1, "a>b", None, P(10_001)),
        (10_001, "a>b", None, A),       // now == cooldownUntil: allowed and counted
        (10_002, "a>b", None, P(20_002)), // so the next one is the second in the window
    ]);
}

#[rustfmt::skip]
#[test]
fn late_events_before_the_cooldown_start_do_not_inherit_it() {
    check(settings(1, 60_000, 10_000, None), &[
        (5_000, "a>b", None, A),
        (5_001, "a>b", None, P(15_001)),
        (4_000, "a>b", None, A),       // older than the trip: not in cooldown; counted alone
        (5_500, "a>b", None, P(15_001)),
    ]);
}

#[rustfmt::skip]
#[test]
fn future_dated_events_do_not_count_and_survive_the_trip() {
    check(settings(1, 60_000, 10_000, None), &[
        (5_000, "a>b", None, A),
        (1_000, "a>b", None, A), // the event at 5000 is in the future: count is 1
        (1_001, "a>b", None, P(11_001)),
        // At 11001 the trip's wipe kept the future-dated 5000 (> 11001 − 60000), so it counts.
        (11_001, "a>b", None, P(21_001)),
    ]);
}

#[rustfmt::skip]
#[test]
fn event_id_replays_take_no_slot() {
    check(settings(2, 60_000, 10_000, None), &[
        (0, "a>b", Some("e1"), A),
        (1, "b>a", Some("e1"), A),   // a replay of e1: no second slot
        (2, "a>b", Some(" e1\u{FEFF}\n"), A), // trimmed with JS semantics: still e1
        (3, "a>b", Some("e2"), A),
        (4, "a>b", Some("e3"), P(10_004)),
    ]);
}

#[rustfmt::skip]
#[test]
fn nel_is_not_trimmed_so_it_makes_a_new_id() {
    check(settings(1, 60_000, 10_000, None), &[
        (0, "a>b", Some("e1"), A),
        (1, "a>b", Some("e1\u{85}"), P(10_001)),
    ]);
}

#[rustfmt::skip]
#[test]
fn blank_event_ids_are_no_ids_and_always_count() {
    check(settings(2, 60_000, 10_000, None), &[
        (0, "a>b", Some(" "), A),
        (1, "a>b", Some(""), A),
        (2, "a>b", Some("\t"), P(10_002)),
    ]);
}

#[rustfmt::skip]
#[test]
fn a_replay_still_sees_an_active_pair_cooldown() {
    check(settings(1, 60_000, 10_000, None), &[
        (0, "a>b", Some("e1"), A),
        (1, "a>b", Some("e2"), P(10_001)),
        (2, "a>b", Some("e2"), P(10_001)), // e2 was wiped at the trip: not a replay, in cooldown
    ]);
}

#[rustfmt::skip]
#[test]
fn an_id_counts_again_once_it_left_the_window() {
    check(settings(1, 1_000, 10_000, None), &[
        (0, "a>b", Some("e1"), A),
        (999, "a>b", Some("e1"), A),    // replay: still retained
        (1_000, "a>b", Some("e1"), A),  // expired: a new slot (the only one)
        (1_001, "a>b", Some("e1"), A),  // replay again
        (1_002, "a>b", Some("e2"), P(11_002)),
    ]);
}

#[rustfmt::skip]
#[test]
fn scope_and_conversation_separate_pairs() {
    let s = settings(1, 60_000, 10_000, None);
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(100).unwrap());
    let mk = |scope, conversation| BotFacts {
        scope,
        conversation,
        sender: "a",
        receiver: "b",
        now: Millis(0),
        event_id: None,
    };
    for (scope, conv) in [("s1", "c1"), ("s2", "c1"), ("s1", "c2")] {
        assert_eq!(guard.record_and_check(&mk(scope, conv), &s), BotDecision::Allow);
    }
    assert_eq!(guard.pair_count(), 3);
}

#[rustfmt::skip]
#[test]
fn bypasses_allow_and_record_nothing() {
    let on = settings(1, 60_000, 10_000, Some(1));
    let cases: &[(&str, PairSettings, [&str; 4])] = &[
        ("disabled", PairSettings { enabled: false, ..on }, ["s", "c", "a", "b"]),
        ("empty scope", on, ["", "c", "a", "b"]),
        ("empty conversation", on, ["s", "", "a", "b"]),
        ("empty sender", on, ["s", "c", "", "b"]),
        ("empty receiver", on, ["s", "c", "a", ""]),
        ("self pair", on, ["s", "c", "a", "a"]),
    ];
    for (name, s, [scope, conversation, sender, receiver]) in cases {
        let mut guard = BotGuard::new(std::num::NonZeroUsize::new(100).unwrap());
        for now_ms in 0..5 {
            let facts = BotFacts { scope, conversation, sender, receiver, now: Millis(now_ms), event_id: None };
            assert_eq!(guard.record_and_check(&facts, s), BotDecision::Allow, "{name}");
        }
        assert_eq!((guard.pair_count(), guard.burst_count()), (0, 0), "{name}: nothing recorded");
        assert_eq!(guard.snapshot().next_prune_at.ms(), 0, "{name}: no prune either");
    }
}

#[rustfmt::skip]
#[test]
fn prune_runs_at_most_once_per_minute_of_event_time() {
    let s = settings(5, 1_000, 1_000, Some(10));
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(100).unwrap());
    let at = |guard: &mut BotGuard, now_ms, who: &str| {
        let (sender, receiver) = who.split_once('>').unwrap_or((who, "r"));
        let facts = BotFacts { scope: "s", conversation: "c", sender, receiver, now: Millis(now_ms), event_id: None };
        guard.record_and_check(&facts, &s);
    };
    at(&mut guard, -5, "x>r");
    assert_eq!(guard.snapshot().next_prune_at.ms(), 0, "a negative first now does not prune");
    at(&mut guard, 0, "a>r");
    assert_eq!(guard.snapshot().next_prune_at.ms(), 60_000);
    at(&mut guard, 30_000, "b>r");
    at(&mut guard, 59_999, "c>r");
    assert_eq!(guard.pair_count(), 4, "idle pairs stay until the next prune");
    assert_eq!(guard.snapshot().next_prune_at.ms(), 60_000);
    at(&mut guard, 60_000, "d>r");
    // x, a, b expired (ts ≤ 60000 − 1000) and were deleted; c (59999) is still in its window.
    assert_eq!(guard.pair_count(), 2);
    assert_eq!(guard.snapshot().next_prune_at.ms(), 120_000);
    // The burst bucket (s, c, r) still holds events from the last 10 minutes: kept.
    assert_eq!(guard.burst_count(), 1);
    at(&mut guard, 50_000, "e>r"); // older, out of order: no prune
    assert_eq!(guard.snapshot().next_prune_at.ms(), 120_000);
    assert_eq!(guard.pair_count(), 3);
    at(&mut guard, 659_999, "f>r");
    assert_eq!(guard.pair_count(), 1, "only f-r is left");
    // A new receiver: the prune at 1259999 deletes the (s, c, r) bucket, whose events are all
    // at or before 1259999 − 600000.
    at(&mut guard, 1_259_999, "q>r2");
    assert_eq!((guard.pair_count(), guard.burst_count()), (1, 1));
}

#[test]
fn prune_keeps_entries_whose_cooldown_is_running() {
    let s = settings(1, 1_000, 100_000, None);
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(100).unwrap());
    run(&mut guard, &s, &[(0, "a>b", None, A), (1, "a>b", None, P(100_001))]);
    run(&mut guard, &s, &[(70_000, "x>y", None, A)]); // prunes: a-b has no events, cooldown runs
    assert_eq!(guard.pair_count(), 2);
    run(&mut guard, &s, &[(99_000, "a>b", None, P(100_001))]);
    run(&mut guard, &s, &[(140_000, "x>z", None, A)]); // prunes: a-b idle now (and x-y)
    assert_eq!(guard.pair_count(), 1);
}

#[test]
fn snapshot_round_trip_continues_identically() {
    let s = settings(2, 60_000, 10_000, Some(3));
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(100).unwrap());
    run(&mut guard, &s, &[(0, "a>b", Some("e1"), A), (1, "b>a", None, A)]);
    let json = serde_json::to_string(&guard.snapshot()).unwrap_or_default();
    let back: BotGuardSnapshot = serde_json::from_str(&json).unwrap_or_default();
    let mut restored = BotGuard::restore(back, std::num::NonZeroUsize::new(100).unwrap());
    assert_eq!(restored.snapshot(), guard.snapshot());
    let rest: &[Step] = &[(2, "a>b", Some("e1"), A), (3, "a>b", None, P(10_003))];
    run(&mut guard, &s, rest);
    run(&mut restored, &s, rest);
}

#[test]
fn snapshot_by_reference_encodes_like_the_owned_snapshot() {
    let s = settings(3, 60_000, 10_000, Some(3));
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(100).unwrap());
    let far = 60 * 86_400_000; // a future-dated event this far ahead makes its pair wide
    run(&mut guard, &s, &[(0, "a>b", Some("e1"), A), (1, "b>a", None, A), (far, "a>c", Some("e2"), A)]);
    run(&mut guard, &s, &[(2, "c>a", Some("e3"), A), (3, "b>c", None, A)]);
    let by_ref = postcard::to_allocvec(&guard.snapshot_ref()).unwrap();
    assert_eq!(by_ref, postcard::to_allocvec(&guard.snapshot()).unwrap());
    let json = serde_json::to_string(&guard.snapshot_ref()).unwrap();
    assert_eq!(json, serde_json::to_string(&guard.snapshot()).unwrap());
}

#[test]
fn a_snapshot_with_whole_id_digests_loads_its_events() {
    // Snapshots written before pairs kept tags hold each event id's 64-bit blake3 digest. The
    // events keep their slots; a replay of such an event is not recognised (pair.rs explains).
    let s = settings(2, 60_000, 10_000, None);
    let entry = PairEntry {
        events: vec![SnapshotEvent { ts: 0, id: key::event_id_digest(Some("e1")) }],
        window_ms: 60_000,
        cooldown_started_at: 0,
        cooldown_until: 0,
    };
    let snapshot =
        BotGuardSnapshot { pairs: vec![(key::pair_key("acct", "c1", "a", "b"), entry)], ..Default::default() };
    let mut guard = BotGuard::restore(snapshot, std::num::NonZeroUsize::new(100).unwrap());
    run(&mut guard, &s, &[(1, "a>b", Some("e2"), A), (2, "a>b", Some("e2"), A), (3, "a>b", Some("e1"), P(10_003))]);
}

mod burst;
mod memory;
mod pair;

/// openclaw 2026.9 (tests/oracle/NOTES.md §4.1, case `bot-replay-during-cooldown`, whose
/// decisions these are): a redelivered id still in the window is let through even during the
/// cooldown; the documented order suppresses it (step 7 here).
#[test]
fn openclaw_2026_9_lets_a_redelivery_through_during_a_cooldown() {
    let s = settings(3, 60_000, 60_000, None);
    let steps = |late_replay: Want| -> Vec<Step> {
        vec![
            (1_000, "A>B", Some("e1"), A),
            (2_000, "B>A", Some("e2"), A),
            (3_000, "A>B", Some("e3"), A),
            (3_000, "A>B", Some("e3"), A),
            (4_000, "B>A", Some("e4"), P(64_000)),
            (3_500, "A>B", Some("e-late"), A),
            (5_000, "A>B", Some("e-late"), late_replay),
            (5_000, "A>B", Some("e5"), P(64_000)),
            (64_000, "A>B", Some("e6"), A),
            (64_000, "A>B", Some("e6"), A),
        ]
    };
    let rules = crate::config::profile::OPENCLAW_2026_9.bot;
    run(&mut BotGuard::new(std::num::NonZeroUsize::new(100).unwrap()).with_rules(rules), &s, &steps(A));
    run(&mut BotGuard::new(std::num::NonZeroUsize::new(100).unwrap()), &s, &steps(P(64_000)));
}
