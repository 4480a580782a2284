//! Qwen Code chats: `~/.qwen/projects/<cwd with / as ->/chats/<sessionId>.jsonl` (0.24.4), one
//! record per line (`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `provenance`, …),
//! appended as the session runs. Qwen Code is a Gemini CLI fork whose records carry Gemini-style
//! `message.parts`, but it runs loopguard's Claude Code plugin, in Claude Code's hook protocol: so
//! a call is read as `loopguard hook claude-code` gets it from Qwen Code.
//!
//! What is read (`user` messages and the `system` records, such as `ui_telemetry` and
//! `attribution_snapshot`, are skipped):
//!
//! - `type:"assistant"`: each `message.parts[].functionCall` (`id`, `name`, `args`) is a call:
//!   `PreToolUse`'s `tool_name`/`tool_input` (checked against the hooks of the same run,
//!   `transcripts/tests/fixtures/make-chat-cli-fixtures.sh`).
//! - `type:"tool_result"`: `toolCallResult` (`callId`, `status`, `resultDisplay`, `errorType`)
//!   with the model's `functionResponse.response` beside it. `success`: `PostToolUse`'s
//!   `tool_response` is `{llmContent, returnDisplay}`, where `llmContent` is the response's
//!   `output` and `returnDisplay` the `resultDisplay` (for the shell, whose `resultDisplay` is a
//!   `shell_result` object, its `text`). `error`: the response's `error`, which is exactly
//!   `PostToolUseFailure`'s `error`; with `errorType:"execution_denied"` it is a call a
//!   `PreToolUse` hook denied (no post-tool hook fires: no outcome), and `cancelled` has none
//!   either.
//! - A hook's `additionalContext` (how `loopguard hook` warns) is appended by Qwen Code to the
//!   response's `output` after the hook ran (`\n\n` + the note, checked with a stand-in hook):
//!   a last paragraph starting `loopguard: ` is taken off, so `llmContent` is what the hook got.
//!
//! Not read: compressions. Qwen Code fires `PostCompact`, which loopguard's plugin turns into a
//! compaction, but none could be provoked offline to see how the chat records it (`/compress`
//! on a resumed 3-call session: "Compression was not beneficial for this history size"; the
//! bundle names a `system` record `chat_compression`, unchecked), so a replay of a compressed
//! Qwen Code session misses the post-compaction window the live guard armed.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::cli::{content_text, each_record, timestamp};
use super::session_read::ReadBuilder;
use crate::error::Location;
use crate::event::ImportedEvent;
use crate::mapping::{cli_tool_result, CliMapper, CliOutcome};
use crate::session::SessionInfo;

/// The `returnDisplay` the hook gets from a record's `resultDisplay`: a text as is; the shell's
/// `shell_result` object as its `text` (checked: `still-running` for an `echo still-running`).
fn return_display(display: &Value) -> Option<Value> {
    match display {
        Value::Null => None,
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("shell_result") => {
            o.get("text").cloned().or_else(|| Some(display.clone()))
        }
        other => Some(other.clone()),
    }
}

/// The model's text without the `\n\nloopguard: …` note Qwen Code appended after the hook ran.
fn without_note(output: &str) -> &str {
    match output.rfind("\n\nloopguard: ") {
        Some(i) if !output[i + 2..].contains('\n') => &output[..i],
        _ => output,
    }
}

/// The outcome of a `tool_result` record, given its `functionResponse.response`.
fn outcome(result: &Value, response: &Value) -> Option<CliOutcome> {
    match result.get("status").and_then(Value::as_str)? {
        "success" => {
            let mut tool_response = Map::new();
            match response.get("output") {
                Some(Value::String(output)) => {
                    tool_response.insert("llmContent".into(), Value::String(without_note(output).to_string()));
                }
                Some(output) => {
                    tool_response.insert("llmContent".into(), output.clone());
                }
                None => {}
            }
            if let Some(display) = result.get("resultDisplay").and_then(return_display) {
                tool_response.insert("returnDisplay".into(), display);
            }
            Some(CliOutcome::Output(cli_tool_result(&Value::Object(tool_response))))
        }
        "error" if result.get("errorType").and_then(Value::as_str) == Some("execution_denied") => {
            Some(CliOutcome::Denied)
        }
        "error" => {
            let error = response.get("error").map(content_text);
            Some(CliOutcome::Failed(
                error.unwrap_or_else(|| content_text(result.get("resultDisplay").unwrap_or(&json!("")))),
            ))
        }
        "cancelled" => Some(CliOutcome::Denied),
        _ => None,
    }
}

/// Streams one Qwen Code chat's calls and outcomes to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let mut mapper = CliMapper::new(info.clone());
    let (records, bad) = each_record(info, out, |line, record| {
        let at = Location::Line(line);
        let ts = timestamp(&record);
        let parts = record.pointer("/message/parts").and_then(Value::as_array);
        match record.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                for call in parts.into_iter().flatten().filter_map(|p| p.get("functionCall")) {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = call.get("name").and_then(Value::as_str).unwrap_or("");
                    let args = call.get("args").cloned().unwrap_or(Value::Null);
                    mapper.call(id, name, args, ts, at, sink);
                }
            }
            Some("tool_result") => {
                let Some(result) = record.get("toolCallResult") else { return };
                let id = result.get("callId").and_then(Value::as_str).unwrap_or("");
                let response = parts
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("functionResponse"))
                    .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
                    .and_then(|r| r.get("response"))
                    .unwrap_or(&Value::Null);
                if let Some(result) = outcome(result, response) {
                    mapper.result(id, result, ts, at, sink);
                }
            }
            _ => {}
        }
    });
    mapper.stats.records = records;
    mapper.stats.bad_records = bad;
    out.stats = mapper.finish();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_the_hooks_tool_response_and_error() {
        let shell = json!({"status": "success", "resultDisplay": {"type": "shell_result", "text": "ok", "pid": 7}});
        let want = json!({"details": {"llmContent": "Output: ok", "returnDisplay": "ok"}});
        assert_eq!(outcome(&shell, &json!({"output": "Output: ok"})), Some(CliOutcome::Output(want.clone())));
        let noted = json!({"output": "Output: ok\n\nloopguard: same result 3 times"});
        assert_eq!(outcome(&shell, &noted), Some(CliOutcome::Output(want)));
        let plain = json!({"status": "success", "resultDisplay": "file text"});
        let want = json!({"details": {"llmContent": "x", "returnDisplay": "file text"}});
        assert_eq!(outcome(&plain, &json!({"output": "x"})), Some(CliOutcome::Output(want)));
        let failed = json!({"status": "error", "errorType": "execution_failed"});
        assert_eq!(
            outcome(&failed, &json!({"error": "Exit Code: 1"})),
            Some(CliOutcome::Failed("Exit Code: 1".into()))
        );
        let denied = json!({"status": "error", "errorType": "execution_denied"});
        assert_eq!(outcome(&denied, &json!({"error": "no"})), Some(CliOutcome::Denied));
        assert_eq!(outcome(&json!({"status": "executing"}), &Value::Null), None);
    }
}
