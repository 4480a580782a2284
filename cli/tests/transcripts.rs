//! `loopguard transcripts` on the files the real OpenClaw 2026.9.6 gateway wrote
//! (`tests/fixtures/openclaw-2026.9.6/`, facts in its `expected.json`): the three formats are
//! read, the report blocks at the call the gateway itself blocked, `--set` moves that block, and
//! damaged copies give named errors, lose no other session and exit non-zero.

use std::path::{Path, PathBuf};

use loopguard_tests::{workspace_root, Run, TempDir};
use serde_json::Value;

const ON: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;

fn loopguard<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(args: I) -> Run {
    Run::new(Path::new(env!("CARGO_BIN_EXE_loopguard")), args, None)
}

fn fixtures() -> PathBuf {
    let dir = workspace_root().join("tests/fixtures/openclaw-2026.9.6");
    assert!(dir.join("expected.json").is_file(), "{} is missing (tests/e2e/make-fixtures.mjs makes it)", dir.display());
    dir
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

/// `transcripts --json` with `args`, the JSON lines of its stdout.
fn report(dir: &TempDir, extra: &[&str], paths: &[&Path]) -> (Run, Vec<Value>) {
    let config = dir.write("config.json", ON);
    let mut args: Vec<std::ffi::OsString> =
        vec!["transcripts".into(), "--json".into(), "--config".into(), config.into()];
    args.extend(extra.iter().map(Into::into));
    args.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    let run = loopguard(&args);
    let lines = run.stdout().lines().map(|l| serde_json::from_str(l).unwrap_or(Value::Null)).collect();
    (run, lines)
}

fn row<'a>(lines: &'a [Value], key: &str) -> Option<&'a Value> {
    lines.iter().find(|l| l["type"] == "session" && l["session_key"] == key)
}

#[test]
fn the_report_blocks_where_the_gateway_blocked_in_every_format() {
    let exp = expected();
    let dir = TempDir::new("transcripts-fixtures");
    let lp = &exp["sessions"]["loop"];
    let key = lp["sessionKey"].as_str().expect("key");
    let block = lp["gatewayBlock"]["callIndex"].as_u64().expect("call index");
    let sqlite = fixtures().join("openclaw-agent.sqlite");
    let export = fixtures().join("trajectory-fx-loop-exec");
    let legacy = fixtures().join("legacy-jsonl-openclaw-2026.7.35");
    let deleted = fixtures().join("deleted-session-jsonl");
    for (what, path) in [("sqlite", &sqlite), ("trajectory export", &export)] {
        let (run, lines) = report(&dir, &[], &[path]);
        let run = run.success();
        let r = row(&lines, key);
        let ok = r.is_some_and(|r| {
            r["first_block"]["call"] == block
                && r["first_block"]["detector"] == "generic_repeat"
                && r["first_block"]["tool"] == "exec"
                && r["gateway_block"]["call"] == block
                && r["first_warning"]["call"] == lp["warning"]["callIndex"]
        });
        run.check(ok, &format!("{what}: {key} must first block at call {block}, where the gateway blocked"));
    }
    // The older JSONL format (2026.7.35) and the JSONL of a deleted session.
    let legacy_block = exp["files"]["legacyJsonl"]["gatewayBlock"]["callIndex"].as_u64().expect("legacy block");
    let legacy_key = exp["files"]["legacyJsonl"]["sessionKey"].as_str().expect("legacy key");
    // Alone (without the store that knew its key), the deleted session is keyed by its id.
    let deleted_file = exp["files"]["deletedSessionJsonl"]["files"][1].as_str().expect("deleted file");
    let deleted_key = deleted_file.trim_end_matches(".jsonl");
    let (run, lines) = report(&dir, &[], &[&legacy, &deleted]);
    let run = run.success();
    let ok = row(&lines, legacy_key).is_some_and(|r| r["first_block"]["call"] == legacy_block)
        && row(&lines, deleted_key).is_some_and(|r| r["blocks"] == 0 && r["tool_calls"].as_u64() > Some(0));
    run.check(ok, &format!("JSONL: {legacy_key} blocks at call {legacy_block}; {deleted_key} is read and healthy"));
    // The table names the same finding.
    let config = dir.write("config.json", ON);
    let table =
        loopguard(["transcripts".as_ref(), "--config".as_ref(), config.as_os_str(), sqlite.as_os_str()]).success();
    let ok = table.stdout().lines().any(|l| l.contains(key) && l.contains(&format!("#{block} generic_repeat exec")));
    table.check(ok, "the table row shows the first block as `#N detector tool`");
}

