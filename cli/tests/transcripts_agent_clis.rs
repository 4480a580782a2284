//! `loopguard transcripts` on the files Claude Code, Codex and Gemini CLI wrote
//! (`transcripts/tests/fixtures/<cli>/loop.jsonl`: 25 identical `echo still-running` calls, the
//! 24th and 25th denied by a stand-in guard hook): with detection on and the default thresholds
//! the report's first block is call 21, and `loopguard replay` of the same session written by
//! hand (what the hooks got) blocks at the same call; `--set` moves it. A damaged copy is named by file and line,
//! still reported, and the run exits 1.

use std::path::{Path, PathBuf};

use loopguard_tests::{workspace_root, Run, TempDir};
use serde_json::{json, Value};

const ON: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;

fn loopguard<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(args: I) -> Run {
    Run::new(Path::new(env!("CARGO_BIN_EXE_loopguard")), args, None)
}

/// (fixture folder, session id the hooks saw, tool, args, the post-tool hook's output as a result)
fn clis() -> Vec<(&'static str, &'static str, &'static str, Value, Value)> {
    vec![
        (
            "claude-code",
            "9507cacd-6c40-4d67-a32e-fe8d9bbcfe97",
            "Bash",
            json!({"command": "echo still-running", "description": "Check build status"}),
            json!({"details": {"stdout": "still-running", "stderr": "", "interrupted": false, "isImage": false,
                "noOutputExpected": false}}),
        ),
        (
            "codex",
            "01a24a34-bbb5-7721-aaff-c44cd0366750",
            "Bash",
            json!({"command": "echo still-running"}),
            json!({"content": [{"type": "text", "text": "still-running\n"}]}),
        ),
        (
            "gemini",
            "170490ac-be1e-4f2f-91e8-a812cc761f09",
            "run_shell_command",
            json!({"command": "echo still-running", "description": "Check build status"}),
            json!({"content": [{"type": "text", "text": "still-running"}]}),
        ),
    ]
}

fn fixture(cli: &str) -> PathBuf {
    workspace_root().join("transcripts/tests/fixtures").join(cli).join("loop.jsonl")
}

/// The JSON lines of a run's stdout.
fn lines(run: &Run) -> Vec<Value> {
    run.stdout().lines().map(|l| serde_json::from_str(l).unwrap_or(Value::Null)).collect()
}

/// The 1-based number of the first `tool_call` decided `block` in `loopguard replay`'s output.
fn first_blocked_call(decisions: &[Value]) -> Option<u64> {
    let calls = decisions.iter().filter(|d| d["kind"] == "tool_call");
    calls.zip(1..).find(|(d, _)| d["action"] == "block").map(|(_, n)| n)
}

#[test]
fn each_clis_loop_blocks_at_the_call_a_replay_of_the_same_calls_blocks() {
    let dir = TempDir::new("transcripts-agent-clis");
    let config = dir.write("config.json", ON);
    for (cli, session, tool, args, result) in clis() {
        let run = loopguard([
            "transcripts".as_ref(),
            "--json".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            fixture(cli).as_os_str(),
        ])
        .success();
        let report = lines(&run);
        let row = report.iter().find(|l| l["type"] == "session" && l["session_key"] == session);
        // The equivalent trace, written by hand: 25 calls, outcomes for the 23 that ran.
        let mut trace = String::new();
        for i in 1..=25 {
            trace += &format!("{}\n", json!({"kind": "tool_call", "session": session, "tool": tool, "args": args}));
            if i < 24 {
                let outcome =
                    json!({"kind": "tool_result", "session": session, "tool": tool, "args": args, "result": result});
                trace += &format!("{outcome}\n");
            }
        }
        let trace_file = dir.write(&format!("{cli}.trace.jsonl"), &trace);
        let replay =
            loopguard(["replay".as_ref(), "--config".as_ref(), config.as_os_str(), trace_file.as_os_str()]).success();
        let replayed = first_blocked_call(&lines(&replay));
        let ok = row.is_some_and(|r| {
            r["format"] == cli
                && r["tool_calls"] == 25
                && r["first_block"]["call"] == 21
                && r["first_block"]["detector"] == "generic_repeat"
                && r["first_block"]["tool"] == tool
                && Some(21) == replayed
        });
        run.check(ok, &format!("{cli}: the first block is call 21, where `loopguard replay` blocks ({replayed:?})"));
    }
    // All three at once, as a table: one row each, each naming its first block.
    let mut args: Vec<std::ffi::OsString> = vec!["transcripts".into(), "--config".into(), config.into()];
    args.extend(clis().iter().map(|c| fixture(c.0).into_os_string()));
    let table = loopguard(&args).success();
    let ok = clis().iter().all(|(_, session, tool, _, _)| {
        table.stdout().lines().any(|l| l.contains(session) && l.contains(&format!("#21 generic_repeat {tool}")))
    });
    table.check(ok, "the table has each CLI's session with `#21 generic_repeat <tool>`");
}

#[test]
fn the_what_if_moves_each_clis_block() {
    let dir = TempDir::new("transcripts-agent-clis-whatif");
    let config = dir.write("config.json", ON);
    let mut args: Vec<std::ffi::OsString> =
        vec!["transcripts".into(), "--json".into(), "--config".into(), config.into()];
    args.extend(["--set".into(), "tools.loopDetection.criticalThreshold=15".into()]);
    args.extend(clis().iter().map(|c| fixture(c.0).into_os_string()));
    let run = loopguard(&args).success();
    let out = lines(&run);
    let ok = clis().iter().all(|(_, session, _, _, _)| {
        out.iter().any(|l| {
            l["type"] == "change"
                && l["session_key"] == *session
                && l["changes"].as_array().is_some_and(|c| {
                    c.iter().any(|c| {
                        c["change"] == "first_block_earlier" && c["from"]["call"] == 21 && c["to"]["call"] == 16
                    })
                })
        })
    });
    run.check(ok, "with criticalThreshold 15 each CLI's loop blocks at call 16 instead of 21");
}

