use super::*;
use crate::config::profile::DOCUMENTED;
use serde_json::json;

fn parse(v: Value) -> Result<ToolLoopConfig, ConfigError> {
    ToolLoopConfig::parse(&v, &DOCUMENTED)
}

#[test]
fn defaults_equal_openclaw() {
    let s = *parse(json!({})).unwrap().for_agent(None);
    assert_eq!(s.enabled, None);
    assert_eq!(
        (s.history_size.get(), s.warning, s.critical, s.global, s.unknown_tool, s.window_size.get()),
        (30, 10, 20, 30, 10, 3)
    );
    assert!(s.generic_repeat && s.known_poll && s.ping_pong);
}

#[test]
fn validation_errors_name_the_path() {
    let cases = [
        (json!({"tools":{"loopDetection":{"historySize":0}}}), "tools.loopDetection.historySize"),
        (json!({"tools":{"loopDetection":{"historySize":-5}}}), "tools.loopDetection.historySize"),
        (json!({"tools":{"loopDetection":{"historySize":2.5}}}), "tools.loopDetection.historySize"),
        (json!({"tools":{"loopDetection":{"warningThreshold":"5"}}}), "tools.loopDetection.warningThreshold"),
        (json!({"tools":{"loopDetection":{"enabled":"yes"}}}), "tools.loopDetection.enabled"),
        (json!({"tools":{"loopDetection":{"enabled":null}}}), "tools.loopDetection.enabled"),
        (json!({"tools":{"loopDetection":{"bogus":1}}}), "tools.loopDetection.bogus"),
        (json!({"tools":{"loopDetection":{"detectors":{"x":true}}}}), "tools.loopDetection.detectors.x"),
        (json!({"tools":{"loopDetection":{"detectors":{"pingPong":1}}}}), "tools.loopDetection.detectors.pingPong"),
        (
            json!({"tools":{"loopDetection":{"postCompactionGuard":{"windowSize":0}}}}),
            "tools.loopDetection.postCompactionGuard.windowSize",
        ),
        (json!({"tools":{"loopDetection":[]}}), "tools.loopDetection"),
        (
            json!({"tools":{"loopDetection":{"warningThreshold":20,"criticalThreshold":20}}}),
            "tools.loopDetection.criticalThreshold",
        ),
        (
            json!({"tools":{"loopDetection":{"criticalThreshold":30,"globalCircuitBreakerThreshold":25}}}),
            "tools.loopDetection.globalCircuitBreakerThreshold",
        ),
        (
            json!({"agents":{"list":[{"id":"a","tools":{"loopDetection":{"historySize":0}}}]}}),
            "agents.list[0].tools.loopDetection.historySize",
        ),
        (json!({"agents":{"list":{}}}), "agents.list"),
    ];
    for (doc, path) in cases {
        assert_eq!(parse(doc.clone()).unwrap_err().path, path, "{doc}");
    }
}

#[test]
fn ordering_error_uses_openclaws_message() {
    let e = parse(json!({"tools":{"loopDetection":{"warningThreshold":10,"criticalThreshold":5}}})).unwrap_err();
    assert_eq!(e.reason, "tools.loopDetection.warningThreshold must be lower than criticalThreshold.");
    let e = parse(json!({"tools":{"loopDetection":{"criticalThreshold":40,"globalCircuitBreakerThreshold":40}}}))
        .unwrap_err();
    assert_eq!(e.reason, "tools.loopDetection.criticalThreshold must be lower than globalCircuitBreakerThreshold.");
}

#[test]
fn as_positive_int_falls_back_on_anything_but_positive_integers() {
    for bad in [json!(0), json!(-1), json!(2.5), json!("5"), json!(null), json!(true)] {
        assert_eq!(as_positive_int(Some(&bad), 7), 7, "{bad}");
    }
    assert_eq!(as_positive_int(Some(&json!(5.0)), 7), 5);
    assert_eq!(as_positive_int(Some(&json!(1_000_000)), 7), 1_000_000);
    assert_eq!(as_positive_int(None, 7), 7);
}

#[test]
fn runtime_clamp_repairs_merged_ordering() {
    // Global warning 10; agent sets critical 5 → critical becomes 11, global 12 (30 > 11 stays 30).
    let merged = merge(json!({"warningThreshold": 10}).as_object(), json!({"criticalThreshold": 5}).as_object());
    let s = resolve(Some(&merged), &DOCUMENTED);
    assert_eq!((s.warning, s.critical, s.global), (10, 11, 30));
    let s = resolve(json!({"warningThreshold": 40}).as_object(), &DOCUMENTED);
    assert_eq!((s.warning, s.critical, s.global), (40, 41, 42));
}

