//! Codex CLI's hook protocol (0.171.0): Claude Code's event names and input fields, but no way
//! to end a session from a hook (`continue:false` in `PreToolUse` is rejected as invalid output,
//! which Codex treats as no answer, so the tool would run). A stop is therefore rendered as a
//! deny: Codex keeps denying every further call with the policy's message.
//!
//! | Codex event | guard call | answer |
//! |---|---|---|
//! | `PreToolUse` | check | deny (and stop): `hookSpecificOutput.permissionDecision:"deny"` + the policy's message |
//! | `PostToolUse` | outcome (`tool_response`, a string) | a warning or the post-compaction abort: `hookSpecificOutput.additionalContext` |
//! | `PostToolUseFailure` | outcome (`error`, thrown) | as `PostToolUse` |
//! | `PostCompact` | compaction retried | `{}` |
//! | `SessionEnd` with `reason` `clear` or `logout` | end session | `{}` |
//! | `SessionStart` | none: the policy is loaded (compiled into the cache the first time) | `{}` |
//! | anything else | none | `{}` |

use serde_json::json;

use super::event::{Answer, Point, Reply};

pub use super::claude::read;

/// Renders a reply for the hook point `name` (the event's own name) is at.
pub fn render(point: Point, name: &str, reply: &Reply) -> Answer {
    let deny = |reason: &str| {
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": reason}})
    };
    match (point, reply) {
        (Point::BeforeTool, Reply::Deny(reason) | Reply::Stop(reason)) => Answer::json(deny(reason)),
        (Point::AfterTool, Reply::Context(text) | Reply::Stop(text)) => {
            Answer::json(json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}))
        }
        (Point::BeforeTool, Reply::Failed { reason, closed: true }) => {
            Answer { stderr: Some(reason.clone()), ..Answer::json(deny(&super::event::fail_closed_text(reason))) }
        }
        (_, Reply::Failed { reason, .. }) => Answer { stderr: Some(reason.clone()), ..Answer::empty() },
        _ => Answer::empty(),
    }
}
