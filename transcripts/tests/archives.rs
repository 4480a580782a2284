//! Transcripts OpenClaw keeps outside the live rows: cold archives (in a file or a blob) and the
//! deleted and reset transcripts kept in the store.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use loopguard_transcripts::{discover, Importer, KeySource, Location, SourceFormat};
use serde_json::json;

/// A cold archive as OpenClaw's `prepareSessionColdArchiveInWorker` writes it: zstd JSONL of a
/// header, one `event` envelope per row (the record as a JSON string), and index rows.
fn cold_archive(session: &str, records: &[serde_json::Value]) -> Vec<u8> {
    let mut text = json!({"kind":"header","version":1,"sessionId":session,"generation":"g1"}).to_string() + "\n";
    for (i, r) in records.iter().enumerate() {
        let row = json!({"seq": i + 1, "event_json": r.to_string(), "created_at": 0});
        text += &(json!({"kind":"event","row":row}).to_string() + "\n");
    }
    text += &(json!({"kind":"identity","row":{"event_id":"x","seq":1}}).to_string() + "\n");
    zstd::bulk::compress(text.as_bytes(), 3).unwrap()
}

#[test]
fn cold_archived_transcripts_are_read_from_file_or_blob() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("agents/main/agent/openclaw-agent.sqlite");
    let mut store = StoreBuilder::create(&path, "main");
    store.session("agent:main:hot", "hot");
    for r in exec_loop("hot", "run", 1, false) {
        store.plain("hot", &r);
    }
    let sha = "a".repeat(64);
    let name = format!("{sha}.jsonl.zst");
    store.session("agent:main:cold-file", "cold-file");
    let archive = cold_archive("cold-file", &exec_loop("cold-file", "run", 3, true));
    let cold_dir = tmp.path().join("agents/main/sessions/cold");
    std::fs::create_dir_all(&cold_dir).unwrap();
    std::fs::write(cold_dir.join(&name), &archive).unwrap();
    store
        .conn
        .execute(
            "INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage) VALUES ('cold-file', 'g1', ?1, ?2, 8, 1, ?3, 8, 0, 'file')",
            rusqlite::params![name, sha, archive.len() as i64],
        )
        .unwrap();
    store.session("agent:main:cold-blob", "cold-blob");
    let blob = cold_archive("cold-blob", &exec_loop("cold-blob", "run", 2, false));
    store
        .conn
        .execute(
            "INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage, archive_blob) VALUES ('cold-blob', 'g1', ?1, ?2, 6, 1, ?3, 6, 0, 'sqlite', ?4)",
            rusqlite::params![format!("{}.jsonl.zst", "b".repeat(64)), "b".repeat(64), blob.len() as i64, blob],
        )
        .unwrap();
    store.session("agent:main:cold-gone", "cold-gone");
    store
        .conn
        .execute(
            "INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage) VALUES ('cold-gone', 'g1', ?1, ?2, 1, 1, 1, 1, 0, 'file')",
            rusqlite::params![format!("{}.jsonl.zst", "c".repeat(64)), "c".repeat(64)],
        )
        .unwrap();
    drop(store);
    let found = discover(&[tmp.path()]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let formats: Vec<_> = found.sessions.iter().map(|s| (s.session_id.as_str(), s.format.clone())).collect();
    assert_eq!(
        formats,
        vec![
            ("hot", SourceFormat::AgentStore),
            ("cold-blob", SourceFormat::ColdArchive),
            ("cold-file", SourceFormat::ColdArchive)
        ]
    );
    assert_eq!(found.skipped.len(), 1);
    assert_eq!(found.skipped[0].session_id.as_deref(), Some("cold-gone"));
    let mut importer = Importer::default();
    let blob_trace = importer.read_trace(&found.sessions[1]);
    let file_trace = importer.read_trace(&found.sessions[2]);
    assert!(
        blob_trace.read.is_clean() && file_trace.read.is_clean(),
        "{:?} {:?}",
        blob_trace.read.errors,
        file_trace.read.errors
    );
    assert_eq!((blob_trace.events.len(), file_trace.events.len()), (4, 6));
    assert_eq!(file_trace.events[0].reference.location, Location::Row(3), "cold rows keep their seq");
    assert_eq!(file_trace.events[0].reference.session.session_key, "agent:main:cold-file");
}

#[test]
fn deleted_and_reset_transcripts_kept_in_the_store_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a.sqlite");
    let store = StoreBuilder::create(&path, "main");
    let jsonl = |id: &str, n| exec_loop(id, "run", n, false).iter().map(|r| r.to_string() + "\n").collect::<String>();
    for (id, reason, encoding, n) in [("old", "reset", "identity", 2), ("gone", "deleted", "zstd", 3)] {
        let text = jsonl(id, n);
        let blob =
            if encoding == "zstd" { zstd::bulk::compress(text.as_bytes(), 3).unwrap() } else { text.into_bytes() };
        store
            .conn
            .execute(
                "INSERT INTO session_transcript_archives (session_id, generation, session_key, reason, encoding, archive_blob, archive_sha256, archive_name, created_at) VALUES (?1, 'g', ?2, ?3, ?4, ?5, ?6, ?7, 1)",
                rusqlite::params![id, format!("agent:main:{id}"), reason, encoding, blob, "d".repeat(64), format!("{id}.jsonl.{reason}.zst")],
            )
            .unwrap();
    }
    drop(store);
    let found = discover(&[&path]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let got: Vec<_> = found.sessions.iter().map(|s| (s.session_key.as_str(), s.format.clone(), s.key_source)).collect();
    assert_eq!(
        got,
        vec![
            ("agent:main:gone", SourceFormat::StoreArchive, KeySource::TranscriptArchives),
            ("agent:main:old", SourceFormat::StoreArchive, KeySource::TranscriptArchives)
        ]
    );
    let mut importer = Importer::default();
    let gone = importer.read_trace(&found.sessions[0]);
    let old = importer.read_trace(&found.sessions[1]);
    assert!(gone.read.is_clean() && old.read.is_clean(), "{:?} {:?}", gone.read.errors, old.read.errors);
    assert_eq!((gone.read.stats.tool_calls, old.read.stats.tool_calls), (3, 2));
}
