//! Import throughput: generates an agent store shaped like OpenClaw 2026.9.6's (its schema, tool
//! results of about 1.5 KB stored zstd-compressed with their `navigation_json`), then imports it
//! with the streaming reader and prints tool calls per second and the peak RSS.
//!
//! ```text
//! cargo run --release --example import_bench -- [TOOL_CALLS] [SESSIONS] [STORE_PATH]
//! ```
//! Defaults: 200,000 tool calls over 400 sessions, in a temporary directory. An existing
//! `STORE_PATH` is reused as it is (no generation).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use loopguard_transcripts::{discover, Importer, TraceEvent};
use rusqlite::{params, Connection};
use serde_json::{json, Value};

const SCHEMA: &str = include_str!("../tests/data/openclaw-2026.9.6-agent-schema.sql");

fn navigation_json(record: &Value) -> String {
    let mut nav = serde_json::Map::new();
    for key in ["type", "id", "parentId", "timestamp"] {
        if let Some(v) = record.get(key) {
            nav.insert(key.into(), v.clone());
        }
    }
    nav.insert(
        "message".into(),
        json!({"role": record["message"]["role"], "__openclaw": record["message"]["__openclaw"]}),
    );
    json!({"version":1,"report":{"kind":"canonical"},"navigation":nav,"reset":{},"model":{},"modelBytes":10,
           "modelWithoutCheckpointBytes":10,"withoutCustomDataBytes":10})
    .to_string()
}

fn generate(path: &Path, calls: usize, sessions: usize) {
    let mut conn = Connection::open(path).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;").unwrap();
    let tx = conn.transaction().unwrap();
    let per = calls.div_ceil(sessions);
    let mut made = 0usize;
    for s in 0..sessions {
        let sid = format!("00000000-0000-4000-8000-{s:012}");
        let key = format!("agent:main:bench{s}");
        tx.execute("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?1, ?2, '{}', 1)", params![key, sid]).unwrap();
        tx.execute(
            "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?1, ?2, 1, 1)",
            params![sid, key],
        )
        .unwrap();
        let mut insert = tx
            .prepare_cached("INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)")
            .unwrap();
        let mut seq = 0i64;
        let mut put = |record: &Value| {
            seq += 1;
            let text = record.to_string();
            if text.len() >= 1024 {
                let blob = zstd::bulk::compress(text.as_bytes(), 1).unwrap();
                insert
                    .execute(params![sid, seq, None::<String>, blob, text.len() as i64, navigation_json(record)])
                    .unwrap();
            } else {
                insert.execute(params![sid, seq, text, None::<Vec<u8>>, text.len() as i64, None::<String>]).unwrap();
            }
        };
        put(&json!({"type":"session","version":4,"id":sid,"timestamp":"2026-12-01T20:00:00.000Z","cwd":"/w"}));
        put(
            &json!({"type":"message","id":"u0","parentId":null,"timestamp":"2026-12-01T20:00:01.000Z","message":{"role":"user","content":"work"}}),
        );
        let mut parent = "u0".to_string();
        for i in 0..per.min(calls - made) {
            let run = format!("run-{}", i / 50);
            let (a, r, c) = (format!("a{i}"), format!("r{i}"), format!("call_{i}"));
            let path = format!("/w/src/file{}.rs", i % 37);
            put(&json!({"type":"message","id":a,"parentId":parent,"timestamp":"2026-12-01T20:07:57.166Z",
                "message":{"role":"assistant","content":[{"type":"text","text":"Reading the next file."},
                {"type":"toolCall","id":c,"name":"read","arguments":{"path":path}}],"api":"openai-completions",
                "provider":"fake","model":"m","usage":{"input":1200,"output":40},"stopReason":"toolUse",
                "timestamp":1796155676750u64,"__openclaw":{"runId":run}}}));
            let body: String = (0..24)
                .map(|k| {
                    format!("{:08x} fn item_{k}() -> u32 {{ {} }}\n", (i * 7919 + k * 104_729) % 0xffff_ffff, i + k)
                })
                .collect();
            put(&json!({"type":"message","id":r,"parentId":a,"timestamp":"2026-12-01T20:07:57.630Z",
                "message":{"role":"toolResult","toolCallId":c,"toolName":"read","content":[{"type":"text","text":body}],
                "details":{"path":path,"bytes":body.len()},"isError":false,"timestamp":1796155677628u64,"__openclaw":{"runId":run}}}));
            parent = r;
            made += 1;
        }
    }
    drop(tx.commit());
}

/// Nanoseconds this process has run on a CPU (Linux `/proc/self/schedstat`): the figure that
/// does not depend on what else the machine is running.
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let calls: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let sessions: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(400).max(1);
    let tmp = tempfile::tempdir().unwrap();
    let path: PathBuf = args.get(3).map(PathBuf::from).unwrap_or_else(|| tmp.path().join("openclaw-agent.sqlite"));
    if !path.exists() {
        let t = Instant::now();
        generate(&path, calls, sessions);
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        eprintln!(
            "generated {calls} tool calls in {sessions} sessions ({:.1} MB) in {:.1?}",
            size as f64 / 1e6,
            t.elapsed()
        );
    }
    let before = peak_rss_kib();
    let cpu_before = cpu_ns();
    let t = Instant::now();
    let found = discover(&[&path]);
    let mut importer = Importer::default();
    let (mut tool_calls, mut events, mut bytes, mut errors) = (0u64, 0u64, 0u64, 0usize);
    let mut line = Vec::new();
    for info in &found.sessions {
        let read = importer.read_session(info, &mut |e| {
            events += 1;
            tool_calls += u64::from(matches!(e.event, TraceEvent::ToolCall(_)));
            line.clear();
            e.event.write_line(&mut line);
            bytes += line.len() as u64;
        });
        errors += read.errors.len();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "imported {tool_calls} tool calls ({events} events, {:.1} MB of trace) from {} sessions in {secs:.2} s: {:.0} tool calls/s; errors {errors}",
        bytes as f64 / 1e6,
        found.sessions.len(),
        tool_calls as f64 / secs
    );
    if let (Some(b), Some(a)) = (cpu_before, cpu_ns()) {
        let cpu = (a - b) as f64 / 1e9;
        println!("on-CPU time {cpu:.2} s: {:.0} tool calls per CPU-second", tool_calls as f64 / cpu);
    }
    if let (Some(b), Some(a)) = (before, peak_rss_kib()) {
        println!("peak RSS {:.1} MB (before the import {:.1} MB)", a as f64 / 1024.0, b as f64 / 1024.0);
    }
}