#[test]
fn trace_writes_the_derived_events_and_jobs_do_not_change_anything() {
    let dir = TempDir::new("transcripts-trace");
    let exp = expected();
    let sqlite = fixtures().join("openclaw-agent.sqlite");
    let one =
        loopguard(["transcripts".as_ref(), "--trace".as_ref(), "--jobs".as_ref(), "1".as_ref(), sqlite.as_os_str()])
            .success();
    let key = exp["sessions"]["loop"]["sessionKey"].as_str().expect("key");
    let calls = one
        .stdout()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "tool_call" && v["session"] == key)
        .count();
    let want = exp["sessions"]["loop"]["toolCalls"].as_u64().expect("calls") as usize;
    let one = one.check(calls == want, &format!("{want} tool_call events of {key}"));
    let two =
        loopguard(["transcripts".as_ref(), "--trace".as_ref(), "--jobs".as_ref(), "2".as_ref(), sqlite.as_os_str()])
            .success();
    let same = two.output.stdout == one.output.stdout;
    two.check(same, "--jobs 2 writes the same trace");
    let (a, _) = report(&dir, &["--jobs", "1"], &[&fixtures()]);
    let (b, _) = report(&dir, &["--jobs", "3"], &[&fixtures()]);
    let same = a.output.stdout == b.output.stdout && a.output.status.success();
    b.check(same, "--jobs 3 writes the same report");
}

#[test]
fn what_if_with_set_moves_the_first_block() {
    let exp = expected();
    let dir = TempDir::new("transcripts-whatif");
    let key = exp["sessions"]["loop"]["sessionKey"].as_str().expect("key");
    let sqlite = fixtures().join("openclaw-agent.sqlite");
    let (run, lines) = report(&dir, &["--set", "tools.loopDetection.criticalThreshold=15"], &[&sqlite]);
    let run = run.success();
    let change = lines.iter().find(|l| l["type"] == "change" && l["session_key"] == key);
    let first = change
        .and_then(|c| c["changes"].as_array())
        .and_then(|c| c.iter().find(|c| c["change"] == "first_block_earlier"));
    let ok = first.is_some_and(|c| c["from"]["call"] == 21 && c["to"]["call"] == 16 && c["by"] == 5)
        && lines.iter().filter(|l| l["type"] == "change").count() == 1
        && lines.last().is_some_and(|l| l["type"] == "what_if" && l["changed"] == 1);
    run.check(
        ok,
        "with criticalThreshold 15 the loop session blocks at call 16 instead of 21, and nothing else changes",
    );
    let config = dir.write("config.json", ON);
    let table = loopguard([
        "transcripts".as_ref(),
        "--config".as_ref(),
        config.as_os_str(),
        "--set".as_ref(),
        "tools.loopDetection.criticalThreshold=15".as_ref(),
        sqlite.as_os_str(),
    ])
    .success();
    let ok = table.stdout().lines().any(|l| l.contains(key) && l.contains("blocks 5 calls earlier"));
    table.check(ok, "the what-if table says how the block moved");
    // The same change as a second config file.
    let other = dir.write("other.json", r#"{"tools":{"loopDetection":{"enabled":true,"criticalThreshold":15}}}"#);
    let (run, compared) = report(&dir, &["--compare", other.to_str().expect("utf-8 path")], &[&sqlite]);
    let same = compared == lines;
    run.success().check(same, "--compare FILE gives what --set gave");
    let bad = loopguard(["transcripts".as_ref(), "--set".as_ref(), "nonsense".as_ref(), sqlite.as_os_str()]).code(2);
    let ok = bad.stderr().lines().count() == 1 && bad.stderr().contains("--set nonsense");
    bad.check(ok, "a malformed --set is one clear error");
}

/// Exit 1, an error naming every needle, and the rows of `keys` still in the report.
fn damaged(run: Run, lines: &[Value], needles: &[&str], keys: &[&str]) {
    let err = run.stderr();
    let named = err.lines().any(|l| l.starts_with("loopguard: ") && needles.iter().all(|n| l.contains(n)));
    let kept = keys.iter().all(|k| row(lines, k).is_some());
    let summary = lines.last().is_some_and(|l| l["type"] == "summary");
    run.code(1).check(
        named && kept && summary && !err.contains("panicked"),
        &format!("an error naming {needles:?}, the report with {keys:?}, exit 1"),
    );
}

#[test]
fn a_corrupt_row_a_missing_table_and_a_truncated_line_are_named_and_lose_nothing_else() {
    let exp = expected();
    let dir = TempDir::new("transcripts-damaged");
    let keys: Vec<&str> = ["loop", "compaction", "zstd", "healthy"]
        .iter()
        .map(|s| exp["sessions"][s]["sessionKey"].as_str().expect("key"))
        .collect();
    // A compressed row of (c) that no longer decompresses.
    let store = dir.path().join("corrupt.sqlite");
    std::fs::copy(fixtures().join("openclaw-agent.sqlite"), &store).expect("copy");
    let zstd = &exp["sessions"]["zstd"];
    let seq = zstd["compressedRowSeqs"][0].as_i64().expect("a compressed row");
    let id = zstd["sessionId"].as_str().expect("id");
    let db = rusqlite::Connection::open(&store).expect("open the copy");
    let n = db
        .execute(
            "UPDATE transcript_events SET event_zstd = X'28B52FFD00DEADBEEF' WHERE session_id = ?1 AND seq = ?2",
            (id, seq),
        )
        .expect("damage a row");
    assert_eq!(n, 1, "the row exists");
    drop(db);
    let (run, lines) = report(&dir, &[], &[&store]);
    damaged(run, &lines, &["corrupt.sqlite", id, &format!("row seq {seq}")], &keys);

    // A store without its transcript table, beside readable sources.
    let broken = dir.path().join("no-table.sqlite");
    std::fs::copy(fixtures().join("openclaw-agent.sqlite"), &broken).expect("copy");
    let db = rusqlite::Connection::open(&broken).expect("open the copy");
    db.execute_batch("DROP TABLE transcript_events").expect("drop the table");
    drop(db);
    let legacy = fixtures().join("legacy-jsonl-openclaw-2026.7.35");
    let legacy_key = exp["files"]["legacyJsonl"]["sessionKey"].as_str().expect("legacy key");
    let (run, lines) = report(&dir, &[], &[&broken, &legacy]);
    damaged(run, &lines, &["no-table.sqlite", "transcript_events"], &[legacy_key]);

    // A JSONL transcript whose last line was cut off mid-write.
    let cut = dir.path().join("cut");
    std::fs::create_dir_all(&cut).expect("mkdir");
    for entry in std::fs::read_dir(&legacy).expect("legacy dir").flatten() {
        std::fs::copy(entry.path(), cut.join(entry.file_name())).expect("copy");
    }
    let jsonl = std::fs::read_dir(&cut)
        .expect("cut dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a .jsonl");
    let text = std::fs::read_to_string(&jsonl).expect("read");
    let lines_before = text.lines().count();
    let body = text.trim_end_matches('\n');
    std::fs::write(&jsonl, &body[..body.len() - 25]).expect("truncate");
    let (run, lines) =
        report(&dir, &[], &[&cut, &store.with_file_name("missing.sqlite"), &fixtures().join("openclaw-agent.sqlite")]);
    let file = jsonl.file_name().and_then(|n| n.to_str()).expect("name");
    let mut all = keys.clone();
    all.push(legacy_key);
    damaged(run, &lines, &[file, &format!("line {lines_before}"), "truncated"], &all);
}

/// The session rows of a `--json` report, without what names the file read (`file`, and the
/// `session_id` Claude Code's readers take from the file name).
fn rows_apart_from_the_file(run: &Run) -> Vec<Value> {
    let out = run.stdout();
    let rows = out.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok());
    let mut rows: Vec<Value> = rows.filter(|l| l["type"] == "session").collect();
    for row in &mut rows {
        if let Some(row) = row.as_object_mut() {
            row.remove("file");
            row.remove("session_id");
        }
    }
    rows
}

