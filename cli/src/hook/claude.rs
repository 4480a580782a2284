//! Claude Code's hook protocol (2.1.332): one JSON event on stdin, one JSON answer on stdout.
//!
//! | Claude Code event | guard call | answer |
//! |---|---|---|
//! | `PreToolUse` | check | deny: `hookSpecificOutput.permissionDecision:"deny"` + the policy's message as `permissionDecisionReason`; stop: the same with `continue:false` + `stopReason` (the session ends, the tool does not run) |
//! | `PostToolUse` | outcome (`tool_response`) | a warning: `hookSpecificOutput.additionalContext` (once); the post-compaction abort: `continue:false` |
//! | `PostToolUseFailure` | outcome (`error`, thrown) | as `PostToolUse` |
//! | `PostCompact` | compaction retried | `{}` |
//! | `SessionEnd` with `reason` `clear` or `logout` | end session | `{}` |
//! | `SessionStart` | none: the policy is loaded (compiled into the cache the first time) | `{}` |
//! | anything else (`PreCompact`, prompts, a `SessionEnd` that `--resume` can continue) | none | `{}` |
//!
//! A failure answers `{}` (fail open) or the deny form (fail closed, before a tool); its reason
//! goes to stderr.

use serde_json::{json, Value};

use super::event::{Answer, Call, Event, Hook, Outcome, Point, Reply};

/// Reads one Claude Code hook event.
pub fn read(input: &Value) -> Result<(Hook, Point), String> {
    let (session, name) = super::event::session_and_name(input)?;
    let (event, point) = match name {
        "PreToolUse" => (Event::Check(Call::from_input(input)?), Point::BeforeTool),
        "PostToolUse" => {
            let response = input.get("tool_response").cloned().unwrap_or(Value::Null);
            (Event::Outcome(Call::from_input(input)?, Outcome::Returned(response.to_string())), Point::AfterTool)
        }
        "PostToolUseFailure" => {
            let error = input.get("error").cloned().unwrap_or(Value::Null);
            (Event::Outcome(Call::from_input(input)?, Outcome::Threw(error.to_string())), Point::AfterTool)
        }
        "PostCompact" => (Event::Compaction, Point::Other),
        "SessionStart" => (Event::Warm, Point::Other),
        "SessionEnd" => (super::event::end_event(input), Point::Other),
        _ => (Event::Ignore, Point::Other),
    };
    Ok((Hook { session, event }, point))
}

/// Renders a reply for the hook point `name` (the event's own name) is at.
pub fn render(point: Point, name: &str, reply: &Reply) -> Answer {
    let deny = |reason: &str| {
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": reason}})
    };
    match (point, reply) {
        (Point::BeforeTool, Reply::Deny(reason)) => Answer::json(deny(reason)),
        (Point::BeforeTool, Reply::Stop(reason)) => {
            let mut answer = deny(reason);
            answer["continue"] = json!(false);
            answer["stopReason"] = json!(reason);
            Answer::json(answer)
        }
        (Point::AfterTool, Reply::Context(text)) => {
            Answer::json(json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}))
        }
        (Point::AfterTool, Reply::Stop(reason)) => Answer::json(json!({"continue": false, "stopReason": reason,
            "hookSpecificOutput": {"hookEventName": name, "additionalContext": reason}})),
        (Point::BeforeTool, Reply::Failed { reason, closed: true }) => {
            Answer { stderr: Some(reason.clone()), ..Answer::json(deny(&super::event::fail_closed_text(reason))) }
        }
        (_, Reply::Failed { reason, .. }) => Answer { stderr: Some(reason.clone()), ..Answer::empty() },
        _ => Answer::empty(),
    }
}