#[test]
fn a_damaged_cli_transcript_is_named_by_line_and_still_reported() {
    let dir = TempDir::new("transcripts-agent-clis-damaged");
    let config = dir.write("config.json", ON);
    for (cli, session, _, _, _) in clis() {
        let text = std::fs::read_to_string(fixture(cli)).expect("fixture");
        let mut lines: Vec<&str> = text.lines().collect();
        lines[1] = "{\"oops\": ";
        let damaged = dir.write(&format!("{cli}-damaged.jsonl"), lines.join("\n") + "\n");
        let run = loopguard([
            "transcripts".as_ref(),
            "--json".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            damaged.as_os_str(),
        ]);
        let err = run.stderr();
        let named = err.lines().any(|l| {
            l.starts_with("loopguard: ") && l.contains(&damaged.display().to_string()) && l.contains("line 2")
        });
        let kept = self::lines(&run)
            .iter()
            .any(|l| l["type"] == "session" && l["session_key"] == session && l["tool_calls"] == 25);
        run.code(1).check(
            named && kept && !err.contains("panicked"),
            &format!("{cli}: line 2 named, the session still reported"),
        );
    }
}

/// The four CLIs whose histories `transcripts/tests/fixtures/make-chat-cli-fixtures.sh` wrote:
/// (format, fixture of the loop, its session id, the looping tool, its calls). In each loop a
/// stand-in guard denied every identical call from the 4th on.
fn chat_clis() -> Vec<(&'static str, &'static str, &'static str, &'static str, u64)> {
    vec![
        ("opencode", "opencode/loop.db", "ses_daecb27a3ffey18xJMFLr53QkH", "bash", 25),
        ("copilot", "copilot/loop.jsonl", "4b60d5f4-148b-4973-bf4b-c09b120004be", "bash", 25),
        ("cline", "cline/loop", "1796658774385_kvxyc", "run_commands", 5),
        ("qwen-code", "qwen-code/loop.jsonl", "ed6be6b1-d170-45b6-861e-dcd34655a2a5", "run_shell_command", 4),
    ]
}

fn chat_fixture(path: &str) -> PathBuf {
    workspace_root().join("transcripts/tests/fixtures").join(path)
}

#[test]
fn each_chat_clis_loop_blocks_under_the_agent_default_where_the_live_guard_blocks() {
    // The default the plugins and hooks run (`--agent-default`: the cautious preset): its
    // sameResult blocks the 4th identical call after 3 identical outcomes (guest/src/config/
    // detection.rs; tests/agent-clis/scenarios.py POLL_BLOCK). Calls 4 on were denied live, so
    // they have no outcome, and the replay must block at 4, not later.
    for (format, fixture, session, tool, calls) in chat_clis() {
        let run = loopguard([
            "transcripts".as_ref(),
            "--json".as_ref(),
            "--agent-default".as_ref(),
            chat_fixture(fixture).as_os_str(),
        ])
        .success();
        let report = lines(&run);
        let row = report.iter().find(|l| l["type"] == "session" && l["session_key"] == session);
        let ok = row.is_some_and(|r| {
            r["format"] == format
                && r["tool_calls"] == calls
                && r["first_block"]["call"] == 4
                && r["first_block"]["detector"] == "same_result"
                && r["first_block"]["tool"] == tool
        });
        run.check(ok, &format!("{format}: the first block is call 4 (same_result {tool})"));
    }
}

#[test]
fn a_damaged_chat_cli_history_is_named_by_place_and_the_rest_still_reported() {
    let dir = TempDir::new("transcripts-chat-clis-damaged");
    // Copilot CLI and Qwen Code: a line; OpenCode: a part row; beside an intact Cline task.
    let mut damaged = Vec::new();
    for (fixture, line) in [("copilot/loop.jsonl", 2), ("qwen-code/loop.jsonl", 2)] {
        let text = std::fs::read_to_string(chat_fixture(fixture)).expect("fixture");
        let mut lines: Vec<&str> = text.lines().collect();
        lines[line - 1] = "{\"oops\": ";
        let name = fixture.replace('/', "-");
        damaged.push((dir.write(&name, lines.join("\n") + "\n"), format!("line {line}")));
    }
    let db = dir.path().join("opencode.db");
    std::fs::copy(chat_fixture("opencode/loop.db"), &db).expect("copy");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute("UPDATE part SET data = '{oops' WHERE rowid = 1", []).expect("damage");
    drop(conn);
    damaged.push((db, "rowid 1".to_string()));
    let mut args: Vec<std::ffi::OsString> = vec!["transcripts".into(), "--json".into(), "--agent-default".into()];
    args.extend(damaged.iter().map(|(p, _)| p.clone().into_os_string()));
    args.push(chat_fixture("cline/loop").into_os_string());
    let run = loopguard(&args);
    let err = run.stderr();
    let named = damaged.iter().all(|(path, place)| {
        err.lines()
            .any(|l| l.starts_with("loopguard: ") && l.contains(&path.display().to_string()) && l.contains(place))
    });
    let out = lines(&run);
    let reported = chat_clis().iter().all(|(_, _, session, _, _)| {
        out.iter().any(|l| l["type"] == "session" && l["session_key"] == *session && l["first_block"]["call"] == 4)
    });
    run.code(1).check(
        named && reported && !err.contains("panicked"),
        "each damaged place named; all four sessions still reported",
    );
}
