//! Builders for real OpenClaw-shaped stores and transcripts, used by the integration tests.
//!
//! The schema is OpenClaw 2026.9.6's own (`OPENCLAW_AGENT_SCHEMA_SQL`, copied out of
//! `dist/openclaw-agent-board-schema-*.mjs` into `tests/data/`), so the CHECK constraints on
//! `transcript_events` (a row is `event_json` xor `event_zstd` + `event_utf8_bytes` +
//! `navigation_json`) hold for every row these builders write.
#![allow(dead_code, clippy::unwrap_used, clippy::too_many_arguments)]

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::{json, Value};

pub const SCHEMA: &str = include_str!("../data/openclaw-2026.9.6-agent-schema.sql");

/// A store on disk with OpenClaw's schema.
pub struct StoreBuilder {
    pub path: PathBuf,
    pub conn: Connection,
    next_seq: std::collections::HashMap<String, i64>,
}

impl StoreBuilder {
    /// `path`'s parents are created.
    pub fn create(path: &Path, agent_id: &str) -> StoreBuilder {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute_batch("PRAGMA user_version = 23; PRAGMA synchronous = OFF;").unwrap();
        conn.execute(
            "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) VALUES ('primary', 'agent', 23, ?1, '2026.9.6', 0, 0)",
            [agent_id],
        )
        .unwrap();
        StoreBuilder { path: path.to_path_buf(), conn, next_seq: Default::default() }
    }

    /// A session window and node: key → id.
    pub fn session(&mut self, key: &str, id: &str) -> &mut Self {
        let entry = json!({"sessionId": id, "updatedAt": 1, "lifecycleRevision": 1}).to_string();
        self.conn
            .execute(
                "INSERT OR REPLACE INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?1, ?2, ?3, 1)",
                params![key, id, entry],
            )
            .unwrap();
        self.conn
            .execute(
                "INSERT INTO session_windows (session_id, session_key, reason, created_at, updated_at) VALUES (?1, ?2, 'initial', 1, 1)",
                params![id, key],
            )
            .unwrap();
        self
    }

    fn seq(&mut self, session: &str) -> i64 {
        let s = self.next_seq.entry(session.to_string()).or_insert(0);
        *s += 1;
        *s
    }

    /// Appends a record as `event_json`.
    pub fn plain(&mut self, session: &str, record: &Value) -> i64 {
        let seq = self.seq(session);
        self.conn
            .execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 0)",
                params![session, seq, record.to_string()],
            )
            .unwrap();
        seq
    }

    /// Appends a record compressed, as OpenClaw does for events from about 1 KiB.
    pub fn compressed(&mut self, session: &str, record: &Value) -> i64 {
        let text = record.to_string();
        let blob = zstd::bulk::compress(text.as_bytes(), 1).unwrap();
        let seq = self.seq(session);
        self.conn
            .execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?1, ?2, NULL, ?3, ?4, ?5, 0)",
                params![session, seq, blob, text.len() as i64, navigation_json(record)],
            )
            .unwrap();
        seq
    }

    /// Appends a record compressed or not, by OpenClaw's size rule (≥ 1024 bytes).
    pub fn auto(&mut self, session: &str, record: &Value) -> i64 {
        if record.to_string().len() >= 1024 {
            self.compressed(session, record)
        } else {
            self.plain(session, record)
        }
    }

    /// Appends raw column values (for damaged rows).
    pub fn raw(
        &mut self,
        session: &str,
        event_json: Option<&str>,
        zstd: Option<&[u8]>,
        bytes: Option<i64>,
        nav: Option<&str>,
    ) -> i64 {
        let seq = self.seq(session);
        self.conn
            .execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
                params![session, seq, event_json, zstd, bytes, nav],
            )
            .unwrap();
        seq
    }
}

