//! Histories written by the real OpenCode 1.18.33, GitHub Copilot CLI 1.0.102, Cline 3.0.65 and
//! Qwen Code 0.24.4 against a scripted fake model, committed under `tests/fixtures/<cli>/` (made
//! by `tests/fixtures/make-chat-cli-fixtures.sh`): each reader maps them to the calls and
//! outcomes loopguard's plugin or hook would have seen, in order, and a replay under the
//! agent-facing hosts' default blocks the loop at the call the live guard blocks at.
//!
//! Every scenario's facts below (ids, counts, texts) are read off the fixture files by eye, not
//! computed by the readers: `loop` is identical `echo still-running` calls that a stand-in guard
//! warned after the 3rd and denied from the 4th on (25 calls for OpenCode and Copilot CLI; Cline stops the task itself at
//! the 5th identical call, Qwen Code halts the run at the 5th, before any hook); `error` is 3
//! calls of `cat missing-file`.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use loopguard_policy::gateway::Gateway;
use loopguard_transcripts::{
    discover, ErrorKind, Importer, Location, Outcome, ReportBuilder, SessionTrace, SourceFormat, TraceEvent,
};
use serde_json::{json, Value};

/// The agent-facing hosts' default (`loopguard transcripts --agent-default`): what the plugins
/// and hooks run when the user has no config.
const AGENT_DEFAULT: &str = r#"{"tools":{"loopDetection":{"enabled":true}},"loopguard":{"preset":"cautious"}}"#;

/// One CLI's fixtures and what they hold.
struct Cli {
    dir: &'static str,
    format: SourceFormat,
    /// The fixture file (or, for Cline, the folder of its one task file) of a scenario.
    file: fn(&str) -> String,
    /// The session id of the loop (the plugin's or hook's session).
    loop_session: &'static str,
    /// Calls in the loop; the stand-in denied every one from the 4th.
    loop_calls: u32,
    /// The tool and arguments the plugin or hook saw for the looping call.
    tool: &'static str,
    args: fn() -> Value,
    /// The result of one `echo still-running`, as the plugin or hook recorded it.
    echo_result: fn() -> Value,
    /// The outcome of one `cat missing-file`.
    missing: fn() -> Outcome,
}

fn clis() -> [Cli; 4] {
    let bash = || json!({"command": "echo still-running", "description": "Check build status"});
    [
        Cli {
            dir: "opencode",
            format: SourceFormat::OpenCode,
            file: |s| format!("{s}.db"),
            loop_session: "ses_daecb27a3ffey18xJMFLr53QkH",
            loop_calls: 25,
            tool: "bash",
            args: bash,
            echo_result: || json!("still-running\n"),
            // OpenCode's bash completes with the output of a failing command (exit 1 in its metadata).
            missing: || Outcome::Result(json!("cat: missing-file: No such file or directory\n")),
        },
        Cli {
            dir: "copilot",
            format: SourceFormat::CopilotCli,
            file: |s| format!("{s}.jsonl"),
            loop_session: "4b60d5f4-148b-4973-bf4b-c09b120004be",
            loop_calls: 25,
            tool: "bash",
            args: bash,
            echo_result: || json!({"content": [{"type": "text", "text": "still-running"}]}),
            missing: || Outcome::Error(json!("Exit code 1\ncat: missing-file: No such file or directory")),
        },
        Cli {
            dir: "cline",
            format: SourceFormat::Cline,
            file: |s| s.to_string(),
            loop_session: "1796658774385_kvxyc",
            loop_calls: 5,
            tool: "run_commands",
            args: || json!({"commands": ["echo still-running"]}),
            echo_result: || json!([{"query": "echo still-running", "result": "still-running\n", "success": true}]),
            missing: || {
                Outcome::Result(json!([{"query": "cat missing-file", "result":
                    "[Command exited with code 1]\n\n[stderr]\ncat: missing-file: No such file or directory\n",
                    "error": "Command exited with code 1", "success": false}]))
            },
        },
        Cli {
            dir: "qwen-code",
            format: SourceFormat::QwenCode,
            file: |s| format!("{s}.jsonl"),
            loop_session: "ed6be6b1-d170-45b6-861e-dcd34655a2a5",
            loop_calls: 4,
            tool: "run_shell_command",
            args: bash,
            echo_result: || {
                json!({"details": {"llmContent": "Command: echo still-running\nDirectory: (root)\nOutput: still-running\n\
                    Error: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)", "returnDisplay": "still-running"}})
            },
            missing: || {
                Outcome::Error(json!(
                    "Command: cat missing-file\nDirectory: (root)\nOutput: cat: missing-file: No such \
                    file or directory\nError: (none)\nExit Code: 1\nSignal: (none)\nProcess Group PGID: (none)"
                ))
            },
        },
    ]
}