/// A transcript on stdin (`-`), behind a path whose name says nothing (a pipe such
/// as `<(cat x.jsonl)`'s /dev/fd/63; here /dev/stdin) or in a file named anything is told by its
/// first lines, and reads as the file itself does; a loopguard trace passed by mistake is named.
#[test]
fn stdin_and_nameless_paths_are_told_by_their_content() {
    let dir = TempDir::new("transcripts-content");
    let config = dir.write("config.json", ON);
    // A pi transcript with no index beside it (an index would give its key by the file's place).
    let deleted = fixtures().join("deleted-session-jsonl");
    let pi = std::fs::read_dir(&deleted).expect("deleted-session dir").flatten().map(|e| e.path());
    let pi = pi.filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect::<Vec<_>>();
    let clis =
        ["claude-code", "codex", "gemini"].map(|cli| workspace_root().join("transcripts/tests/fixtures").join(cli));
    let sources = pi.into_iter().chain(clis.iter().map(|d| d.join("loop.jsonl")));
    let transcripts = |path: &std::ffi::OsStr, stdin: Option<&[u8]>| {
        let args = ["transcripts".as_ref(), "--json".as_ref(), "--config".as_ref(), config.as_os_str(), path];
        Run::new(Path::new(env!("CARGO_BIN_EXE_loopguard")), args, stdin)
    };
    for source in sources {
        let by_name = rows_apart_from_the_file(&transcripts(source.as_os_str(), None).success());
        assert_eq!(by_name.len(), 1, "{}", source.display());
        let bytes = std::fs::read(&source).expect("the transcript");
        let renamed = dir.write("session.txt", &bytes);
        for (how, path, stdin) in [
            ("-", "-".as_ref(), Some(bytes.as_slice())),
            ("a pipe", "/dev/stdin".as_ref(), Some(bytes.as_slice())),
            ("session.txt", renamed.as_os_str(), None),
        ] {
            let run = transcripts(path, stdin).success();
            let same = rows_apart_from_the_file(&run) == by_name;
            run.check(same, &format!("{} as {how}: the same row as by its name", source.display()));
        }
    }
    let trace = dir.write("calls.txt", r#"{"kind":"tool_call","session":"s","tool":"read","args":{}}"#);
    let run = transcripts(trace.as_os_str(), None).code(1);
    let named = run.stderr().contains("calls.txt: a loopguard trace") && run.stderr().contains("loopguard replay");
    run.check(named, "a trace is named as one, with the command that reads it");
}
