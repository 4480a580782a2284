//! `broadcast` validation and entry lookup (docs/spec/bot-loop.md §5.1).

use serde_json::{json, Value};

use super::{agents, cfg};
use crate::config::group::{BroadcastEntry, EntryRef, GroupConfig, Strategy};

fn qualified(c: &GroupConfig, channel: &str, peer: &str) -> BroadcastEntry {
    match c.entry(channel, peer) {
        Some(EntryRef::Qualified(e)) => e.clone(),
        other => panic!("expected a qualified entry for {channel}:{peer}, got {other:?}"),
    }
}

fn err(doc: Value) -> (String, String) {
    match GroupConfig::parse(&doc) {
        Ok(_) => panic!("should be rejected: {doc}"),
        Err(e) => (e.path, e.reason),
    }
}

#[test]
fn array_form_takes_every_default() {
    let c = cfg(json!({"agents": agents(&["a", "b", "c"]), "broadcast": {"discord:123": ["a", "b", "c"]}}));
    let e = qualified(&c, "discord", "123");
    assert_eq!(e.agents, ["a", "b", "c"]);
    assert!(e.mention_gating, "mentionGating defaults to true");
    assert_eq!(e.max_rounds, 1, "maxRounds defaults to 1");
    assert_eq!(e.max_turns, 3, "maxTurns defaults to the number of agents");
    assert_eq!(c.strategy, Strategy::Parallel, "strategy defaults to parallel");
}

#[test]
fn object_form_sets_gating_rounds_and_turns() {
    let c = cfg(json!({"agents": agents(&["a", "b"]), "broadcast": {"strategy": "sequential",
        "slack:C0123": {"agents": ["a", "b"], "mentionGating": false, "maxRounds": 4, "maxTurns": 32}}}));
    let e = qualified(&c, "slack", "C0123");
    assert_eq!((e.mention_gating, e.max_rounds, e.max_turns), (false, 4, 32));
    assert_eq!(c.strategy, Strategy::Sequential);
    assert_eq!(c.strategy.as_str(), "sequential");
}

#[test]
fn bounds_of_max_rounds_and_max_turns() {
    // (field, value, accepted?)
    let table: &[(&str, Value, bool)] = &[
        ("maxRounds", json!(1), true),
        ("maxRounds", json!(4), true),
        ("maxRounds", json!(4.0), true),
        ("maxRounds", json!(0), false),
        ("maxRounds", json!(5), false),
        ("maxRounds", json!(1.5), false),
        ("maxRounds", json!("2"), false),
        ("maxRounds", json!(null), false),
        ("maxTurns", json!(1), true),
        ("maxTurns", json!(32), true),
        ("maxTurns", json!(0), false),
        ("maxTurns", json!(33), false),
        ("maxTurns", json!(-1), false),
        ("mentionGating", json!(false), true),
        ("mentionGating", json!("no"), false),
    ];
    for (field, value, ok) in table {
        let doc = json!({"agents": agents(&["a"]),
            "broadcast": {"discord:123": {"agents": ["a"], (*field): value}}});
        match GroupConfig::parse(&doc) {
            Ok(_) => assert!(ok, "{field} = {value} should be rejected"),
            Err(e) => {
                assert!(!ok, "{field} = {value} should be accepted: {e}");
                assert_eq!(e.path, format!("broadcast.discord:123.{field}"));
            }
        }
    }
}

#[test]
fn at_most_sixteen_agents_take_part() {
    let ids: Vec<String> = (0..17).map(|i| format!("a{i}")).collect();
    let names: Vec<&str> = ids.iter().map(String::as_str).collect();
    let sixteen = json!({"agents": agents(&names), "broadcast": {"discord:1": &ids[..16]}});
    assert_eq!(qualified(&cfg(sixteen), "discord", "1").max_turns, 16);
    let (path, reason) = err(json!({"agents": agents(&names), "broadcast": {"discord:1": {"agents": ids}}}));
    assert_eq!(path, "broadcast.discord:1.agents");
    assert!(reason.contains("at most 16"), "{reason}");
}

