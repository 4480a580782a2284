//! Codex rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (0.171.0), one
//! `{"timestamp","type","payload"}` item per line; the first is `session_meta` (`payload.id`,
//! the hooks' `session_id`).
//!
//! What is read (`event_msg`, `turn_context`, `token_usage_record`, `world_state` and the
//! messages are skipped):
//!
//! - `response_item` `function_call` (`name`, `arguments` as JSON text, `call_id`) and
//!   `custom_tool_call` (`name`, `input`): a call. Codex hands its hooks the shell tools as
//!   `tool_name:"Bash"`, `tool_input:{"command":…}` although the model called
//!   `exec_command {"cmd":…}` (checked against the hooks of the same run,
//!   `transcripts/tests/fixtures/make-agent-cli-fixtures.sh`), so `exec_command`,
//!   `shell_command` and `shell` are mapped the same way; other tools keep their name and
//!   arguments.
//! - `function_call_output` / `custom_tool_call_output` (`call_id`, `output`): the outcome. A
//!   shell output is `Chunk ID: …\nWall time: …\nProcess exited with code N\nOriginal token
//!   count: …\nOutput:\n<output>`; the part after `Output:` is exactly `PostToolUse`'s
//!   `tool_response` (the chunk id and wall time change on every call and are dropped). A
//!   non-zero exit code is an error with that output (Codex marks the command `failed`; its
//!   `PostToolUse` still fires, with the output only). `Command blocked by PreToolUse hook: …`
//!   is a call a hook denied: no outcome.
//! - `compacted` (auto-compaction or `/compact`): a compaction.
//!
//! A hook's `additionalContext` (how `loopguard hook` warns) is stored as a `developer` message
//! of its own (`hooks.additional_context`): it does not change the call's output.

use std::sync::Arc;

use serde_json::{json, Value};

use super::cli::{content_text, each_record, timestamp};
use super::session_read::ReadBuilder;
use crate::error::Location;
use crate::event::ImportedEvent;
use crate::mapping::{cli_tool_result, CliMapper, CliOutcome};
use crate::session::SessionInfo;

/// The text Codex gives the model for a call that a `PreToolUse` hook denied.
const DENIED_PREFIX: &str = "Command blocked by PreToolUse hook: ";

/// The hook's view of a call: `Bash {"command":…}` for the shell tools, else as called.
fn hook_call(name: &str, args: Value) -> (String, Value) {
    let command = match (name, &args) {
        ("exec_command", _) => args.get("cmd").cloned(),
        ("shell_command", _) => args.get("command").cloned(),
        ("shell", _) => match args.get("command") {
            Some(Value::Array(argv)) => {
                let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                Some(Value::String(match argv.as_slice() {
                    [_, flag, script] if flag.starts_with('-') && flag.ends_with('c') => script.to_string(),
                    _ => argv.join(" "),
                }))
            }
            other => other.cloned(),
        },
        _ => None,
    };
    match command {
        Some(command) => ("Bash".to_string(), json!({ "command": command })),
        None => (name.to_string(), args),
    }
}

/// Splits a shell output into its exit code and the output after the `Output:` header.
fn shell_output(text: &str) -> (Option<i64>, &str) {
    let (header, body) = if let Some(body) = text.strip_prefix("Output:\n") {
        ("", body)
    } else if let Some((header, body)) = text.split_once("\nOutput:\n") {
        (header, body)
    } else {
        return (None, text);
    };
    let code =
        header.lines().find_map(|l| l.strip_prefix("Process exited with code ")).and_then(|n| n.trim().parse().ok());
    (code, body)
}

/// The outcome of an output item.
fn outcome(output: &Value) -> CliOutcome {
    let (text, success) = match output {
        Value::String(s) => (s.clone(), None),
        Value::Object(o) => {
            (content_text(o.get("content").unwrap_or(&Value::Null)), o.get("success").and_then(Value::as_bool))
        }
        other => (content_text(other), None),
    };
    if text.starts_with(DENIED_PREFIX) {
        return CliOutcome::Denied;
    }
    let (code, body) = shell_output(&text);
    if success == Some(false) || code.is_some_and(|c| c != 0) {
        CliOutcome::Failed(body.to_string())
    } else {
        CliOutcome::Output(cli_tool_result(&Value::String(body.to_string())))
    }
}

/// Streams one Codex rollout's calls, outcomes and compactions to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let mut mapper = CliMapper::new(info.clone());
    let (records, bad) = each_record(info, out, |line, record| {
        let at = Location::Line(line);
        let ts = timestamp(&record);
        let payload = record.get("payload").unwrap_or(&Value::Null);
        let item = payload.get("type").and_then(Value::as_str);
        let call_id = payload.get("call_id").and_then(Value::as_str).unwrap_or("");
        match (record.get("type").and_then(Value::as_str), item) {
            (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
                let name = payload.get("name").and_then(Value::as_str).unwrap_or("");
                let args = match (payload.get("arguments"), payload.get("input")) {
                    (Some(Value::String(text)), _) => {
                        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
                    }
                    (Some(args), _) => args.clone(),
                    (None, Some(input)) => input.clone(),
                    (None, None) => Value::Null,
                };
                let (tool, args) = hook_call(name, args);
                mapper.call(call_id, &tool, args, ts, at, sink);
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                let result = outcome(payload.get("output").unwrap_or(&Value::Null));
                mapper.result(call_id, result, ts, at, sink);
            }
            (Some("compacted"), _) => mapper.compaction(at, sink),
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
    fn shell_outputs_lose_their_volatile_header() {
        let text = "Chunk ID: 95160e\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\nstill-running\n";
        assert_eq!(shell_output(text), (Some(0), "still-running\n"));
        assert_eq!(shell_output("plain"), (None, "plain"));
        let failed = "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nno\n";
        assert_eq!(outcome(&Value::String(failed.into())), CliOutcome::Failed("no\n".into()));
    }

    #[test]
    fn shell_tools_are_seen_as_bash_commands() {
        assert_eq!(hook_call("exec_command", json!({"cmd": "ls"})), ("Bash".into(), json!({"command": "ls"})));
        let argv = json!({"command": ["bash", "-lc", "ls -l"]});
        assert_eq!(hook_call("shell", argv), ("Bash".into(), json!({"command": "ls -l"})));
        assert_eq!(hook_call("view_image", json!({"path": "a"})), ("view_image".into(), json!({"path": "a"})));
    }
}
