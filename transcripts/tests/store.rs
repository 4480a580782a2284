//! Agent stores built with OpenClaw 2026.9.6's schema and read back.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use loopguard_transcripts::{discover, Importer, KeySource, Outcome, Recorded, SourceFormat, TraceEvent};
use serde_json::json;

fn state_store(dir: &std::path::Path, agent: &str) -> StoreBuilder {
    StoreBuilder::create(&dir.join("agents").join(agent).join("agent").join("openclaw-agent.sqlite"), agent)
}

#[test]
fn a_state_directory_lists_its_agents_sessions_with_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let mut main = state_store(tmp.path(), "main");
    main.session("agent:main:lg1", "s-1");
    for r in exec_loop("s-1", "run-1", 2, false) {
        main.plain("s-1", &r);
    }
    main.session("agent:main:lg2", "s-2");
    main.plain("s-2", &header("s-2"));
    // A transcript no window or node knows: its key falls back to the session id.
    main.conn.execute_batch("PRAGMA foreign_keys = OFF;").unwrap();
    main.plain("s-orphan", &header("s-orphan"));
    let mut ops = state_store(tmp.path(), "ops");
    ops.session("agent:ops:x", "o-1");
    ops.plain("o-1", &header("o-1"));
    drop((main, ops));

    let found = discover(&[tmp.path()]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let got: Vec<_> = found
        .sessions
        .iter()
        .map(|s| (s.agent_id.as_deref().unwrap_or(""), s.session_key.as_str(), s.session_id.as_str(), s.key_source))
        .collect();
    assert_eq!(
        got,
        vec![
            ("main", "agent:main:lg1", "s-1", KeySource::SessionWindows),
            ("main", "agent:main:lg2", "s-2", KeySource::SessionWindows),
            ("main", "s-orphan", "s-orphan", KeySource::SessionId),
            ("ops", "agent:ops:x", "o-1", KeySource::SessionWindows),
        ]
    );
    assert!(found.sessions.iter().all(|s| s.format == SourceFormat::AgentStore));
}

#[test]
fn tool_calls_and_results_map_to_trace_events() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("agents/main/agent/openclaw-agent.sqlite");
    let mut store = StoreBuilder::create(&path, "main");
    store.session("agent:main:lg1", "s-1");
    for r in exec_loop("s-1", "run-1", 2, false) {
        store.plain("s-1", &r);
    }
    drop(store);
    let found = discover(&[&path]);
    let (lines, read) = trace_lines(&found.sessions[0]);
    assert!(read.is_clean(), "{:?}", read.errors);
    let call = r#"{"kind":"tool_call","session":"agent:main:lg1","tool":"exec","args":{"command":"echo loop"},"run":"run-1","agent":"main","call_id":"call_fake_1","ts_ms":1796155677166}"#;
    let result = r#"{"kind":"tool_result","session":"agent:main:lg1","tool":"exec","args":{"command":"echo loop"},"result":{"content":[{"type":"text","text":"loop"}],"details":{"aggregated":"loop","cwd":"/w","durationMs":287,"exitCode":0,"exitReason":"exit","exitSignal":null,"noOutputTimedOut":false,"status":"completed"}},"run":"run-1","agent":"main","call_id":"call_fake_1","ts_ms":1796155677630}"#;
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], call);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&lines[1]).unwrap(),
        serde_json::from_str::<serde_json::Value>(result).unwrap()
    );
    assert_eq!(read.stats.tool_calls, 2);
    assert_eq!(read.stats.tool_results, 2);
}

