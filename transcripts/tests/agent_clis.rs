//! Transcripts written by the real coding CLIs (Claude Code 2.1.332, Codex 0.171.0, Gemini CLI
//! 0.61.0) against a scripted fake model, committed under `tests/fixtures/<cli>/` (made by
//! `tests/fixtures/make-agent-cli-fixtures.sh`): each reader maps them to the calls, outcomes
//! and compactions the CLI's hooks saw, in order, and a replay on the policy's native core
//! blocks the loop where a hand-written trace of the same calls blocks.
//!
//! Every scenario's facts below (ids, counts, texts) are read off the fixture files by eye, not
//! computed by the readers: `loop` is 25 identical `echo still-running` calls whose 24th and 25th
//! a stand-in guard hook denied; `error` is 3 failing calls; `compaction` is 3 calls, a
//! compaction, then 4 more.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use loopguard_policy::gateway::Gateway;
use loopguard_transcripts::{
    discover, ErrorKind, Importer, Location, Outcome, ReportBuilder, SessionTrace, SourceFormat, TraceEvent,
};
use serde_json::{json, Value};

const ON: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;

/// One CLI's fixtures and what they hold.
struct Cli {
    dir: &'static str,
    format: SourceFormat,
    /// The session id of `loop.jsonl` (the hooks' `session_id`).
    loop_session: &'static str,
    /// The tool and arguments the hooks saw for the looping call.
    tool: &'static str,
    args: fn() -> Value,
    /// The result of one `echo still-running`, as the post-tool hook got it.
    echo_result: fn() -> Value,
    /// The error text of one failing call in `error.jsonl`.
    error: &'static str,
}

fn clis() -> [Cli; 3] {
    [
        Cli {
            dir: "claude-code",
            format: SourceFormat::ClaudeCode,
            loop_session: "9507cacd-6c40-4d67-a32e-fe8d9bbcfe97",
            tool: "Bash",
            args: || json!({"command": "echo still-running", "description": "Check build status"}),
            echo_result: || json!({"details": {"stdout": "still-running", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false}}),
            error: "Exit code 1\ncat: /nonexistent/missing-file: No such file or directory",
        },
        Cli {
            dir: "codex",
            format: SourceFormat::Codex,
            loop_session: "01a24a34-bbb5-7721-aaff-c44cd0366750",
            tool: "Bash",
            args: || json!({"command": "echo still-running"}),
            echo_result: || json!({"content": [{"type": "text", "text": "still-running\n"}]}),
            error: "cat: /nonexistent/missing-file: No such file or directory\n",
        },
        Cli {
            dir: "gemini",
            format: SourceFormat::GeminiCli,
            loop_session: "170490ac-be1e-4f2f-91e8-a812cc761f09",
            tool: "run_shell_command",
            args: || json!({"command": "echo still-running", "description": "Check build status"}),
            echo_result: || json!({"content": [{"type": "text", "text": "still-running"}]}),
            error: "Command cannot be empty.",
        },
    ]
}

fn fixture(cli: &Cli, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(cli.dir).join(name)
}

fn read(path: &Path) -> SessionTrace {
    let found = discover(&[path]);
    assert!(found.errors.is_empty(), "{}: {:?}", path.display(), found.errors);
    assert_eq!(found.sessions.len(), 1, "{}: one session", path.display());
    Importer::default().read_trace(&found.sessions[0])
}

/// The events as (kind, call index) in order, compactions as ("compaction", 0).
fn shape(trace: &SessionTrace) -> Vec<(&'static str, u32)> {
    trace.events.iter().map(|e| (e.event.kind().name(), e.reference.call_index.unwrap_or(0))).collect()
}

/// `n` calls, each answered right away, except those in `unanswered`.
fn answered(range: std::ops::RangeInclusive<u32>, unanswered: &[u32]) -> Vec<(&'static str, u32)> {
    let mut out = Vec::new();
    for i in range {
        out.push(("tool_call", i));
        if !unanswered.contains(&i) {
            out.push(("tool_result", i));
        }
    }
    out
}

