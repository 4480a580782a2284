//! OpenCode sessions: the SQLite database `~/.local/share/opencode/opencode.db` (1.18.33; under
//! `$XDG_DATA_HOME/opencode/` where that is set), tables `session` (`id`, `parent_id`, …),
//! `message` and `part` (`id`, `message_id`, `session_id`, `data` as JSON text). Ids are
//! time-ordered, so a session's parts in `id` order are its history. OpenCode runs loopguard
//! in-process (`packages/opencode-plugin`), so a call is read as the plugin gets it from
//! `tool.execute.before`/`tool.execute.after`:
//!
//! - A part of `type:"tool"` (`callID`, `tool`, `state`): a call, with `tool` and
//!   `state.input` (the plugin's `input.tool` and `output.args`; checked against the plugin
//!   hooks of the same run, `transcripts/tests/fixtures/make-chat-cli-fixtures.sh`). A part is
//!   updated in place as the call runs, so one row is the call and its outcome. The calls of one
//!   message (a step, whose calls OpenCode runs together) come first, then their outcomes.
//! - `state.status:"completed"`: `state.output`, the text the plugin records, kept as that text
//!   (as the plugin hands it to the policy). A warning the plugin appended to it (`\n\n` + its
//!   `loopguard: …` note, after recording the outcome) is taken off. A failing command is not an
//!   error: OpenCode's `bash` completes with the output and `metadata.exit`.
//! - `state.status:"error"`: a call a plugin's `tool.execute.before` threw for (how loopguard
//!   blocks; `state.error` is the message), or a tool that threw: OpenCode has no after point for
//!   either, so the plugin records no outcome. `pending`/`running`: no outcome yet.
//!
//! One session per `session` row; a subagent's task is a session of its own (`parent_id`), as
//! for the plugin. A part whose `data` is not JSON is an error naming its `rowid`; the other
//! parts are read. Not read, on purpose: compactions; loopguard's OpenCode plugin has only the
//! tool hooks, so the live guard never saw one.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::session_read::ReadBuilder;
use super::sqlite::{open_read_only, sqlite_err};
use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::{CliMapper, CliOutcome};
use crate::session::{KeySource, SessionInfo, SourceFormat};

/// Whether an SQLite file is OpenCode's: its `session`, `message` and `part` tables.
pub(super) fn is_opencode(path: &Path) -> bool {
    open_read_only(path).is_ok_and(|(_, tables)| ["session", "message", "part"].iter().all(|t| tables.contains(*t)))
}

/// The sessions of an OpenCode database, oldest first.
pub(super) fn sessions(path: &Path) -> Result<Vec<SessionInfo>, Error> {
    let (conn, _) = open_read_only(path)?;
    let mut stmt = conn.prepare("SELECT id FROM session ORDER BY time_created, id").map_err(|e| sqlite_err(path, e))?;
    let ids = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| sqlite_err(path, e))?;
    let mut out = Vec::new();
    for id in ids {
        let id = id.map_err(|e| sqlite_err(path, e))?;
        out.push(SessionInfo {
            file: path.to_path_buf(),
            format: SourceFormat::OpenCode,
            agent_id: None,
            session_key: id.clone(),
            key_source: KeySource::SessionId,
            session_id: id,
        });
    }
    Ok(out)
}

/// The output the plugin recorded: the text without the note it appended afterwards.
fn recorded_output(output: &str) -> &str {
    match output.rfind("\n\nloopguard: ") {
        Some(i) if !output[i + 2..].contains('\n') => &output[..i],
        _ => output,
    }
}

/// A tool part's call id, tool, input, and outcome (if it has one yet).
fn tool_part(part: &Value) -> (String, String, Value, Option<CliOutcome>) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let state = part.get("state").unwrap_or(&Value::Null);
    let outcome = match state.get("status").and_then(Value::as_str) {
        Some("completed") => {
            let output = state.get("output").and_then(Value::as_str).unwrap_or("");
            Some(CliOutcome::Output(Value::String(recorded_output(output).to_string())))
        }
        Some("error") => Some(CliOutcome::Denied),
        _ => None,
    };
    let input = state.get("input").cloned().unwrap_or(Value::Null);
    (text(part.get("callID")), text(part.get("tool")), input, outcome)
}

