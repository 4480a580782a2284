//! `exec` outcomes (`hashExecToolOutcome`, docs/spec/tool-loop.md §1.3 item 5), and openclaw 2026.9's
//! terminal failure identity (tests/oracle/NOTES.md §2.6).
//!
//! A command that fails the same way every time is a loop even when its output carries a
//! timestamp, a duration, an attempt number or a pid. openclaw 2026.9 gives such a "terminal
//! failure" (completed or failed, a finite non-zero exit code, not timed out, real output) an
//! identity with those volatile parts masked; the no-progress streak of `exec` then treats equal
//! identities as equal outcomes, also across commands ([`crate::tool_loop::openclaw::no_progress`]).

use std::borrow::Cow;
use std::sync::OnceLock;

use regex_lite::Regex;

use super::{content_str, ObjWriter};
use crate::canonical::{write_canonical_in, write_number, write_str_in, write_string, Sink, Style};
use crate::digest::{tag, Digest, Hasher};
use crate::js::js_trim;
use crate::json::{Json, Str, StrBuf};

/// What the failure identity needs from a completed or failed outcome.
#[derive(Debug)]
pub struct Shape {
    /// `details.status` when it is `completed` or `failed`.
    status: Option<&'static str>,
    /// `normalizeNullableString(details.aggregated) ?? text`.
    output: Str<'static>,
}

/// Writes the exec shape of an outcome; `None` (nothing written) falls through to the generic
/// hash.
pub fn write_shape(
    h: &mut Hasher,
    details: &Json<'_>,
    status: Option<&str>,
    result: &Json<'_>,
    style: Style,
) -> Option<Shape> {
    let status = status?;
    let mut o = ObjWriter::new(h, style);
    let mut shape = Shape { status: None, output: Str::from("") };
    match status {
        "running" => {
            o.string_or("status", Some(&Json::Str(status.into())), None);
            o.string_or("tail", details.get("tail"), Some(""));
        }
        "completed" | "failed" => {
            o.key("exitCode");
            match details.get("exitCode") {
                Some(n @ Json::Num(_)) => write_canonical_in(n, style, o.h),
                _ => o.h.put("null"),
            }
            o.key("output");
            let output = output(details, result, style);
            write_str_in(&output, style, o.h);
            o.key("status");
            write_string(status, o.h);
            o.key("timedOut");
            o.h.put(if details.get("timedOut") == Some(&Json::Bool(true)) { "true" } else { "false" });
            shape = Shape { status: Some(if status == "completed" { "completed" } else { "failed" }), output };
        }
        "approval-pending" | "approval-unavailable" => {
            o.string_or("command", details.get("command"), Some(""));
            o.string_or("host", details.get("host"), None);
            o.string_or("reason", details.get("reason"), None);
            o.key("status");
            write_string(status, o.h);
            o.string_or("warningText", details.get("warningText"), Some(""));
        }
        _ => return None,
    }
    o.end();
    Some(shape)
}

/// `details.aggregated` trimmed when that leaves something, else the content text.
fn output(details: &Json<'_>, result: &Json<'_>, style: Style) -> Str<'static> {
    match details.get("aggregated") {
        Some(Json::Str(a)) if style.lone_surrogates => {
            let t = a.js_trimmed();
            if !t.is_empty() || t.has_lone() {
                return Str::with_lone(Cow::Owned(t.as_str().to_string()), t.lone_surrogates().to_vec());
            }
        }
        Some(Json::Str(a)) if !js_trim(a).is_empty() => return Str::from(js_trim(a).to_string()),
        _ => {}
    }
    content_str(result, style)
}

/// The failure identity of a terminal exec failure, `None` for any other outcome.
pub fn failure_identity(details: &Json<'_>, shape: &Shape, style: Style) -> Option<Digest> {
    let status = shape.status?;
    let Some(Json::Num(code)) = details.get("exitCode") else { return None };
    if !code.is_finite() || *code == 0.0 || details.get("timedOut") == Some(&Json::Bool(true)) {
        return None;
    }
    let mut code_text = String::new();
    write_number(*code, &mut code_text);
    let out = &shape.output;
    if out.is_empty() && !out.has_lone() {
        return None;
    }
    if !out.has_lone() && out.as_str() == format!("(Command exited with code {code_text})") {
        return None;
    }
    // `digestToolOutcome({status, exitCode, timedOut: false, output: shape})`, keys sorted.
    let mut h = Hasher::new(tag::RESULT);
    let mut o = ObjWriter::new(&mut h, style);
    o.key("exitCode");
    o.h.put(&code_text);
    o.key("output");
    write_str_in(&mask_volatile(out), style, o.h);
    o.key("status");
    write_string(status, o.h);
    o.key("timedOut");
    o.h.put("false");
    o.end();
    Some(h.finish())
}

/// JavaScript's `\s` as a class body (regex-lite's `\s` is ASCII only).
const JS_SPACE: &str =
    r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// `VOLATILE_EXEC_FAILURE_PATTERNS`, in order; each match becomes `#`.
fn patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            r"(?i)\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:z|[+-]\d{2}:\d{2})?".to_string(),
            r"\d{1,2}:\d{2}:\d{2}(?:\.\d{1,6})?".to_string(),
            format!(r"(?i)\b(?:attempt|retry)\b[{JS_SPACE}#:=]*\d+"),
            format!(r"(?i)\b\d+(?:\.\d+)?[{JS_SPACE}]?(?:ns|us|ms|seconds?|minutes?|hours?|s)\b"),
            format!(r"(?i)\b(?:pid|ppid)\b[{JS_SPACE}#:=]*\d+"),
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    })
}

/// The output with timestamps, clock times, attempt/retry numbers, durations and pids masked.
/// No pattern can match a lone surrogate, so the text between two of them is masked on its own.
pub fn mask_volatile(output: &Str<'_>) -> Str<'static> {
    let text = output.as_str();
    let mut cuts: Vec<usize> = output.lone_surrogates().iter().map(|l| l.at).collect();
    cuts.push(text.len());
    let mut out = StrBuf::default();
    let mut from = 0;
    for (i, &cut) in cuts.iter().enumerate() {
        let mut segment = Cow::Borrowed(text.get(from..cut).unwrap_or(""));
        for p in patterns() {
            if let Cow::Owned(s) = p.replace_all(&segment, "#") {
                segment = Cow::Owned(s);
            }
        }
        out.push_str(&segment);
        if let Some(l) = output.lone_surrogates().get(i) {
            out.push_lone(l.unit);
        }
        from = cut;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(s: &str) -> String {
        mask_volatile(&Str::from(s)).as_str().to_string()
    }

    /// NOTES §2.6: the five patterns, in order, each match replaced by `#`.
    #[test]
    fn volatile_parts_of_failure_output_are_masked() {
        assert_eq!(masked("error at 2026-01-01T10:22:33.123Z: build failed"), "error at #: build failed");
        assert_eq!(masked("at 10:22:33 and 9:01:02.5"), "at # and #");
        assert_eq!(masked("attempt 3, Retry #4, retry=5"), "#, #, #");
        assert_eq!(masked("took 900ms, 1.5 s, 3 seconds, 2 hours"), "took #, #, #, #");
        assert_eq!(masked("pid 123 ppid:45"), "# #");
        assert_eq!(masked("exit code 2"), "exit code 2");
        assert_eq!(patterns().len(), 5, "every pattern compiles");
    }
}
