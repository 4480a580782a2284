//! Round selection, turn reservation and stopping (docs/spec/bot-loop.md §5.2).

use serde_json::json;

use super::{abc, cfg, key, passed, round, said, start1};
use super::{STOP_ALL_PASSED, STOP_MAX_ROUNDS, STOP_MAX_TURNS};
use crate::group::GroupCoordinator;

#[test]
fn round_one_runs_the_mentioned_participants_or_all_when_none_is_mentioned() {
    let c = abc(json!(["alpha", "beta", "gamma"]));
    // (inbound text, round-1 participants)
    let table: &[(&str, &[&str])] = &[
        ("hello everyone", &["alpha", "beta", "gamma"]),
        ("@gamma and @ALPHA, thoughts?", &["alpha", "gamma"]), // configured order, not text order
        ("@bea tee please", &["beta"]),                        // derived from the name
        ("@beta", &["beta"]),                                  // derived from the id
        ("mail me at x@alpha.example", &["alpha", "beta", "gamma"]),
        ("@delta?", &["alpha", "beta", "gamma"]),
    ];
    for (i, (text, want)) in table.iter().enumerate() {
        let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
        let root = i.to_string();
        assert_eq!(g.start(&c, &key(&root), "123", text), start1(want), "{text}");
    }
}

#[test]
fn without_mention_gating_round_one_runs_everybody() {
    let c = abc(json!({"agents": ["alpha", "beta", "gamma"], "mentionGating": false}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.start(&c, &key("m"), "123", "@beta only"), start1(&["alpha", "beta", "gamma"]));
}

#[test]
fn own_patterns_beat_global_patterns_which_beat_derived_ones() {
    let c = cfg(json!({
        "agents": {"list": [
            {"id": "alpha", "groupChat": {"mentionPatterns": ["\\bhey al\\b"]}},
            {"id": "beta"},
            {"id": "gamma", "groupChat": {"mentionPatterns": []}}]},
        "messages": {"groupChat": {"mentionPatterns": ["\\bteam\\b"]}},
        "broadcast": {"discord:123": ["alpha", "beta", "gamma"]}}));
    // (inbound text, round-1 participants)
    let table: &[(&str, &[&str])] = &[
        ("HEY AL, look", &["alpha"]), // alpha's own pattern, case-insensitive
        ("team, look", &["beta"]),    // beta has no own list: the global one applies
        ("@alpha @beta @gamma", &["alpha", "beta", "gamma"]), // nothing matched → everybody
        ("hey al and team", &["alpha", "beta"]), // gamma's explicit [] never matches
    ];
    for (i, (text, want)) in table.iter().enumerate() {
        let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
        let root = i.to_string();
        assert_eq!(g.start(&c, &key(&root), "123", text), start1(want), "{text}");
    }
}

#[test]
fn turns_are_reserved_in_configured_order_when_fewer_remain_than_are_eligible() {
    let c = abc(json!({"agents": ["alpha", "beta", "gamma"], "maxTurns": 2}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.start(&c, &key("m"), "123", "@gamma @beta @alpha"), start1(&["alpha", "beta"]));
}

#[test]
fn default_budget_is_one_round() {
    let c = abc(json!(["alpha", "beta", "gamma"]));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    let step = g.replies(&c, &key("m"), &[said("alpha", "x"), said("beta", "y"), passed("gamma")]);
    assert_eq!(step, STOP_MAX_ROUNDS);
    assert_eq!(g.thread_count(), 0, "a stopped thread is dropped");
}

#[test]
fn later_rounds_run_repliers_and_participants_named_by_a_sibling() {
    let c = abc(json!({"agents": ["alpha", "beta", "gamma"], "maxRounds": 3, "maxTurns": 32}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.start(&c, &key("m"), "123", "@alpha @beta"), start1(&["alpha", "beta"]));
    // alpha replies and names gamma (who has not run yet); beta passes.
    let step = g.replies(&c, &key("m"), &[said("alpha", "I think @gamma knows"), passed("beta")]);
    assert_eq!(step, round(2, &["alpha", "gamma"]));
    // Naming yourself does not make you eligible; gamma replies, alpha passes.
    let step = g.replies(&c, &key("m"), &[passed("alpha"), said("gamma", "as @gamma I agree")]);
    assert_eq!(step, round(3, &["gamma"]));
    assert_eq!(g.replies(&c, &key("m"), &[said("gamma", "done")]), STOP_MAX_ROUNDS);
}

#[test]
fn max_rounds_counts_the_initial_round() {
    let c = abc(json!({"agents": ["alpha", "beta"], "maxRounds": 4, "maxTurns": 32}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    let chatty = [said("alpha", "a"), said("beta", "b")];
    assert_eq!(g.replies(&c, &key("m"), &chatty), round(2, &["alpha", "beta"]));
    assert_eq!(g.replies(&c, &key("m"), &chatty), round(3, &["alpha", "beta"]));
    assert_eq!(g.replies(&c, &key("m"), &chatty), round(4, &["alpha", "beta"]));
    assert_eq!(g.replies(&c, &key("m"), &chatty), STOP_MAX_ROUNDS);
}

#[test]
fn passes_and_failures_use_turns_and_the_budget_stops_at_max_turns() {
    // 3 turns in round 1; 1 turn left for round 2 goes to the first eligible in configured order.
    let c = abc(json!({"agents": ["alpha", "beta", "gamma"], "maxRounds": 4, "maxTurns": 4}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.start(&c, &key("m"), "123", "hi"), start1(&["alpha", "beta", "gamma"]));
    let step = g.replies(&c, &key("m"), &[passed("alpha"), said("beta", "b"), said("gamma", "c")]);
    assert_eq!(step, round(2, &["beta"]));
    assert_eq!(g.replies(&c, &key("m"), &[said("beta", "more")]), STOP_MAX_TURNS);
}

#[test]
fn all_passing_stops_the_thread() {
    let c = abc(json!({"agents": ["alpha", "beta"], "maxRounds": 4}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    assert_eq!(g.replies(&c, &key("m"), &[passed("alpha"), said("beta", "   ")]), STOP_ALL_PASSED);
    assert_eq!(g.thread_count(), 0);
}

#[test]
fn an_empty_reply_list_means_everybody_passed() {
    let c = abc(json!({"agents": ["alpha", "beta"], "maxRounds": 4}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    assert_eq!(g.replies(&c, &key("m"), &[]), STOP_ALL_PASSED);
}

#[test]
fn replies_from_agents_not_launched_this_round_are_ignored() {
    let c = abc(json!({"agents": ["alpha", "beta", "gamma"], "maxRounds": 4, "maxTurns": 32}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(g.start(&c, &key("m"), "123", "@alpha"), start1(&["alpha"]));
    // gamma did not run: its reply neither keeps the thread alive nor names beta.
    let step = g.replies(&c, &key("m"), &[said("gamma", "@beta look"), passed("alpha")]);
    assert_eq!(step, STOP_ALL_PASSED);
}

#[test]
fn the_first_reply_of_an_agent_listed_twice_counts() {
    let c = abc(json!({"agents": ["alpha", "beta"], "maxRounds": 4}));
    let mut g = GroupCoordinator::new(std::num::NonZeroUsize::new(10).unwrap());
    g.start(&c, &key("m"), "123", "hi");
    assert_eq!(g.replies(&c, &key("m"), &[passed("alpha"), said("alpha", "late")]), STOP_ALL_PASSED);
}
