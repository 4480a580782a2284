use super::*;

fn session(line: &str) -> Option<String> {
    match route(line) {
        Route::Session(s) => Some(s.into_owned()),
        _ => None,
    }
}

#[test]
fn tool_events_route_by_the_session_the_policy_reads() {
    let plain = r#"{"kind":"tool_call","session":"s1","tool":"read","args":{"a":[1,"}",{"b":"\""}]}}"#;
    assert_eq!(session(plain).as_deref(), Some("s1"));
    assert_eq!(session(r#" { "session" : "s\u0031" , "kind":"tool_result","result":null} "#).as_deref(), Some("s1"));
    assert_eq!(session(r#"{"kind":"compaction","session":"\ud83d\ude00"}"#).as_deref(), Some("😀"));
    assert_eq!(session(r#"{"ki\u006ed":"compaction","sess\u0069on":"x"}"#).as_deref(), Some("x"));
    // Numbers the policy reads as JavaScript does (1e400 is Infinity) are skipped, not refused.
    assert_eq!(session(r#"{"kind":"tool_call","session":"s","args":{"n":1e400}}"#).as_deref(), Some("s"));
}

#[test]
fn what_serde_json_reads_otherwise_than_the_policy_goes_to_one_gateway() {
    for line in [
        // The policy takes the later duplicate; serde_json refuses any duplicate.
        r#"{"kind":"compaction","session":"a","session":"a"}"#,
        r#"{"kind":"compaction","session":"a","session":"b"}"#,
        r#"{"kind":"bot_message","kind":"tool_call","session":"a"}"#,
        // Lone surrogates, which the policy reads.
        r#"{"kind":"compaction","session":"s\ud800"}"#,
        r#"{"kind":"compaction","sess\udc00ion":"x"}"#,
        // Not a string, or not JSON at all: the policy names the error.
        r#"{"kind":"compaction","session":7}"#,
        "not json",
        "[1,2]",
        r#"{"session":"s","x":,"kind":"tool_call"}"#,
        r#"{"kind":"tool_call","session":"s"} trailing"#,
        r#"{"kind":"tool_call","session":"s""#,
    ] {
        assert_eq!(route(line), Route::Unreadable, "{line}");
    }
}

#[test]
fn other_events_are_global_and_empty_lines_blank() {
    assert_eq!(route(" \t\r"), Route::Blank);
    assert_eq!(route(""), Route::Blank);
    for line in [
        r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1}"#,
        r#"{"kind":"group_cancel","channel":"d","account":"a","conversation":"c","root":"r"}"#,
        r#"{"kind":"tool_call","tool":"read","args":null}"#,
        r#"{"kind":"teleport","session":"s"}"#,
        r#"{"kind":null,"session":"s"}"#,
        "{}",
    ] {
        assert_eq!(route(line), Route::Global, "{line}");
    }
}

#[test]
fn sessions_spread_over_workers() {
    let mut counts = [0usize; 2];
    for i in 0..1000 {
        counts[worker_of(&format!("agent:main:s{i}"), 2)] += 1;
    }
    assert!(counts.iter().all(|&c| c > 400), "{counts:?}");
    assert_eq!(worker_of("x", 1), 0);
}
