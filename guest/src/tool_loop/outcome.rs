//! Outcome hashing (`hashToolOutcome`, spec/tool-loop.md §1.3 and §1.4).
//!
//! No-progress detection needs to know when a tool keeps returning "the same thing". Raw result
//! equality is too strict: exec results carry durations and pids, message sends carry fresh
//! message ids. So each tool family hashes only the part of its outcome that shows progress.

use crate::canonical_text::CanonicalText;
use crate::digest::{digest_of, js_trim, tag, write_canonical, write_string, write_text, Digest, Hasher, Sink};
use crate::json::{Json, Text};

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
}

/// `message` actions that send (case-sensitive, not trimmed).
const SEND_ACTIONS: &[&str] = &[
    "send",
    "broadcast",
    "reply",
    "thread-reply",
    "sendWithEffect",
    "sendAttachment",
    "upload-file",
    "sticker",
    "poll",
];

/// Keys `stripVolatile` removes anywhere in a send result.
const VOLATILE_KEYS: &[&str] = &[
    "messageId",
    "message_id",
    "messageIds",
    "platformMessageId",
    "platformMessageIds",
    "fileId",
    "file_id",
    "fileKey",
    "pollId",
    "poll_id",
    "receipt",
    "runId",
    "idempotencyKey",
    "ts",
    "timestamp",
    "sentAt",
    "deliveredAt",
    "createdAt",
];

/// Hashes an outcome; `send_tools` are the operator's extra message-send tools.
///
/// The shapes of §1.3 are streamed into the hasher in canonical form (keys in sorted order), so
/// no intermediate value is built for the common tools.
pub fn hash_outcome(
    tool: &str,
    action: Option<&str>,
    outcome: Outcome<'_>,
    send_tools: &[String],
) -> Option<HashedOutcome> {
    let result = match outcome {
        Outcome::Error(err) => {
            let text = format_error(err);
            let unknown_tool = extract_unknown_tool_name(&text);
            let mut h = Hasher::new(tag::ERROR);
            write_string(&text, &mut h);
            return Some(HashedOutcome { digest: h.finish(), unknown_tool });
        }
        Outcome::Result(r) => r,
    };
    let done = |h: Hasher| Some(HashedOutcome { digest: h.finish(), unknown_tool: None });
    let mut h = Hasher::new(tag::RESULT);
    if !result.is_object() {
        write_canonical(result, &mut h);
        return done(h);
    }
    let empty = Json::Obj(Vec::new());
    let details = result.get("details").filter(|d| d.is_object()).unwrap_or(&empty);
    let status = details.get("status").and_then(Json::as_str);
    if status == Some("blocked") && details.get("deniedReason").and_then(Json::as_str) == Some("tool-loop") {
        return None; // the loop veto is sticky: the next identical call is blocked again
    }
    if tool == "exec" && write_exec_shape(&mut h, details, status, result) {
        return done(h);
    }
    if tool == "process" && write_process_shape(&mut h, action, details, result) {
        return done(h);
    }
    if is_send(tool, action, send_tools) {
        write_canonical(&strip_volatile(details), &mut h); // text is dropped entirely
        return done(h);
    }
    let mut o = ObjWriter::new(&mut h);
    if tool == "update_plan" {
        o.key("details");
        write_canonical(&plan_shape(details), o.h);
        o.key("text");
        write_string("", o.h);
    } else {
        o.key("details");
        write_canonical(details, o.h);
        o.key("text");
        write_content_text(result, o.h);
    }
    o.end();
    done(h)
}

/// [`hash_outcome`] of a result given as JSON text, hashed straight from the text when the
/// default rule applies (step 8, or step 2 for a result that is not an object) and the text is
/// in the common case of [`CanonicalText::write_result`]. `None` sends the caller to the tree
/// path: `update_plan`, `process` polls and logs, message sends, a `details` that may hold a
/// `status` (exec outcomes and the loop veto read it), and any text the writer gives up on,
/// malformed JSON included.
///
/// Why: reading a result of a few hundred bytes into a tree, only to write most of it back out
/// for the hash, was the largest part of recording an outcome.
pub fn hash_result_text(
    tool: &str,
    action: Option<&str>,
    text: &str,
    send_tools: &[String],
    w: &mut CanonicalText,
) -> Option<HashedOutcome> {
    let has_shape = match tool {
        "update_plan" => true,
        "process" => matches!(action, Some("poll" | "log")),
        _ => is_send(tool, action, send_tools),
    };
    if has_shape {
        return None;
    }
    let written = w.write_result_after(&[&[tag::RESULT]], text)?;
    if written.status {
        return None;
    }
    Some(HashedOutcome { digest: digest_of(written.prefixed), unknown_tool: None })
}

