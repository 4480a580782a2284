//! JSONL transcripts and trajectory exports, and the same session read from all three formats.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use loopguard_transcripts::{discover, ErrorKind, KeySource, Location, SourceFormat};
use serde_json::json;

#[test]
fn a_legacy_sessions_directory_is_read_with_its_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("agents/main/sessions");
    write_jsonl(&sessions.join("s-1.jsonl"), &exec_loop("s-1", "run-1", 3, false));
    std::fs::write(
        sessions.join("sessions.json"),
        json!({"agent:main:main": {"sessionId": "s-1", "updatedAt": 1}}).to_string(),
    )
    .unwrap();
    let found = discover(&[tmp.path()]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    assert_eq!(found.sessions.len(), 1);
    let s = &found.sessions[0];
    assert_eq!(
        (s.agent_id.as_deref(), s.session_key.as_str(), s.session_id.as_str()),
        (Some("main"), "agent:main:main", "s-1")
    );
    assert_eq!((s.format.clone(), s.key_source), (SourceFormat::Jsonl, KeySource::SessionsJson));
    let (lines, read) = trace_lines(s);
    assert!(read.is_clean(), "{:?}", read.errors);
    assert_eq!(lines.len(), 6);
}

#[test]
fn a_truncated_last_line_is_named_and_the_lines_before_it_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.jsonl");
    write_jsonl(&path, &exec_loop("t", "run", 2, false));
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"type":"message","id":"a3","parentId":"r2","message":{"role":"assis"#);
    std::fs::write(&path, text).unwrap();
    let found = discover(&[&path]);
    let (lines, read) = trace_lines(&found.sessions[0]);
    assert_eq!(lines.len(), 4);
    assert_eq!(read.errors.len(), 1);
    let e = &read.errors[0];
    assert!(matches!(e.kind(), ErrorKind::TruncatedLine(_)), "{e}");
    assert_eq!(e.location(), Some(Location::Line(7)));
    assert_eq!(e.session(), Some("t"));
    assert!(e.to_string().contains("t.jsonl: session t: line 7: truncated last line"), "{e}");
}

#[test]
fn a_malformed_line_in_the_middle_is_skipped_as_openclaw_does() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("m.jsonl");
    let records = exec_loop("m", "run", 2, false);
    let mut text = String::new();
    for (i, r) in records.iter().enumerate() {
        text.push_str(&r.to_string());
        text.push('\n');
        if i == 3 {
            text.push_str("{oops\n\n");
        }
    }
    std::fs::write(&path, text).unwrap();
    let (lines, read) = trace_lines(&discover(&[&path]).sessions[0]);
    assert_eq!(lines.len(), 4, "the blank line is no record, the bad one is skipped");
    assert_eq!(read.errors.len(), 1);
    assert!(matches!(read.errors[0].kind(), ErrorKind::Json(_)));
    assert_eq!(read.errors[0].location(), Some(Location::Line(5)));
}

#[test]
fn a_line_longer_than_any_transcript_line_is_named_and_skipped_without_being_held() {
    // 64 MiB and one byte, with no `"` to end it: not held, not parsed, and the lines after it read.
    let long = format!("{{\"type\":\"message\",\"x\":\"{}\n", "x".repeat(64 << 20));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("l.jsonl");
    let records: Vec<String> = exec_loop("l", "run", 2, false).iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, format!("{}{long}{}", records[..3].concat(), records[3..].concat())).unwrap();
    let (lines, read) = trace_lines(&discover(&[&path]).sessions[0]);
    assert_eq!(lines.len(), 4, "the records after the long line are read");
    assert_eq!(read.errors.len(), 1, "{:?}", read.errors);
    let e = &read.errors[0];
    assert!(matches!(e.kind(), ErrorKind::LineTooLong(_)), "{e}");
    assert_eq!(e.location(), Some(Location::Line(4)));
    assert!(e.to_string().contains("l.jsonl: session l: line 4: longer than 67108864 bytes"), "{e}");

    // The same line in a trajectory export's events.jsonl.
    let dir = tmp.path().join("export");
    write_trajectory(&dir, "agent:main:x", "x", &exec_loop("x", "run", 3, false));
    let text = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(dir.join("events.jsonl"), format!("{first}\n{long}{rest}")).unwrap();
    let (lines, read) = trace_lines(&discover(&[&dir]).sessions[0]);
    assert_eq!(lines.len(), 6);
    assert_eq!(read.errors.len(), 1, "{:?}", read.errors);
    assert!(matches!(read.errors[0].kind(), ErrorKind::LineTooLong(_)), "{}", read.errors[0]);
    assert_eq!(read.errors[0].location(), Some(Location::Line(2)));
}

