//! What a file named on the command line is, by its first line, when its name says nothing.
//!
//! Why: discovery goes by names (`*.jsonl`, `session-branch.json`, an SQLite header), but a path
//! such as `/dev/fd/63` (from `<(cat session.jsonl)`), the CLI's copy of stdin, or a transcript
//! saved as `session.txt` has no name to go by. Every format this crate reads as JSON Lines says
//! what it is in its first record, and so do the two a user may pass here by mistake:
//!
//! | first line | is |
//! |---|---|
//! | `"traceSchema": "openclaw-trajectory"` | a trajectory export's `events.jsonl`: its directory holds the session's identity |
//! | `"kind"`: a trace event kind (`tool_call`, …) | a loopguard trace (docs/spec/trace-format.md) |
//! | a `"type"`, or Gemini CLI's `"sessionId"` + `"projectHash"` header | a transcript: pi (OpenClaw), Claude Code, Codex, Gemini CLI, Copilot CLI or Qwen Code, told apart as for a `.jsonl` ([`super::cli::identify`], then the pi header) |
//! | anything else | not a transcript source |

use std::path::Path;

use serde_json::Value;

use super::lines::{for_each_line, open, LineEnd};
use crate::error::{Error, ErrorKind};

/// The event kinds of a loopguard trace.
const TRACE_KINDS: [&str; 7] =
    ["tool_call", "tool_result", "compaction", "bot_message", "group_message", "group_replies", "group_cancel"];

/// What the first line says.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Content {
    /// A transcript in one of the JSON Lines formats.
    Transcript,
    /// Another format: the error that names it.
    Other(OtherFormat),
    /// Nothing this crate reads.
    Unknown,
}

/// A format that is not a transcript, and what to do with it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum OtherFormat {
    Trace,
    TrajectoryEvents,
}

impl OtherFormat {
    /// The error naming `path` as this format.
    pub(super) fn error(&self, path: &Path) -> Error {
        let (what, fix) = match self {
            OtherFormat::Trace => (
                "a loopguard trace (docs/spec/trace-format.md)",
                "replay it with `loopguard replay --config FILE TRACE`",
            ),
            OtherFormat::TrajectoryEvents => (
                "the events.jsonl of a trajectory export",
                "pass the export's directory (with its session-branch.json and manifest.json)",
            ),
        };
        Error::new(ErrorKind::OtherFormat { what, fix }, path)
    }
}

/// Reads the first non-blank line of `path`. An I/O error is the caller's to report.
pub(super) fn content(path: &Path) -> Result<Content, Error> {
    let mut first: Option<Value> = None;
    for_each_line(open(path)?, |_, line, end| {
        if end != LineEnd::TooLong {
            first = serde_json::from_slice(line).ok();
        }
        false
    })
    .map_err(|e| Error::new(ErrorKind::Io(e), path))?;
    let Some(Value::Object(line)) = first else { return Ok(Content::Unknown) };
    let text = |key: &str| line.get(key).and_then(Value::as_str);
    Ok(if text("traceSchema") == Some("openclaw-trajectory") {
        Content::Other(OtherFormat::TrajectoryEvents)
    } else if text("kind").is_some_and(|k| TRACE_KINDS.contains(&k)) && !line.contains_key("type") {
        Content::Other(OtherFormat::Trace)
    } else if text("type").is_some() || (line.contains_key("sessionId") && line.contains_key("projectHash")) {
        Content::Transcript
    } else {
        Content::Unknown
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_tells_the_format() {
        let dir = std::env::temp_dir().join(format!("loopguard-sniff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases: &[(&str, Content)] = &[
            (r#"{"type":"session","version":3,"id":"s"}"#, Content::Transcript),
            (r#"{"type":"session_meta","payload":{"id":"c"}}"#, Content::Transcript),
            (r#"{"sessionId":"g","projectHash":"h","kind":"main"}"#, Content::Transcript),
            (r#"{"type":"session.start","data":{"sessionId":"c","producer":"copilot-agent"}}"#, Content::Transcript),
            (r#"{"uuid":"u","sessionId":"q","type":"user","provenance":"real_user"}"#, Content::Transcript),
            (r#"{"kind":"tool_call","session":"s","tool":"read","args":{}}"#, Content::Other(OtherFormat::Trace)),
            (
                r#"{"traceSchema":"openclaw-trajectory","type":"session.started"}"#,
                Content::Other(OtherFormat::TrajectoryEvents),
            ),
            (r#"{"hello":"world"}"#, Content::Unknown),
            ("not json", Content::Unknown),
            ("", Content::Unknown),
        ];
        for (i, (first, want)) in cases.iter().enumerate() {
            let path = dir.join(format!("input-{i}"));
            std::fs::write(&path, format!("\n{first}\n")).unwrap();
            assert_eq!(&content(&path).unwrap(), want, "{first}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
