//! Replay: trace lines in, decision lines out (docs/spec/trace-format.md), through the public API.

use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;
use loopguard_policy::replay::replay;

const ON: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;

#[test]
fn the_spec_example_replays_exactly() {
    let trace = concat!(
        r#"{"kind":"tool_call","session":"s1","tool":"read","args":{"path":"/a"}}"#,
        "\n",
        r#"{"kind":"tool_result","session":"s1","tool":"read","args":{"path":"/a"},"result":{"content":[{"type":"text","text":"x"}]}}"#,
        "\n",
        r#"{"kind":"bot_message","channel":"discord","account":"default","conversation":"c1","sender":"b1","receiver":"b2","ts_ms":1000}"#,
        "\n",
    );
    assert_eq!(
        replay(ON, trace).unwrap(),
        concat!(
            r#"{"line":1,"kind":"tool_call","action":"allow"}"#,
            "\n",
            r#"{"line":2,"kind":"tool_result","action":"recorded"}"#,
            "\n",
            r#"{"line":3,"kind":"bot_message","action":"allow"}"#,
            "\n",
        )
    );
}

#[test]
fn blank_lines_are_skipped_and_crlf_ignored_but_numbering_kept() {
    let trace = "\n  \r\n{\"kind\":\"compaction\",\"session\":\"s\"}\r\n\t\n";
    assert_eq!(
        replay("{}", trace).unwrap(),
        "{\"line\":3,\"kind\":\"compaction\",\"action\":\"armed\",\"remaining\":3}\n"
    );
}

#[test]
fn bad_lines_name_the_line_and_field() {
    let ok = r#"{"kind":"compaction","session":"s"}"#;
    let cases: &[(&str, &str, &str)] = &[
        ("{not json", "line 2", "not valid JSON"),
        ("[1]", "line 2", "JSON object"),
        (r#"{"kind":"tool_call","tool":"t","args":null}"#, "line 2: session", "missing"),
        (r#"{"kind":"tool_call","session":5,"tool":"t","args":null}"#, "line 2: session", "string"),
        (r#"{"kind":"tool_call","session":"s","tool":"t"}"#, "line 2: args", "missing"),
        (r#"{"kind":"tool_call","session":"s","tool":"t","args":1,"run":null}"#, "line 2: run", "string"),
        (r#"{"kind":"tool_call","session":"s","tool":"t","args":1,"ts_ms":1.5}"#, "line 2: ts_ms", "integer"),
        (r#"{"kind":"tool_result","session":"s","tool":"t","args":1}"#, "line 2: result", "missing"),
        (
            r#"{"kind":"tool_result","session":"s","tool":"t","args":1,"result":1,"error":"x"}"#,
            "line 2: result",
            "exactly one",
        ),
        (r#"{"kind":"launch"}"#, "line 2: kind", "unknown kind"),
        (r#"{"session":"s"}"#, "line 2: kind", "missing"),
        (
            r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":-5}"#,
            "line 2: ts_ms",
            "non-negative",
        ),
        (
            r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y"}"#,
            "line 2: ts_ms",
            "missing",
        ),
        (
            r#"{"kind":"group_replies","channel":"d","account":"a","conversation":"c","root":"r","replies":[{"agent":"a","reply":1}]}"#,
            "line 2: replies[0].reply",
            "string",
        ),
    ];
    for (line, path, reason) in cases {
        let e = replay("{}", &format!("{ok}\n{line}\n{ok}\n")).unwrap_err();
        assert_eq!(e.path, *path, "{line}");
        assert!(e.reason.contains(reason), "{line}: {e}");
    }
}

#[test]
fn the_error_is_the_first_bad_line_whatever_is_wrong_with_the_later_ones() {
    let ok = r#"{"kind":"compaction","session":"s"}"#;
    let wrong_type = r#"{"kind":"tool_call","session":1,"tool":"t","args":null}"#;
    let e = replay("{}", &format!("{ok}\n{wrong_type}\n{{not json\n")).unwrap_err();
    assert_eq!(e.path, "line 2: session", "{e}");
    let e = replay("{}", &format!("{ok}\n{{not json\n{wrong_type}\n")).unwrap_err();
    assert_eq!(e.path, "line 2", "{e}");
}

#[test]
fn a_bad_line_applies_nothing_from_its_batch() {
    let mut gw = Gateway::new(Config::parse(ON).unwrap());
    let call = r#"{"kind":"tool_call","session":"s","tool":"t","args":1}"#;
    assert!(gw.apply_events(&format!("{call}\n{{bad\n"), 1).is_err());
    assert_eq!(gw.stats().sessions, 0);
}

#[test]
fn huge_and_deep_values_are_errors() {
    let big = format!(r#"{{"kind":"tool_call","session":"s","tool":"t","args":"{}"}}"#, "x".repeat(16 << 20));
    let e = replay("{}", &big).unwrap_err();
    assert_eq!(e.path, "line 1");
    assert!(e.reason.contains("bytes"), "{e}");
    let deep = format!(
        r#"{{"kind":"tool_call","session":"s","tool":"t","args":{}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let e = replay("{}", &deep).unwrap_err();
    assert!(e.reason.contains("nested deeper"), "{e}");
}

#[test]
fn config_errors_cross_as_policy_errors_with_their_path() {
    let e = replay(r#"{"tools":{"loopDetection":{"historySize":0}}}"#, "").unwrap_err();
    assert_eq!(e.path, "tools.loopDetection.historySize");
}

#[test]
fn a_newer_policy_reads_a_format_1_snapshot() {
    // Policy 0.1 wrote format 1 (sessions only); this policy writes format 2 and reads both.
    let trace = include_str!("../../examples/traces/exec-poll-no-progress/trace.jsonl");
    let config = include_str!("../../examples/traces/exec-poll-no-progress/config.json5");
    let expected = include_str!("../../examples/traces/exec-poll-no-progress/expected.jsonl");
    let lines: Vec<&str> = trace.lines().collect();
    let mut old = Gateway::new(Config::parse(config).unwrap());
    let mut out = old.apply_events(&lines[..30].join("\n"), 1).unwrap();
    let v1 = loopguard_policy::snapshot::export_v1(&old);
    assert_eq!(&v1[..8], b"LGSNAP\x01\x00");
    let mut new = Gateway::new(Config::parse(config).unwrap());
    new.import_state(&v1).unwrap();
    out.push_str(&new.apply_events(&lines[30..].join("\n"), 31).unwrap());
    assert_eq!(out, expected, "the loop counted before the swap is blocked after it");
    // A snapshot from a future format is refused and leaves the state alone.
    let mut future = new.export_state();
    future[6] = 9;
    let e = new.import_state(&future).unwrap_err();
    assert!(e.reason.contains("format 9 is newer"), "{e}");
    assert!(new.import_state(b"garbage").is_err());
    assert_eq!(new.stats().sessions, 1);
}