#[test]
fn an_unreadable_file_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("gone.jsonl");
    write_jsonl(&path, &exec_loop("g", "run", 1, false));
    let found = discover(&[&path]);
    std::fs::remove_file(&path).unwrap();
    let (lines, read) = trace_lines(&found.sessions[0]);
    assert!(lines.is_empty());
    assert!(matches!(read.errors[0].kind(), ErrorKind::Io(_)));
}

#[test]
fn legacy_version_1_transcripts_are_read_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("v1.jsonl");
    let records = vec![
        json!({"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z"}),
        json!({"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"Bash","arguments":{"command":"ls"}}]}}),
        json!({"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"Bash","content":[{"type":"text","text":"a"}],"isError":false}}),
    ];
    write_jsonl(&path, &records);
    let (lines, read) = trace_lines(&discover(&[&path]).sessions[0]);
    assert!(read.is_clean());
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains(r#""tool":"exec""#), "Bash is an alias of exec: {}", lines[0]);
}

#[test]
fn a_trajectory_export_reads_its_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("openclaw-trajectory-s-1-2026-12-01T20-00-00");
    write_trajectory(&dir, "agent:main:lg1", "s-1", &exec_loop("s-1", "run-1", 2, false));
    for path in [dir.clone(), dir.join("session-branch.json"), tmp.path().to_path_buf()] {
        let found = discover(&[&path]);
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        let s = &found.sessions[0];
        assert_eq!(
            (s.agent_id.as_deref(), s.session_key.as_str(), s.session_id.as_str()),
            (Some("main"), "agent:main:lg1", "s-1")
        );
        assert_eq!(s.format, SourceFormat::Trajectory);
        let (lines, read) = trace_lines(s);
        assert!(read.is_clean(), "{:?}", read.errors);
        assert_eq!(lines.len(), 4);
    }
}

#[test]
fn the_three_formats_give_the_same_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let mut records = exec_loop("s-1", "run-1", 4, true);
    // The compaction belongs to the run that overflowed (the export loses its run id and takes
    // the run of the record before it).
    records.push(compaction("k", "r4", "run-1"));
    // A forked-off branch, which the export leaves out and the two others must skip.
    records.push(assistant("side", "u0", "run-9", &[("cx", "read", json!({"path":"/x"}))]));
    records.push(user("u9", Some("k"), "back on the main branch"));
    let branch: Vec<_> = records.iter().filter(|r| r["id"] != "side").cloned().collect();

    let store_path = tmp.path().join("state/agents/main/agent/openclaw-agent.sqlite");
    let mut store = StoreBuilder::create(&store_path, "main");
    store.session("agent:main:lg1", "s-1");
    for r in &records {
        store.auto("s-1", r);
    }
    drop(store);
    write_jsonl(&tmp.path().join("jsonl/agents/main/sessions/s-1.jsonl"), &records);
    std::fs::write(
        tmp.path().join("jsonl/agents/main/sessions/sessions.json"),
        r#"{"agent:main:lg1":{"sessionId":"s-1"}}"#,
    )
    .unwrap();
    write_trajectory(&tmp.path().join("export"), "agent:main:lg1", "s-1", &branch);

    let mut traces = Vec::new();
    for sub in ["state", "jsonl", "export"] {
        let found = discover(&[tmp.path().join(sub)]);
        assert_eq!(found.sessions.len(), 1, "{sub}: {:?}", found.errors);
        let (lines, read) = trace_lines(&found.sessions[0]);
        assert!(read.is_clean(), "{sub}: {:?}", read.errors);
        traces.push(lines);
    }
    assert_eq!(traces[0].len(), 9);
    assert_eq!(traces[0], traces[1]);
    assert_eq!(traces[0], traces[2]);
    // Found together, the session is read once, from the store.
    let all = discover(&[tmp.path().join("state"), tmp.path().join("jsonl"), tmp.path().join("export")]);
    assert_eq!(all.sessions.len(), 1);
    assert_eq!(all.sessions[0].format, SourceFormat::AgentStore);
    assert_eq!(all.skipped.len(), 2);
}

#[test]
fn an_export_without_events_jsonl_reads_its_branch_file_and_names_truncated_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("export");
    write_trajectory_with(&dir, "agent:main:x", "x", &exec_loop("x", "run", 10, false), true);
    std::fs::remove_file(dir.join("events.jsonl")).unwrap();
    let found = discover(&[&dir]);
    assert!(found.sessions[0].file.ends_with("session-branch.json"));
    let (lines, read) = trace_lines(&found.sessions[0]);
    // 21 entries (user + 10 calls + 10 results); the first 12 survive: 6 calls and 5 results
    // (a12, the 6th call, is the 12th entry).
    assert_eq!(lines.len(), 11);
    assert_eq!(read.errors.len(), 9);
    assert_eq!(read.errors[0].location(), Some(Location::Entry(13)));
    assert!(read.errors[0].to_string().contains("session-branch.json: session x: entry 13"), "{}", read.errors[0]);
}

#[test]
fn export_events_are_put_back_in_transcript_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("export");
    write_trajectory(&dir, "agent:main:x", "x", &exec_loop("x", "run", 3, false));
    // Reverse the file: the reader orders transcript lines by sourceSeq, not by position.
    let text = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let reversed: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("events.jsonl"), reversed).unwrap();
    let (lines, read) = trace_lines(&discover(&[&dir]).sessions[0]);
    assert!(read.is_clean(), "{:?}", read.errors);
    let kinds: Vec<_> =
        lines.iter().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].clone()).collect();
    assert_eq!(
        kinds,
        vec![
            json!("tool_call"),
            json!("tool_result"),
            json!("tool_call"),
            json!("tool_result"),
            json!("tool_call"),
            json!("tool_result")
        ]
    );
}

