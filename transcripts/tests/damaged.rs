//! Damaged agent stores (bad rows, garbage shapes, truncated and bit-flipped records): each gives
//! a named error and loses nothing else.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use loopguard_transcripts::{discover, ErrorKind, Importer, Location};

#[test]
fn damaged_rows_are_named_and_the_rest_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a.sqlite");
    let mut store = StoreBuilder::create(&path, "main");
    store.session("agent:main:bad", "bad");
    store.session("agent:main:good", "good");
    let records = exec_loop("bad", "run", 3, false);
    for r in &records[..5] {
        store.plain("bad", r);
    }
    // The second result is a compressed row whose blob is garbage (its navigation is intact).
    let corrupt_seq = store.raw(
        "bad",
        None,
        Some(b"\x28\xb5\x2f\xfdnot really zstd"),
        Some(300),
        Some(&navigation_json(&records[5])),
    );
    // Then a plain row that is not JSON.
    let malformed_seq = store.raw("bad", Some("{\"type\":\"message\",\"id\":"), None, None, None);
    for r in &records[6..] {
        store.plain("bad", r);
    }
    for r in exec_loop("good", "run", 2, false) {
        store.plain("good", &r);
    }
    drop(store);
    let found = discover(&[&path]);
    let mut importer = Importer::default();
    let bad = importer.read_trace(&found.sessions[0]);
    let good = importer.read_trace(&found.sessions[1]);
    assert_eq!(bad.read.errors.len(), 2, "{:?}", bad.read.errors);
    let corrupt = &bad.read.errors[0];
    assert_eq!(corrupt.file(), path.as_path());
    assert_eq!(corrupt.session(), Some("bad"));
    assert_eq!(corrupt.location(), Some(Location::Row(malformed_seq)));
    assert!(matches!(corrupt.kind(), ErrorKind::Json(_)));
    let zstd = &bad.read.errors[1];
    assert_eq!(zstd.location(), Some(Location::Row(corrupt_seq)));
    assert!(matches!(zstd.kind(), ErrorKind::Zstd(_)), "{zstd}");
    let message = zstd.to_string();
    assert!(message.contains("a.sqlite: session bad: row seq 6: corrupt compressed row"), "{message}");
    // Everything else in the damaged session is there: 3 calls, the 2 readable results.
    assert_eq!(bad.read.stats.tool_calls, 3);
    assert_eq!(bad.read.stats.tool_results, 2);
    assert_eq!(bad.read.stats.bad_records, 2);
    assert!(good.read.is_clean());
    assert_eq!(good.events.len(), 4);
}

#[test]
fn garbage_shapes_do_not_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = StoreBuilder::create(&tmp.path().join("a.sqlite"), "main");
    store.session("k", "s");
    for text in [
        "null",
        "[]",
        "42",
        r#"{"type":"message","id":"m1","parentId":null,"message":"hello"}"#,
        r#"{"type":"message","id":"m2","parentId":"m1","message":{"role":"assistant","content":{"a":1}}}"#,
        r#"{"type":"message","id":"m3","parentId":"m2","message":{"role":"assistant","content":[1,"x",null,{"type":"toolCall"},{"type":"toolCall","id":"c","name":7,"arguments":null}]}}"#,
        r#"{"type":"message","id":"m4","parentId":"m3","message":{"role":"toolResult","toolCallId":"c","content":"text","details":[1],"isError":"yes"}}"#,
        r#"{"type":7,"id":{},"parentId":[]}"#,
        r#"{"type":"compaction","id":"k","parentId":"m4","__openclaw":"x"}"#,
    ] {
        store.raw("s", Some(text), None, None, None);
    }
    drop(store);
    let found = discover(&[tmp.path().join("a.sqlite")]);
    let trace = Importer::default().read_trace(&found.sessions[0]);
    // The call without an id and the one with id "c" (name 7 → "tool") are calls; the result pairs with "c".
    assert_eq!(trace.read.stats.tool_calls, 2);
    assert_eq!(trace.read.stats.tool_results, 1);
    assert!(!trace.read.errors.is_empty());
}

#[test]
fn a_file_without_transcript_events_is_a_named_error_and_others_still_read() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("other.sqlite");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
    let good = tmp.path().join("good.sqlite");
    let mut store = StoreBuilder::create(&good, "main");
    store.session("k", "s");
    store.plain("s", &header("s"));
    drop(store);
    let found = discover(&[&other, &good]);
    assert_eq!(found.sessions.len(), 1);
    assert_eq!(found.errors.len(), 1);
    assert!(matches!(found.errors[0].kind(), ErrorKind::MissingTable("transcript_events")));
    assert_eq!(found.errors[0].file(), other.as_path());
    // In a directory walk the same file is skipped, not an error.
    let walked = discover(&[tmp.path()]);
    assert!(walked.errors.is_empty(), "{:?}", walked.errors);
    assert_eq!(walked.sessions.len(), 1);
    assert_eq!(walked.skipped.len(), 1);
    // A named `.sqlite` that is not SQLite at all is SQLite's error about that file, and an empty
    // one has no table; the good store is still read.
    let garbage = tmp.path().join("garbage.sqlite");
    std::fs::write(&garbage, "not a database, not at all, no").unwrap();
    let empty = tmp.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    let found = discover(&[&garbage, &empty, &good]);
    assert_eq!(found.sessions.len(), 1);
    assert!(matches!(found.errors[0].kind(), ErrorKind::Sqlite(_)), "{}", found.errors[0]);
    assert_eq!(found.errors[0].file(), garbage.as_path());
    assert!(found.errors[0].to_string().contains("not a database"), "{}", found.errors[0]);
    assert!(matches!(found.errors[1].kind(), ErrorKind::MissingTable("transcript_events")), "{}", found.errors[1]);
    assert_eq!(found.errors[1].file(), empty.as_path());
    // A path that does not exist is an I/O error naming it.
    let missing = discover(&[tmp.path().join("nope")]);
    assert!(matches!(missing.errors[0].kind(), ErrorKind::Io(_)));
}

#[test]
fn every_truncation_and_bit_flip_of_real_records_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a.sqlite");
    let mut store = StoreBuilder::create(&path, "main");
    store.session("k", "s");
    store.conn.execute_batch("BEGIN").unwrap();
    let records = exec_loop("s", "run", 2, false);
    let mut x: u32 = 12345;
    for r in &records {
        let text = r.to_string();
        for cut in 0..text.len() {
            if text.is_char_boundary(cut) {
                store.raw("s", Some(&text[..cut]), None, None, None);
            }
        }
        let blob = zstd::bulk::compress(text.as_bytes(), 1).unwrap();
        for _ in 0..64 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let mut b = blob.clone();
            let i = (x as usize >> 8) % b.len();
            b[i] ^= 1 << (x % 8);
            store.raw("s", None, Some(&b), Some(text.len() as i64), Some(&navigation_json(r)));
        }
    }
    store.conn.execute_batch("COMMIT").unwrap();
    drop(store);
    let found = discover(&[&path]);
    let mut importer = Importer::new(loopguard_transcripts::ImportOptions { max_errors_per_session: 10 });
    let read = importer.read_session(&found.sessions[0], &mut |_| {});
    assert_eq!(read.errors.len(), 10, "capped");
    assert!(read.errors_dropped > 100);
}
