//! Outcome hashing (`hashToolOutcome`, docs/spec/tool-loop.md §1.3 and §1.4).
//!
//! No-progress detection needs to know when a tool keeps returning "the same thing". Raw result
//! equality is too strict: exec results carry durations and pids, message sends carry fresh
//! message ids. So each tool family hashes only the part of its outcome that shows progress:
//! [`exec`] for the `exec` tool, [`send`] for message sends, the rest here.
//!
//! The profile's [`ToolRules`] choose the rules that differ by release: the canonical [`Style`]
//! (lone surrogates, untrusted-marker ids), the `update_plan` shape, and openclaw 2026.9's
//! no-progress marks (errors and unchanged writes, NOTES §2.5–§2.6) and terminal exec failure
//! identity.

pub mod exec;
pub mod send;

use std::borrow::Cow;

use crate::canonical::{canonical_in, write_canonical_in, write_number, write_str_in, write_string, Sink, Style};
use crate::config::profile::{ToolRules, DOCUMENTED};
use crate::digest::{tag, value_digest, Digest, Hasher};
use crate::js::js_trim;
use crate::json::{Json, Str, StrBuf};
pub use send::strip_volatile;

/// How a tool call ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The tool returned a result.
    Result(&'a Json<'a>),
    /// The tool threw an error.
    Error(&'a Json<'a>),
}

/// The hashed outcome: `None` means nothing is recorded (a loop veto).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashedOutcome {
    /// The result hash.
    pub digest: Digest,
    /// The missing tool's name when the error says a tool does not exist.
    pub unknown_tool: Option<String>,
    /// openclaw 2026.9's `noProgress` mark: an error, or an unchanged `write` (what the
    /// argument-churn detector counts). Always false in the documented profile.
    pub no_progress: bool,
    /// openclaw 2026.9's terminal exec failure identity (NOTES §2.6), when the rule is on.
    pub failure: Option<Digest>,
}

/// What [`hash_outcome_with`] needs besides the outcome: the profile's rules and the operator's
/// extra send tools (`loopguard.sendTools`).
#[derive(Debug, Clone, Copy)]
pub struct Hashing<'a> {
    /// The profile's tool-loop rules.
    pub rules: &'a ToolRules,
    /// `loopguard.sendTools`.
    pub send_tools: &'a [String],
}

impl Hashing<'_> {
    /// The canonical style of outcome digests.
    pub fn style(&self) -> Style {
        Style { lone_surrogates: self.rules.keep_lone_surrogates, marker_ids: self.rules.untrusted_marker_ids }
    }

    /// The canonical style of `argsHash` and of a formatted error (`stableStringify` without a
    /// string normalizer).
    pub fn args_style(&self) -> Style {
        Style { lone_surrogates: self.rules.keep_lone_surrogates, marker_ids: false }
    }
}

/// Hashes an outcome under the documented profile; `send_tools` are the operator's extra
/// message-send tools.
pub fn hash_outcome(
    tool: &str,
    action: Option<&str>,
    outcome: Outcome<'_>,
    send_tools: &[String],
) -> Option<HashedOutcome> {
    hash_outcome_with(tool, action, outcome, &Hashing { rules: &DOCUMENTED.tool, send_tools })
}