/// A `navigation_json` as OpenClaw stores it beside a compressed row (the keys its CHECK needs).
pub fn navigation_json(record: &Value) -> String {
    let mut nav = serde_json::Map::new();
    for key in [
        "type",
        "id",
        "parentId",
        "targetId",
        "appendParentId",
        "appendMode",
        "timestamp",
        "version",
        "firstKeptEntryId",
    ] {
        if let Some(v) = record.get(key) {
            nav.insert(key.into(), v.clone());
        }
    }
    if let Some(m) = record.get("message") {
        let mut msg = serde_json::Map::new();
        if let Some(r) = m.get("role") {
            msg.insert("role".into(), r.clone());
        }
        if let Some(o) = m.get("__openclaw").and_then(|o| o.get("runId")) {
            msg.insert("__openclaw".into(), json!({"runId": o}));
        }
        nav.insert("message".into(), Value::Object(msg));
    }
    json!({
        "version": 1,
        "report": {"kind": "canonical", "hasParentId": record.get("parentId").is_some(), "entry": {}},
        "navigation": nav,
        "reset": {},
        "model": {},
        "modelBytes": 10,
        "modelWithoutCheckpointBytes": 10,
        "withoutCustomDataBytes": 10
    })
    .to_string()
}

/// pi records.
pub fn header(session_id: &str) -> Value {
    json!({"type":"session","version":4,"id":session_id,"timestamp":"2026-12-01T20:00:00.000Z","cwd":"/w"})
}

pub fn user(id: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-12-01T20:00:01.000Z",
           "message":{"role":"user","content":text,"timestamp":1,"__openclaw":{"senderIsOwner":true}}})
}

pub fn assistant(id: &str, parent: &str, run: &str, calls: &[(&str, &str, Value)]) -> Value {
    let content: Vec<Value> = calls
        .iter()
        .map(|(cid, name, args)| json!({"type":"toolCall","id":cid,"name":name,"arguments":args}))
        .collect();
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-12-01T20:07:57.166Z",
           "message":{"role":"assistant","content":content,"api":"openai-completions","provider":"fake","model":"loop-1",
                      "stopReason":"toolUse","timestamp":1796155676750u64,"__openclaw":{"runId":run}}})
}

pub fn result(
    id: &str,
    parent: &str,
    run: &str,
    call_id: &str,
    name: &str,
    content: Value,
    details: Value,
    is_error: bool,
) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-12-01T20:07:57.630Z",
           "message":{"role":"toolResult","toolCallId":call_id,"toolName":name,"content":content,"details":details,
                      "isError":is_error,"timestamp":1796155677628u64,"__openclaw":{"runId":run}}})
}

pub fn exec_ok(id: &str, parent: &str, run: &str, call_id: &str, output: &str) -> Value {
    result(
        id,
        parent,
        run,
        call_id,
        "exec",
        json!([{"type":"text","text":output}]),
        json!({"status":"completed","exitCode":0,"exitSignal":null,"exitReason":"exit","durationMs":287,"aggregated":output,"noOutputTimedOut":false,"cwd":"/w"}),
        false,
    )
}

pub fn compaction(id: &str, parent: &str, run: &str) -> Value {
    json!({"type":"compaction","id":id,"parentId":parent,"timestamp":"2026-12-01T20:19:38.268Z","firstKeptEntryId":parent,
           "tokensBefore":111,"tokensAfter":18604,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":true,
           "__openclaw":{"runId":run,"itemId":"i1"},"summary":"## Decisions\n"})
}

/// A conversation of `n` identical `exec echo loop` calls under one run, as a list of records
/// (header first), each result padded so that it is stored compressed when `pad` is set.
pub fn exec_loop(session_id: &str, run: &str, n: usize, pad: bool) -> Vec<Value> {
    let mut out = vec![header(session_id), user("u0", None, "Run echo loop please")];
    let mut parent = "u0".to_string();
    let output = if pad { format!("loop{}", " ".repeat(1200)) } else { "loop".to_string() };
    for i in 1..=n {
        let a = format!("a{i}");
        let r = format!("r{i}");
        let call = format!("call_fake_{i}");
        out.push(assistant(&a, &parent, run, &[(&call, "exec", json!({"command":"echo loop"}))]));
        out.push(exec_ok(&r, &a, run, &call, &output));
        parent = r;
    }
    out
}

