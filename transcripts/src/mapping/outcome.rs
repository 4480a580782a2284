//! The guard's view of one stored tool result: which outcome it recorded, if any, and what the
//! gateway itself did (completed, warned, blocked, failed).
//!
//! Separate from the record walk in `mapping/mod.rs` because this is where the transcript and
//! the guard disagree, and each disagreement needs its evidence beside the code that undoes it.
//! The transcript stores what the *model* saw; the guard recorded the outcome before any of the
//! following was added (evidence from `dist/agent-tools.before-tool-call-*.mjs`,
//! `dist/agent-core-*.mjs`, `dist/internal-hooks-*.mjs`):
//!
//! 1. **Loop warnings.** `wrapToolWithBeforeToolCallHook` calls `recordLoopOutcome({result})`
//!    with the tool's own result, and only then returns `appendToolLoopWarning(result, …)`,
//!    which appends a `[System note: Tool-loop warning after N repeated calls. …]` text part
//!    ("Call only after raw outcome recording: feedback must not change no-progress hashes").
//!    That last part is dropped from `content`, so the outcome hashes as the guard hashed it.
//! 2. **Blocked calls.** A veto (`outcome.kind === "veto"`: `deniedReason` `tool-loop`,
//!    `plugin-before-tool-call`, or `client-voice-confirmation`) goes through `blockToolCall`,
//!    which builds `{content:[{type:"text", text:reason}], details:{status:"blocked",
//!    deniedReason, reason}}` and calls `recordLoopOutcome({result: blockedResult})`: a
//!    **result**, although the transcript says `isError:true`. So these map to `result` with the
//!    stored `{content, details}`. For `plugin-before-tool-call` the stored content is exactly
//!    the block reason, so the hash matches; for `tool-loop` the stored text has a recovery
//!    paragraph and `details.intervention`, but the guard's veto rule gives such outcomes no
//!    hash at all, so nothing depends on the text. Other blocked results (`tool-admission`) and
//!    `status:"skipped"` (`steering`) never reached the wrapper, and synthetic results inserted
//!    by transcript repair were never tool outcomes: no `tool_result` is produced for them.
//! 3. **Thrown errors.** The wrapper's `catch` calls `recordLoopOutcome({error: err})`, and
//!    agent-core stores `createErrorToolResult(coerceErrorMessage(err))`: one text part holding
//!    `err.message`, which is what the guard's `formatError` hashes. So `isError:true` (not
//!    blocked) maps to `error` = the text parts joined with `\n`.
//!
//! Everything else with `isError:false` maps to `result: {content, details}`. What cannot be
//! undone: an `after_tool_call`/`tool_result_persist` hook that rewrote the stored result, and
//! a plugin's non-veto refusal (it throws, the guard records no outcome, and the transcript
//! holds an ordinary error result).

use serde_json::{Map, Value};

use crate::event::{Outcome, Recorded};

/// The warning OpenClaw appends after recording (`appendToolLoopWarning`).
fn loop_warning_count(part: &Value) -> Option<u64> {
    let obj = part.as_object()?;
    if obj.get("type")?.as_str()? != "text" {
        return None;
    }
    let text = obj.get("text")?.as_str()?;
    let rest = text.strip_prefix("[System note: Tool-loop warning after ")?;
    let (n, tail) = rest.split_once(' ')?;
    (tail == "repeated calls. Change your approach or stop if you are not making progress.]")
        .then(|| n.parse().ok())
        .flatten()
}

fn text_of(content: &Option<Value>) -> String {
    let Some(Value::Array(parts)) = content else { return String::new() };
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| {
            let o = p.as_object()?;
            o.get("type")?.as_str()?;
            o.get("text")?.as_str()
        })
        .collect();
    texts.join("\n")
}

/// The guard's view of a stored tool result: the outcome to replay (or none) and what the
/// gateway did. See the module docs for the evidence.
pub(crate) fn classify(content: Option<Value>, details: Option<Value>, is_error: bool) -> (Option<Outcome>, Recorded) {
    let status = details.as_ref().and_then(|d| d.get("status")).and_then(Value::as_str).map(str::to_string);
    let denied = details.as_ref().and_then(|d| d.get("deniedReason")).and_then(Value::as_str).map(str::to_string);
    let synthetic = is_error
        && (details.as_ref().and_then(|d| d.get("openclawSyntheticMissingToolResult")) == Some(&Value::Bool(true))
            || text_of(&content).split('\n').any(|t| t == SYNTHETIC_TEXT));
    if synthetic {
        return (None, Recorded::NotRecorded { reason: "synthetic-missing-result".into() });
    }
    match (status.as_deref(), denied.as_deref()) {
        (Some("blocked"), Some(reason @ ("tool-loop" | "plugin-before-tool-call" | "client-voice-confirmation"))) => {
            let (detector, count) = block_detector(reason, details.as_ref(), &content);
            let recorded = Recorded::Blocked { denied_reason: reason.to_string(), detector, count };
            (Some(Outcome::Result(result_value(content, details))), recorded)
        }
        (Some("blocked"), reason) | (Some("skipped"), reason) => {
            let reason = reason.unwrap_or(status.as_deref().unwrap_or("blocked")).to_string();
            (None, Recorded::NotRecorded { reason })
        }
        _ if is_error => (Some(Outcome::Error(Value::String(text_of(&content)))), Recorded::Failed),
        _ => {
            let mut content = content;
            let mut loop_warning = None;
            if let Some(Value::Array(parts)) = content.as_mut() {
                if let Some(n) = parts.last().and_then(loop_warning_count) {
                    parts.pop();
                    loop_warning = Some(n);
                }
            }
            (Some(Outcome::Result(result_value(content, details))), Recorded::Completed { loop_warning })
        }
    }
}

