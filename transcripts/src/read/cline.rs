//! Cline tasks: `~/.cline/data/sessions/<sessionId>/<sessionId>.messages.json` (CLI 3.0.65), one
//! JSON document per task (`version`, `sessionId`, `origin`, `messages`, `system_prompt`),
//! rewritten whole as the task runs. `messages[]` is the conversation in Anthropic's shape
//! (`role`, `content[]`), so the calls and their results are its `tool_use` and `tool_result`
//! parts. Cline runs loopguard in-process (`packages/cline-plugin`), so a call is read as the
//! plugin gets it from Cline's `beforeTool`/`afterTool` hooks:
//!
//! - An `assistant` message's `tool_use` part (`id`, `name`, `input`): a call, with the tool
//!   name and input the plugin checks (`toolCall.toolName`, `input`; checked against the hooks
//!   of the same run, `transcripts/tests/fixtures/make-chat-cli-fixtures.sh`).
//! - A `user` message's `tool_result` part (`tool_use_id`, `content`, `is_error`): `content` is
//!   exactly the `result.output` the plugin records (for `run_commands`, the array of
//!   `{query, result, success}` items). It is kept as it is, not through
//!   [`cli_tool_result`](crate::mapping::cli_tool_result): the plugin hands the policy that value,
//!   and the array's items have no `text` for the outcome hash to read, so wrapped they would all
//!   hash alike. A failing command is not an error (its item says `success:false`); with
//!   `is_error:true` the content is the plugin's `{error: output}`.
//! - A call a plugin skipped (how loopguard blocks: `{skip: true, reason}`) is stored as
//!   `is_error:true` with the text `{"error":"<reason>"}`; the plugin records no outcome for it.
//!
//! The session key is the task's `sessionId` (the directory's name). The plugin keys its counts
//! by Cline's conversation id, which the task file does not keep; one `cline` run is one
//! conversation, so the counts are the same.
//!
//! The file is one JSON document: it is read as a stream, one message in memory at a time. A
//! syntax error ends the read there (nothing after it can be placed); it is named by its line,
//! and the messages before it are read. Not read, on purpose: compactions; loopguard's Cline
//! plugin has only the tool hooks, so the live guard never saw one.

use std::path::Path;
use std::sync::Arc;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::cli::content_text;
use super::lines::open;
use super::session_read::ReadBuilder;
use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::{CliMapper, CliOutcome};
use crate::session::{KeySource, SessionInfo, SourceFormat};

/// The suffix of a Cline task file.
const SUFFIX: &str = ".messages.json";

/// A Cline task file, by its name (`<sessionId>.messages.json`).
pub(super) fn identify(path: &Path) -> Option<SessionInfo> {
    let id = path.file_name()?.to_str()?.strip_suffix(SUFFIX).filter(|id| !id.is_empty())?.to_string();
    Some(SessionInfo {
        file: path.to_path_buf(),
        format: SourceFormat::Cline,
        agent_id: None,
        session_key: id.clone(),
        key_source: KeySource::SessionId,
        session_id: id,
    })
}

/// The messages of the document, each handed to `f` as it is parsed.
struct Messages<'a>(&'a mut dyn FnMut(Value));

impl<'de> DeserializeSeed<'de> for Messages<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Messages<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of messages")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(message) = seq.next_element::<Value>()? {
            (self.0)(message);
        }
        Ok(())
    }
}

/// The top-level object: `messages` streamed, the rest skipped unread.
struct Document<'a>(&'a mut dyn FnMut(Value));

impl<'de> Visitor<'de> for Document<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Cline task document (an object with `messages`)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "messages" {
                map.next_value_seed(Messages(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The outcome of a `tool_result` part.
fn outcome(part: &Value) -> CliOutcome {
    let content = part.get("content").cloned().unwrap_or(Value::Null);
    if part.get("is_error") != Some(&Value::Bool(true)) {
        return CliOutcome::Output(content);
    }
    // A skipped call: the text `{"error":"<reason>"}`, and nothing else.
    let skipped = serde_json::from_str::<Value>(&content_text(&content))
        .ok()
        .and_then(|v| v.as_object().map(|o| o.len() == 1 && o.get("error").is_some_and(Value::is_string)))
        .unwrap_or(false);
    if skipped {
        CliOutcome::Denied
    } else {
        CliOutcome::FailedWith(content)
    }
}

/// Streams one Cline task's calls and outcomes to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let path = info.file.as_path();
    let reader = match open(path) {
        Ok(r) => r,
        Err(e) => return out.push(e.in_session(&info.session_id)),
    };
    let mut mapper = CliMapper::new(info.clone());
    let mut entry = 0u64;
    let mut each = |message: Value| {
        entry += 1;
        let at = Location::Entry(entry);
        let ts = message.get("ts").and_then(Value::as_i64);
        let parts = message.get("content").and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            match part.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let id = part.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = part.get("name").and_then(Value::as_str).unwrap_or("");
                    let input = part.get("input").cloned().unwrap_or(Value::Null);
                    mapper.call(id, name, input, ts, at, sink);
                }
                Some("tool_result") => {
                    let id = part.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    mapper.result(id, outcome(part), ts, at, sink);
                }
                _ => {}
            }
        }
    };
    let mut reader = reader;
    crate::skip_bom(&mut reader);
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = serde::Deserializer::deserialize_map(&mut de, Document(&mut each)).and_then(|()| de.end());
    mapper.stats.records = entry;
    if let Err(e) = parsed {
        mapper.stats.bad_records = 1;
        let line = e.line() as u64;
        let kind = if e.is_eof() { ErrorKind::TruncatedLine(e) } else { ErrorKind::Json(e) };
        out.push(Error::new(kind, path).in_session(&info.session_id).at(Location::Line(line)));
    }
    out.stats = mapper.finish();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_skip_has_no_outcome_and_an_output_is_kept_whole() {
        let items = json!([{"query": "ls", "result": "a\n", "success": true}]);
        assert_eq!(outcome(&json!({"content": items.clone()})), CliOutcome::Output(items));
        let skipped = json!({"content": "{\"error\":\"loopguard: stop\"}", "is_error": true});
        assert_eq!(outcome(&skipped), CliOutcome::Denied);
        let failed = json!({"content": "tool crashed", "is_error": true});
        assert_eq!(outcome(&failed), CliOutcome::FailedWith(json!("tool crashed")));
    }
}
