//! The page: one self-contained HTML file (inline CSS and a little plain JS, no network).
//!
//! Why this shape: the page must open in seconds for 10,000 sessions and a million calls. So
//! the overview and one summary line per touched session come first, as plain HTML the browser
//! paints while it reads on; each session's calls follow at the end of the body, one
//! `<script type="application/json">` block per session that the script parses only when the
//! session is opened; the script itself comes last.
//!
//! Every string from the input (a transcript is untrusted) goes through [`esc`] in HTML, and
//! through [`json_block`] (which escapes `<`, `>` and `&`) in the data blocks, so a tool output
//! holding `</script>` or `<img onerror>` stays text. The page's Content-Security-Policy allows
//! no request at all, as a second line of defence.

use std::fmt::Write as _;
use std::io::Write;

use loopguard_transcripts::{compare_rows, Finding, Report, SessionRow, WhatIf};

use super::model::{Overview, SessionView, ALLOW};

const CSS: &str = include_str!("assets/report.css");
const JS: &str = include_str!("assets/report.js");

/// What the page is made of.
pub struct Page<'a> {
    /// The report under each config (A, and B for a what-if).
    pub reports: &'a [Report],
    /// Per session (in the rows' order), its view.
    pub views: &'a [SessionView],
    /// The comparison of A and B.
    pub compared: Option<&'a WhatIf>,
    /// The inputs, as given on the command line.
    pub inputs: &'a [String],
    /// What each config is (a file name, `--set …`).
    pub configs: &'a [String],
}

/// HTML-escapes `text` for an element's content or a quoted attribute. Hand-written: five
/// replacements do not need a dependency, and the set is the one the HTML spec names.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON for a `<script type="application/json">` block: `<`, `>` and `&` (which
/// JSON has only inside strings) become `\u003c`…, so no `</script>` or `<!--` can appear.
pub fn json_block<T: serde::Serialize>(value: &T) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    text.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