/// Hashes an outcome under a profile's rules.
///
/// The shapes of §1.3 are streamed into the hasher in canonical form (keys in sorted order), so
/// no intermediate value is built for the common tools.
pub fn hash_outcome_with(
    tool: &str,
    action: Option<&str>,
    outcome: Outcome<'_>,
    how: &Hashing<'_>,
) -> Option<HashedOutcome> {
    let style = how.style();
    let result = match outcome {
        Outcome::Error(err) => {
            let text = format_error_in(err, how.args_style());
            let unknown_tool = super::openclaw::unknown_tool::extract_unknown_tool_name(&text);
            let mut h = Hasher::new(tag::ERROR);
            write_str_in(&text, style, &mut h);
            let no_progress = how.rules.argument_churn;
            return Some(HashedOutcome { digest: h.finish(), unknown_tool, no_progress, failure: None });
        }
        Outcome::Result(r) => r,
    };
    let done = |mut h: Hasher| {
        Some(HashedOutcome { digest: h.finish(), unknown_tool: None, no_progress: false, failure: None })
    };
    let mut h = Hasher::new(tag::RESULT);
    if !result.is_object() {
        write_canonical_in(result, style, &mut h);
        return done(h);
    }
    let empty = Json::Obj(Vec::new());
    let details = result.get("details").filter(|d| d.is_object()).unwrap_or(&empty);
    let status = details.get("status").and_then(Json::as_str);
    if status == Some("blocked") && details.get("deniedReason").and_then(Json::as_str) == Some("tool-loop") {
        return None; // the loop veto is sticky: the next identical call is blocked again
    }
    if tool == "exec" {
        if let Some(shape) = exec::write_shape(&mut h, details, status, result, style) {
            let failure =
                if how.rules.exec_failure_identity { exec::failure_identity(details, &shape, style) } else { None };
            return Some(HashedOutcome { digest: h.finish(), unknown_tool: None, no_progress: false, failure });
        }
    }
    if tool == "write" && how.rules.write_unchanged_no_progress && details.get("changed") == Some(&Json::Bool(false)) {
        // One digest for every unchanged write, whatever its text, details or args (NOTES §2.6).
        let unchanged = Json::Obj(vec![("status".into(), Json::Str("unchanged".into()))]);
        let digest = value_digest(tag::RESULT, &unchanged);
        return Some(HashedOutcome {
            digest,
            unknown_tool: None,
            no_progress: how.rules.argument_churn,
            failure: None,
        });
    }
    if tool == "process" && write_process_shape(&mut h, action, details, result, style) {
        return done(h);
    }
    if send::is_send(tool, action, how.rules.send_tools, how.send_tools) {
        write_canonical_in(&strip_volatile(details), style, &mut h); // text is dropped entirely
        return done(h);
    }
    let mut o = ObjWriter::new(&mut h, style);
    if tool == "update_plan" && how.rules.update_plan_shape {
        o.key("details");
        write_canonical_in(&plan_shape(details), style, o.h);
        o.key("text");
        write_string("", o.h);
    } else {
        o.key("details");
        write_canonical_in(details, style, o.h);
        o.key("text");
        write_str_in(&content(result, style), style, o.h);
    }
    o.end();
    done(h)
}

/// Writes a canonical object member by member; callers give keys in sorted order.
pub(crate) struct ObjWriter<'h> {
    pub(crate) h: &'h mut Hasher,
    first: bool,
    style: Style,
}

impl<'h> ObjWriter<'h> {
    pub(crate) fn new(h: &'h mut Hasher, style: Style) -> Self {
        Self { h, first: true, style }
    }

    pub(crate) fn key(&mut self, k: &str) {
        self.h.put(if self.first { "{" } else { "," });
        self.first = false;
        write_string(k, self.h);
        self.h.put(":");
    }

    /// `k: v` when `v` is a string, else the fallback, else `null`.
    pub(crate) fn string_or(&mut self, k: &str, v: Option<&Json<'_>>, fallback: Option<&str>) {
        self.key(k);
        match (v, fallback) {
            (Some(Json::Str(s)), _) => write_str_in(s, self.style, self.h),
            (_, Some(s)) => write_string(s, self.h),
            (_, None) => self.h.put("null"),
        }
    }

    /// `v ?? null`.
    pub(crate) fn or_null(&mut self, k: &str, v: Option<&Json<'_>>) {
        self.key(k);
        match v {
            Some(v) => write_canonical_in(v, self.style, self.h),
            None => self.h.put("null"),
        }
    }

    pub(crate) fn end(self) {
        self.h.put(if self.first { "{}" } else { "}" });
    }
}

/// The `text` of `content[]` entries that have a string `type` and a string `text`.
fn content_texts<'r, 'a>(result: &'r Json<'a>) -> impl Iterator<Item = &'r Str<'a>> {
    let items = match result.get("content") {
        Some(Json::Arr(items)) => &items[..],
        _ => &[],
    };
    let typed = items.iter().filter(|e| e.get("type").and_then(Json::as_str).is_some());
    typed.filter_map(|e| match e.get("text") {
        Some(Json::Str(t)) => Some(t),
        _ => None,
    })
}

