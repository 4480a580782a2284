//! Outcome hashing (`hashToolOutcome`, spec/tool-loop.md §1.3 and §1.4).
//!
//! No-progress detection needs to know when a tool keeps returning "the same thing". Raw result
//! equality is too strict: exec results carry durations and pids, message sends carry fresh
//! message ids. So each tool family hashes only the part of its outcome that shows progress.

use crate::canonical::{canonical, write_canonical, write_number, write_string, Sink};
use crate::digest::{tag, Digest, Hasher};
use crate::js::js_trim;
use crate::json::{Json, Str};

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
            let unknown_tool = super::unknown_tool::extract_unknown_tool_name(&text);
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

/// Writes [`content_text`] as a JSON string.
fn write_content_text(result: &Json<'_>, h: &mut Hasher) {
    write_string(&content_text(result), h)
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
    match err {
        Json::Str(s) => s.to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Num(n) => {
            let mut s = String::new();
            write_number(*n, &mut s);
            s
        }
        other => canonical(other),
    }
}