/// The calls of one message, whose outcomes follow them.
type Step = Vec<(String, Option<CliOutcome>, Option<i64>, Location)>;

/// Streams one OpenCode session's calls and outcomes to `sink`, one part row at a time.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let path = info.file.as_path();
    let fail = |e: Error| e.in_session(&info.session_id);
    let (conn, _) = match open_read_only(path) {
        Ok(c) => c,
        Err(e) => return out.push(fail(e)),
    };
    let sql = "SELECT rowid, message_id, time_updated, data FROM part WHERE session_id = ?1 ORDER BY id";
    let mut stmt = match conn.prepare(sql) {
        Ok(s) => s,
        Err(e) => return out.push(fail(sqlite_err(path, e))),
    };
    let mut rows = match stmt.query([info.session_id.as_str()]) {
        Ok(r) => r,
        Err(e) => return out.push(fail(sqlite_err(path, e))),
    };
    let mut mapper = CliMapper::new(info.clone());
    let (mut records, mut bad) = (0u64, 0u64);
    let mut step: Step = Vec::new();
    let mut message = String::new();
    let flush = |step: &mut Step, mapper: &mut CliMapper, sink: &mut dyn FnMut(ImportedEvent)| {
        for (id, outcome, ts, at) in step.drain(..) {
            if let Some(outcome) = outcome {
                mapper.result(&id, outcome, ts, at, sink);
            }
        }
    };
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) => {
                out.push(fail(sqlite_err(path, e)));
                break;
            }
        };
        records += 1;
        let rowid: i64 = row.get(0).unwrap_or(0);
        let at = Location::Rowid(rowid);
        let this_message: String = row.get(1).unwrap_or_default();
        let ts: Option<i64> = row.get(2).ok();
        let part = match row.get::<_, String>(3).map(|d| serde_json::from_str::<Value>(&d)) {
            Ok(Ok(part)) => part,
            Ok(Err(e)) => {
                bad += 1;
                out.push(fail(Error::new(ErrorKind::Json(e), path).at(at)));
                continue;
            }
            Err(e) => {
                bad += 1;
                out.push(fail(sqlite_err(path, e).at(at)));
                continue;
            }
        };
        if part.get("type").and_then(Value::as_str) != Some("tool") {
            continue;
        }
        if this_message != message {
            flush(&mut step, &mut mapper, sink);
            message = this_message;
        }
        let (id, tool, input, outcome) = tool_part(&part);
        mapper.call(&id, &tool, input, ts, at, sink);
        step.push((id, outcome, ts, at));
    }
    flush(&mut step, &mut mapper, sink);
    mapper.stats.records = records;
    mapper.stats.bad_records = bad;
    out.stats = mapper.finish();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_completed_call_is_its_output_without_the_plugins_note() {
        assert_eq!(recorded_output("still-running\n\n\nloopguard: warning"), "still-running\n");
        assert_eq!(recorded_output("a\n\nloopguard: x\nmore"), "a\n\nloopguard: x\nmore");
        let part = json!({"type": "tool", "tool": "bash", "callID": "c1", "state": {"status": "completed",
            "input": {"command": "ls"}, "output": "a\n"}});
        let (id, tool, input, outcome) = tool_part(&part);
        assert_eq!((id.as_str(), tool.as_str(), input), ("c1", "bash", json!({"command": "ls"})));
        assert_eq!(outcome, Some(CliOutcome::Output(json!("a\n"))));
        let blocked = json!({"type": "tool", "state": {"status": "error", "error": "loopguard: no"}});
        assert_eq!(tool_part(&blocked).3, Some(CliOutcome::Denied));
        assert_eq!(tool_part(&json!({"state": {"status": "running"}})).3, None);
    }
}
