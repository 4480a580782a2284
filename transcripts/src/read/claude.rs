//! Claude Code sessions: `~/.claude/projects/<project>/<sessionId>.jsonl` (2.1.332), one record
//! per line, appended as the session runs (a `--resume` appends to the same file).
//!
//! What is read (all other record types, such as `attachment`, `queue-operation`,
//! `api-request*` or `last-prompt`, are skipped):
//!
//! - `type:"assistant"`: each `message.content[]` part of `type:"tool_use"` is a call
//!   (`id`, `name`, `input`): the `tool_name`/`tool_input` Claude Code hands `PreToolUse`.
//! - `type:"user"`: each `tool_result` part answers the call of its `tool_use_id`. Checked
//!   against the hooks of the same run (`transcripts/tests/fixtures/make-agent-cli-fixtures.sh`):
//!   the record's `toolUseResult` is exactly `PostToolUse`'s `tool_response` (for `Bash`,
//!   `{stdout, stderr, interrupted, isImage, noOutputExpected}`), and with `is_error:true` the
//!   part's text is exactly `PostToolUseFailure`'s `error`. A call denied by a `PreToolUse` hook
//!   is stored as an error whose text starts `PreToolUse:<tool> hook error: ` and fires no
//!   post-tool hook, so it gives no outcome.
//! - `type:"system", subtype:"compact_boundary"` (`/compact` or auto-compaction): a compaction.
//!
//! A hook's `additionalContext` (how `loopguard hook` warns) is stored as its own `attachment`
//! record (`hook_additional_context`): it does not change `toolUseResult`.
//!
//! The session key is the records' `sessionId` (the hooks' `session_id`).

use std::sync::Arc;

use serde_json::Value;

use super::cli::{content_text, each_record, timestamp};
use super::session_read::ReadBuilder;
use crate::error::Location;
use crate::event::ImportedEvent;
use crate::mapping::{cli_tool_result, CliMapper, CliOutcome};
use crate::session::SessionInfo;

/// The text Claude Code stores for a call that a `PreToolUse` hook denied:
/// `PreToolUse:<tool> hook error: <reason>`.
fn is_hook_denial(text: &str) -> bool {
    text.strip_prefix("PreToolUse:").is_some_and(|rest| rest.contains(" hook error: "))
}

/// Streams one Claude Code session's calls, outcomes and compactions to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let mut mapper = CliMapper::new(info.clone());
    let (records, bad) = each_record(info, out, |line, record| {
        let at = Location::Line(line);
        let ts = timestamp(&record);
        match record.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                let parts = record.pointer("/message/content").and_then(Value::as_array);
                for part in parts.into_iter().flatten() {
                    if part.get("type").and_then(Value::as_str) != Some("tool_use") {
                        continue;
                    }
                    let id = part.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = part.get("name").and_then(Value::as_str).unwrap_or("");
                    let input = part.get("input").cloned().unwrap_or(Value::Null);
                    mapper.call(id, name, input, ts, at, sink);
                }
            }
            Some("user") => {
                let parts = record.pointer("/message/content").and_then(Value::as_array);
                for part in parts.into_iter().flatten() {
                    if part.get("type").and_then(Value::as_str) != Some("tool_result") {
                        continue;
                    }
                    let id = part.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    let text = content_text(part.get("content").unwrap_or(&Value::Null));
                    let outcome = if part.get("is_error") == Some(&Value::Bool(true)) {
                        if is_hook_denial(&text) {
                            CliOutcome::Denied
                        } else {
                            CliOutcome::Failed(text)
                        }
                    } else {
                        // `toolUseResult` is the hook's `tool_response`; without it, the text.
                        match record.get("toolUseResult") {
                            Some(response) if !response.is_null() => CliOutcome::Output(cli_tool_result(response)),
                            _ => CliOutcome::Output(cli_tool_result(&Value::String(text))),
                        }
                    };
                    mapper.result(id, outcome, ts, at, sink);
                }
            }
            Some("system") if record.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                mapper.compaction(at, sink);
            }
            _ => {}
        }
    });
    mapper.stats.records = records;
    mapper.stats.bad_records = bad;
    out.stats = mapper.finish();
}
