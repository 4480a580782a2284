//! Files the real OpenClaw 2026.9.6 gateway wrote (`tests/fixtures/openclaw-2026.9.6/`, made by
//! `tests/e2e/make-fixtures.mjs`; its `expected.json` says what they hold), read back and
//! replayed on the policy's native core.
//!
//! If the fixture directory is missing, the tests say so and pass (set
//! `LOOPGUARD_REQUIRE_FIXTURES=1` to make that a failure).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use loopguard_transcripts::{
    discover, Importer, KeySource, Location, Outcome, Recorded, ReportBuilder, SessionInfo, SessionTrace, SourceFormat,
    TraceEvent,
};
use serde_json::Value;

fn fixtures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/openclaw-2026.9.6");
    if dir.join("expected.json").is_file() {
        return Some(dir);
    }
    assert!(std::env::var_os("LOOPGUARD_REQUIRE_FIXTURES").is_none(), "{} is missing", dir.display());
    eprintln!("skipped: {} is missing", dir.display());
    None
}

fn expected(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap()
}

fn sessions_of(path: &Path) -> Vec<Arc<SessionInfo>> {
    let found = discover(&[path]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    found.sessions
}

fn trace_of(sessions: &[Arc<SessionInfo>], key: &str) -> SessionTrace {
    let info = sessions.iter().find(|s| s.session_key == key).unwrap_or_else(|| panic!("no session {key}"));
    let trace = Importer::default().read_trace(info);
    assert!(trace.read.is_clean(), "{key}: {:?}", trace.read.errors);
    trace
}

fn calls(trace: &SessionTrace) -> Vec<(&loopguard_transcripts::ToolCall, &loopguard_transcripts::EventRef)> {
    trace
        .events
        .iter()
        .filter_map(|e| match &e.event {
            TraceEvent::ToolCall(c) => Some((c, &e.reference)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_store_holds_the_sessions_expected_json_names() {
    let Some(dir) = fixtures() else { return };
    let exp = expected(&dir);
    let sessions = sessions_of(&dir.join("openclaw-agent.sqlite"));
    // The four live sessions, and the deleted one kept in session_transcript_archives.
    assert_eq!(sessions.len(), 5);
    let deleted = sessions.iter().find(|s| s.format == SourceFormat::StoreArchive).unwrap();
    assert_eq!(deleted.session_key, exp["files"]["deletedSessionJsonl"]["sessionKey"].as_str().unwrap());
    assert_eq!(deleted.key_source, KeySource::TranscriptArchives);
    for (_, s) in exp["sessions"].as_object().unwrap() {
        let key = s["sessionKey"].as_str().unwrap();
        let info = sessions.iter().find(|i| i.session_key == key).unwrap();
        assert_eq!(info.session_id, s["sessionId"].as_str().unwrap());
        assert_eq!(info.agent_id.as_deref(), Some("main"));
        assert_eq!(info.format, SourceFormat::AgentStore);
        assert!(matches!(info.key_source, KeySource::SessionWindows | KeySource::SessionNodes));
    }
}

#[test]
fn every_tool_call_and_result_maps_as_recorded() {
    let Some(dir) = fixtures() else { return };
    let exp = expected(&dir);
    let sessions = sessions_of(&dir.join("openclaw-agent.sqlite"));
    for (name, per) in exp["perSession"].as_object().unwrap() {
        let trace = trace_of(&sessions, per["sessionKey"].as_str().unwrap());
        let want = per["toolCalls"].as_array().unwrap();
        let got = calls(&trace);
        assert_eq!(got.len(), want.len(), "{name}: tool calls");
        for ((call, r), w) in got.iter().zip(want) {
            assert_eq!(r.call_index, Some(w["index"].as_u64().unwrap() as u32), "{name}");
            assert_eq!(call.call_id.as_deref(), w["id"].as_str(), "{name}");
            assert_eq!(call.tool, w["tool"].as_str().unwrap(), "{name}");
            assert_eq!(call.args, w["arguments"], "{name}");
            assert_eq!(call.run.as_deref(), w["runId"].as_str(), "{name}");
            assert_eq!(r.location, Location::Row(w["seq"].as_i64().unwrap()), "{name}");
            assert_eq!(call.agent.as_deref(), Some("main"));
            assert!(call.ts_ms.is_some());
        }
        let results: Vec<_> = trace.events.iter().filter(|e| matches!(e.event, TraceEvent::ToolResult(_))).collect();
        let want = per["toolResults"].as_array().unwrap();
        assert_eq!(results.len(), want.len(), "{name}: tool results");
        for (e, w) in results.iter().zip(want) {
            let TraceEvent::ToolResult(res) = &e.event else { unreachable!() };
            assert_eq!(e.reference.location, Location::Row(w["seq"].as_i64().unwrap()), "{name}");
            assert_eq!(res.call_id.as_deref(), w["toolCallId"].as_str(), "{name}");
            assert_eq!(e.reference.call_index, Some(w["callIndex"].as_u64().unwrap() as u32), "{name}");
            match (w["status"].as_str(), w["isError"].as_bool()) {
                (Some("blocked"), _) => {
                    let Outcome::Result(v) = &res.outcome else { panic!("{name}: a block is a result") };
                    assert_eq!(v["details"]["status"], "blocked");
                }
                (_, Some(true)) => assert!(matches!(res.outcome, Outcome::Error(_)), "{name}"),
                _ => {
                    let Outcome::Result(v) = &res.outcome else { panic!("{name}: {:?}", res.outcome) };
                    // The appended warning part is not part of the outcome.
                    let texts: Vec<&str> =
                        v["content"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect();
                    let want: Vec<&str> = w["texts"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|t| !t.starts_with("[System note: Tool-loop warning"))
                        .collect();
                    assert_eq!(texts, want, "{name}");
                }
            }
        }
        let compactions: Vec<_> =
            trace.events.iter().filter(|e| matches!(e.event, TraceEvent::Compaction(_))).collect();
        let want = per["compactions"].as_array().unwrap();
        assert_eq!(compactions.len(), want.len(), "{name}: compactions");
        for (e, w) in compactions.iter().zip(want) {
            let TraceEvent::Compaction(c) = &e.event else { unreachable!() };
            assert_eq!(c.run.as_deref(), w["runId"].as_str());
            assert_eq!(e.reference.location, Location::Row(w["seq"].as_i64().unwrap()));
        }
    }
}

#[test]
fn the_gateways_own_block_and_warning_are_recoverable() {
    let Some(dir) = fixtures() else { return };
    let exp = &expected(&dir)["sessions"]["loop"];
    let sessions = sessions_of(&dir.join("openclaw-agent.sqlite"));
    let trace = trace_of(&sessions, exp["sessionKey"].as_str().unwrap());
    let recorded: Vec<_> = trace.events.iter().filter_map(|e| e.reference.recorded.as_ref().map(|r| (e, r))).collect();
    let blocks: Vec<_> = recorded.iter().filter(|(_, r)| matches!(r, Recorded::Blocked { .. })).collect();
    let want = exp["blocked"].as_array().unwrap();
    assert_eq!(blocks.len(), want.len());
    for ((e, r), w) in blocks.iter().zip(want) {
        assert_eq!(e.reference.call_index, Some(w["callIndex"].as_u64().unwrap() as u32));
        assert_eq!(e.reference.call_id.as_deref(), w["toolCallId"].as_str());
        assert_eq!(e.reference.location, Location::Row(w["seq"].as_i64().unwrap()));
        assert_eq!(
            **r,
            Recorded::Blocked {
                denied_reason: w["deniedReason"].as_str().unwrap().into(),
                detector: w["detector"].as_str().map(str::to_string),
                count: w["count"].as_u64(),
            }
        );
    }
    let warned: Vec<_> =
        recorded.iter().filter(|(_, r)| matches!(r, Recorded::Completed { loop_warning: Some(_) })).collect();
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0].0.reference.call_index, Some(exp["warning"]["callIndex"].as_u64().unwrap() as u32));
}

fn replay(config: &str, traces: &[SessionTrace]) -> loopguard_transcripts::Report {
    let mut gateway = loopguard_policy::gateway::Gateway::from_config(config).unwrap();
    let mut builder = ReportBuilder::new();
    let mut line = 1u32;
    for t in traces {
        let decisions = gateway.apply_events(&t.trace_text(), line).unwrap();
        line += t.events.len() as u32;
        let decisions: Vec<&str> = decisions.lines().collect();
        builder.add_trace(t, &decisions).unwrap();
    }
    builder.finish()
}

#[test]
fn replaying_the_real_history_fires_where_the_gateway_fired() {
    let Some(dir) = fixtures() else { return };
    let exp = expected(&dir);
    let sessions = sessions_of(&dir.join("openclaw-agent.sqlite"));
    let traces: Vec<SessionTrace> = Importer::default().traces(&sessions).collect();
    let report = replay(r#"{"tools":{"loopDetection":{"enabled":true}}}"#, &traces);
    let row = |key: &str| report.rows.iter().find(|r| r.session_key == key).unwrap();
    let lp = &exp["sessions"]["loop"];
    let loop_row = row(lp["sessionKey"].as_str().unwrap());
    let block = loop_row.first_block.as_ref().unwrap();
    let gateway = loop_row.gateway_block.as_ref().unwrap();
    assert_eq!((block.call, block.detector.as_str(), block.tool.as_str()), (21, "generic_repeat", "exec"));
    assert_eq!(
        (gateway.call, gateway.detector.as_str()),
        (lp["gatewayBlock"]["callIndex"].as_u64().unwrap() as u32, "generic_repeat")
    );
    assert_eq!(
        loop_row.first_warning.as_ref().map(|w| w.call),
        Some(lp["warning"]["callIndex"].as_u64().unwrap() as u32)
    );
    // (b): the gateway's post-compaction guard aborted the run on the outcome of the third
    // identical call after the compaction (call 9), and that outcome was never persisted: the
    // transcript ends with call 9 unanswered. The replay sees the compaction and two identical
    // outcomes, so it cannot abort; the report shows the unanswered call instead.
    let cp = row(exp["sessions"]["compaction"]["sessionKey"].as_str().unwrap());
    assert_eq!((cp.tool_calls, cp.aborts, cp.unanswered_calls), (9, 0, 1));
    let traces_b = traces.iter().find(|t| t.info.session_key == cp.session_key).unwrap();
    let last_call =
        traces_b.events.iter().rev().find(|e| e.reference.kind == loopguard_transcripts::EventKind::ToolCall).unwrap();
    assert_eq!(last_call.reference.call_index, Some(9));
    assert_eq!(
        traces_b.events.last().unwrap().reference.call_index,
        Some(9),
        "the session ends on the unanswered call"
    );
    for s in ["zstd", "healthy"] {
        let r = row(exp["sessions"][s]["sessionKey"].as_str().unwrap());
        assert_eq!((r.warnings, r.blocks, r.aborts), (0, 0, 0), "{s}");
    }
    // The four live sessions and the deleted one (a healthy run of 5 calls).
    assert_eq!(report.summary.tool_calls, 22 + 9 + 3 + 5 + 5);
}

#[test]
fn the_trajectory_export_gives_the_stores_trace() {
    let Some(dir) = fixtures() else { return };
    let store = sessions_of(&dir.join("openclaw-agent.sqlite"));
    let export = sessions_of(&dir.join("trajectory-fx-loop-exec"));
    assert_eq!(export.len(), 1);
    assert_eq!(export[0].format, SourceFormat::Trajectory);
    assert_eq!(export[0].key_source, KeySource::Manifest);
    let a = trace_of(&store, &export[0].session_key);
    let b = Importer::default().read_trace(&export[0]);
    assert!(b.read.is_clean(), "{:?}", b.read.errors);
    assert_eq!(a.info.session_id, b.info.session_id);
    // The export redacts paths (`details.cwd`); everything else is the same.
    let strip = |t: &SessionTrace| -> Vec<Value> {
        t.events
            .iter()
            .map(|e| {
                let mut v: Value = serde_json::from_str(&e.event.to_line()).unwrap();
                if let Some(d) = v.pointer_mut("/result/details").and_then(Value::as_object_mut) {
                    d.remove("cwd");
                }
                v
            })
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn the_deleted_session_archive_reads_compressed_or_not() {
    let Some(dir) = fixtures() else { return };
    let jsonl = dir.join("deleted-session-jsonl");
    let files: Vec<PathBuf> = std::fs::read_dir(&jsonl).unwrap().map(|e| e.unwrap().path()).collect();
    let plain = files.iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).unwrap();
    let zst = files.iter().find(|p| p.extension().is_some_and(|e| e == "zst")).unwrap();
    let a = &sessions_of(plain)[0];
    let b = &sessions_of(zst)[0];
    assert_eq!(a.session_id, b.session_id);
    let ta = Importer::default().read_trace(a);
    let tb = Importer::default().read_trace(b);
    assert!(ta.read.is_clean() && tb.read.is_clean(), "{:?} {:?}", ta.read.errors, tb.read.errors);
    assert!(ta.read.stats.tool_calls > 0);
    assert_eq!(ta.trace_text(), tb.trace_text());
    // Laid out as OpenClaw keeps it (agents/main/sessions/ beside agents/main/agent/), the
    // archive gets its session key from the store's session_transcript_archives.
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agents/main");
    std::fs::create_dir_all(agent.join("agent")).unwrap();
    std::fs::create_dir_all(agent.join("sessions")).unwrap();
    std::fs::copy(dir.join("openclaw-agent.sqlite"), agent.join("agent/openclaw-agent.sqlite")).unwrap();
    std::fs::copy(zst, agent.join("sessions").join(zst.file_name().unwrap())).unwrap();
    let found = discover(&[tmp.path()]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    assert_eq!(found.sessions.len(), 5);
    let from_file = sessions_of(&agent.join("sessions").join(zst.file_name().unwrap()));
    assert_eq!(
        from_file[0].session_key,
        expected(&dir)["files"]["deletedSessionJsonl"]["sessionKey"].as_str().unwrap()
    );
    assert_eq!(from_file[0].key_source, KeySource::TranscriptArchives);
    // Found with its store, it is read once, from the store's copy, which is the same.
    let deleted = found.sessions.iter().find(|s| s.session_id == a.session_id).unwrap();
    assert_eq!(deleted.format, SourceFormat::StoreArchive);
    let td = Importer::default().read_trace(deleted);
    assert!(td.read.is_clean(), "{:?}", td.read.errors);
    let tf = Importer::default().read_trace(&from_file[0]);
    assert_eq!(td.trace_text(), tf.trace_text());
    assert_eq!(td.read.stats.tool_calls, ta.read.stats.tool_calls);
}

#[test]
fn the_whole_fixture_directory_reads_each_session_once() {
    let Some(dir) = fixtures() else { return };
    let found = discover(&[&dir]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let mut ids: Vec<&str> = found.sessions.iter().map(|s| s.session_id.as_str()).collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "{:#?}", found.sessions);
    // The deleted session's JSONL copies beside the store are skipped for the store's copy.
    let deleted = found.sessions.iter().find(|s| s.session_id == "5355734f-25d5-4058-bee5-d56b9f383c7f").unwrap();
    assert_eq!(deleted.format, SourceFormat::StoreArchive);
}