impl Page<'_> {
    /// Writes the page to `out`.
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut h = String::with_capacity(64 << 10);
        h.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
        h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n");
        h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        let _ = write!(h, "<title>loopguard report</title>\n<style>\n{CSS}</style></head>\n<body>\n");
        let _ = write!(h, "<header><h1>loopguard report</h1><p>Read: {}</p>", esc(&self.inputs.join(" ")));
        for (i, c) in self.configs.iter().enumerate() {
            let _ = write!(h, "<p>Config {}: {}</p>", letter(i), esc(c));
        }
        h.push_str("</header>\n");
        self.overview(&mut h);
        out.write_all(h.as_bytes())?;
        h.clear();
        if let Some(w) = self.compared {
            self.changes(&mut h, w);
        }
        self.sessions(&mut h, out)?;
        // The data blocks, after everything the browser paints.
        for (i, view) in self.views.iter().enumerate() {
            if let Some(d) = &view.detail {
                writeln!(out, "<script type=\"application/json\" id=\"d{i}\">{}</script>", json_block(d))?;
            }
        }
        write!(out, "<script>\n{JS}</script>\n</body></html>\n")?;
        out.flush()
    }

    fn overview(&self, h: &mut String) {
        let overviews: Vec<Overview> =
            (0..self.reports.len()).map(|c| Overview::new(&self.reports[c].rows, self.views, c)).collect();
        h.push_str("<section id=\"overview\"><h2>Overview</h2><table class=\"num\"><tr><th></th>");
        for c in 0..self.reports.len() {
            let _ = write!(h, "<th>Config {}</th>", letter(c));
        }
        h.push_str("</tr>\n");
        type Cell = fn(&Report, &Overview) -> u64;
        let lines: [(&str, &str, Cell); 8] = [
            ("sessions", "Sessions read", |r, _| r.summary.sessions),
            ("tool_calls", "Tool calls read", |r, _| r.summary.tool_calls),
            ("sessions_with_warnings", "Sessions warned", |r, _| r.summary.sessions_with_warnings),
            ("sessions_with_blocks", "Sessions blocked", |r, _| r.summary.sessions_with_blocks),
            ("sessions_with_aborts", "Sessions ended (post-compaction abort)", |r, _| r.summary.sessions_with_aborts),
            ("saved_calls", "Calls from the first block on (what a block would have saved)", |_, o| o.saved_calls),
            ("sessions_with_gateway_blocks", "Sessions the gateway itself blocked", |r, _| {
                r.summary.sessions_with_gateway_blocks
            }),
            ("read_errors", "Read errors", |r, _| r.summary.read_errors),
        ];
        for (key, label, cell) in lines {
            let _ = write!(h, "<tr><th>{label}</th>");
            for (c, (r, o)) in self.reports.iter().zip(&overviews).enumerate() {
                let _ = write!(h, "<td data-k=\"{key}\" data-c=\"{c}\">{}</td>", cell(r, o));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n<h3>Per detector</h3><table class=\"num\" id=\"detectors\"><tr><th>detector</th><th>config</th><th>warnings</th><th>blocks</th><th>aborts</th><th>sessions warned</th><th>sessions blocked</th><th>sessions ended</th></tr>\n");
        for (c, r) in self.reports.iter().enumerate() {
            for (name, d) in &r.summary.by_detector {
                let _ = writeln!(
                    h,
                    "<tr data-detector=\"{n}\" data-c=\"{c}\"><th>{n}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    letter(c),
                    d.decisions.warnings,
                    d.decisions.blocks,
                    d.decisions.aborts,
                    d.sessions_warned,
                    d.sessions_blocked,
                    d.sessions_aborted,
                    n = esc(name)
                );
            }
        }
        h.push_str("</table>\n<h3>Per tool</h3><table class=\"num\" id=\"tools\"><tr><th>tool</th><th>config</th><th>calls</th><th>warnings</th><th>blocks</th><th>aborts</th></tr>\n");
        for (c, o) in overviews.iter().enumerate() {
            for (name, t) in &o.tools {
                let _ = writeln!(
                    h,
                    "<tr data-tool=\"{n}\" data-c=\"{c}\"><th>{n}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    letter(c),
                    t.calls,
                    t.warnings,
                    t.blocks,
                    t.aborts,
                    n = esc(name)
                );
            }
        }
        h.push_str("</table></section>\n");
    }

    fn changes(&self, h: &mut String, w: &WhatIf) {
        let s = &w.summary;
        let _ = write!(
            h,
            "<section id=\"changes\"><h2>What changes from A to B</h2><p><span data-k=\"changed\">{}</span> of {} sessions change: {} newly blocked, {} no longer blocked, {} blocked sooner, {} later, {} with other warnings, {} with other aborts.</p>\n<table><tr><th>session</th><th>A</th><th>B</th><th>timeline (A over B)</th></tr>\n",
            s.changed, s.sessions, s.new_blocks, s.blocks_removed, s.earlier, s.later, s.warnings_changed, s.aborts_changed
        );
        // Both reports have one row per session, in the same order: a change is found by
        // index (the what-if's own list names sessions by id only).
        let rows = self.reports[0].rows.iter().zip(&self.reports[1].rows).enumerate();
        for (i, (a, b)) in rows.filter(|(_, (a, b))| !compare_rows(a, b).is_empty()) {
            let _ = write!(
                h,
                "<tr class=\"change\" data-session=\"{}\"><td><a href=\"#s{i}\">{}</a></td><td>{}</td><td>{}</td><td>",
                esc(&a.session_id),
                esc(&a.session_id),
                verdict_cell(a),
                verdict_cell(b)
            );
            if let Some(d) = &self.views[i].detail {
                for v in &d.verdicts {
                    h.push_str(&timeline(v));
                }
            }
            h.push_str("</td></tr>\n");
        }
        h.push_str("</table></section>\n");
    }

    fn sessions(&self, h: &mut String, out: &mut dyn Write) -> std::io::Result<()> {
        let touched = self.views.iter().filter(|v| v.detail.is_some()).count();
        let _ = writeln!(
            h,
            "<section id=\"sessions\"><h2>Sessions the guard touched ({touched})</h2><p class=\"hint\">Open a session to see its calls; click a mark for the call, the detector and the message the model would have read. Marks: <span class=\"key v-a\">allow</span> <span class=\"key v-w\">warn</span> <span class=\"key v-b\">block</span> <span class=\"key v-e\">ended</span>.</p>"
        );
        for (i, view) in self.views.iter().enumerate() {
            let Some(d) = &view.detail else { continue };
            let a = &self.reports[0].rows[i];
            let _ = write!(
                h,
                "<details class=\"s\" id=\"s{i}\" data-i=\"{i}\" data-session=\"{}\"><summary><span class=\"sid\">{}</span> <span class=\"meta\">{}{} · {} calls</span>",
                esc(&a.session_id),
                esc(&a.session_id),
                a.agent.as_deref().map(|g| format!("agent {} · ", esc(g))).unwrap_or_default(),
                esc(&a.file.display().to_string()),
                a.tool_calls
            );
            for (c, r) in self.reports.iter().enumerate() {
                let _ = write!(h, "<span class=\"cfg\">{}: {}</span>", letter(c), verdict_cell(&r.rows[i]));
            }
            for v in &d.verdicts {
                h.push_str(&timeline(v));
            }
            h.push_str("</summary><div class=\"body\"></div></details>\n");
            if h.len() > 1 << 20 {
                out.write_all(h.as_bytes())?;
                h.clear();
            }
        }
        h.push_str("</section>\n");
        out.write_all(h.as_bytes())
    }
}

