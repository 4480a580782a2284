//! Reports and what-ifs from imported sessions and decision lines.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use loopguard_transcripts::{discover, what_if, Change, Finding, Importer, ReportBuilder, SessionTrace};
use serde_json::json;

/// A stand-in for the replay: warns from call `warn_at` on and blocks from `block_at` on.
fn decisions(trace: &SessionTrace, warn_at: u32, block_at: u32) -> Vec<String> {
    trace
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let line = i + 1;
            let call = e.reference.call_index.unwrap_or(0);
            match e.reference.kind.name() {
                "tool_call" if call >= block_at => format!(
                    r#"{{"line":{line},"kind":"tool_call","action":"block","detector":"generic_repeat","count":{},"message":"CRITICAL"}}"#,
                    call - 1
                ),
                "tool_call" if call >= warn_at => format!(
                    r#"{{"line":{line},"kind":"tool_call","action":"warn","detector":"generic_repeat","count":{},"message":"WARNING","notify":true}}"#,
                    call - 1
                ),
                "tool_call" => format!(r#"{{"line":{line},"kind":"tool_call","action":"allow"}}"#),
                "tool_result" => format!(r#"{{"line":{line},"kind":"tool_result","action":"recorded"}}"#),
                _ => format!(r#"{{"line":{line},"kind":"compaction","action":"armed","remaining":3}}"#),
            }
        })
        .collect()
}

fn two_sessions() -> (tempfile::TempDir, Vec<SessionTrace>) {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("agents/main/agent/openclaw-agent.sqlite"), "main");
    store.session("agent:main:long", "long");
    store.session("agent:main:short", "short");
    let mut long = exec_loop("long", "run", 25, false);
    let reason = "CRITICAL: Called exec with identical arguments and identical outcomes 20 times. Session execution blocked to prevent runaway loops.";
    long.push(assistant("a26", "r25", "run", &[("call_fake_26", "exec", json!({"command":"echo loop"}))]));
    long.push(result(
        "r26",
        "a26",
        "run",
        "call_fake_26",
        "exec",
        json!([{"type":"text","text":reason}]),
        json!({"status":"blocked","deniedReason":"tool-loop","reason":reason}),
        true,
    ));
    for r in &long {
        store.plain("long", r);
    }
    for r in exec_loop("short", "run", 5, false) {
        store.plain("short", &r);
    }
    drop(store);
    let found = discover(&[tmp.path()]);
    let mut importer = Importer::default();
    let traces = importer.traces(&found.sessions).collect();
    (tmp, traces)
}

#[test]
fn the_report_names_the_first_warning_and_block_of_each_session() {
    let (_tmp, traces) = two_sessions();
    let mut report = ReportBuilder::new();
    for t in &traces {
        report.add_trace(t, &decisions(t, 11, 21)).unwrap();
    }
    let report = report.finish();
    let long = &report.rows[0];
    assert_eq!(long.tool_calls, 26);
    assert_eq!(
        long.first_warning,
        Some(Finding { call: 11, detector: "generic_repeat".into(), tool: "exec".into(), count: Some(10) })
    );
    assert_eq!(
        long.first_block,
        Some(Finding { call: 21, detector: "generic_repeat".into(), tool: "exec".into(), count: Some(20) })
    );
    assert_eq!((long.warnings, long.blocks), (10, 6));
    assert_eq!(
        long.gateway_block,
        Some(Finding { call: 26, detector: "generic_repeat".into(), tool: "exec".into(), count: Some(20) })
    );
    let short = &report.rows[1];
    assert_eq!((short.tool_calls, short.first_warning.clone(), short.first_block.clone()), (5, None, None));
    let s = &report.summary;
    assert_eq!(
        (s.sessions, s.tool_calls, s.sessions_with_warnings, s.sessions_with_blocks, s.sessions_with_gateway_blocks),
        (2, 31, 1, 1, 1)
    );
    assert_eq!(s.by_detector["generic_repeat"].sessions_blocked, 1);

    let table = report.to_table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "AGENT  SESSION           CALLS  FIRST WARNING            FIRST BLOCK              ABORTS  GATEWAY BLOCKED"
    );
    assert_eq!(lines[1], "main   agent:main:long   26     #11 generic_repeat exec  #21 generic_repeat exec  0       #26 generic_repeat exec");
    assert_eq!(lines[2], "main   agent:main:short  5      -                        -                        0       -");
    assert!(table.contains("2 sessions, 31 tool calls: 1 with warnings, 1 with blocks, 0 ended by an abort (1 blocked by the gateway itself)"), "{table}");

    let jsonl = report.to_jsonl();
    let rows: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["type"], "session");
    assert_eq!(rows[0]["first_block"], json!({"call":21,"detector":"generic_repeat","tool":"exec","count":20}));
    assert_eq!(rows[2]["type"], "summary");
    assert_eq!(rows[2]["by_detector"]["generic_repeat"]["blocks"], 6);
}

