//! Tests of the group coordinator and its config, written as the rules of docs/spec/bot-loop.md §5.

mod config;
mod lifecycle;
mod rounds;

use serde_json::{json, Value};

use super::{GroupStart, GroupStep, Reply, StopReason, ThreadKey};
use crate::config::group::GroupConfig;

/// Parses a config document that must be valid.
fn cfg(doc: Value) -> GroupConfig {
    match GroupConfig::parse(&doc) {
        Ok(c) => c,
        Err(e) => panic!("config should be valid: {e}"),
    }
}

/// A Discord thread key for root message `root` in conversation `c1`.
fn key(root: &str) -> ThreadKey<'_> {
    ThreadKey { channel: "discord", account: "default", conversation: "c1", thread: None, root }
}

fn said(agent: &str, text: &str) -> Reply {
    Reply { agent: agent.to_string(), reply: Some(text.to_string()) }
}

fn passed(agent: &str) -> Reply {
    Reply { agent: agent.to_string(), reply: None }
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// `agents.list` with these ids and no other settings.
fn agents(list: &[&str]) -> Value {
    json!({ "list": list.iter().map(|id| json!({ "id": id })).collect::<Vec<_>>() })
}

fn round(n: u32, who: &[&str]) -> GroupStep {
    GroupStep::Round { round: n, participants: ids(who) }
}

fn start1(who: &[&str]) -> GroupStart {
    GroupStart::Round { round: 1, participants: ids(who) }
}

const STOP_ALL_PASSED: GroupStep = GroupStep::Stop(StopReason::AllPassed);
const STOP_MAX_ROUNDS: GroupStep = GroupStep::Stop(StopReason::MaxRounds);
const STOP_MAX_TURNS: GroupStep = GroupStep::Stop(StopReason::MaxTurns);
const STOP_NO_ELIGIBLE: GroupStep = GroupStep::Stop(StopReason::NoEligible);

/// Three agents on `discord:123`; the entry value is `entry`.
fn abc(entry: serde_json::Value) -> crate::config::group::GroupConfig {
    cfg(json!({"agents": {"list": [{"id": "alpha"}, {"id": "beta", "name": "Bea Tee"}, {"id": "gamma"}]},
        "broadcast": {"discord:123": entry}}))
}