#[test]
fn each_reader_maps_the_loop_to_the_calls_and_outcomes_its_hooks_saw() {
    for cli in clis() {
        let trace = read(&fixture(&cli, "loop.jsonl"));
        let what = cli.dir;
        assert_eq!(trace.info.format, cli.format, "{what}");
        assert_eq!(trace.info.session_key, cli.loop_session, "{what}: keyed by the hooks' session_id");
        assert!(trace.read.is_clean(), "{what}: {:?}", trace.read.errors);
        // The 24th and 25th calls were denied by the hook: no post-tool hook, no outcome.
        assert_eq!(shape(&trace), answered(1..=25, &[24, 25]), "{what}");
        let stats = &trace.read.stats;
        assert_eq!((stats.tool_calls, stats.tool_results, stats.unrecorded_outcomes), (25, 23, 2), "{what}");
        assert_eq!(stats.unanswered_calls, 0, "{what}: denied calls are answered (by the CLI's block text)");
        for e in &trace.events {
            match &e.event {
                TraceEvent::ToolCall(c) => {
                    assert_eq!((c.tool.as_str(), &c.args), (cli.tool, &(cli.args)()), "{what}");
                    assert_eq!(&*c.session, trace.info.session_key.as_str(), "{what}");
                }
                TraceEvent::ToolResult(r) => {
                    assert_eq!(r.outcome, Outcome::Result((cli.echo_result)()), "{what}");
                    assert_eq!((r.tool.as_str(), &r.args), (cli.tool, &(cli.args)()), "{what}");
                }
                TraceEvent::Compaction(_) => panic!("{what}: no compaction in the loop"),
            }
        }
    }
}

#[test]
fn errors_are_error_outcomes_with_the_clis_error_text() {
    for cli in clis() {
        let trace = read(&fixture(&cli, "error.jsonl"));
        let what = cli.dir;
        assert!(trace.read.is_clean(), "{what}: {:?}", trace.read.errors);
        assert_eq!(shape(&trace), answered(1..=3, &[]), "{what}");
        for e in trace.events.iter().filter(|e| matches!(e.event, TraceEvent::ToolResult(_))) {
            let TraceEvent::ToolResult(r) = &e.event else { unreachable!() };
            assert_eq!(r.outcome, Outcome::Error(json!(cli.error)), "{what}");
        }
    }
}

#[test]
fn compactions_sit_between_the_calls_around_them() {
    // Claude Code's `/compact` (a `compact_boundary` record; the resumed run's fake model numbers
    // its tool_use ids from 1 again, so pairing must take the oldest unanswered call) and Codex's
    // auto-compaction after the 3rd call (a `compacted` item).
    let mut want = answered(1..=3, &[]);
    want.push(("compaction", 0));
    want.extend(answered(4..=7, &[]));
    for cli in clis().iter().filter(|c| c.format != SourceFormat::GeminiCli) {
        let trace = read(&fixture(cli, "compaction.jsonl"));
        assert!(trace.read.is_clean(), "{}: {:?}", cli.dir, trace.read.errors);
        assert_eq!(shape(&trace), want, "{}", cli.dir);
        assert_eq!(trace.read.stats.compactions, 1, "{}", cli.dir);
        // docs/spec/tool-loop.md §6: the compaction arms a window of 3; the 3rd identical outcome
        // after it (call 6) aborts.
        let decisions: Vec<String> = replay(&trace.trace_text()).iter().map(Value::to_string).collect();
        let mut report = ReportBuilder::new();
        report.add_trace(&trace, &decisions).unwrap();
        let row = report.finish().rows.remove(0);
        let abort = row.first_abort.unwrap();
        assert_eq!((abort.call, abort.detector.as_str()), (6, "compaction_loop_persisted"), "{}", cli.dir);
    }
}