/// Texts of `content[]` entries with a string `type` and string `text`, joined with `\n` and
/// trimmed (`extractTextContent`). With lone surrogates kept, they are joined in and stop the
/// trim, as in JavaScript; otherwise they are removed first.
pub(crate) fn content_str(result: &Json<'_>, style: Style) -> Str<'static> {
    if !style.lone_surrogates {
        return Str::from(content_text(result));
    }
    let mut text = StrBuf::default();
    for (i, t) in content_texts(result).enumerate() {
        if i > 0 {
            text.push_str("\n");
        }
        text.push(t);
    }
    text.finish().js_trimmed()
}

/// [`content_str`], borrowed when the result has one text entry that trimming leaves as it is
/// (nearly every result): its literal is then hashed as read, with no copy and no escaping.
fn content<'r, 'a>(result: &'r Json<'a>, style: Style) -> Cow<'r, Str<'a>> {
    let mut texts = content_texts(result);
    if let (Some(t), None) = (texts.next(), texts.next()) {
        if !t.has_lone() && js_trim(t).len() == t.len() {
            return Cow::Borrowed(t);
        }
    }
    Cow::Owned(content_str(result, style))
}

/// [`content_str`] without lone surrogates.
fn content_text(result: &Json<'_>) -> String {
    let mut text = String::new();
    for (i, t) in content_texts(result).enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(t);
    }
    match js_trim(&text) {
        t if t.len() == text.len() => text,
        t => t.to_string(),
    }
}

/// The `process` poll and log outcome shapes; false falls through.
fn write_process_shape(
    h: &mut Hasher,
    action: Option<&str>,
    details: &Json<'_>,
    result: &Json<'_>,
    style: Style,
) -> bool {
    let Some(action @ ("poll" | "log")) = action else { return false };
    let d = |k: &str| details.get(k);
    let mut o = ObjWriter::new(h, style);
    o.key("action");
    write_string(action, o.h);
    if action == "poll" {
        o.or_null("aggregated", d("aggregated"));
    }
    o.or_null("exitCode", d("exitCode"));
    o.or_null("exitSignal", d("exitSignal"));
    // `status: details.status` is taken as is: a missing status is `undefined`, not `null`.
    o.key("status");
    match d("status") {
        Some(v) => write_canonical_in(v, style, o.h),
        None => o.h.put("undefined"),
    }
    o.key("text");
    write_str_in(&content(result, style), style, o.h);
    if action == "log" {
        o.or_null("totalChars", d("totalChars"));
        o.or_null("totalLines", d("totalLines"));
        o.or_null("truncated", d("truncated"));
    }
    o.end();
    true
}

/// The `update_plan` shape (§1.4); non-objects pass through unchanged.
pub fn plan_shape<'a>(v: &Json<'a>) -> Json<'a> {
    if !v.is_object() {
        return v.clone();
    }
    let blank = |x: Option<&Json<'_>>| x.and_then(Json::as_str).is_none_or(|s| js_trim(s).is_empty());
    let plan: &[Json<'a>] = match v.get("plan") {
        Some(Json::Arr(items)) => items,
        _ => &[],
    };
    let status = |e: &Json<'a>| match e.get("status") {
        Some(Json::Str(s)) => Json::Str(s.clone()),
        _ => Json::Null,
    };
    let statuses = plan.iter().map(status).collect();
    let steps = plan.iter().map(|e| Json::Bool(e.is_object() && !blank(e.get("step")))).collect();
    // Keys in UTF-16 order, as `Json::Obj` requires.
    Json::Obj(vec![
        ("hasExplanation".into(), Json::Bool(!blank(v.get("explanation")))),
        ("planLength".into(), Json::Num(plan.len() as f64)),
        ("statuses".into(), Json::Arr(statuses)),
        ("stepPresence".into(), Json::Arr(steps)),
    ])
}

/// `formatError`: strings as is, numbers and booleans in their JS text form, anything else in
/// canonical form.
pub fn format_error(err: &Json<'_>) -> String {
    format_error_in(err, Style::DOCUMENTED).as_str().to_string()
}

/// `formatErrorForHash` in a canonical style: a string keeps its lone surrogates (for a style
/// that writes them); another value's canonical text spells them out as `\udXXX`.
pub fn format_error_in(err: &Json<'_>, style: Style) -> Str<'static> {
    match err {
        Json::Str(s) if style.lone_surrogates => {
            Str::with_lone(Cow::Owned(s.as_str().to_string()), s.lone_surrogates().to_vec())
        }
        Json::Str(s) => Str::from(s.as_str().to_string()),
        Json::Bool(b) => Str::from(b.to_string()),
        Json::Num(n) => {
            let mut s = String::new();
            write_number(*n, &mut s);
            Str::from(s)
        }
        other => Str::from(canonical_in(other, style)),
    }
}
