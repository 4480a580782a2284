//! `loopguard report` (issue 62): the page is written where asked, bad input is named, every
//! string from a transcript is escaped, `--compare` lists the sessions that change, and the same
//! input gives the same bytes. The page in a real browser: tests/report/.

use std::path::{Path, PathBuf};

use loopguard_tests::{workspace_root, Run, TempDir};
use serde_json::Value;

const HOSTILE: &str = "</script><img src=x onerror=alert(1)><!--";

fn loopguard<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(args: I) -> Run {
    Run::new(Path::new(env!("CARGO_BIN_EXE_loopguard")), args, None)
}

/// The coding CLIs' fixtures: a loop, a repeated error and a compaction per CLI.
fn fixtures() -> Vec<PathBuf> {
    let root = workspace_root().join("transcripts/tests/fixtures");
    ["claude-code", "codex", "gemini"].iter().map(|d| root.join(d)).collect()
}

fn args(head: &[&str], out: &Path, paths: &[PathBuf]) -> Vec<std::ffi::OsString> {
    let mut a: Vec<std::ffi::OsString> = vec!["report".into(), "--agent-default".into()];
    a.extend(head.iter().map(Into::into));
    a.extend(["-o".into(), out.as_os_str().to_owned()]);
    a.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    a
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_page_shows_the_numbers_and_a_row_per_touched_session() {
    let dir = TempDir::new("report-page");
    let out = dir.path().join("r.html");
    let mut run = loopguard(args(&[], &out, &fixtures())).success();
    let page = read(&out);
    // The fixtures: 8 sessions, 98 calls; every one warned, 5 blocked, 2 aborted after compaction.
    for (key, n) in [("sessions", 8), ("tool_calls", 98), ("sessions_with_warnings", 8), ("sessions_with_blocks", 5)] {
        let cell = format!("<td data-k=\"{key}\" data-c=\"0\">{n}</td>");
        run = run.check(page.contains(&cell), &format!("{cell} in the page"));
    }
    let rows = page.matches("<details class=\"s\"").count();
    let blocks = page.matches("<script type=\"application/json\"").count();
    run.check(rows == 8 && blocks == 8, "one row and one data block per touched session")
        .check(page.ends_with("</script>\n</body></html>\n"), "the page is whole, its script last");
}

#[test]
fn a_transcript_holding_markup_stays_text() {
    let dir = TempDir::new("report-escape");
    let loop_ = read(&workspace_root().join("transcripts/tests/fixtures/claude-code/loop.jsonl"));
    let hostile = dir.write("<b>x.jsonl", loop_.replace("still-running", HOSTILE));
    let out = dir.path().join("r.html");
    let run = loopguard(args(&[], &out, &[hostile])).success();
    let page = read(&out);
    // The page has its own scripts only: as many `</script>` as `<script`, no `<img`, no `<b>`.
    let run = run
        .check(!page.contains("<img") && !page.contains("<b>"), "no markup from the input")
        .check(page.matches("<script").count() == page.matches("</script>").count(), "no script closed early")
        .check(page.contains("&lt;b&gt;x.jsonl"), "the file name escaped in HTML");
    // In the data block, the text is JSON with `<` escaped, and parses back to the input's text.
    let start = page.find("<script type=\"application/json\"").expect("a data block");
    let body = &page[start..];
    let json = &body[body.find('>').expect("tag end") + 1..body.find("</script>").expect("block end")];
    let data: Value = serde_json::from_str(json).expect("the data block is JSON");
    let args = data["calls"][0]["args"].as_str().unwrap_or("");
    run.check(args.contains(HOSTILE), "the arguments as the transcript has them, once parsed");
}

#[test]
fn compare_lists_the_sessions_whose_decisions_change() {
    let dir = TempDir::new("report-compare");
    let b = dir.write("b.json", r#"{"loopguard":{"detectors":{"sameError":false}}}"#);
    let out = dir.path().join("r.html");
    let run = loopguard(args(&["--compare", b.to_str().expect("utf-8")], &out, &fixtures())).success();
    let page = read(&out);
    // Without the same-error detector, the three `error` sessions (a repeated failing command)
    // lose their warning, and nothing else changes.
    let ids = session_ids(&fixtures(), "error.jsonl");
    let listed: Vec<&str> =
        page.split("<tr class=\"change\" data-session=\"").skip(1).map(|s| &s[..s.find('"').unwrap_or(0)]).collect();
    run.check(ids.len() == 3, "three error fixtures")
        .check(listed == ids, &format!("the changed sessions {listed:?} are the error sessions {ids:?}"))
        .check(page.contains("<span data-k=\"changed\">3</span> of 8 sessions change"), "the count");
}

/// The session ids of the fixtures read from files named `name`, in report order.
fn session_ids(paths: &[PathBuf], name: &str) -> Vec<String> {
    let mut a = vec!["transcripts".to_string(), "--json".into()];
    a.extend(paths.iter().map(|p| p.display().to_string()));
    let run = loopguard(&a).success();
    let rows: Vec<Value> = run.stdout().lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let of = |r: &Value| r["file"].as_str().is_some_and(|f| f.ends_with(name)).then(|| r["session_id"].to_string());
    rows.iter().filter(|r| r["type"] == "session").filter_map(of).map(|s| s.trim_matches('"').to_string()).collect()
}

#[test]
fn the_same_input_gives_the_same_bytes_for_any_jobs() {
    let dir = TempDir::new("report-same");
    let (one, two) = (dir.path().join("1.html"), dir.path().join("2.html"));
    loopguard(args(&["--jobs", "1"], &one, &fixtures())).success();
    let run = loopguard(args(&["--jobs", "2"], &two, &fixtures())).success();
    run.check(read(&one) == read(&two), "byte-identical pages");
}

#[test]
fn dash_writes_the_page_to_stdout() {
    let mut a = vec!["report".to_string(), "--agent-default".into(), "-o".into(), "-".into()];
    a.extend(fixtures().iter().map(|p| p.display().to_string()));
    let run = loopguard(&a).success();
    let ok = run.stdout().starts_with("<!doctype html>");
    run.check(ok, "the page on stdout");
}

#[test]
fn bad_input_is_named() {
    let dir = TempDir::new("report-bad");
    let out = dir.path().join("r.html");
    // A path that is not there: named, the page still written, exit 1.
    let missing = dir.path().join("nowhere");
    let run = loopguard(args(&[], &out, &[missing, fixtures()[0].clone()])).code(1);
    let named = run.stderr().contains("nowhere");
    let run = run.check(named, "the missing path named");
    run.check(out.is_file(), "the page of what could be read");
    // A config the policy refuses: named by its file, exit 2, no page.
    let bad = dir.write("bad.json", r#"{"loopguard":{"preset":"strict"}}"#);
    let out2 = dir.path().join("r2.html");
    let run = loopguard(args(&["--compare", bad.to_str().expect("utf-8")], &out2, &fixtures())).code(2);
    let named = run.stderr().contains("bad.json") && run.stderr().contains("preset");
    let run = run.check(named, "the file and field");
    run.check(!out2.exists(), "no page");
    // A folder that does not exist for the page: named, exit 2.
    let nowhere = dir.path().join("no/such/dir/r.html");
    let run = loopguard(args(&[], &nowhere, &fixtures())).code(2);
    let named = run.stderr().contains("no/such/dir/r.html") && run.stderr().lines().count() == 1;
    run.check(named, "one line naming the output");
    // No path at all.
    let run = loopguard(["report"]).code(2);
    let said = run.stderr().contains("report needs at least one PATH");
    run.check(said, "the missing PATH");
}