#[test]
fn rejected_entries_name_the_path_and_the_fix() {
    let ab = agents(&["a", "b"]);
    // (broadcast block, error path, words in the reason)
    let table: Vec<(Value, &str, &str)> = vec![
        (
            json!({"discord:123": {"agents": ["a", "b", "zed"]}}),
            "broadcast.discord:123.agents[2]",
            "unknown agent id \"zed\"",
        ),
        (json!({"discord:123": ["a", "zed"]}), "broadcast.discord:123[1]", "add it to agents.list"),
        (json!({"discord:123": ["a", "A"]}), "broadcast.discord:123[1]", "listed twice"),
        (json!({"discord:123": ["a", 7]}), "broadcast.discord:123[1]", "non-empty agent id"),
        (json!({"discord:123": {"agents": ["a"], "rounds": 2}}), "broadcast.discord:123.rounds", "unknown key"),
        (json!({"discord:123": {"maxRounds": 2}}), "broadcast.discord:123.agents", "is required"),
        (json!({"discord:123": {"agents": "a"}}), "broadcast.discord:123.agents", "array of agent ids"),
        (json!({"discord:123": "a"}), "broadcast.discord:123", "array of agent ids or an object"),
        (json!({":123": ["a"]}), "broadcast.:123", "<channel>:<peer>"),
        (json!({"discord:": ["a"]}), "broadcast.discord:", "<channel>:<peer>"),
        (json!({"1203@g.us": {"agents": ["a"]}}), "broadcast.1203@g.us", "whatsapp:1203@g.us"),
        (json!({"1203@g.us": ["zed"]}), "broadcast.1203@g.us[0]", "unknown agent id"),
        (json!({"strategy": "pipeline"}), "broadcast.strategy", "\"parallel\" or \"sequential\""),
    ];
    for (broadcast, path, reason) in table {
        let (p, r) = err(json!({"agents": ab, "broadcast": broadcast}));
        assert_eq!(p, path, "{broadcast}");
        assert!(r.contains(reason), "{broadcast}: {r}");
    }
    let (p, _) = err(json!({"broadcast": ["a"]}));
    assert_eq!(p, "broadcast");
}

#[test]
fn invalid_mention_patterns_are_rejected_with_their_path() {
    let (p, r) = err(json!({"agents": {"list": [{"id": "a"},
        {"id": "b", "groupChat": {"mentionPatterns": ["ok", "(?<"]}}]}}));
    assert_eq!(p, "agents.list[1].groupChat.mentionPatterns[1]");
    assert!(r.contains("not a valid regular expression"), "{r}");
    let (p, _) = err(json!({"messages": {"groupChat": {"mentionPatterns": ["[z-a]"]}}}));
    assert_eq!(p, "messages.groupChat.mentionPatterns[0]");
    let (p, _) = err(json!({"agents": {"list": [{"id": "a", "groupChat": []}]}}));
    assert_eq!(p, "agents.list[0].groupChat");
}

#[test]
fn agent_list_entries_need_ids_and_other_keys_are_ignored() {
    let c = cfg(json!({"agents": {"list": [{"id": "a", "name": "Alpha", "workspace": "~/w", "default": true,
        "tools": {"loopDetection": {"enabled": true}}, "groupChat": {"historyLimit": 5}}]},
        "broadcast": {"discord:1": ["a"]}}));
    assert!(c.entry("discord", "1").is_some());
    // (agents.list, error path)
    let table: Vec<(Value, &str)> = vec![
        (json!([{"name": "x"}]), "agents.list[0].id"),
        (json!([{"id": 5}]), "agents.list[0].id"),
        (json!([{"id": "a"}, "b"]), "agents.list[1]"),
        (json!([{"id": "a", "name": 3}]), "agents.list[0].name"),
        (json!({"a": {}}), "agents.list"),
    ];
    for (list, path) in table {
        assert_eq!(err(json!({"agents": {"list": list}})).0, path, "{list}");
    }
}

#[test]
fn without_an_agent_list_the_implicit_main_agent_is_known() {
    let c = cfg(json!({"broadcast": {"telegram:-100123": ["main"]}}));
    assert_eq!(qualified(&c, "telegram", "-100123").agents, ["main"]);
    assert_eq!(err(json!({"broadcast": {"telegram:-1": ["other"]}})).0, "broadcast.telegram:-1[0]");
}

#[test]
fn agent_ids_match_case_insensitively_and_keep_the_entry_spelling() {
    let c = cfg(json!({"agents": agents(&["alpha"]), "broadcast": {"discord:1": [" Alpha "]}}));
    assert_eq!(qualified(&c, "discord", "1").agents, ["Alpha"]);
}

#[test]
fn qualified_whatsapp_beats_legacy_and_legacy_is_whatsapp_only() {
    let c = cfg(json!({"agents": agents(&["a", "b"]), "broadcast": {
        "whatsapp:1203@g.us": ["a"], "1203@g.us": ["a", "b"], "+15551234567": ["b", "a"]}}));
    assert_eq!(qualified(&c, "whatsapp", "1203@g.us").agents, ["a"]);
    assert_eq!(c.entry("whatsapp", "+15551234567"), Some(EntryRef::Legacy(&["b".into(), "a".into()][..])));
    assert_eq!(c.entry("telegram", "+15551234567"), None, "unqualified keys are WhatsApp peers");
    assert_eq!(c.entry("discord", "1203@g.us"), None);
    assert_eq!(c.entry("whatsapp", "other"), None);
}

#[test]
fn no_broadcast_block_means_no_entries() {
    let c = cfg(json!({}));
    assert_eq!(c.entry("discord", "1"), None);
    assert_eq!(c.strategy, Strategy::Parallel);
}
