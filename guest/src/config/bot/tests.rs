//! `botLoopProtection` validation and layering, checked against docs/spec/bot-loop.md §1.2 and §4.

use super::*;
use serde_json::json;

/// (enabled, max, window s, cooldown s, burst) as the spec's tables write them.
type Row = (bool, i64, i64, i64, Option<u32>);

fn settings_of(s: PairSettings) -> Row {
    let burst = s.max_conversation_bot_events.map(|n| n.get());
    (s.enabled, s.max_events_per_window.get() as i64, s.window.ms() / 1000, s.cooldown.ms() / 1000, burst)
}

fn parse(doc: Value) -> BotLoopConfig {
    match BotLoopConfig::parse(&doc) {
        Ok(cfg) => cfg,
        Err(e) => panic!("valid config rejected: {e}"),
    }
}

fn check(cfg: &BotLoopConfig, rows: &[(&str, &str, &str, Row)]) {
    for (channel, account, room, want) in rows {
        assert_eq!(settings_of(cfg.resolve(channel, account, room)), *want, "{channel}/{account}/{room}");
    }
}

#[rustfmt::skip]
#[test]
fn spec_4_4_worked_example() {
    let cfg = parse(json!({"channels": {
        "defaults": {"botLoopProtection": {"maxEventsPerWindow": 20}},
        "discord": {"botLoopProtection": {"maxEventsPerWindow": 8},
                    "accounts": {"secondary": {"allowBots": true,
                                               "botLoopProtection": {"maxEventsPerWindow": 5, "cooldownSeconds": 90}}}},
        "googlechat": {"allowBots": true,
                       "groups": {"spaces/AAAA": {"botLoopProtection": {"maxEventsPerWindow": 5}}}},
        "matrix": {"allowBots": "mentions",
                   "groups": {"!roomid:example.org": {"botLoopProtection": {"maxEventsPerWindow": 5}}}},
        "slack": {"allowBots": "mentions", "botLoopProtection": {"maxEventsPerWindow": 8}}
    }}));
    check(&cfg, &[
        ("discord", "default", "any", (true, 8, 60, 60, None)),
        ("discord", "other", "any", (true, 8, 60, 60, None)),
        ("discord", "secondary", "any", (true, 5, 60, 90, None)),
        ("googlechat", "default", "spaces/AAAA", (true, 5, 60, 60, None)),
        ("googlechat", "default", "spaces/BBBB", (true, 20, 60, 60, None)),
        ("matrix", "default", "!roomid:example.org", (true, 5, 60, 60, None)),
        ("matrix", "default", "!other:example.org", (true, 20, 60, 60, None)),
        ("slack", "default", "C0123", (true, 8, 60, 60, None)),
        ("feishu", "any", "oc_chat", (true, 20, 60, 60, None)),
        ("telegram", "any", "any", (true, 20, 60, 60, None)),
    ]);
    check(&parse(json!({})), &[("discord", "default", "c", (true, 20, 60, 60, None))]);
}

#[rustfmt::skip]
#[test]
fn layers_merge_key_by_key_narrowest_first() {
    let cfg = parse(json!({"channels": {
        "defaults": {"botLoopProtection": {"windowSeconds": 30, "maxConversationBotEvents": 40}},
        "telegram": {"botLoopProtection": {"maxEventsPerWindow": 8, "cooldownSeconds": 10},
                     "groups": {"-100": {"botLoopProtection": {"maxEventsPerWindow": 1}}},
                     "accounts": {"a": {"botLoopProtection": {"cooldownSeconds": 99}},
                                  "off": {"botLoopProtection": {"enabled": false}}}},
        "matrix": {"botLoopProtection": {"maxEventsPerWindow": 8},
                   "accounts": {"bot": {"botLoopProtection": {"windowSeconds": 5}}},
                   "groups": {"!r": {"botLoopProtection": {"cooldownSeconds": 7}}}}
    }}));
    check(&cfg, &[
        ("telegram", "a", "-100", (true, 8, 30, 99, Some(40))), // telegram has no room layer
        ("telegram", "b", "x", (true, 8, 30, 10, Some(40))),
        ("telegram", "off", "x", (false, 8, 30, 10, Some(40))),
        ("matrix", "bot", "!r", (true, 8, 5, 7, Some(40))),
        ("matrix", "bot", "!R", (true, 8, 5, 60, Some(40))), // groups keys are exact
        ("matrix", "other", "!r", (true, 8, 30, 7, Some(40))),
    ]);
}

