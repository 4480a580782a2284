//! Outcome hashing (`hashToolOutcome`, spec/tool-loop.md §1.3 and §1.4).
//!
//! No-progress detection needs to know when a tool keeps returning "the same thing". Raw result
//! equality is too strict: exec results carry durations and pids, message sends carry fresh
//! message ids. So each tool family hashes only the part of its outcome that shows progress.

use crate::digest::{js_trim, tag, value_digest, Digest};
use crate::json::Json;

/// How a tool call ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The tool returned a result.
    Result(&'a Json),
    /// The tool threw an error.
    Error(&'a Json),
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
pub fn hash_outcome(tool: &str, params: &Json, outcome: Outcome<'_>, send_tools: &[String]) -> Option<HashedOutcome> {
    let result = match outcome {
        Outcome::Error(err) => {
            let text = format_error(err);
            let unknown_tool = extract_unknown_tool_name(&text);
            let digest = value_digest(tag::ERROR, &Json::Str(text));
            return Some(HashedOutcome { digest, unknown_tool });
        }
        Outcome::Result(r) => r,
    };
    let hashed = |v: &Json| Some(HashedOutcome { digest: value_digest(tag::RESULT, v), unknown_tool: None });
    if !result.is_object() {
        return hashed(result);
    }
    let empty = Json::Obj(Vec::new());
    let details = result.get("details").filter(|d| d.is_object()).unwrap_or(&empty);
    let text = content_text(result);
    let status = details.get("status").and_then(Json::as_str);
    if status == Some("blocked") && details.get("deniedReason").and_then(Json::as_str) == Some("tool-loop") {
        return None; // the loop veto is sticky: the next identical call is blocked again
    }
    if tool == "exec" {
        if let Some(v) = exec_shape(details, status, &text) {
            return hashed(&v);
        }
    }
    if tool == "process" {
        if let Some(v) = process_shape(params, details, &text) {
            return hashed(&v);
        }
    }
    if is_send(tool, params, send_tools) {
        return hashed(&strip_volatile(details));
    }
    let v = if tool == "update_plan" {
        obj(vec![("details", plan_shape(details)), ("text", Json::Str(String::new()))])
    } else {
        obj(vec![("details", details.clone()), ("text", Json::Str(text))])
    };
    hashed(&v)
}

fn obj(members: Vec<(&str, Json)>) -> Json {
    Json::object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Texts of `content[]` entries with a string `type` and string `text`, joined and trimmed.
fn content_text(result: &Json) -> String {
    let Some(Json::Arr(items)) = result.get("content") else { return String::new() };
    let texts: Vec<&str> = items
        .iter()
        .filter(|e| e.get("type").and_then(Json::as_str).is_some())
        .filter_map(|e| e.get("text").and_then(Json::as_str))
        .collect();
    js_trim(&texts.join("\n")).to_string()
}

fn string_or(v: Option<&Json>, fallback: Json) -> Json {
    match v {
        Some(Json::Str(s)) => Json::Str(s.clone()),
        _ => fallback,
    }
}

/// `a ?? null`: a missing value and `null` both give `null`.
fn or_null(v: Option<&Json>) -> Json {
    v.cloned().unwrap_or(Json::Null)
}

/// `hashExecToolOutcome`: `None` falls through to the generic hash.
fn exec_shape(details: &Json, status: Option<&str>, text: &str) -> Option<Json> {
    let st = Json::Str(status?.to_string());
    Some(match status? {
        "running" => obj(vec![("status", st), ("tail", string_or(details.get("tail"), Json::Str(String::new())))]),
        "completed" | "failed" => {
            let exit = match details.get("exitCode") {
                Some(n @ Json::Num(_)) => n.clone(),
                _ => Json::Null,
            };
            let output = match details.get("aggregated").and_then(Json::as_str).map(js_trim) {
                Some(a) if !a.is_empty() => a.to_string(),
                _ => text.to_string(),
            };
            obj(vec![
                ("status", st),
                ("exitCode", exit),
                ("timedOut", Json::Bool(details.get("timedOut") == Some(&Json::Bool(true)))),
                ("output", Json::Str(output)),
            ])
        }
        "approval-pending" | "approval-unavailable" => obj(vec![
            ("status", st),
            ("reason", string_or(details.get("reason"), Json::Null)),
            ("host", string_or(details.get("host"), Json::Null)),
            ("command", string_or(details.get("command"), Json::Str(String::new()))),
            ("warningText", string_or(details.get("warningText"), Json::Str(String::new()))),
        ]),
        _ => return None,
    })
}

/// The `process` poll and log outcome shapes.
fn process_shape(params: &Json, details: &Json, text: &str) -> Option<Json> {
    let action = params.get("action").and_then(Json::as_str)?;
    let status = details.get("status").cloned().unwrap_or(Json::Undefined);
    let d = |k: &str| or_null(details.get(k));
    let text = Json::Str(text.to_string());
    let act = Json::Str(action.to_string());
    match action {
        "poll" => Some(obj(vec![
            ("action", act),
            ("status", status),
            ("exitCode", d("exitCode")),
            ("exitSignal", d("exitSignal")),
            ("aggregated", d("aggregated")),
            ("text", text),
        ])),
        "log" => Some(obj(vec![
            ("action", act),
            ("status", status),
            ("totalLines", d("totalLines")),
            ("totalChars", d("totalChars")),
            ("truncated", d("truncated")),
            ("exitCode", d("exitCode")),
            ("exitSignal", d("exitSignal")),
            ("text", text),
        ])),
        _ => None,
    }
}

fn is_send(tool: &str, params: &Json, send_tools: &[String]) -> bool {
    match tool {
        "sessions_send" => true,
        "message" => params.get("action").and_then(Json::as_str).is_some_and(|a| SEND_ACTIONS.contains(&a)),
        _ => send_tools.iter().any(|t| t == tool),
    }
}

/// Removes volatile ids anywhere in a send result (`stripVolatile`).
pub fn strip_volatile(v: &Json) -> Json {
    match v {
        Json::Arr(items) => Json::Arr(items.iter().map(strip_volatile).collect()),
        Json::Obj(members) => {
            let delivery = is_delivery_object(v);
            Json::Obj(
                members
                    .iter()
                    .filter(|(k, _)| !VOLATILE_KEYS.contains(&k.as_str()) && !(delivery && k == "id"))
                    .map(|(k, val)| (k.clone(), strip_volatile(val)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// A "message delivery object": string `id` and `text`, plus a string direction, senderId or
/// accountId, or a plain-object conversation.
fn is_delivery_object(v: &Json) -> bool {
    let s = |k: &str| matches!(v.get(k), Some(Json::Str(_)));
    s("id")
        && s("text")
        && (s("direction") || s("senderId") || s("accountId") || v.get("conversation").is_some_and(Json::is_object))
}

/// The `update_plan` shape (§1.4); non-objects pass through unchanged.
pub fn plan_shape(v: &Json) -> Json {
    if !v.is_object() {
        return v.clone();
    }
    let blank = |x: Option<&Json>| !x.and_then(Json::as_str).is_some_and(|s| !js_trim(s).is_empty());
    let plan: &[Json] = match v.get("plan") {
        Some(Json::Arr(items)) => items,
        _ => &[],
    };
    let statuses = plan
        .iter()
        .map(|e| string_or(if e.is_object() { e.get("status") } else { None }, Json::Null))
        .collect();
    let steps = plan.iter().map(|e| Json::Bool(e.is_object() && !blank(e.get("step")))).collect();
    obj(vec![
        ("planLength", Json::Num(plan.len() as f64)),
        ("statuses", Json::Arr(statuses)),
        ("stepPresence", Json::Arr(steps)),
        ("hasExplanation", Json::Bool(!blank(v.get("explanation")))),
    ])
}

/// `formatError`: strings as is, numbers and booleans in their JS text form, anything else in
/// canonical form.
pub fn format_error(err: &Json) -> String {
    match err {
        Json::Str(s) => s.clone(),
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