/// Writes records as a pi JSONL file.
pub fn write_jsonl(path: &Path, records: &[Value]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = String::new();
    for r in records {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// Writes a trajectory export directory as 2026.9.6 does: manifest.json, events.jsonl (runtime
/// lines and one transcript line per record, sorted by timestamp, with a derived `tool.call` per
/// call and compactions without their run id) and session-branch.json (whose `entries` the real
/// export truncates after a dozen: `truncate_branch` does the same).
pub fn write_trajectory(dir: &Path, session_key: &str, session_id: &str, records: &[Value]) {
    write_trajectory_with(dir, session_key, session_id, records, false)
}

pub fn write_trajectory_with(
    dir: &Path,
    session_key: &str,
    session_id: &str,
    records: &[Value],
    truncate_branch: bool,
) {
    std::fs::create_dir_all(dir).unwrap();
    let header = records.iter().find(|r| r["type"] == "session").cloned().unwrap_or(Value::Null);
    let entries: Vec<Value> = records.iter().filter(|r| r["type"] != "session").cloned().collect();
    let leaf = entries.last().and_then(|e| e.get("id")).cloned().unwrap_or(Value::Null);
    let manifest = json!({"traceSchema":"openclaw-trajectory","schemaVersion":1,"sessionId":session_id,"sessionKey":session_key,"leafId":leaf});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let mut events = vec![
        json!({"traceSchema":"openclaw-trajectory","source":"runtime","type":"session.started","ts":"2026-12-01T20:00:00.000Z","seq":0,"sessionKey":session_key,"runId":"r","data":{}}),
    ];
    let mut seq = 0;
    for e in &entries {
        let base = |ty: &str, data: Value, seq: i64| {
            json!({"traceSchema":"openclaw-trajectory","schemaVersion":1,"traceId":session_id,"source":"transcript","type":ty,
            "ts":e["timestamp"],"seq":0,"sourceSeq":seq,"sessionId":session_id,"sessionKey":session_key,"workspaceDir":"$WORKSPACE_DIR",
            "entryId":e["id"],"parentEntryId":e["parentId"],"data":data})
        };
        match e["type"].as_str() {
            Some("message") => {
                let role = e["message"]["role"].as_str().unwrap_or("");
                let ty = match role {
                    "user" => "user.message",
                    "assistant" => "assistant.message",
                    "toolResult" => "tool.result",
                    _ => "message.other",
                };
                seq += 1;
                events.push(base(ty, json!({"message": e["message"]}), seq));
                if let Some(parts) = e["message"]["content"].as_array() {
                    for (i, p) in parts.iter().enumerate().filter(|(_, p)| p["type"] == "toolCall") {
                        seq += 1;
                        events.push(base("tool.call", json!({"toolCallId":p["id"],"name":p["name"],"arguments":p["arguments"],"assistantEntryId":e["id"],"blockIndex":i}), seq));
                    }
                }
            }
            Some("compaction") => {
                seq += 1;
                events.push(base("session.compaction", json!({"summary":e["summary"],"firstKeptEntryId":e["firstKeptEntryId"],"tokensBefore":e["tokensBefore"],"fromHook":true}), seq));
            }
            Some(other) => {
                seq += 1;
                events.push(base(&format!("session.{other}"), json!({}), seq));
            }
            None => {}
        }
    }
    // Sorted by timestamp (stable), as `sortTrajectoryEvents` does: records that share a
    // timestamp stay in order, others move.
    events.sort_by(|a, b| a["ts"].as_str().unwrap_or("").cmp(b["ts"].as_str().unwrap_or("")));
    let text: String = events.iter().map(|e| e.to_string() + "\n").collect();
    std::fs::write(dir.join("events.jsonl"), text).unwrap();
    let entries: Vec<Value> = if truncate_branch {
        entries.iter().enumerate().map(|(i, e)| if i < 12 { e.clone() } else { json!("[Truncated]") }).collect()
    } else {
        entries
    };
    let branch = json!({"header": header, "leafId": leaf, "entries": entries});
    std::fs::write(dir.join("session-branch.json"), serde_json::to_string_pretty(&branch).unwrap()).unwrap();
}

/// The trace lines of a session, read with a fresh importer.
pub fn trace_lines(
    info: &std::sync::Arc<loopguard_transcripts::SessionInfo>,
) -> (Vec<String>, loopguard_transcripts::SessionRead) {
    let mut importer = loopguard_transcripts::Importer::default();
    let mut lines = Vec::new();
    let read = importer.read_session(info, &mut |e| lines.push(e.event.to_line()));
    (lines, read)
}