#[rustfmt::skip]
#[test]
fn discord_has_no_room_layer_and_feishu_reads_only_the_defaults() {
    let cfg = parse(json!({"channels": {
        "discord": {"groups": {"c1": {"botLoopProtection": {"maxEventsPerWindow": 2}}}},
        "feishu": {"botLoopProtection": {"maxEventsPerWindow": 3},
                   "accounts": {"main": {"botLoopProtection": {"enabled": false}}}}
    }}));
    check(&cfg, &[
        ("discord", "default", "c1", (true, 20, 60, 60, None)),
        ("feishu", "main", "c1", (true, 20, 60, 60, None)),
    ]);
}

#[rustfmt::skip]
#[test]
fn google_chat_non_default_accounts_put_accounts_default_beneath() {
    let cfg = parse(json!({"channels": {"googlechat": {
        "botLoopProtection": {"maxEventsPerWindow": 8},
        "accounts": {
            "default": {"botLoopProtection": {"maxEventsPerWindow": 3, "windowSeconds": 9, "cooldownSeconds": 4}},
            "work": {"botLoopProtection": {"cooldownSeconds": 11}}
        },
        "groups": {"spaces/A": {"botLoopProtection": {"windowSeconds": 2}}}
    }}}));
    check(&cfg, &[
        // default: merge(top, accounts.default)
        ("googlechat", "default", "spaces/X", (true, 3, 9, 4, None)),
        // work: merge(accounts.default, merge(top, work)): the channel top beats accounts.default
        ("googlechat", "work", "spaces/X", (true, 8, 9, 11, None)),
        ("googlechat", "work", "spaces/A", (true, 8, 2, 11, None)),
        ("googlechat", "unlisted", "spaces/X", (true, 8, 9, 4, None)),
    ]);
}

#[rustfmt::skip]
#[test]
fn slack_channel_entries_with_case_variants_prefix_and_wildcard() {
    let cfg = parse(json!({"channels": {"slack": {
        "botLoopProtection": {"maxEventsPerWindow": 8},
        "channels": {
            "*": {"botLoopProtection": {"windowSeconds": 30, "cooldownSeconds": 5}},
            "C1": {"botLoopProtection": {"maxEventsPerWindow": 1}},
            "c1": {"botLoopProtection": {"maxEventsPerWindow": 2}},
            "c2": {"botLoopProtection": {"maxEventsPerWindow": 3}},
            "C3": {"botLoopProtection": {"maxEventsPerWindow": 4}},
            "channel:C4": {"botLoopProtection": {"maxEventsPerWindow": 5}},
            "channel:c5": {"botLoopProtection": {"maxEventsPerWindow": 6}},
            "channel:C6": {"botLoopProtection": {"maxEventsPerWindow": 7}},
            "C7": {"requireMention": true},
            "c7": {"botLoopProtection": {"maxEventsPerWindow": 9}},
            "chän": {"botLoopProtection": {"maxEventsPerWindow": 10}}
        }
    }}}));
    check(&cfg, &[
        ("slack", "default", "C1", (true, 1, 30, 5, None)),  // as given beats lowercase
        ("slack", "default", "c1", (true, 2, 30, 5, None)),
        ("slack", "default", "C2", (true, 3, 30, 5, None)),  // lowercase
        ("slack", "default", "c3", (true, 4, 30, 5, None)),  // uppercase
        ("slack", "default", "C4", (true, 5, 30, 5, None)),  // channel: + as given
        ("slack", "default", "C5", (true, 6, 30, 5, None)),  // channel: + lowercase
        ("slack", "default", "c6", (true, 7, 30, 5, None)),  // channel: + uppercase
        // The first existing entry wins even without botLoopProtection: the wildcard fills in.
        ("slack", "default", "C7", (true, 8, 30, 5, None)),
        ("slack", "default", "CHÄN", (true, 10, 30, 5, None)), // non-ASCII lowercase
        ("slack", "default", "nope", (true, 8, 30, 5, None)),  // only the wildcard
    ]);
    let no_wildcard = parse(json!({"channels": {"slack": {"channels": {"C1": {}}}}}));
    check(&no_wildcard, &[("slack", "x", "C9", (true, 20, 60, 60, None))]);
}