#[test]
fn compressed_rows_read_the_same_as_plain_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:plain", "p");
    store.session("agent:main:zstd", "z");
    let plain = exec_loop("p", "run", 5, true);
    let zstd = exec_loop("z", "run", 5, true);
    for r in &plain {
        store.plain("p", r);
    }
    let mut compressed = 0;
    for r in &zstd {
        let before = r.to_string().len();
        store.auto("z", r);
        compressed += usize::from(before >= 1024);
    }
    assert_eq!(compressed, 5, "the padded results are stored compressed");
    let n: i64 = store
        .conn
        .query_row("SELECT count(*) FROM transcript_events WHERE event_json IS NULL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 5);
    drop(store);
    let found = discover(&[tmp.path().join("a.sqlite")]);
    let (p, rp) = trace_lines(&found.sessions[0]);
    let (z, rz) = trace_lines(&found.sessions[1]);
    assert!(rp.is_clean() && rz.is_clean(), "{:?} {:?}", rp.errors, rz.errors);
    assert_eq!(p.len(), 10);
    let strip = |v: &Vec<String>, key: &str| v.iter().map(|l| l.replace(key, "K")).collect::<Vec<_>>();
    assert_eq!(strip(&p, "agent:main:plain"), strip(&z, "agent:main:zstd"));
}

#[test]
fn only_the_active_branch_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:b", "s");
    store.plain("s", &header("s"));
    store.plain("s", &user("u0", None, "go"));
    // First branch: a read loop, later abandoned by a rewind to u0.
    store.plain("s", &assistant("a1", "u0", "run-1", &[("c1", "read", json!({"path":"/a"}))]));
    store.plain("s", &result("r1", "a1", "run-1", "c1", "read", json!([{"type":"text","text":"x"}]), json!({}), false));
    // Second branch: a sibling of a1 under the same parent, with a compressed result.
    store.plain("s", &assistant("a2", "u0", "run-2", &[("c2", "exec", json!({"command":"ls"}))]));
    store.compressed("s", &exec_ok("r2", "a2", "run-2", "c2", &"y".repeat(2000)));
    drop(store);
    let found = discover(&[tmp.path().join("a.sqlite")]);
    let (lines, read) = trace_lines(&found.sessions[0]);
    assert!(read.is_clean(), "{:?}", read.errors);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains(r#""call_id":"c2""#));
    assert_eq!(read.stats.off_branch, 2);
    assert_eq!(read.stats.tool_calls, 1);
}

#[test]
fn a_leaf_record_makes_an_older_branch_active_again() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:b", "s");
    store.plain("s", &header("s"));
    store.plain("s", &user("u0", None, "go"));
    store.plain("s", &assistant("a1", "u0", "run-1", &[("c1", "read", json!({"path":"/a"}))]));
    store.plain("s", &result("r1", "a1", "run-1", "c1", "read", json!([{"type":"text","text":"x"}]), json!({}), false));
    store.plain("s", &assistant("a2", "u0", "run-2", &[("c2", "exec", json!({"command":"ls"}))]));
    store.plain("s", &json!({"type":"leaf","id":"l1","parentId":"a2","targetId":"r1"}));
    store.plain("s", &assistant("a3", "l1", "run-3", &[("c3", "read", json!({"path":"/b"}))]));
    drop(store);
    let found = discover(&[tmp.path().join("a.sqlite")]);
    let (lines, _) = trace_lines(&found.sessions[0]);
    let ids: Vec<_> =
        lines.iter().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["call_id"].clone()).collect();
    assert_eq!(ids, vec![json!("c1"), json!("c1"), json!("c3")]);
}

#[test]
fn compaction_entries_arm_the_guard_with_their_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:c", "s");
    let mut records = exec_loop("s", "run-1", 1, false);
    records.push(compaction("k1", "r1", "run-7"));
    for r in &records {
        store.plain("s", r);
    }
    drop(store);
    let found = discover(&[tmp.path().join("a.sqlite")]);
    let mut importer = Importer::default();
    let trace = importer.read_trace(&found.sessions[0]);
    let last = trace.events.last().unwrap();
    assert_eq!(last.event.to_line(), r#"{"kind":"compaction","session":"agent:main:c","run":"run-7","agent":"main"}"#);
    assert_eq!(trace.read.stats.compactions, 1);
}