/// A UTF-8 byte-order mark at the start of a file (Windows editors and exporters
/// write one) is skipped: a pi transcript and its `sessions.json`, a trajectory export (each of
/// its three files) and the coding CLIs' sessions read as they do without one.
#[test]
fn a_byte_order_mark_at_the_start_of_a_file_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("state/agents/main/sessions");
    write_jsonl(&sessions.join("s-1.jsonl"), &exec_loop("s-1", "run-1", 3, false));
    std::fs::write(sessions.join("sessions.json"), json!({"agent:main:main": {"sessionId": "s-1"}}).to_string())
        .unwrap();
    write_trajectory(&tmp.path().join("export"), "agent:main:x", "x", &exec_loop("x", "run", 3, false));
    let branch_only = tmp.path().join("branch-only");
    write_trajectory(&branch_only, "agent:main:y", "y", &exec_loop("y", "run", 3, false));
    std::fs::remove_file(branch_only.join("events.jsonl")).unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for cli in ["claude-code", "codex", "gemini"] {
        std::fs::create_dir_all(tmp.path().join(cli)).unwrap();
        std::fs::copy(fixtures.join(cli).join("loop.jsonl"), tmp.path().join(cli).join("loop.jsonl")).unwrap();
    }
    let read_all = || {
        let found = discover(&[tmp.path()]);
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        let read = |s: &std::sync::Arc<loopguard_transcripts::SessionInfo>| {
            let (lines, read) = trace_lines(s);
            assert!(read.is_clean(), "{}: {:?}", s.file.display(), read.errors);
            (s.format.clone(), s.session_key.clone(), lines)
        };
        found.sessions.iter().map(read).collect::<Vec<_>>()
    };
    let plain = read_all();
    assert_eq!(plain.len(), 6, "{plain:?}");
    for dir in ["state/agents/main/sessions", "export", "branch-only", "claude-code", "codex", "gemini"] {
        for file in std::fs::read_dir(tmp.path().join(dir)).unwrap() {
            let file = file.unwrap().path();
            let text = std::fs::read(&file).unwrap();
            std::fs::write(&file, [b"\xEF\xBB\xBF".as_slice(), &text].concat()).unwrap();
        }
    }
    assert_eq!(read_all(), plain);
}