#[rustfmt::skip]
#[test]
fn validation_errors_name_the_full_path() {
    let cases: &[(&str, Value, &str)] = &[
        ("zero", json!({"discord": {"accounts": {"secondary": {"botLoopProtection": {"maxEventsPerWindow": 0}}}}}),
         "channels.discord.accounts.secondary.botLoopProtection.maxEventsPerWindow"),
        ("fraction", json!({"defaults": {"botLoopProtection": {"windowSeconds": 1.5}}}),
         "channels.defaults.botLoopProtection.windowSeconds"),
        ("string", json!({"slack": {"botLoopProtection": {"cooldownSeconds": "60"}}}),
         "channels.slack.botLoopProtection.cooldownSeconds"),
        ("burst over 500", json!({"matrix": {"groups": {"!r": {"botLoopProtection": {"maxConversationBotEvents": 501}}}}}),
         "channels.matrix.groups.!r.botLoopProtection.maxConversationBotEvents"),
        ("burst 0", json!({"googlechat": {"groups": {"spaces/A": {"botLoopProtection": {"maxConversationBotEvents": 0}}}}}),
         "channels.googlechat.groups.spaces/A.botLoopProtection.maxConversationBotEvents"),
        ("enabled not a boolean", json!({"telegram": {"botLoopProtection": {"enabled": "yes"}}}),
         "channels.telegram.botLoopProtection.enabled"),
        ("null number", json!({"discord": {"botLoopProtection": {"maxEventsPerWindow": null}}}),
         "channels.discord.botLoopProtection.maxEventsPerWindow"),
        ("unknown key", json!({"discord": {"botLoopProtection": {"maxEvents": 5}}}),
         "channels.discord.botLoopProtection.maxEvents"),
        ("not an object", json!({"discord": {"botLoopProtection": true}}),
         "channels.discord.botLoopProtection"),
        ("slack channel entry", json!({"slack": {"channels": {"*": {"botLoopProtection": {"windowSeconds": -1}}}}}),
         "channels.slack.channels.*.botLoopProtection.windowSeconds"),
        ("other channels' groups too", json!({"telegram": {"groups": {"-1": {"botLoopProtection": {"x": 1}}}}}),
         "channels.telegram.groups.-1.botLoopProtection.x"),
        ("feishu is validated", json!({"feishu": {"botLoopProtection": {"cooldownSeconds": 0}}}),
         "channels.feishu.botLoopProtection.cooldownSeconds"),
        ("accounts not an object", json!({"discord": {"accounts": []}}), "channels.discord.accounts"),
        ("account not an object", json!({"discord": {"accounts": {"a": 1}}}), "channels.discord.accounts.a"),
        ("matrix groups not an object", json!({"matrix": {"groups": "x"}}), "channels.matrix.groups"),
    ];
    for (name, channels, want) in cases {
        match BotLoopConfig::parse(&json!({ "channels": channels })) {
            Ok(_) => panic!("{name}: accepted"),
            Err(e) => assert_eq!(e.path, *want, "{name}: {e}"),
        }
    }
    let not_object = BotLoopConfig::parse(&json!({"channels": 3})).map(|_| ());
    assert_eq!(not_object.map_err(|e| e.path), Err("channels".to_string()));
}

#[rustfmt::skip]
#[test]
fn valid_edges_and_ignored_keys_are_accepted() {
    let cfg = parse(json!({"channels": {
        "defaults": {"groupPolicy": "open"},
        "discord": {"allowBots": "mentions", "token": "x", "guilds": {"1": {"requireMention": true}},
                    "botLoopProtection": {"enabled": true, "maxEventsPerWindow": 3.0, "windowSeconds": 1,
                                          "cooldownSeconds": 86400, "maxConversationBotEvents": 500}},
        "telegram": {"groups": ["not", "read"]}
    }}));
    check(&cfg, &[("discord", "default", "c", (true, 3, 1, 86_400, Some(500)))]);
}

/// Every number has an upper bound, checked when the config is read, the error
/// naming the path and the bound; the bound itself is accepted.
#[test]
fn every_number_has_an_upper_bound() {
    let cases = [
        ("maxEventsPerWindow", 100_000),
        ("windowSeconds", 31_536_000),
        ("cooldownSeconds", 31_536_000),
        ("maxConversationBotEvents", 500),
    ];
    for (key, max) in cases {
        let doc = |n: i64| json!({"channels": {"discord": {"botLoopProtection": { key: n }}}});
        assert!(BotLoopConfig::parse(&doc(max)).is_ok(), "{key}: {max}");
        let e = BotLoopConfig::parse(&doc(max + 1)).map(|_| ()).unwrap_err();
        assert_eq!(e.path, format!("channels.discord.botLoopProtection.{key}"), "{e}");
        assert!(e.reason.contains(&format!("from 1 to {max}")), "{e}");
    }
}
