//! End to end on the real policy (its native core): transcripts shaped like the ones OpenClaw
//! 2026.9.6 wrote in the gateway runs (tests/fixtures/openclaw-2026.9.6) are imported, replayed,
//! and reported; the guard must fire where OpenClaw's own guard fired.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use loopguard_transcripts::{
    apply_overrides, discover, what_if, Change, Importer, Report, ReportBuilder, SessionTrace,
};
use serde_json::{json, Value};

const ON: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;
const WARNING: &str = "[System note: Tool-loop warning after 10 repeated calls. Change your approach or stop if you are not making progress.]";
const CRITICAL: &str = "CRITICAL: Called TOOL with identical arguments and identical outcomes 20 times. Session execution blocked to prevent runaway loops.";

/// `n` identical calls of `tool` as the gateway stored them with its guard on: the 11th result
/// carries the appended warning, the 21st and later are `tool-loop` blocks.
fn gateway_loop(session: &str, tool: &str, n: usize) -> Vec<Value> {
    let mut out = vec![header(session), user("u0", None, "loop please")];
    let mut parent = "u0".to_string();
    for i in 1..=n {
        let (a, r, c) = (format!("a{i}"), format!("r{i}"), format!("call_fake_{i}"));
        let args = json!({"path": "/etc/hosts", "command": "echo loop"});
        out.push(assistant(&a, &parent, "run-1", &[(&c, tool, args)]));
        let reason = CRITICAL.replace("TOOL", tool);
        let (content, details, is_error) = if i > 20 {
            (
                json!([{"type":"text","text":format!("{reason}\n\nDo not repeat this exact tool action.")}]),
                json!({"status":"blocked","deniedReason":"tool-loop","reason":reason}),
                true,
            )
        } else if i == 11 {
            (
                json!([{"type":"text","text":"same"},{"type":"text","text":WARNING}]),
                json!({"status":"completed","durationMs":i}),
                false,
            )
        } else {
            (json!([{"type":"text","text":"same"}]), json!({"status":"completed","durationMs":i}), false)
        };
        // durationMs changes every call, as in real results: the guard's hash must not see it for
        // exec (it hashes status/exitCode/output), but does for other tools' details, so the
        // generic tool below uses constant details.
        let details = if tool == "exec" { details } else { strip_duration(details) };
        out.push(result(&r, &a, "run-1", &c, tool, content, details, is_error));
        parent = r;
    }
    out
}

fn strip_duration(mut d: Value) -> Value {
    if let Some(o) = d.as_object_mut() {
        o.remove("durationMs");
    }
    d
}

fn decide(gateway: &mut loopguard_policy::gateway::Gateway, trace: &SessionTrace, first_line: &mut u32) -> Vec<String> {
    let text = trace.trace_text();
    let out = gateway.apply_events(&text, *first_line).unwrap();
    *first_line += trace.events.len() as u32;
    out.lines().map(str::to_string).collect()
}

fn report(config: &str, traces: &[SessionTrace]) -> Report {
    let mut gateway = loopguard_policy::gateway::Gateway::from_config(config).unwrap();
    let mut builder = ReportBuilder::new();
    let mut line = 1;
    for t in traces {
        builder.add_trace(t, &decide(&mut gateway, t, &mut line)).unwrap();
    }
    builder.finish()
}

fn import(dir: &std::path::Path) -> Vec<SessionTrace> {
    let found = discover(&[dir]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let mut importer = Importer::default();
    importer.traces(&found.sessions).collect()
}

#[test]
fn the_guard_blocks_where_openclaws_own_guard_blocked() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("agents/main/agent/openclaw-agent.sqlite"), "main");
    store.session("agent:main:exec", "s-exec");
    store.session("agent:main:read", "s-read");
    for r in gateway_loop("s-exec", "exec", 22) {
        store.auto("s-exec", &r);
    }
    for r in gateway_loop("s-read", "read", 22) {
        store.auto("s-read", &r);
    }
    drop(store);
    let traces = import(tmp.path());
    let report = report(ON, &traces);
    for row in &report.rows {
        let w = row.first_warning.as_ref().unwrap();
        let b = row.first_block.as_ref().unwrap();
        assert_eq!((w.call, w.detector.as_str(), w.count), (11, "generic_repeat", Some(10)), "{}", row.session_key);
        assert_eq!((b.call, b.detector.as_str(), b.count), (21, "generic_repeat", Some(20)), "{}", row.session_key);
        let g = row.gateway_block.as_ref().unwrap();
        assert_eq!(
            (g.call, g.detector.as_str()),
            (21, "generic_repeat"),
            "the transcript's own block is at the same call"
        );
        assert_eq!(row.gateway_warning.as_ref().map(|f| f.call), Some(11));
        assert_eq!(row.blocks, 2, "the 22nd identical call is blocked again (the veto result has no hash)");
    }
}

#[test]
fn keeping_the_appended_warning_would_have_moved_the_block() {
    // The same `read` loop, with the warning part left in the 11th outcome by hand: its hash
    // differs, the no-progress streak restarts, and the block comes later. This is why the
    // importer drops the part OpenClaw appended after recording.
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:read", "s");
    for r in gateway_loop("s", "read", 22) {
        store.plain("s", &r);
    }
    drop(store);
    let traces = import(tmp.path());
    let mut results = 0;
    let patched: Vec<String> = traces[0]
        .trace_text()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["kind"] == "tool_result" {
                results += 1;
                if results == 11 {
                    v["result"]["content"].as_array_mut().unwrap().push(json!({"type":"text","text":WARNING}));
                }
            }
            v.to_string()
        })
        .collect();
    let decisions = loopguard_policy::replay::replay(ON, &patched.join("\n")).unwrap();
    let first_block = decisions.lines().position(|d| d.contains(r#""action":"block""#));
    let imported = loopguard_policy::replay::replay(ON, &traces[0].trace_text()).unwrap();
    let imported_block = imported.lines().position(|d| d.contains(r#""action":"block""#));
    assert_eq!(imported_block, Some(40), "the 21st call is the 41st event");
    assert_eq!(first_block, None, "with the note kept, 22 calls are not enough to block");
}

#[test]
fn what_if_on_real_decisions() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:loop", "s-loop");
    store.session("agent:main:calm", "s-calm");
    for r in gateway_loop("s-loop", "exec", 22) {
        store.auto("s-loop", &r);
    }
    for r in exec_loop("s-calm", "run", 8, false) {
        store.plain("s-calm", &r);
    }
    drop(store);
    let traces = import(tmp.path());
    let a = report(ON, &traces);
    let stricter =
        apply_overrides(ON, &["tools.loopDetection.warningThreshold=5", "tools.loopDetection.criticalThreshold=7"])
            .unwrap();
    let b = report(&stricter, &traces);
    let w = what_if(&a, &b);
    assert_eq!(w.summary.sessions, 2);
    let loop_change = w.changes.iter().find(|c| c.session_key == "agent:main:loop").unwrap();
    assert!(
        loop_change.changes.iter().any(|c| matches!(c, Change::FirstBlockEarlier { by: 13, to, .. } if to.call == 8)),
        "{:?}",
        loop_change.changes
    );
    let calm = w.changes.iter().find(|c| c.session_key == "agent:main:calm").unwrap();
    assert!(calm.changes.iter().any(|c| matches!(c, Change::NewBlock { at } if at.call == 8)), "{:?}", calm.changes);
    let off = apply_overrides(ON, &["tools.loopDetection.enabled=false"]).unwrap();
    let c = report(&off, &traces);
    let w = what_if(&a, &c);
    assert_eq!(w.summary.blocks_removed, 1);
}
