//! GitHub Copilot CLI's command hooks (1.0.102): one JSON object on stdin, one on stdout. The
//! object does not name its event, so the hook command does: `loopguard hook copilot preToolUse`.
//!
//! | Copilot CLI event | guard call | answer |
//! |---|---|---|
//! | `preToolUse` | check | deny: `permissionDecision:"deny"` + the policy's message as `permissionDecisionReason` (the model reads `Denied by preToolUse hook: <message>`); a stop is a deny too: no hook answer ends a Copilot run, so every later call of the session is denied with the stop's text |
//! | `postToolUse` | outcome (`toolResult`, see below) | a warning: `additionalContext` (Copilot appends it to the call's result, once) |
//! | `postToolUseFailure` | outcome (`error`, thrown) | as `postToolUse` |
//! | `sessionStart` | none: the policy is loaded (compiled into the cache the first time) | `{}` |
//! | anything else (`sessionEnd`: `--resume` can continue a session) | none | `{}` |
//!
//! Copilot passes no call id: a pending warning pairs with its outcome by the tool and its
//! arguments, which `postToolUse` repeats. A denied call gets no `postToolUse`.
//!
//! The shell tool's result ends in a footer of Copilot's own, `<shellId: N completed with exit
//! code X>`, whose N changes on every call: read as it is, no two outcomes would ever be the
//! same. The footer is read instead of compared: the output before it is the result, and a
//! non-zero exit code makes the call one that failed (`Exit code X` and the output), as Claude
//! Code reports a failed command.

use loopguard_transcripts::copilot_shell_footer as shell_footer;
use serde_json::{json, Value};

use super::event::{Answer, Call, Event, Hook, Outcome, Point, Reply};

/// Reads one Copilot CLI hook event; `name` is the event the hook command was given.
pub fn read(input: &Value, name: &str) -> Result<(Hook, Point), String> {
    let session = input.get("sessionId").and_then(Value::as_str).filter(|s| !s.is_empty());
    let session = session.ok_or("the event has no sessionId")?.to_string();
    let (event, point) = match name {
        "preToolUse" => (Event::Check(call(input)?), Point::BeforeTool),
        "postToolUse" => (Event::Outcome(call(input)?, outcome(input.get("toolResult"))), Point::AfterTool),
        "postToolUseFailure" => {
            let error = input.get("error").or_else(|| input.get("toolResult")).cloned().unwrap_or(Value::Null);
            (Event::Outcome(call(input)?, Outcome::Threw(error.to_string())), Point::AfterTool)
        }
        "sessionStart" => (Event::Warm, Point::Other),
        "" => {
            return Err(
                "copilot's events do not name themselves: give the event, `loopguard hook copilot preToolUse`".into()
            )
        }
        _ => (Event::Ignore, Point::Other),
    };
    Ok((Hook { session, event }, point))
}

/// `toolName` and `toolArgs` (an object, or its JSON text in some Copilot versions).
fn call(input: &Value) -> Result<Call, String> {
    let tool = input.get("toolName").and_then(Value::as_str).ok_or("the event has no toolName")?;
    let args = match input.get("toolArgs") {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
        Some(args) => args.clone(),
        None => Value::Null,
    };
    Ok(Call { tool: tool.to_string(), args_json: args.to_string(), call_id: None })
}

/// `toolResult: {resultType, textResultForLlm}`: what the model read, the shell's footer read.
fn outcome(result: Option<&Value>) -> Outcome {
    let Some(result) = result else { return Outcome::Returned(Value::Null.to_string()) };
    let text = result.get("textResultForLlm").and_then(Value::as_str);
    let succeeded = result.get("resultType").and_then(Value::as_str).is_none_or(|t| t == "success");
    let Some(text) = text else { return Outcome::Returned(result.to_string()) };
    let (output, code) = shell_footer(text);
    match (succeeded, code) {
        (true, None | Some(0)) => Outcome::Returned(Value::from(output).to_string()),
        (_, Some(code)) if code != 0 => {
            let error = if output.trim().is_empty() {
                format!("Exit code {code}")
            } else {
                format!("Exit code {code}\n{output}")
            };
            Outcome::Threw(Value::from(error).to_string())
        }
        _ => Outcome::Threw(Value::from(output).to_string()),
    }
}

/// Renders a reply at the hook point the event is at.
pub fn render(point: Point, reply: &Reply) -> Answer {
    let deny = |reason: &str| json!({"permissionDecision": "deny", "permissionDecisionReason": reason});
    match (point, reply) {
        (Point::BeforeTool, Reply::Deny(reason) | Reply::Stop(reason)) => Answer::json(deny(reason)),
        (Point::AfterTool, Reply::Context(text) | Reply::Stop(text)) => {
            Answer::json(json!({"additionalContext": text}))
        }
        (Point::BeforeTool, Reply::Failed { reason, closed: true }) => {
            Answer { stderr: Some(reason.clone()), ..Answer::json(deny(&super::event::fail_closed_text(reason))) }
        }
        (_, Reply::Failed { reason, .. }) => Answer { stderr: Some(reason.clone()), ..Answer::empty() },
        _ => Answer::empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(text: &str, result_type: &str) -> Outcome {
        let input = json!({"sessionId": "s", "toolName": "bash", "toolArgs": {"command": "x"},
            "toolResult": {"resultType": result_type, "textResultForLlm": text}});
        match read(&input, "postToolUse").unwrap().0.event {
            Event::Outcome(_, outcome) => outcome,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_shell_footer_is_read_not_compared() {
        let a = post("hi\n<shellId: 0 completed with exit code 0>", "success");
        let b = post("hi\n<shellId: 7 completed with exit code 0>", "success");
        assert_eq!(a, Outcome::Returned("\"hi\"".into()));
        assert_eq!(a, b, "the same output is the same outcome, whatever the shell id");
        assert_eq!(
            post("\n<shellId: 1 completed with exit code 1>", "success"),
            Outcome::Threw("\"Exit code 1\"".into())
        );
        assert_eq!(
            post("no\n<shellId: 2 completed with exit code 2>", "success"),
            Outcome::Threw("\"Exit code 2\\nno\"".into())
        );
        assert_eq!(post("file text", "success"), Outcome::Returned("\"file text\"".into()));
        assert_eq!(post("not found", "failure"), Outcome::Threw("\"not found\"".into()));
    }

    #[test]
    fn events_read_as_the_guard_sees_them() {
        let pre = json!({"sessionId": "s1", "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"});
        let (hook, point) = read(&pre, "preToolUse").unwrap();
        assert_eq!(point, Point::BeforeTool);
        assert_eq!(
            hook.event,
            Event::Check(Call { tool: "bash".into(), args_json: "{\"command\":\"ls\"}".into(), call_id: None })
        );
        assert_eq!(read(&pre, "sessionEnd").unwrap().0.event, Event::Ignore);
        assert_eq!(read(&pre, "sessionStart").unwrap().0.event, Event::Warm);
        assert!(read(&pre, "").unwrap_err().contains("loopguard hook copilot preToolUse"));
        assert!(read(&json!({"toolName": "bash"}), "preToolUse").unwrap_err().contains("sessionId"));
    }

    #[test]
    fn a_deny_and_a_note_in_copilots_words() {
        let deny = render(Point::BeforeTool, &Reply::Stop("m".into()));
        assert_eq!(deny.stdout, Some(json!({"permissionDecision": "deny", "permissionDecisionReason": "m"})));
        let note = render(Point::AfterTool, &Reply::Context("n".into()));
        assert_eq!(note.stdout, Some(json!({"additionalContext": "n"})));
    }
}