/// `A`, `B`.
fn letter(c: usize) -> char {
    if c == 0 {
        'A'
    } else {
        'B'
    }
}

/// The session's verdict in a few words: its first block, else first warning, else first abort.
fn verdict_cell(r: &SessionRow) -> String {
    let f = |what: &str, n: u64, f: &Option<Finding>| {
        f.as_ref().map(|f| format!("{n} {what}, first at #{} ({}, {})", f.call, esc(&f.detector), esc(&f.tool)))
    };
    f("blocks", r.blocks, &r.first_block)
        .or_else(|| f("warnings", r.warnings, &r.first_warning))
        .or_else(|| f("aborts", r.aborts, &r.first_abort))
        .unwrap_or_else(|| "nothing".into())
}

/// A timeline as an SVG: one rectangle per run of equal verdicts (a loop is one long run, so
/// this stays small), allow runs left to the background.
fn timeline(verdicts: &str) -> String {
    let v = verdicts.as_bytes();
    let mut s = format!(
        "<svg class=\"tl\" viewBox=\"0 0 {} 1\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"timeline\">",
        v.len().max(1)
    );
    let mut start = 0;
    while start < v.len() {
        let end = v[start..].iter().position(|x| *x != v[start]).map_or(v.len(), |n| start + n);
        if v[start] != ALLOW {
            let _ = write!(
                s,
                "<rect class=\"v-{}\" x=\"{start}\" width=\"{}\" height=\"1\"/>",
                v[start] as char,
                end - start
            );
        }
        start = end;
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esc_leaves_no_markup() {
        assert_eq!(
            esc("</script><img src=x onerror=\"a('&')\">"),
            "&lt;/script&gt;&lt;img src=x onerror=&quot;a(&#39;&amp;&#39;)&quot;&gt;"
        );
    }

    #[test]
    fn json_block_cannot_close_its_script() {
        let text = json_block(&vec!["</script><!--&"]);
        assert_eq!(text, r#"["\u003c/script\u003e\u003c!--\u0026"]"#);
        assert_eq!(serde_json::from_str::<Vec<String>>(&text).unwrap(), vec!["</script><!--&".to_string()]);
    }

    #[test]
    fn timeline_draws_one_rect_per_run() {
        assert_eq!(
            timeline("aawbbba"),
            "<svg class=\"tl\" viewBox=\"0 0 7 1\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"timeline\"><rect class=\"v-w\" x=\"2\" width=\"1\" height=\"1\"/><rect class=\"v-b\" x=\"3\" width=\"3\" height=\"1\"/></svg>"
        );
    }
}