fn fixture(cli: &Cli, scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(cli.dir).join((cli.file)(scenario))
}

fn read(path: &Path) -> SessionTrace {
    let found = discover(&[path]);
    assert!(found.errors.is_empty(), "{}: {:?}", path.display(), found.errors);
    assert_eq!(found.sessions.len(), 1, "{}: one session", path.display());
    Importer::default().read_trace(&found.sessions[0])
}

/// The events as (kind, call index) in order.
fn shape(trace: &SessionTrace) -> Vec<(&'static str, u32)> {
    trace.events.iter().map(|e| (e.event.kind().name(), e.reference.call_index.unwrap_or(0))).collect()
}

/// Calls 1..=n, each answered right away up to `answered`.
fn answered(n: u32, answered: u32) -> Vec<(&'static str, u32)> {
    let mut out = Vec::new();
    for i in 1..=n {
        out.push(("tool_call", i));
        if i <= answered {
            out.push(("tool_result", i));
        }
    }
    out
}

#[test]
fn each_reader_maps_the_loop_to_the_calls_and_outcomes_its_guard_saw() {
    for cli in clis() {
        let trace = read(&fixture(&cli, "loop"));
        let what = cli.dir;
        // The stand-in warned after the 3rd call, as loopguard does; every CLI but Cline (a
        // message of its own) stored the note with that call's output, which is read without it
        // below (all three outcomes alike).
        if cli.format != SourceFormat::Cline {
            let bytes = std::fs::read(fixture(&cli, "loop")).unwrap();
            assert!(bytes.windows(16).any(|w| w == b"stand-in warning"), "{what}: the fixture holds the warning");
        }
        assert_eq!(trace.info.format, cli.format, "{what}");
        assert_eq!(trace.info.session_key, cli.loop_session, "{what}: keyed by the session id");
        assert!(trace.read.is_clean(), "{what}: {:?}", trace.read.errors);
        // Calls 1-3 ran; the 4th and every later one was denied: no outcome recorded.
        assert_eq!(shape(&trace), answered(cli.loop_calls, 3), "{what}");
        let stats = &trace.read.stats;
        let denied = u64::from(cli.loop_calls) - 3;
        assert_eq!(
            (stats.tool_calls, stats.tool_results, stats.unrecorded_outcomes),
            (cli.loop_calls.into(), 3, denied)
        );
        assert_eq!(stats.unanswered_calls, 0, "{what}: denied calls are answered (by the CLI's denial)");
        let calls: Vec<_> = trace.events.iter().filter(|e| matches!(e.event, TraceEvent::ToolCall(_))).collect();
        for e in [calls[0], calls[calls.len() - 1]] {
            let TraceEvent::ToolCall(c) = &e.event else { unreachable!() };
            assert_eq!((c.tool.as_str(), &c.args), (cli.tool, &(cli.args)()), "{what}: first and last call");
            assert_eq!(&*c.session, cli.loop_session, "{what}");
        }
        for e in &trace.events {
            if let TraceEvent::ToolResult(r) = &e.event {
                assert_eq!(r.outcome, Outcome::Result((cli.echo_result)()), "{what}");
                assert_eq!((r.tool.as_str(), &r.args), (cli.tool, &(cli.args)()), "{what}");
            }
        }
    }
}