#[test]
fn agent_merge_follows_resolve_tool_loop_detection_config() {
    let g = json!({"enabled": true, "warningThreshold": 5, "detectors": {"pingPong": false, "genericRepeat": false}});
    let a = json!({"warningThreshold": null, "detectors": {"pingPong": true}, "postCompactionGuard": null});
    let s = resolve(Some(&merge(g.as_object(), a.as_object())), &DOCUMENTED);
    assert_eq!(s.enabled, Some(true));
    assert_eq!(s.warning, 10, "a null agent key wins and resolves to the built-in default");
    assert!(s.ping_pong, "agent detector key wins");
    assert!(!s.generic_repeat, "global detector key kept");
    assert_eq!(s.window_size.get(), 3);
    // Only one side present: that side is used as is.
    assert_eq!(merge(None, a.as_object()), *a.as_object().unwrap());
    assert_eq!(merge(g.as_object(), None), *g.as_object().unwrap());
}

#[test]
fn agent_selection_normalizes_ids_and_first_entry_wins() {
    let cfg = parse(json!({
        "tools": {"loopDetection": {"enabled": true, "historySize": 40}},
        "agents": {"list": [
            {"id": "Small-Model", "tools": {"loopDetection": {"warningThreshold": 3, "criticalThreshold": 6}}},
            {"id": "small-model", "tools": {"loopDetection": {"warningThreshold": 7}}},
            {"id": "plain"}
        ]}
    }))
    .unwrap();
    let s = cfg.for_agent(Some("  SMALL-model "));
    assert_eq!((s.warning, s.critical, s.history_size.get(), s.enabled), (3, 6, 40, Some(true)));
    assert_eq!(cfg.for_agent(Some("plain")).warning, 10);
    assert_eq!(cfg.for_agent(Some("plain")).history_size.get(), 40);
    assert_eq!(cfg.for_agent(Some("unknown")).history_size.get(), 40);
    assert_eq!(cfg.for_agent(Some("")).history_size.get(), 40);
}

#[test]
fn normalize_agent_id_cases() {
    let cases = [
        ("", "main"),
        ("   ", "main"),
        ("Main", "main"),
        ("ops_bot-2", "ops_bot-2"),
        ("My Agent!", "my-agent"),
        ("--x--", "x"),
        ("日本", "main"),
        ("a  b", "a-b"),
        ("_lead", "_lead"),
    ];
    for (input, want) in cases {
        assert_eq!(normalize_agent_id(input), want, "{input:?}");
    }
    assert_eq!(normalize_agent_id(&"a".repeat(80)).len(), 64);
}

/// Every number has an upper bound, checked when the config is read, the error
/// naming the path and the bound; the bound itself is accepted, in the global block and an
/// agent's (`tools.loopDetection.historySize: 1000000000` was accepted before).
#[test]
fn every_number_has_an_upper_bound() {
    let cases = [
        ("historySize", 10_000),
        ("warningThreshold", 1_000_000),
        ("unknownToolThreshold", 1_000_000),
        ("criticalThreshold", 1_000_000),
        ("globalCircuitBreakerThreshold", 1_000_000),
        ("postCompactionGuard.windowSize", 10_000),
    ];
    let block = |key: &str, n: i64| match key.split_once('.') {
        Some((outer, inner)) => json!({ outer: { inner: n } }),
        None => json!({ key: n }),
    };
    for (key, max) in cases {
        for (doc, path) in [
            (|b| json!({"tools": {"loopDetection": b}}), "tools.loopDetection"),
            (
                |b| json!({"agents": {"list": [{"id": "a", "tools": {"loopDetection": b}}]}}),
                "agents.list[0].tools.loopDetection",
            ),
        ] as [(fn(Value) -> Value, &str); 2]
        {
            assert!(parse(doc(block(key, max))).is_ok(), "{path}.{key}: {max}");
            let e = parse(doc(block(key, max + 1))).unwrap_err();
            assert_eq!(e.path, format!("{path}.{key}"), "{e}");
            assert!(e.reason.contains(&format!("from 1 to {max}")), "{e}");
        }
    }
    let e = parse(json!({"tools": {"loopDetection": {"historySize": 1_000_000_000}}})).unwrap_err();
    assert_eq!(e.path, "tools.loopDetection.historySize");
}
