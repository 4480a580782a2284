//! Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl` (0.61.0). The
//! first line is the session's metadata (`sessionId`, `projectHash`, `startTime`, `kind`); then
//! message records (`id`, `type` `user`/`gemini`/`info`/…), `{"$set":{…}}` metadata updates and
//! `{"$rewindTo":id}` rewinds. A message is **rewritten** by appending it again with the same `id`
//! (a `gemini` message first without, then with its `toolCalls`), so calls are taken by their
//! own ids, each once.
//!
//! - A `gemini` message's `toolCalls[]` (`id`, `name`, `args`, `status`, `result`,
//!   `resultDisplay`): each is a call (`name`/`args` are `BeforeTool`'s `tool_name`/`tool_input`),
//!   and, once its `status` is `success` or `error`, its outcome. The calls of one message come
//!   first, then their outcomes, as the CLI runs a turn's calls together.
//! - `success`: the result is `resultDisplay`, which is `AfterTool`'s
//!   `tool_response.returnDisplay`. Not the model's `functionResponse` text (`llmContent`): for a
//!   shell command it carries the process group id, which changes on every call, so identical
//!   calls would never look identical.
//! - `error`: the `functionResponse.response.error` text; `Tool execution blocked: …` is a call
//!   a `BeforeTool` hook denied (no `AfterTool` fires: no outcome). `cancelled`: no outcome.
//! - A rewind (`$rewindTo`) does not undo calls: they ran, and the hooks saw them.
//! - A hook's `additionalContext` (how `loopguard hook` warns) is appended to the model's
//!   `functionResponse` output as `<hook_context>…</hook_context>`, never to `resultDisplay`, so
//!   it does not change the outcome read here (checked with 0.61.0).
//! - Compression: no `compaction` is read. The chat file has no record type for it (messages,
//!   `$set`, `$rewindTo`: `ChatRecordingService` in the bundle), and it could not be provoked
//!   offline to look (`PreCompress` fires before every turn, but with `compressionThreshold`
//!   1e-6 no compression request was made in 25 turns).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use super::cli::{content_text, each_record, timestamp};
use super::session_read::ReadBuilder;
use crate::error::Location;
use crate::event::ImportedEvent;
use crate::mapping::{cli_tool_result, CliMapper, CliOutcome};
use crate::session::SessionInfo;

/// The text Gemini CLI gives the model for a call that a `BeforeTool` hook denied.
const DENIED_PREFIX: &str = "Tool execution blocked: ";

/// Most call ids remembered (called, answered) to skip rewritten messages; a session with more
/// calls forgets the oldest, which only a rewrite of a message that old could notice.
const MAX_SEEN: usize = 1 << 16;

/// Ids seen, bounded: a set plus the order to evict in.
#[derive(Default)]
struct Seen {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl Seen {
    /// Whether `id` is new (and remembers it).
    fn insert(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() >= MAX_SEEN {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.set.insert(id.to_string());
        self.order.push_back(id.to_string());
        true
    }
}

/// The model's output without the `<hook_context>` a hook appended after the tool ran.
fn without_hook_context(output: &str) -> &str {
    match output.find("\n\n<hook_context>") {
        Some(i) if output.ends_with("</hook_context>") => &output[..i],
        _ => output,
    }
}

/// The outcome of a finished call, or `None` while it has none.
fn outcome(call: &Value) -> Option<CliOutcome> {
    let response = call.pointer("/result/0/functionResponse/response");
    match call.get("status").and_then(Value::as_str)? {
        "success" => Some(CliOutcome::Output(match call.get("resultDisplay") {
            Some(display) if !display.is_null() => cli_tool_result(display),
            _ => {
                let output = response.and_then(|r| r.get("output")).map(content_text).unwrap_or_default();
                cli_tool_result(&Value::String(without_hook_context(&output).to_string()))
            }
        })),
        "error" => {
            let text = response
                .and_then(|r| r.get("error"))
                .map(content_text)
                .or_else(|| call.get("resultDisplay").map(content_text))
                .unwrap_or_default();
            Some(if text.starts_with(DENIED_PREFIX) { CliOutcome::Denied } else { CliOutcome::Failed(text) })
        }
        "cancelled" => Some(CliOutcome::Denied),
        _ => None,
    }
}

/// Streams one Gemini CLI chat's calls and outcomes to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let mut mapper = CliMapper::new(info.clone());
    let (mut called, mut answered) = (Seen::default(), Seen::default());
    let (records, bad) = each_record(info, out, |line, record| {
        if record.get("type").and_then(Value::as_str) != Some("gemini") {
            return;
        }
        let Some(calls) = record.get("toolCalls").and_then(Value::as_array) else { return };
        let at = Location::Line(line);
        for call in calls {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            if called.insert(id) {
                let name = call.get("name").and_then(Value::as_str).unwrap_or("");
                let args = call.get("args").cloned().unwrap_or(Value::Null);
                mapper.call(id, name, args, timestamp(&record), at, sink);
            }
        }
        for call in calls {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            if let Some(result) = outcome(call) {
                if answered.insert(id) {
                    mapper.result(id, result, timestamp(call).or(timestamp(&record)), at, sink);
                }
            }
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
    fn the_display_is_the_outcome_and_a_hooks_context_is_not() {
        let call = |display: Value| {
            json!({"status": "success", "resultDisplay": display, "result": [{"functionResponse": {"response":
                {"output": "Output: a\nProcess Group PGID: 7\n\n<hook_context>WARNING</hook_context>"}}}]})
        };
        let text = |t: &str| CliOutcome::Output(cli_tool_result(&json!(t)));
        assert_eq!(outcome(&call(json!("a"))), Some(text("a")));
        assert_eq!(outcome(&call(Value::Null)), Some(text("Output: a\nProcess Group PGID: 7")));
        let blocked = json!({"status": "error", "result": [{"functionResponse": {"response": {"error": "Tool execution blocked: no"}}}]});
        assert_eq!(outcome(&blocked), Some(CliOutcome::Denied));
        assert_eq!(outcome(&json!({"status": "executing"})), None);
    }
}
