//! A thread's life: keys, unknown and finished threads, cancellation, legacy entries, the
//! thread cap and snapshots (docs/spec/bot-loop.md §5.1, §5.2).

use serde_json::json;

use super::{abc, agents, cfg, ids, key, passed, round, said, start1};
use super::{STOP_ALL_PASSED, STOP_MAX_ROUNDS, STOP_NO_ELIGIBLE};
use crate::group::{GroupCoordinator, GroupSnapshot, GroupStart, GroupStep, StopReason, ThreadKey};

#[test]
fn replies_for_an_unknown_or_finished_thread_stop_with_no_eligible() {
    let c = abc(json!(["alpha"]));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.replies(&c, &key("never"), &[said("alpha", "x")]), STOP_NO_ELIGIBLE);
    g.start(&c, &key("m"), "123", "hi");
    assert_eq!(g.replies(&c, &key("m"), &[passed("alpha")]), STOP_ALL_PASSED);
    assert_eq!(g.replies(&c, &key("m"), &[said("alpha", "x")]), STOP_NO_ELIGIBLE);
    assert_eq!(g.thread_count(), 0, "nothing is created for an unknown thread");
}

#[test]
fn cancel_stops_and_drops_the_thread() {
    let c = abc(json!({"agents": ["alpha"], "maxRounds": 4}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    assert_eq!(g.cancel(&key("m")), GroupStep::Stop(StopReason::Cancelled));
    assert_eq!(g.thread_count(), 0);
    assert_eq!(g.replies(&c, &key("m"), &[said("alpha", "x")]), STOP_NO_ELIGIBLE);
    assert_eq!(g.cancel(&key("unknown")), GroupStep::Stop(StopReason::Cancelled));
}

#[test]
fn stop_reasons_use_the_trace_spelling() {
    let table = [
        (StopReason::AllPassed, "all_passed"),
        (StopReason::MaxRounds, "max_rounds"),
        (StopReason::MaxTurns, "max_turns"),
        (StopReason::NoEligible, "no_eligible"),
        (StopReason::Cancelled, "cancelled"),
    ];
    for (reason, text) in table {
        assert_eq!(reason.as_str(), text);
    }
}

#[test]
fn legacy_whatsapp_entries_run_one_uncapped_pass_and_keep_no_thread() {
    let c = cfg(json!({"agents": agents(&["a", "b", "c"]), "broadcast": {"1203@g.us": ["c", "a", "b"]}}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    let k = ThreadKey { channel: "whatsapp", account: "default", conversation: "1203@g.us", thread: None, root: "m" };
    assert_eq!(g.start(&c, &k, "1203@g.us", "@a only"), GroupStart::Legacy { participants: ids(&["c", "a", "b"]) });
    assert_eq!(g.thread_count(), 0);
    assert_eq!(g.replies(&c, &k, &[said("a", "x")]), STOP_NO_ELIGIBLE);
    // Another channel never reads unqualified keys.
    let t = ThreadKey { channel: "telegram", ..k };
    assert_eq!(g.start(&c, &t, "1203@g.us", "hi"), GroupStart::None);
}

#[test]
fn a_qualified_whatsapp_entry_beats_the_legacy_one() {
    let c = cfg(json!({"agents": agents(&["a", "b"]), "broadcast": {
        "1203@g.us": ["a", "b"], "whatsapp:1203@g.us": {"agents": ["b"], "maxRounds": 2}}}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    let k = ThreadKey { channel: "whatsapp", account: "default", conversation: "1203@g.us", thread: None, root: "m" };
    assert_eq!(g.start(&c, &k, "1203@g.us", "hi"), start1(&["b"]));
    assert_eq!(g.thread_count(), 1);
}

#[test]
fn no_entry_or_an_empty_entry_is_not_a_group_thread() {
    let c = cfg(json!({"agents": agents(&["a"]), "broadcast": {"discord:9": [], "1203@g.us": []}}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.start(&c, &key("m"), "123", "hi"), GroupStart::None);
    assert_eq!(g.start(&c, &key("m"), "9", "hi"), GroupStart::None);
    let k = ThreadKey { channel: "whatsapp", ..key("m") };
    assert_eq!(g.start(&c, &k, "1203@g.us", "hi"), GroupStart::None);
    assert_eq!(g.thread_count(), 0);
}

#[test]
fn sequential_strategy_keeps_configured_launch_order() {
    for strategy in ["parallel", "sequential"] {
        let c = cfg(json!({"agents": agents(&["a", "b", "c"]),
            "broadcast": {"strategy": strategy, "discord:123": ["c", "a", "b"]}}));
        let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
        assert_eq!(g.start(&c, &key("m"), "123", "@b @c"), start1(&["c", "b"]), "{strategy}");
    }
}

#[test]
fn each_thread_and_root_has_its_own_budget() {
    let c = abc(json!({"agents": ["alpha"], "maxRounds": 2, "maxTurns": 2}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    let in_thread = ThreadKey { thread: Some("t1"), ..key("m") };
    g.start(&c, &key("m"), "123", "hi");
    g.start(&c, &in_thread, "123", "hi");
    g.start(&c, &key("m2"), "123", "hi");
    assert_eq!(g.thread_count(), 3);
    assert_eq!(g.replies(&c, &key("m"), &[said("alpha", "x")]), round(2, &["alpha"]));
    assert_eq!(g.replies(&c, &in_thread, &[said("alpha", "x")]), round(2, &["alpha"]));
    assert_eq!(g.replies(&c, &key("m"), &[said("alpha", "x")]), STOP_MAX_ROUNDS);
    assert_eq!(g.thread_count(), 2);
}

#[test]
fn starting_an_active_thread_again_starts_over() {
    let c = abc(json!({"agents": ["alpha"], "maxRounds": 2, "maxTurns": 2}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    assert_eq!(g.replies(&c, &key("m"), &[said("alpha", "x")]), round(2, &["alpha"]));
    assert_eq!(g.start(&c, &key("m"), "123", "hi"), start1(&["alpha"]));
    assert_eq!(g.replies(&c, &key("m"), &[said("alpha", "x")]), round(2, &["alpha"]));
    assert_eq!(g.thread_count(), 1);
}

#[test]
fn a_config_reload_does_not_change_a_running_budget() {
    let before = abc(json!({"agents": ["alpha", "beta"], "maxRounds": 2, "maxTurns": 4}));
    let after = abc(json!(["alpha"]));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&before, &key("m"), "123", "hi");
    let step = g.replies(&after, &key("m"), &[said("alpha", "x"), said("beta", "y")]);
    assert_eq!(step, round(2, &["alpha", "beta"]));
}

#[test]
fn distinct_threads_stay_within_the_cap() {
    let c = abc(json!({"agents": ["alpha"], "maxRounds": 2, "maxTurns": 2}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(1_000).unwrap());
    for i in 0..100_000u32 {
        let root = i.to_string();
        g.start(&c, &key(&root), "123", "hi");
        assert!(g.thread_count() <= 1_000, "{} threads after {i}", g.thread_count());
    }
    assert!(g.evicted() >= 99_000);
    // The most recent thread survived; an evicted one is unknown.
    assert_eq!(g.replies(&c, &key("99999"), &[said("alpha", "x")]), round(2, &["alpha"]));
    assert_eq!(g.replies(&c, &key("0"), &[said("alpha", "x")]), STOP_NO_ELIGIBLE);
}

#[test]
fn a_snapshot_round_trip_continues_the_same_budget() {
    let c = abc(json!({"agents": ["alpha", "beta"], "maxRounds": 3, "maxTurns": 3}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    g.start(&c, &key("other"), "123", "hi");
    let json = match serde_json::to_string(&g.snapshot()) {
        Ok(s) => s,
        Err(e) => panic!("snapshot serializes: {e}"),
    };
    let snap: GroupSnapshot = match serde_json::from_str(&json) {
        Ok(s) => s,
        Err(e) => panic!("snapshot deserializes: {e}"),
    };
    let mut restored = GroupCoordinator::restore(snap, std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(restored.thread_count(), 2);
    // 2 of 3 turns were used: one turn is left after the restore.
    let step = restored.replies(&c, &key("m"), &[said("alpha", "a"), said("beta", "b")]);
    assert_eq!(step, round(2, &["alpha"]));
    // Restoring into a smaller cap drops the least recently active thread first.
    let small = GroupCoordinator::restore(g.snapshot(), std::num::NonZeroUsize::new(1).unwrap());
    assert!(small.thread_count() <= 1);
    assert!(small.snapshot().threads.iter().all(|(k, _)| *k != key("m").encode()));
}
