//! Printing a [`Report`]: an aligned table for terminals, JSON Lines for machines.
//!
//! Separate from the report's data so the output formats can change (columns, wording, the
//! `type` tag) without touching how rows are counted.

use std::io::Write;

use serde::Serialize;

use super::rows::{Finding, Report};
use crate::table::count;

fn cell(f: &Option<Finding>) -> String {
    f.as_ref().map(Finding::to_string).unwrap_or_else(|| "-".into())
}

impl Report {
    /// An aligned text table and the summary, for terminals.
    pub fn to_table(&self) -> String {
        let header = ["AGENT", "SESSION", "CALLS", "FIRST WARNING", "FIRST BLOCK", "ABORTS", "GATEWAY BLOCKED"];
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.agent.clone().unwrap_or_else(|| "-".into()),
                    r.session_key.clone(),
                    r.tool_calls.to_string(),
                    cell(&r.first_warning),
                    cell(&r.first_block),
                    r.aborts.to_string(),
                    cell(&r.gateway_block),
                ]
            })
            .collect();
        let mut out = crate::table::render(&header, &rows);
        let s = &self.summary;
        out.push_str(&format!(
            "\n{}, {}: {} with warnings, {} with blocks, {} ended by an abort ({} blocked by the gateway itself)",
            count(s.sessions, "session"),
            count(s.tool_calls, "tool call"),
            s.sessions_with_warnings,
            s.sessions_with_blocks,
            s.sessions_with_aborts,
            s.sessions_with_gateway_blocks
        ));
        if s.read_errors > 0 {
            out.push_str(&format!("; {}", count(s.read_errors, "read error")));
        }
        out.push('\n');
        for (name, d) in &s.by_detector {
            out.push_str(&format!(
                "  {name}: {} in {}, {} in {}, {} in {}\n",
                count(d.decisions.warnings, "warning"),
                count(d.sessions_warned, "session"),
                count(d.decisions.blocks, "block"),
                count(d.sessions_blocked, "session"),
                count(d.decisions.aborts, "abort"),
                count(d.sessions_aborted, "session")
            ));
        }
        out
    }

    /// JSON Lines: one `{"type":"session",…}` line per row, then one `{"type":"summary",…}`.
    pub fn write_jsonl(&self, w: &mut dyn Write) -> std::io::Result<()> {
        write_tagged(w, ("session", &self.rows), ("summary", &self.summary))
    }

    /// [`Report::write_jsonl`] into a string.
    pub fn to_jsonl(&self) -> String {
        jsonl_string(|w| self.write_jsonl(w))
    }
}

/// JSON Lines of tagged objects: each of `items` as `{"type":TAG,…its fields}`, then the last
/// line, the summary, the same way. The report and the what-if write their output through this.
pub(crate) fn write_tagged<T: Serialize, S: Serialize>(
    w: &mut dyn Write,
    (tag, items): (&'static str, &[T]),
    (last_tag, last): (&'static str, &S),
) -> std::io::Result<()> {
    #[derive(Serialize)]
    struct Tagged<'a, T: Serialize> {
        #[serde(rename = "type")]
        ty: &'static str,
        #[serde(flatten)]
        inner: &'a T,
    }
    for item in items {
        serde_json::to_writer(&mut *w, &Tagged { ty: tag, inner: item })?;
        w.write_all(b"\n")?;
    }
    serde_json::to_writer(&mut *w, &Tagged { ty: last_tag, inner: last })?;
    w.write_all(b"\n")
}

/// What `write` writes, as a string (writing to memory cannot fail; the JSON is UTF-8).
pub(crate) fn jsonl_string(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    let _ = write(&mut out);
    String::from_utf8(out).unwrap_or_default()
}