#[test]
fn decisions_that_do_not_fit_the_events_are_refused() {
    let (_tmp, traces) = two_sessions();
    let mut report = ReportBuilder::new();
    let mut d = decisions(&traces[1], 99, 99);
    d.pop();
    assert!(report.add_trace(&traces[1], &d).is_err());
    let mut d = decisions(&traces[1], 99, 99);
    d.swap(0, 1);
    let e = report.add_trace(&traces[1], &d).unwrap_err();
    assert!(e.to_string().contains("a `tool_result` decision for a `tool_call` event"), "{e}");
    let mut d = decisions(&traces[1], 99, 99);
    d[0] = "not json".into();
    assert!(report.add_trace(&traces[1], &d).is_err());
}

#[test]
fn what_if_lists_the_sessions_whose_verdicts_change() {
    let (_tmp, traces) = two_sessions();
    let build = |warn: u32, block_long: u32, block_short: u32| {
        let mut r = ReportBuilder::new();
        r.add_trace(&traces[0], &decisions(&traces[0], warn, block_long)).unwrap();
        r.add_trace(&traces[1], &decisions(&traces[1], warn, block_short)).unwrap();
        r.finish()
    };
    let a = build(11, 21, 99);
    let b = build(9, 16, 4);
    let w = what_if(&a, &b);
    assert_eq!(w.summary.sessions, 2);
    assert_eq!((w.summary.changed, w.summary.earlier, w.summary.new_blocks, w.summary.warnings_changed), (2, 1, 1, 1));
    let long = &w.changes[0];
    assert!(matches!(long.changes[0], Change::FirstBlockEarlier { by: 5, .. }), "{:?}", long.changes);
    assert!(matches!(long.changes[1], Change::WarningsChanged { before: 10, after: 7, .. }), "{:?}", long.changes);
    let short = &w.changes[1];
    assert!(matches!(&short.changes[0], Change::NewBlock { at } if at.call == 4));
    let back = what_if(&b, &a);
    assert!(matches!(back.changes[0].changes[0], Change::FirstBlockLater { by: 5, .. }));
    assert!(matches!(back.changes[1].changes[0], Change::BlockRemoved { .. }));
    assert!(what_if(&a, &a).changes.is_empty());

    let table = w.to_table();
    assert!(table.contains("main   agent:main:long   blocks 5 calls earlier  #21 generic_repeat exec"), "{table}");
    assert!(
        table.contains("2 of 2 sessions change: 1 newly blocked, 0 no longer blocked, 1 blocked earlier"),
        "{table}"
    );
    let lines: Vec<serde_json::Value> = w.to_jsonl().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "change");
    assert_eq!(lines[0]["changes"][0]["change"], "first_block_earlier");
    assert_eq!(lines[0]["changes"][0]["by"], 5);
    assert_eq!(lines[2]["type"], "what_if");
}

#[test]
fn progress_reports_sessions_and_calls_and_the_bar_hides_off_a_terminal() {
    let (tmp, _) = two_sessions();
    let found = discover(&[tmp.path()]);
    let mut seen = Vec::new();
    let mut importer = Importer::default();
    let n = importer
        .traces(&found.sessions)
        .with_progress(loopguard_transcripts::progress_fn(|done, total, calls| seen.push((done, total, calls))))
        .count();
    assert_eq!(n, 2);
    assert_eq!(seen, vec![(0, 2, 0), (1, 2, 26), (2, 2, 31)]);
    // Test output is captured, so stderr is not a terminal here.
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        assert!(!loopguard_transcripts::TerminalProgress::new().is_visible());
    }
}
