//! Gemini CLI's hook protocol (0.61.0): its own event names, `decision:"deny"` (Claude's
//! `hookSpecificOutput.permissionDecision` is ignored), no tool-call id.
//!
//! | Gemini CLI event | guard call | answer |
//! |---|---|---|
//! | `BeforeTool` | check | deny: `decision:"deny"` + the policy's message as `reason`; stop: the same with `continue:false` + `stopReason` (the tool does not run, the session ends) |
//! | `AfterTool` | outcome: `tool_response.error` thrown, else `returnDisplay` returned (`llmContent` carries a process-group id that changes every call) | a warning: `hookSpecificOutput.additionalContext` (once); the post-compaction abort: `continue:false` |
//! | `SessionEnd` with `reason` `clear` or `logout` | end session | `{}` |
//! | `SessionStart` | none: the policy is loaded (compiled into the cache the first time) | `{}` |
//! | anything else | none | `{}` |
//!
//! `PreCompress` is not mapped: 0.61.0 fires it (`trigger:"auto"`) before every turn whether or
//! not it compresses, so it does not say that a compaction happened, and arming the
//! post-compaction guard on every turn would change the policy's decisions.

use serde_json::{json, Value};

use super::event::{Answer, Call, Event, Hook, Outcome, Point, Reply};

/// Reads one Gemini CLI hook event.
pub fn read(input: &Value) -> Result<(Hook, Point), String> {
    let (session, name) = super::event::session_and_name(input)?;
    let (event, point) = match name {
        "BeforeTool" => (Event::Check(Call::from_input(input)?), Point::BeforeTool),
        "AfterTool" => {
            let response = input.get("tool_response").unwrap_or(&Value::Null);
            let outcome = match response.get("error").filter(|e| !e.is_null()) {
                Some(error) => Outcome::Threw(error.to_string()),
                None => {
                    let shown = response.get("returnDisplay").or_else(|| response.get("llmContent"));
                    Outcome::Returned(shown.unwrap_or(response).to_string())
                }
            };
            (Event::Outcome(Call::from_input(input)?, outcome), Point::AfterTool)
        }
        "SessionStart" => (Event::Warm, Point::Other),
        "SessionEnd" => (super::event::end_event(input), Point::Other),
        _ => (Event::Ignore, Point::Other),
    };
    Ok((Hook { session, event }, point))
}

/// Renders a reply for the hook point `name` (the event's own name) is at.
pub fn render(point: Point, name: &str, reply: &Reply) -> Answer {
    match (point, reply) {
        (Point::BeforeTool, Reply::Deny(reason)) => Answer::json(json!({"decision": "deny", "reason": reason})),
        (Point::BeforeTool, Reply::Stop(reason)) => {
            Answer::json(json!({"decision": "deny", "reason": reason, "continue": false, "stopReason": reason}))
        }
        (Point::AfterTool, Reply::Context(text)) => {
            Answer::json(json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}))
        }
        (Point::AfterTool, Reply::Stop(reason)) => Answer::json(json!({"continue": false, "stopReason": reason,
            "hookSpecificOutput": {"hookEventName": name, "additionalContext": reason}})),
        (Point::BeforeTool, Reply::Failed { reason, closed: true }) => Answer {
            stderr: Some(reason.clone()),
            ..Answer::json(json!({"decision": "deny", "reason": super::event::fail_closed_text(reason)}))
        },
        (_, Reply::Failed { reason, .. }) => Answer { stderr: Some(reason.clone()), ..Answer::empty() },
        _ => Answer::empty(),
    }
}