/// Writes a canonical object member by member; callers give keys in sorted order.
struct ObjWriter<'h> {
    h: &'h mut Hasher,
    first: bool,
}

impl<'h> ObjWriter<'h> {
    fn new(h: &'h mut Hasher) -> Self {
        Self { h, first: true }
    }

    fn key(&mut self, k: &str) {
        self.h.put(if self.first { "{" } else { "," });
        self.first = false;
        write_string(k, self.h);
        self.h.put(":");
    }

    fn string_or(&mut self, k: &str, v: Option<&Json<'_>>, fallback: Option<&str>) {
        self.key(k);
        match (v.and_then(Json::as_str), fallback) {
            (Some(s), _) | (None, Some(s)) => write_string(s, self.h),
            (None, None) => self.h.put("null"),
        }
    }

    /// `v ?? null`.
    fn or_null(&mut self, k: &str, v: Option<&Json<'_>>) {
        self.key(k);
        match v {
            Some(v) => write_canonical(v, self.h),
            None => self.h.put("null"),
        }
    }

    fn end(self) {
        self.h.put(if self.first { "{}" } else { "}" });
    }
}

/// Writes [`content_text`] as a JSON string. The usual result has one text entry with nothing to
/// trim: its literal is written as read, with no copy.
fn write_content_text(result: &Json<'_>, h: &mut Hasher) {
    let mut texts = content_texts(result);
    if let (Some(only), None) = (texts.next(), texts.next()) {
        if only.is_js_trimmed() {
            return write_text(only, h);
        }
    }
    write_string(&content_text(result), h)
}

/// The `text` of `content[]` entries that have a string `type` and a string `text`.
fn content_texts<'r, 'a>(result: &'r Json<'a>) -> impl Iterator<Item = &'r Text<'a>> {
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

/// Texts of `content[]` entries with a string `type` and string `text`, joined and trimmed.
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

/// `hashExecToolOutcome`; false falls through to the generic hash.
fn write_exec_shape(h: &mut Hasher, details: &Json<'_>, status: Option<&str>, result: &Json<'_>) -> bool {
    let Some(status) = status else { return false };
    let mut o = ObjWriter::new(h);
    match status {
        "running" => {
            o.string_or("status", Some(&Json::Str(status.into())), None);
            o.string_or("tail", details.get("tail"), Some(""));
        }
        "completed" | "failed" => {
            o.key("exitCode");
            match details.get("exitCode") {
                Some(n @ Json::Num(_)) => write_canonical(n, o.h),
                _ => o.h.put("null"),
            }
            o.key("output");
            match details.get("aggregated").and_then(Json::as_str).map(js_trim) {
                Some(a) if !a.is_empty() => write_string(a, o.h),
                _ => write_content_text(result, o.h),
            }
            o.key("status");
            write_string(status, o.h);
            o.key("timedOut");
            o.h.put(if details.get("timedOut") == Some(&Json::Bool(true)) { "true" } else { "false" });
        }
        "approval-pending" | "approval-unavailable" => {
            o.string_or("command", details.get("command"), Some(""));
            o.string_or("host", details.get("host"), None);
            o.string_or("reason", details.get("reason"), None);
            o.key("status");
            write_string(status, o.h);
            o.string_or("warningText", details.get("warningText"), Some(""));
        }
        _ => return false,
    }
    o.end();
    true
}

/// The `process` poll and log outcome shapes; false falls through.
fn write_process_shape(h: &mut Hasher, action: Option<&str>, details: &Json<'_>, result: &Json<'_>) -> bool {
    let Some(action @ ("poll" | "log")) = action else { return false };
    let d = |k: &str| details.get(k);
    let mut o = ObjWriter::new(h);
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
        Some(v) => write_canonical(v, o.h),
        None => o.h.put("undefined"),
    }
    o.key("text");
    write_content_text(result, o.h);
    if action == "log" {
        o.or_null("totalChars", d("totalChars"));
        o.or_null("totalLines", d("totalLines"));
        o.or_null("truncated", d("truncated"));
    }
    o.end();
    true
}

fn is_send(tool: &str, action: Option<&str>, send_tools: &[String]) -> bool {
    match tool {
        "sessions_send" => true,
        "message" => action.is_some_and(|a| SEND_ACTIONS.contains(&a)),
        _ => send_tools.iter().any(|t| t == tool),
    }
}