const SYNTHETIC_TEXT: &str =
    "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.";

fn result_value(content: Option<Value>, details: Option<Value>) -> Value {
    let mut map = Map::new();
    map.insert("content".into(), content.unwrap_or_else(|| Value::Array(Vec::new())));
    if let Some(d) = details {
        map.insert("details".into(), d);
    }
    Value::Object(map)
}

/// The detector of a gateway block: `details.intervention` (batch admission), else read off the
/// reason text, which is the detector's message (docs/spec/tool-loop.md §3).
fn block_detector(reason: &str, details: Option<&Value>, content: &Option<Value>) -> (Option<String>, Option<u64>) {
    if reason != "tool-loop" {
        return (None, None);
    }
    if let Some(i) = details.and_then(|d| d.get("intervention")) {
        let detector = i.get("detector").and_then(Value::as_str).map(str::to_string);
        let count = i.get("count").and_then(Value::as_u64);
        if detector.is_some() {
            return (detector, count);
        }
    }
    let text = details
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| text_of(content));
    detector_from_message(&text)
}

/// Which detector wrote a `CRITICAL:` message, and its count.
pub(crate) fn detector_from_message(text: &str) -> (Option<String>, Option<u64>) {
    let patterns: [(&str, &str, &str); 5] = [
        ("unknown_tool_repeat", "CRITICAL: attempted unavailable tool ", " times. Stop retrying"),
        (
            "global_circuit_breaker",
            " has repeated identical no-progress outcomes ",
            " times. Session execution blocked by global",
        ),
        (
            "known_poll_no_progress",
            " with identical arguments and no progress ",
            " times. This appears to be a stuck polling",
        ),
        ("ping_pong", "CRITICAL: You are alternating between repeated tool-call patterns (", " consecutive calls)"),
        (
            "generic_repeat",
            " with identical arguments and identical outcomes ",
            " times. Session execution blocked to prevent runaway",
        ),
    ];
    for (detector, before, after) in patterns {
        if let Some(i) = text.find(before) {
            let tail = &text[i + before.len()..];
            if let Some(j) = tail.find(after) {
                let number = tail[..j].rsplit(' ').next().unwrap_or("");
                return (Some(detector.to_string()), number.parse().ok());
            }
        }
    }
    // 2026.9.6 also words the generic block "Called X with identical outcomes N times".
    if let Some(i) = text.find(" with identical outcomes ") {
        let tail = &text[i + " with identical outcomes ".len()..];
        let count = tail.split(' ').next().and_then(|n| n.parse().ok());
        return (Some("generic_repeat".into()), count);
    }
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detectors_are_read_off_block_messages() {
        let m = "CRITICAL: Called exec with identical arguments and identical outcomes 20 times. Session execution blocked to prevent runaway loops.";
        assert_eq!(detector_from_message(m), (Some("generic_repeat".into()), Some(20)));
        let m = "CRITICAL: Called exec with identical outcomes 20 times. Session execution blocked to prevent runaway loops.\n\nDo not repeat";
        assert_eq!(detector_from_message(m), (Some("generic_repeat".into()), Some(20)));
        let m = "CRITICAL: You are alternating between repeated tool-call patterns (21 consecutive calls) with no progress.";
        assert_eq!(detector_from_message(m), (Some("ping_pong".into()), Some(21)));
        let m = "CRITICAL: read has repeated identical no-progress outcomes 30 times. Session execution blocked by global circuit breaker to prevent runaway loops.";
        assert_eq!(detector_from_message(m), (Some("global_circuit_breaker".into()), Some(30)));
        assert_eq!(detector_from_message("nope"), (None, None));
    }

    #[test]
    fn the_appended_loop_warning_is_not_part_of_the_outcome() {
        let content = json!([{"type":"text","text":"loop"},{"type":"text","text":"[System note: Tool-loop warning after 10 repeated calls. Change your approach or stop if you are not making progress.]"}]);
        let (o, r) = classify(Some(content), Some(json!({"status":"completed"})), false);
        assert_eq!(
            o,
            Some(Outcome::Result(json!({"content":[{"type":"text","text":"loop"}],"details":{"status":"completed"}})))
        );
        assert_eq!(r, Recorded::Completed { loop_warning: Some(10) });
    }

    #[test]
    fn vetoed_calls_are_results_and_thrown_errors_are_errors() {
        let details = json!({"status":"blocked","deniedReason":"plugin-before-tool-call","reason":"no"});
        let content = json!([{"type":"text","text":"no"}]);
        let (o, r) = classify(Some(content.clone()), Some(details.clone()), true);
        assert_eq!(o, Some(Outcome::Result(json!({"content":content,"details":details}))));
        assert!(matches!(r, Recorded::Blocked { ref denied_reason, .. } if denied_reason == "plugin-before-tool-call"));
        let (o, r) = classify(Some(json!([{"type":"text","text":"ENOENT: x"}])), Some(json!({})), true);
        assert_eq!(o, Some(Outcome::Error(json!("ENOENT: x"))));
        assert_eq!(r, Recorded::Failed);
        let (o, r) = classify(
            Some(json!([{"type":"text","text":"Skipped"}])),
            Some(json!({"status":"skipped","deniedReason":"steering"})),
            true,
        );
        assert_eq!(o, None);
        assert_eq!(r, Recorded::NotRecorded { reason: "steering".into() });
    }
}