/// The decisions of `trace` on a fresh gateway, one per line.
fn replay(trace: &str) -> Vec<Value> {
    let mut gateway = Gateway::from_config(ON).unwrap();
    gateway.apply_events(trace, 1).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The 1-based call number of the first blocked `tool_call`, given the events' kinds and decisions.
fn first_block(kinds: &[&str], decisions: &[Value]) -> Option<usize> {
    let mut call = 0;
    for (kind, d) in kinds.iter().zip(decisions) {
        if *kind == "tool_call" {
            call += 1;
            if d["action"] == "block" {
                return Some(call);
            }
        }
    }
    None
}

#[test]
fn the_loop_blocks_at_call_21_as_a_hand_written_trace_of_the_same_calls_does() {
    for cli in clis() {
        let trace = read(&fixture(&cli, "loop.jsonl"));
        let kinds: Vec<&str> = trace.events.iter().map(|e| e.event.kind().name()).collect();
        let decisions = replay(&trace.trace_text());
        // The same session written by hand from what the hooks got: 23 answered calls, 2 denied.
        let session = trace.info.session_key.as_str();
        let mut hand = String::new();
        let mut hand_kinds = Vec::new();
        for i in 1..=25 {
            let call = json!({"kind": "tool_call", "session": session, "tool": cli.tool, "args": (cli.args)()});
            hand += &format!("{call}\n");
            hand_kinds.push("tool_call");
            if i < 24 {
                let result = json!({"kind": "tool_result", "session": session, "tool": cli.tool,
                    "args": (cli.args)(), "result": (cli.echo_result)()});
                hand += &format!("{result}\n");
                hand_kinds.push("tool_result");
            }
        }
        let by_hand = replay(&hand);
        // docs/spec/tool-loop.md §3: with criticalThreshold 20 the 21st identical call, after 20
        // identical outcomes, is the first blocked one.
        assert_eq!(first_block(&kinds, &decisions), Some(21), "{}", cli.dir);
        assert_eq!(first_block(&hand_kinds, &by_hand), Some(21), "{}", cli.dir);
        let mut report = ReportBuilder::new();
        report.add_trace(&trace, &decisions.iter().map(Value::to_string).collect::<Vec<_>>()).unwrap();
        let report = report.finish();
        let row = &report.rows[0];
        let block = row.first_block.as_ref().unwrap();
        assert_eq!((block.call, block.detector.as_str(), block.tool.as_str()), (21, "generic_repeat", cli.tool));
        assert_eq!(
            row.first_warning.as_ref().map(|w| w.call),
            Some(11),
            "{}: warned at the 11th identical call",
            cli.dir
        );
        assert_eq!(row.format, cli.format.name());
    }
}

#[test]
fn a_malformed_line_is_named_and_the_other_lines_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    for cli in clis() {
        let text = std::fs::read_to_string(fixture(&cli, "loop.jsonl")).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        // Damage the line of the 5th call, and cut the last line in the middle.
        let fifth =
            lines.iter().enumerate().filter(|(_, l)| l.contains("echo still-running")).map(|(i, _)| i).nth(4).unwrap();
        lines[fifth] = "{\"type\": not json".to_string();
        let last = lines.len() - 1;
        let cut = lines[last].len() / 2;
        lines[last].truncate(cut);
        let path = tmp.path().join(cli.dir).join("loop.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n")).unwrap();
        let trace = read(&path);
        let errors = &trace.read.errors;
        assert_eq!(errors.len(), 2, "{}: {errors:?}", cli.dir);
        assert!(matches!(errors[0].kind(), ErrorKind::Json(_)), "{}", cli.dir);
        assert_eq!(errors[0].location(), Some(Location::Line(fifth as u64 + 1)), "{}", cli.dir);
        assert!(errors[0].to_string().contains(&format!("{}: session", path.display())), "{}", errors[0]);
        assert!(errors[0].to_string().contains(&format!("line {}", fifth + 1)), "{}", errors[0]);
        assert!(matches!(errors[1].kind(), ErrorKind::TruncatedLine(_)), "{}: {:?}", cli.dir, errors[1]);
        // One call's line is gone; the 24 others are still read.
        assert_eq!(trace.read.stats.tool_calls, 24, "{}", cli.dir);
        assert_eq!(trace.read.stats.bad_records, 2, "{}", cli.dir);
    }
}

#[test]
fn a_directory_of_each_clis_history_is_found_by_its_layout() {
    // As a user points at ~/.claude/projects, ~/.codex/sessions and ~/.gemini/tmp.
    let tmp = tempfile::tempdir().unwrap();
    let places = [
        ("claude-code", ".claude/projects/-home-me-proj/SESSION.jsonl"),
        ("codex", ".codex/sessions/2026/12/06/rollout-2026-12-06T07-04-27-SESSION.jsonl"),
        ("gemini", ".gemini/tmp/proj/chats/session-2026-12-06T07-04-SESSION.jsonl"),
    ];
    for (dir, place) in places {
        let to = tmp.path().join(place.replace("SESSION", dir));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir).join("loop.jsonl"), &to)
            .unwrap();
    }
    // A pi transcript beside them is still a pi transcript.
    let pi = tmp.path().join(".claude/projects/-home-me-proj/pi.jsonl");
    std::fs::write(&pi, "{\"type\":\"session\",\"version\":3,\"id\":\"pi-1\"}\n").unwrap();
    let found = discover(&[
        tmp.path().join(".claude/projects"),
        tmp.path().join(".codex/sessions"),
        tmp.path().join(".gemini/tmp"),
    ]);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let mut formats: Vec<&str> = found.sessions.iter().map(|s| s.format.name()).collect();
    formats.sort();
    assert_eq!(formats, ["claude-code", "codex", "gemini", "jsonl"]);
    let mut importer = Importer::default();
    for trace in importer.traces(&found.sessions) {
        let want = if trace.info.format == SourceFormat::Jsonl { 0 } else { 25 };
        assert_eq!(trace.read.stats.tool_calls, want, "{}", trace.info.file.display());
    }
}