/// Removes volatile ids anywhere in a send result (`stripVolatile`).
pub fn strip_volatile<'a>(v: &Json<'a>) -> Json<'a> {
    match v {
        Json::Arr(items) => Json::Arr(items.iter().map(strip_volatile).collect()),
        Json::Obj(members) => {
            let delivery = is_delivery_object(v);
            Json::Obj(
                members
                    .iter()
                    .filter(|(k, _)| !(VOLATILE_KEYS.contains(&&**k) || (delivery && k == "id")))
                    .map(|(k, val)| (k.clone(), strip_volatile(val)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// A "message delivery object": string `id` and `text`, plus a string direction, senderId or
/// accountId, or a plain-object conversation.
fn is_delivery_object(v: &Json<'_>) -> bool {
    let s = |k: &str| matches!(v.get(k), Some(Json::Str(_)));
    s("id")
        && s("text")
        && (s("direction") || s("senderId") || s("accountId") || v.get("conversation").is_some_and(Json::is_object))
}

/// The `update_plan` shape (§1.4); non-objects pass through unchanged.
pub fn plan_shape<'a>(v: &Json<'a>) -> Json<'a> {
    if !v.is_object() {
        return v.clone();
    }
    let blank = |x: Option<&Json<'_>>| x.and_then(Json::as_str).is_none_or(|s| js_trim(s).is_empty());
    let plan: &[Json<'_>] = match v.get("plan") {
        Some(Json::Arr(items)) => items,
        _ => &[],
    };
    let status = |e: &Json<'_>| match e.get("status") {
        Some(Json::Str(s)) => Json::Str(Text::from(s.to_string())),
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
    match err {
        Json::Str(s) => s.to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Num(n) => {
            let mut s = String::new();
            crate::digest::write_number(*n, &mut s);
            s
        }
        other => crate::digest::canonical(other),
    }
}

/// `extractUnknownToolName`: the first match of `unknown tool[:\s]+["']?([a-z0-9_.-]+)` or else
/// `tool\s+["']?([a-z0-9_.-]+)["']?\s+(?:not found|is not available)`, case-insensitive,
/// lowercased.
pub fn extract_unknown_tool_name(error_text: &str) -> Option<String> {
    let t = js_trim(error_text);
    if t.is_empty() {
        return None;
    }
    first_match(t, "unknown tool", unknown_tool_tail).or_else(|| first_match(t, "tool", not_found_tail))
}

/// Tries `tail` after every case-insensitive occurrence of `lead`, leftmost first.
fn first_match(t: &str, lead: &str, tail: fn(&str) -> Option<&str>) -> Option<String> {
    let lower = t.to_ascii_lowercase(); // ASCII-only folding keeps byte offsets
    let mut from = 0;
    while let Some(pos) = lower[from..].find(lead) {
        let at = from + pos;
        if let Some(name) = tail(&t[at + lead.len()..]) {
            return Some(name.to_ascii_lowercase());
        }
        from = at + 1;
        while !lower.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn skip_quote(s: &str) -> &str {
    s.strip_prefix(['"', '\'']).unwrap_or(s)
}

fn take_name(s: &str) -> Option<(&str, &str)> {
    let end = s.find(|c: char| !is_name_char(c)).unwrap_or(s.len());
    (end > 0).then(|| s.split_at(end))
}

/// `[:\s]+["']?([a-z0-9_.-]+)`.
fn unknown_tool_tail(s: &str) -> Option<&str> {
    let rest = s.trim_start_matches(|c: char| c == ':' || crate::digest::is_js_space(c));
    if rest.len() == s.len() {
        return None;
    }
    take_name(skip_quote(rest)).map(|(name, _)| name)
}

/// `\s+["']?([a-z0-9_.-]+)["']?\s+(?:not found|is not available)`.
fn not_found_tail(s: &str) -> Option<&str> {
    let rest = s.trim_start_matches(crate::digest::is_js_space);
    if rest.len() == s.len() {
        return None;
    }
    let (name, after) = take_name(skip_quote(rest))?;
    let after = skip_quote(after);
    let spaced = after.trim_start_matches(crate::digest::is_js_space);
    if spaced.len() == after.len() {
        return None;
    }
    let head = spaced.get(..16).unwrap_or(spaced).to_ascii_lowercase();
    (head.starts_with("not found") || head.starts_with("is not available")).then_some(name)
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
