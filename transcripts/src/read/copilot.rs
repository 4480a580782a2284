//! GitHub Copilot CLI session logs: `~/.copilot/session-state/<sessionId>/events.jsonl`
//! (1.0.102), one `{"type","data","id","timestamp","parentId"}` event per line, appended as the
//! session runs (`--resume` appends to the same file). The first is `session.start`
//! (`data.sessionId`, the hooks' `sessionId`).
//!
//! What is read (messages, turns, usage records and `hook.start`/`hook.end` are skipped):
//!
//! - `tool.execution_start` (`toolCallId`, `toolName`, `arguments`): a call; `toolName` and
//!   `arguments` are exactly `preToolUse`'s `toolName`/`toolArgs` (checked against the hooks of
//!   the same run, `transcripts/tests/fixtures/make-chat-cli-fixtures.sh`). It is written for a
//!   call a hook then denies, too.
//! - `tool.execution_complete` (`toolCallId`, `success`, `result.content`, `error`): with
//!   `success:true`, `result.content` is exactly `postToolUse`'s `toolResult.textResultForLlm`,
//!   read as `loopguard hook copilot` reads it (`cli/src/hook/copilot.rs`): the shell's footer
//!   `<shellId: N completed with exit code X>` (its N changes on every call) is dropped, and a
//!   non-zero X makes the call one that failed, with `Exit code X` and the output as the error.
//! - A hook's `additionalContext` (how `loopguard hook` warns) is appended by Copilot to
//!   `result.content` after the hook ran, as `\n\nTool "<name>" succeeded. Additional guidance
//!   from postToolUse hooks:\n<note>` (checked with a stand-in hook): taken off, so the outcome is
//!   the text the hook got.
//! - `success:false` with `error.code:"denied"`: a call a `preToolUse` hook denied (`Denied by
//!   preToolUse hook: …`), or one Copilot refused itself for want of a permission it cannot ask
//!   for in `-p` mode; neither fires a post-tool hook, so neither has an outcome. Other failures
//!   are an error with `error.message` (not provoked offline: Copilot's shell reports a failing
//!   command as a success with its exit code).
//!
//! Not read, on purpose: compactions (`session.compaction_complete` in Copilot's bundle).
//! loopguard's Copilot hook gets no compaction event (`cli/src/hook/copilot.rs` ignores every
//! event but the tool events), so the live guard never armed its post-compaction window: a
//! replay that did would decide otherwise.

use std::sync::Arc;

use serde_json::Value;

use super::cli::{content_text, each_record, timestamp};
use super::session_read::ReadBuilder;
use crate::error::Location;
use crate::event::ImportedEvent;
use crate::mapping::{cli_tool_result, copilot_shell_footer as shell_footer, CliMapper, CliOutcome};
use crate::session::SessionInfo;

/// The text the post-tool hook got: `content` without the guidance Copilot appended from the
/// hooks' `additionalContext` afterwards.
fn without_hook_guidance(content: &str) -> &str {
    match content.rfind("\n\nTool \"") {
        Some(i) if content[i..].contains(" Additional guidance from postToolUse hooks:\n") => &content[..i],
        _ => content,
    }
}

/// The outcome of a `tool.execution_complete` event's `data`.
fn outcome(data: &Value) -> CliOutcome {
    if data.get("success").and_then(Value::as_bool) == Some(false) {
        let error = data.get("error").unwrap_or(&Value::Null);
        if error.get("code").and_then(Value::as_str) == Some("denied") {
            return CliOutcome::Denied;
        }
        let message = error.get("message").map(content_text).unwrap_or_else(|| content_text(error));
        return CliOutcome::Failed(message);
    }
    let text = data.pointer("/result/content").map(content_text).unwrap_or_default();
    match shell_footer(without_hook_guidance(&text)) {
        (output, Some(code)) if code != 0 => CliOutcome::Failed(if output.trim().is_empty() {
            format!("Exit code {code}")
        } else {
            format!("Exit code {code}\n{output}")
        }),
        (output, _) => CliOutcome::Output(cli_tool_result(&Value::String(output.to_string()))),
    }
}

/// Streams one Copilot CLI session's calls and outcomes to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let mut mapper = CliMapper::new(info.clone());
    let (records, bad) = each_record(info, out, |line, record| {
        let at = Location::Line(line);
        let ts = timestamp(&record);
        let data = record.get("data").unwrap_or(&Value::Null);
        let id = data.get("toolCallId").and_then(Value::as_str).unwrap_or("");
        match record.get("type").and_then(Value::as_str) {
            Some("tool.execution_start") => {
                let name = data.get("toolName").and_then(Value::as_str).unwrap_or("");
                let args = match data.get("arguments") {
                    Some(Value::String(text)) => {
                        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
                    }
                    Some(args) => args.clone(),
                    None => Value::Null,
                };
                mapper.call(id, name, args, ts, at, sink);
            }
            Some("tool.execution_complete") => mapper.result(id, outcome(data), ts, at, sink),
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
    use serde_json::json;

    #[test]
    fn the_shell_footer_is_read_as_the_hook_reads_it() {
        let done = |text: &str| json!({"success": true, "result": {"content": text}});
        let text = |t: &str| CliOutcome::Output(cli_tool_result(&json!(t)));
        assert_eq!(outcome(&done("hi\n<shellId: 0 completed with exit code 0>")), text("hi"));
        assert_eq!(outcome(&done("hi\n<shellId: 7 completed with exit code 0>")), text("hi"));
        assert_eq!(outcome(&done("file text")), text("file text"));
        let guided =
            "hi\n<shellId: 2 completed with exit code 0>\n\nTool \"bash\" succeeded. Additional guidance from \
                      postToolUse hooks:\nloopguard: same result";
        assert_eq!(outcome(&done(guided)), text("hi"));
        assert_eq!(
            outcome(&done("\n<shellId: 1 completed with exit code 1>")),
            CliOutcome::Failed("Exit code 1".into())
        );
        assert_eq!(
            outcome(&done("no\n<shellId: 2 completed with exit code 2>")),
            CliOutcome::Failed("Exit code 2\nno".into())
        );
        let denied = json!({"success": false, "error": {"message": "Denied by preToolUse hook: x", "code": "denied"}});
        assert_eq!(outcome(&denied), CliOutcome::Denied);
        let failed = json!({"success": false, "error": {"message": "boom", "code": "failure"}});
        assert_eq!(outcome(&failed), CliOutcome::Failed("boom".into()));
    }
}