#[test]
fn blocked_calls_are_results_with_the_gateways_detector() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("agent:main:blk", "s");
    let mut records = exec_loop("s", "run-1", 20, false);
    let reason =
        "CRITICAL: Called exec with identical outcomes 20 times. Session execution blocked to prevent runaway loops.";
    records.push(assistant("a21", "r20", "run-1", &[("call_fake_21", "exec", json!({"command":"echo loop"}))]));
    records.push(result(
        "r21",
        "a21",
        "run-1",
        "call_fake_21",
        "exec",
        json!([{"type":"text","text":format!("{reason}\n\nDo not repeat this exact tool action.")}]),
        json!({"status":"blocked","deniedReason":"tool-loop","intervention":{"kind":"critical-tool-loop","toolCallId":"call_fake_21","toolName":"exec","actionKey":"exec:0608","detector":"generic_repeat","count":20,"reason":reason}}),
        true,
    ));
    let plugin_reason = "LG: blocked exec call #22";
    records.push(assistant("a22", "r21", "run-1", &[("call_fake_22", "exec", json!({"command":"echo loop"}))]));
    records.push(result(
        "r22",
        "a22",
        "run-1",
        "call_fake_22",
        "exec",
        json!([{"type":"text","text":plugin_reason}]),
        json!({"status":"blocked","deniedReason":"plugin-before-tool-call","reason":plugin_reason}),
        true,
    ));
    for r in &records {
        store.auto("s", r);
    }
    drop(store);
    let found = discover(&[tmp.path().join("a.sqlite")]);
    let trace = Importer::default().read_trace(&found.sessions[0]);
    let results: Vec<_> = trace.events.iter().filter(|e| matches!(e.event, TraceEvent::ToolResult(_))).collect();
    assert_eq!(results.len(), 22);
    let blocked = results[20];
    assert_eq!(blocked.reference.call_index, Some(21));
    assert_eq!(
        blocked.reference.recorded,
        Some(Recorded::Blocked {
            denied_reason: "tool-loop".into(),
            detector: Some("generic_repeat".into()),
            count: Some(20)
        })
    );
    let TraceEvent::ToolResult(r) = &blocked.event else { unreachable!() };
    assert!(matches!(&r.outcome, Outcome::Result(v) if v["details"]["status"] == "blocked"));
    let TraceEvent::ToolResult(p) = &results[21].event else { unreachable!() };
    assert_eq!(
        p.outcome,
        Outcome::Result(
            json!({"content":[{"type":"text","text":plugin_reason}],"details":{"status":"blocked","deniedReason":"plugin-before-tool-call","reason":plugin_reason}})
        )
    );
}

#[test]
fn reads_a_wal_database_a_gateway_holds_open() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("agents/main/agent/openclaw-agent.sqlite");
    let mut store = StoreBuilder::create(&path, "main");
    store.conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;").unwrap();
    store.session("agent:main:live", "s");
    for r in exec_loop("s", "run", 3, true) {
        store.auto("s", &r);
    }
    assert!(path.with_extension("sqlite-wal").exists(), "rows sit in the WAL, not yet checkpointed");
    // The "gateway" keeps a write transaction open with an uncommitted row.
    store.conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    store.plain("s", &user("late", Some("r3"), "not committed"));
    let found = discover(&[tmp.path()]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let (lines, read) = trace_lines(&found.sessions[0]);
    assert!(read.is_clean(), "{:?}", read.errors);
    assert_eq!(lines.len(), 6);
    store.conn.execute_batch("COMMIT").unwrap();
    // The reader wrote nothing: the writer can still write and checkpoint.
    store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
}

#[test]
fn reading_never_writes_to_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a.sqlite");
    let mut store = StoreBuilder::create(&path, "main");
    store.session("k", "s");
    for r in exec_loop("s", "run", 2, false) {
        store.plain("s", &r);
    }
    drop(store);
    let before = std::fs::read(&path).unwrap();
    let found = discover(&[&path]);
    let _ = trace_lines(&found.sessions[0]);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no journal or WAL files created: {leftovers:?}");
}
