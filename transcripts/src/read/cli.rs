//! What the coding CLIs' JSON Lines transcript files have in common: one session per file, and
//! a first line that says which CLI wrote it. Shared by [`super::claude`], [`super::codex`],
//! [`super::gemini`], [`super::copilot`] and [`super::qwen`], and by discovery, which asks
//! [`identify`] before it tries the file as a pi transcript.
//!
//! | CLI | where | first line |
//! |---|---|---|
//! | Claude Code | `~/.claude/projects/<cwd with / as ->/<sessionId>.jsonl` | any record with `sessionId` and `type` (`queue-operation`, `user`, `summary`, …) |
//! | Codex | `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl` | `{"type":"session_meta","payload":{"id":…}}` |
//! | Gemini CLI | `~/.gemini/tmp/<project>/chats/session-<ts>-<id8>.jsonl` | `{"sessionId":…,"projectHash":…,"kind":"main"}` |
//! | Copilot CLI | `~/.copilot/session-state/<sessionId>/events.jsonl` | `{"type":"session.start","data":{"sessionId":…}}` |
//! | Qwen Code | `~/.qwen/projects/<cwd with / as ->/chats/<sessionId>.jsonl` | a record with `sessionId`, `type` and Qwen Code's `provenance` (or Gemini-style `message.parts`) |

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::lines::{for_each_line, open, LineEnd, MAX_LINE_BYTES};
use super::session_read::ReadBuilder;
use crate::error::{Error, ErrorKind, Location};
use crate::session::{KeySource, SessionInfo, SourceFormat};

/// Lines read at most while looking for a Claude Code `sessionId` (its first records, such as
/// `summary`, may lack one).
const ID_SEARCH_LINES: u64 = 32;

/// The CLI that wrote `path`, and its session, if it is one of theirs.
pub(super) fn identify(path: &Path) -> Option<SessionInfo> {
    let name = path.file_name()?.to_str()?;
    // A name without `.jsonl` (stdin's copy, `/dev/fd/63`) is the whole stem.
    let stem = name.strip_suffix(".jsonl").unwrap_or(name).to_string();
    let mut found: Option<(SourceFormat, Option<String>)> = None;
    let reader = open(path).ok()?;
    let _ = for_each_line(reader, |number, line, end| {
        if end == LineEnd::TooLong {
            return false;
        }
        let Ok(Value::Object(v)) = serde_json::from_slice::<Value>(line) else { return false };
        let text = |o: &serde_json::Map<String, Value>, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
        match &found {
            None => {
                let ty = text(&v, "type");
                if ty.as_deref() == Some("session_meta") {
                    let payload = v.get("payload").and_then(Value::as_object);
                    let id = payload.and_then(|p| text(p, "id").or_else(|| text(p, "session_id")));
                    found = Some((SourceFormat::Codex, id));
                    return false;
                }
                if ty.as_deref() == Some("session.start") {
                    let id = v.get("data").and_then(Value::as_object).and_then(|d| text(d, "sessionId"));
                    found = Some((SourceFormat::CopilotCli, id));
                    return false;
                }
                if v.contains_key("projectHash") && v.contains_key("sessionId") {
                    found = Some((SourceFormat::GeminiCli, text(&v, "sessionId")));
                    return false;
                }
                if ty.is_none() || ty.as_deref() == Some("session") {
                    return false;
                }
                // Qwen Code's records look like Claude Code's (`uuid`, `sessionId`, `type`) but say
                // where they come from (`provenance`) and hold Gemini-style `parts`.
                let qwen = v.contains_key("provenance") || v.get("message").is_some_and(|m| m.get("parts").is_some());
                let format = if qwen { SourceFormat::QwenCode } else { SourceFormat::ClaudeCode };
                found = Some((format, text(&v, "sessionId")));
            }
            Some((_, Some(_))) => return false,
            Some((format, None)) => found = Some((format.clone(), text(&v, "sessionId"))),
        }
        found.as_ref().is_some_and(|f| f.1.is_none()) && number < ID_SEARCH_LINES
    });
    let (format, id) = found?;
    if matches!(format, SourceFormat::ClaudeCode | SourceFormat::QwenCode) && id.is_none() {
        // A record with a `type` but no `sessionId` anywhere near the top: not Claude Code's.
        return None;
    }
    let session_key = id.unwrap_or_else(|| stem.clone());
    // Claude Code's subagent transcripts share their parent's `sessionId`: the file name tells
    // them apart. The others name one session per file.
    let session_id = if format == SourceFormat::ClaudeCode { stem } else { session_key.clone() };
    Some(SessionInfo {
        file: path.to_path_buf(),
        format,
        agent_id: None,
        session_key,
        key_source: KeySource::SessionId,
        session_id,
    })
}

/// Calls `f(line, record)` for each JSON object line of the session's file. A line that is not
/// JSON (or cut off at the end) is an error naming the file, the session and the line; the
/// other lines are still read. Returns the lines read and the bad ones, for the stats.
pub(super) fn each_record(info: &Arc<SessionInfo>, out: &mut ReadBuilder, mut f: impl FnMut(u64, Value)) -> (u64, u64) {
    let path = info.file.as_path();
    let err = |kind: ErrorKind, n: u64| Error::new(kind, path).in_session(&info.session_id).at(Location::Line(n));
    let reader = match open(path) {
        Ok(r) => r,
        Err(e) => {
            out.push(e.in_session(&info.session_id));
            return (0, 0);
        }
    };
    let mut records = 0u64;
    let mut bad = 0u64;
    let read = for_each_line(reader, |number, line, end| {
        records += 1;
        if end == LineEnd::TooLong {
            bad += 1;
            out.push(err(ErrorKind::LineTooLong(MAX_LINE_BYTES), number));
            return true;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(v @ Value::Object(_)) => f(number, v),
            Ok(_) => {
                bad += 1;
                out.push(err(ErrorKind::BadRecord("a line that is not a JSON object".into()), number));
            }
            Err(e) => {
                bad += 1;
                let kind = if end == LineEnd::Eof { ErrorKind::TruncatedLine(e) } else { ErrorKind::Json(e) };
                out.push(err(kind, number));
            }
        }
        true
    });
    if let Err(e) = read {
        out.push(Error::new(ErrorKind::Io(e), path).in_session(&info.session_id));
    }
    (records, bad)
}

/// The text of a record's ISO `timestamp`, in ms since the epoch.
pub(super) fn timestamp(v: &Value) -> Option<i64> {
    v.get("timestamp").and_then(Value::as_str).and_then(crate::timestamp::parse_iso_ms)
}

/// The text parts of a content value: a string as is, an array's `text` parts joined with `\n`.
pub(super) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}