#[test]
fn a_failing_command_is_read_as_the_guard_recorded_it() {
    for cli in clis() {
        let trace = read(&fixture(&cli, "error"));
        let what = cli.dir;
        assert!(trace.read.is_clean(), "{what}: {:?}", trace.read.errors);
        assert_eq!(shape(&trace), answered(3, 3), "{what}");
        for e in &trace.events {
            match &e.event {
                TraceEvent::ToolCall(c) => {
                    assert_eq!(c.args["commands"][0].as_str().or(c.args["command"].as_str()), Some("cat missing-file"))
                }
                TraceEvent::ToolResult(r) => assert_eq!(r.outcome, (cli.missing)(), "{what}"),
                TraceEvent::Compaction(_) => panic!("{what}: no compaction"),
            }
        }
    }
}

/// The decisions of `trace` on a fresh gateway, one per line.
fn replay(config: &str, trace: &str) -> Vec<Value> {
    let mut gateway = Gateway::from_config(config).unwrap();
    gateway.apply_events(trace, 1).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn under_the_agent_default_each_loop_blocks_at_the_4th_call_where_the_live_guard_did() {
    // docs/spec/tool-loop.md and guest/src/config/detection.rs: the cautious preset's sameResult
    // blocks the 4th identical call after 3 identical outcomes (tests/agent-clis/scenarios.py
    // POLL_BLOCK, what the plugins and hooks do live); the stand-in guard denied from the 4th too.
    for cli in clis() {
        let trace = read(&fixture(&cli, "loop"));
        let decisions = replay(AGENT_DEFAULT, &trace.trace_text());
        let mut report = ReportBuilder::new();
        report.add_trace(&trace, &decisions.iter().map(Value::to_string).collect::<Vec<_>>()).unwrap();
        let report = report.finish();
        let row = &report.rows[0];
        let block = row.first_block.as_ref().unwrap();
        assert_eq!(
            (block.call, block.detector.as_str(), block.tool.as_str()),
            (4, "same_result", cli.tool),
            "{}",
            cli.dir
        );
        assert_eq!(row.format, cli.format.name());
    }
}

#[test]
fn a_damaged_record_is_named_and_the_others_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    for cli in clis().iter().filter(|c| matches!(c.format, SourceFormat::CopilotCli | SourceFormat::QwenCode)) {
        let text = std::fs::read_to_string(fixture(cli, "loop")).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        // Damage the line of the 2nd call.
        let starts =
            if cli.format == SourceFormat::CopilotCli { "{\"type\":\"tool.execution_start\"" } else { "{\"uuid\"" };
        let second = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with(starts) && l.contains("echo still-running") && !l.contains("tool_result"))
            .map(|(i, _)| i)
            .nth(1)
            .unwrap();
        lines[second] = "{\"type\": not json".to_string();
        let path = tmp.path().join(cli.dir).join("loop.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let trace = read(&path);
        let errors = &trace.read.errors;
        assert_eq!(errors.len(), 1, "{}: {errors:?}", cli.dir);
        assert!(matches!(errors[0].kind(), ErrorKind::Json(_)), "{}", cli.dir);
        assert_eq!(errors[0].location(), Some(Location::Line(second as u64 + 1)), "{}", cli.dir);
        assert!(errors[0].to_string().contains(&path.display().to_string()), "{}", errors[0]);
        // That call's line is gone (its result is an orphan); every other call is still read.
        assert_eq!(trace.read.stats.tool_calls, u64::from(cli.loop_calls) - 1, "{}", cli.dir);
        assert_eq!(trace.read.stats.bad_records, 1, "{}", cli.dir);
    }
}

