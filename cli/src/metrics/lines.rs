//! The decisions of `loopguard replay --metrics`, counted from the decision lines as they are
//! written: the line is the policy's answer (its `kind`, `action` and `detector`), so the count
//! needs no word of its own about loops, and the replay's code path is the same with or without
//! metrics. A replay decides in chunks of lines, one policy call per chunk, so it has no
//! per-decision latency to report: only `loopguard_decisions_total`.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;

use serde::Deserialize;

use super::Metrics;

/// The words of a decision line that metrics count (the rest is skipped unread).
#[derive(Deserialize)]
struct Words<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    action: Cow<'a, str>,
    #[serde(borrow, default)]
    detector: Option<Cow<'a, str>>,
}

/// A writer of decision lines that counts each whole line it passes on.
pub struct Counted<W> {
    inner: W,
    metrics: Arc<Metrics>,
    /// The start of a line whose end has not been written yet (at most one line).
    partial: Vec<u8>,
}

impl<W: Write> Counted<W> {
    /// Passes everything on to `inner`, counting on `metrics`.
    pub fn new(inner: W, metrics: Arc<Metrics>) -> Self {
        Counted { inner, metrics, partial: Vec::new() }
    }

    fn count(&self, line: &[u8]) {
        // A line that is not a decision (there is none today) is passed on and not counted.
        if let Ok(w) = serde_json::from_slice::<Words<'_>>(line) {
            self.metrics.decided(&w.kind, &w.action, w.detector.as_deref(), None);
        }
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let mut rest = &buf[..n];
        while let Some(end) = memchr::memchr(b'\n', rest) {
            if self.partial.is_empty() {
                self.count(&rest[..end]);
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                let line = std::mem::take(&mut self.partial);
                self.count(&line);
            }
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_anywhere_are_counted_once_each_by_the_policys_words() {
        let text = concat!(
            r#"{"line":1,"kind":"tool_call","action":"allow"}"#,
            "\n",
            r#"{"line":2,"kind":"tool_call","action":"block","detector":"generic_repeat","count":6,"message":"x\n"}"#,
            "\n",
            r#"{"line":3,"kind":"bot_message","action":"suppress","budget":"pair"}"#,
            "\n",
        );
        for cut in [1, 7, 50, 64, text.len()] {
            let metrics = Arc::new(Metrics::new("replay"));
            let mut out = Counted::new(Vec::new(), Arc::clone(&metrics));
            for piece in text.as_bytes().chunks(cut) {
                out.write_all(piece).expect("a Vec takes it");
            }
            assert_eq!(out.inner, text.as_bytes(), "passed on untouched");
            let series: Vec<String> = metrics
                .encode()
                .lines()
                .filter(|l| l.starts_with("loopguard_decisions_total"))
                .map(|l| l.replace("loopguard_decisions_total", ""))
                .collect();
            assert_eq!(
                series,
                [
                    r#"{host="replay",kind="bot_message",action="suppress",detector="none"} 1"#,
                    r#"{host="replay",kind="tool_call",action="allow",detector="none"} 1"#,
                    r#"{host="replay",kind="tool_call",action="block",detector="generic_repeat"} 1"#,
                ],
                "pieces of {cut} bytes"
            );
        }
    }
}
