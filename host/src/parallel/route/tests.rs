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
    // Lone surrogates are dropped, pairs decoded, in keys too; the last duplicate wins.
    assert_eq!(session(r#"{"kind":"compaction","session":"s\ud800"}"#).as_deref(), Some("s"));
    assert_eq!(session(r#"{"kind":"compaction","session":"\ud83d\ude00"}"#).as_deref(), Some("😀"));
    assert_eq!(session(r#"{"kind":"compaction","sess\udc00ion":"x"}"#).as_deref(), Some("x"));
    assert_eq!(session(r#"{"kind":"compaction","session":"a","session":"a"}"#).as_deref(), Some("a"));
    assert_eq!(route(r#"{"kind":"compaction","session":"a","session":"b"}"#), Route::Ambiguous);
    assert_eq!(route(r#"{"kind":"compaction","session":"a","session":7}"#), Route::Ambiguous);
    assert_eq!(route(r#"{"kind":"compaction","session":"a","sessio\u006e\udc00":"b"}"#), Route::Ambiguous);
}

#[test]
fn everything_else_is_global_or_blank() {
    assert_eq!(route(" \t\r"), Route::Blank);
    assert_eq!(route(""), Route::Blank);
    for line in [
        r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1}"#,
        r#"{"kind":"group_cancel","channel":"d","account":"a","conversation":"c","root":"r"}"#,
        r#"{"kind":"tool_call","tool":"read","args":null}"#,
        r#"{"kind":"teleport","session":"s"}"#,
        "not json",
        "[1,2]",
        r#"{"session":"s","x":,"kind":"tool_call"}"#,
    ] {
        assert_eq!(route(line), Route::Global, "{line}");
    }
    // A line bad only after its kind and session goes to that session's worker, which
    // refuses it as any worker would (the rest of a line is not read once it cannot change
    // the route).
    for line in [r#"{"kind":"tool_call","session":"s"} trailing"#, r#"{"kind":"tool_call","session":"s""#] {
        assert_eq!(session(line).as_deref(), Some("s"), "{line}");
    }
}

#[test]
fn the_rest_of_a_line_is_read_when_it_could_name_kind_or_session_again() {
    let head = r#"{"kind":"tool_call","session":"a","args":{"q":"kind session \"kinds\""}"#;
    assert_eq!(session(&format!("{head}}}")).as_deref(), Some("a"));
    for tail in [
        r#","session":"b"}"#,
        r#","kind":"bot_message"}"#,
        r#","sess\u0069on":"b"}"#,
        r#","sess\udc00ion":"b"}"#,
        r#","ki\u006ed":"compaction"}"#,
    ] {
        assert_eq!(route(&format!("{head}{tail}")), Route::Ambiguous, "{tail}");
    }
    // Named again with the same value, or inside a string: still the session.
    for tail in [r#","session":"a"}"#, r#","note":"\"session\": \"b\""}"#, r#","u":"\u00e9"}"#] {
        assert_eq!(session(&format!("{head}{tail}")).as_deref(), Some("a"), "{tail}");
    }
}

#[test]
fn the_usual_head_is_routed_as_the_scanner_routes_it() {
    let usual = [
        r#"{"kind":"tool_call","session":"agent:main:s1","tool":"read","args":{"a":1}}"#,
        r#"{"kind":"tool_result","session":"s2","result":{"content":"kinds"}}"#,
        r#"{"kind":"compaction","session":"s3"}"#,
        r#"{"kind":"bot_message","session":"s4","channel":"d"}"#,
        r#"{"kind":"tool_call","session":"s"} trailing"#,
        r#"{"kind":"tool_call","session":""}"#,
    ];
    for line in usual {
        assert_eq!(usual_head(line), Some(scan(line)), "{line}");
    }
    // Anything else is left to the scanner.
    for line in [
        r#"{"kind":"tool_call","session":"s","args":{"session":"t"}}"#,
        r#"{"kind":"tool_call","session":"s","session":"t"}"#,
        r#"{"kind":"tool_call","session":"s\u0031"}"#,
        r#"{"kind":"tool_call","session":"s","args":"\u00e9"}"#,
        r#"{"kind":"tool\u005fcall","session":"s"}"#,
        r#"{"session":"s","kind":"tool_call"}"#,
        r#"{ "kind":"tool_call","session":"s"}"#,
        r#"{"kind":"tool_call", "session":"s"}"#,
        r#"{"kind":"tool_call","session":"s"#,
    ] {
        assert_eq!(usual_head(line), None, "{line}");
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