#[test]
fn a_damaged_opencode_part_is_named_by_rowid_and_the_others_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let cli = &clis()[0];
    let path = tmp.path().join("opencode.db");
    std::fs::copy(fixture(cli, "loop"), &path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rowid: i64 = conn
        .query_row(
            "SELECT rowid FROM part WHERE data LIKE '%\"type\":\"tool\"%' ORDER BY id LIMIT 1 OFFSET 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute("UPDATE part SET data = '{\"type\": not json' WHERE rowid = ?1", [rowid]).unwrap();
    drop(conn);
    let trace = read(&path);
    let errors = &trace.read.errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].location(), Some(Location::Rowid(rowid)));
    assert!(
        errors[0].to_string().contains(&format!("{}", path.display()))
            && errors[0].to_string().contains(&format!("rowid {rowid}"))
    );
    assert_eq!((trace.read.stats.tool_calls, trace.read.stats.tool_results), (24, 2));
}

#[test]
fn a_cut_cline_task_is_named_by_line_and_the_messages_before_it_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let cli = &clis()[2];
    let dir = fixture(cli, "loop");
    let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(&file).unwrap();
    // Cut the document in the middle of the 4th call's message.
    let cut = text.match_indices("call_mmrmxdg8sx5_0007").next().unwrap().0;
    let path = tmp.path().join(file.file_name().unwrap());
    std::fs::write(&path, &text[..cut]).unwrap();
    let trace = read(&path);
    let errors = &trace.read.errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(matches!(errors[0].kind(), ErrorKind::TruncatedLine(_)), "{:?}", errors[0]);
    let line = text[..cut].lines().count() as u64;
    assert_eq!(errors[0].location(), Some(Location::Line(line)));
    assert_eq!((trace.read.stats.tool_calls, trace.read.stats.tool_results), (3, 3));
}

#[test]
fn each_clis_history_folder_is_found_by_its_layout() {
    // As a user points at ~/.local/share/opencode, ~/.copilot/session-state, ~/.cline/data and ~/.qwen/projects.
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let copy = |from: PathBuf, to: &str| {
        let to = tmp.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to).unwrap();
    };
    copy(fixtures.join("opencode/loop.db"), ".local/share/opencode/opencode.db");
    copy(
        fixtures.join("copilot/loop.jsonl"),
        ".copilot/session-state/4b60d5f4-148b-4973-bf4b-c09b120004be/events.jsonl",
    );
    let task = "1796658774385_kvxyc.messages.json";
    copy(fixtures.join("cline/loop").join(task), &format!(".cline/data/sessions/1796658774385_kvxyc/{task}"));
    copy(
        fixtures.join("qwen-code/loop.jsonl"),
        ".qwen/projects/-home-me-proj/chats/ed6be6b1-d170-45b6-861e-dcd34655a2a5.jsonl",
    );
    let found = discover(&[
        tmp.path().join(".local/share/opencode"),
        tmp.path().join(".copilot"),
        tmp.path().join(".cline"),
        tmp.path().join(".qwen"),
    ]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let mut formats: Vec<&str> = found.sessions.iter().map(|s| s.format.name()).collect();
    formats.sort();
    assert_eq!(formats, ["cline", "copilot", "opencode", "qwen-code"]);
    let mut importer = Importer::default();
    let calls: Vec<u64> = importer.traces(&found.sessions).map(|t| t.read.stats.tool_calls).collect();
    let mut want: Vec<u64> = clis().iter().map(|c| u64::from(c.loop_calls)).collect();
    let mut calls_sorted = calls.clone();
    calls_sorted.sort();
    want.sort();
    assert_eq!(calls_sorted, want);
}

#[test]
fn a_copy_whose_name_says_nothing_is_told_by_its_first_line() {
    // As `loopguard transcripts -` or `<(cat events.jsonl)` hands the file over: no name to go by.
    let tmp = tempfile::tempdir().unwrap();
    for cli in clis().iter().filter(|c| matches!(c.format, SourceFormat::CopilotCli | SourceFormat::QwenCode)) {
        let path = tmp.path().join(format!("{}-input", cli.dir));
        std::fs::copy(fixture(cli, "loop"), &path).unwrap();
        let trace = read(&path);
        assert_eq!(
            (trace.info.format.clone(), trace.info.session_key.as_str()),
            (cli.format.clone(), cli.loop_session)
        );
        assert_eq!(trace.read.stats.tool_calls, u64::from(cli.loop_calls), "{}", cli.dir);
    }
}
