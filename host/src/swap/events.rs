//! Applying logged calls in batches: most typed calls have a trace-event form, and one
//! `apply-events` call with a thousand events costs about 60 % of a thousand typed calls.
//!
//! Why it matters: a swap copies the calls that arrive while it copies. If it applied them no
//! faster than a busy gateway makes them, the copy would never catch up, and the calls left for
//! the lock would be as many as arrived during the snapshot's import. Batches make the copy
//! faster than the traffic, so each round is shorter than the one before.
//!
//! The event form of a call is the trace format's (docs/spec/trace-format.md): the same core
//! function runs either way. A call without one (`end-session`, a timestamp the trace format
//! cannot carry, a very large input) is applied as a typed call, and so is every call of a batch
//! that the policy refuses: `apply-events` checks a whole batch before it applies any of it.

use std::fmt::Write as _;
use std::sync::Arc;

use super::log::Call;
use crate::error::Result;
use crate::gateway::Gateway;
use crate::{GroupThread, ToolCall, ToolOutcome};

/// Events per batch.
const BATCH_EVENTS: usize = 1_000;
/// A call whose text is larger than this goes alone, as a typed call.
const MAX_EVENT_TEXT: usize = 64 << 10;
/// The largest integer a trace timestamp can hold (2^53 − 1: JSON numbers are doubles).
const MAX_SAFE_INT: i64 = (1 << 53) - 1;

/// Applies `calls` to `gateway` in order, in as few guest calls as it can.
pub(super) fn apply_all(calls: &[Arc<Call>], gateway: &mut Gateway) -> Result<()> {
    let mut batch = String::new();
    let mut batched: Vec<&Call> = Vec::new();
    for call in calls {
        if batched.len() >= BATCH_EVENTS {
            flush(&mut batch, &mut batched, gateway)?;
        }
        let start = batch.len();
        if write_event(call, &mut batch) {
            batch.push('\n');
            batched.push(call);
        } else {
            batch.truncate(start);
            flush(&mut batch, &mut batched, gateway)?;
            call.apply(gateway)?;
        }
    }
    flush(&mut batch, &mut batched, gateway)
}

/// Applies the batch; if the policy refuses it (which applies none of it), its calls one by one.
fn flush(batch: &mut String, batched: &mut Vec<&Call>, gateway: &mut Gateway) -> Result<()> {
    if batched.is_empty() {
        return Ok(());
    }
    match gateway.apply_events(batch, 1) {
        Err(e) if e.breaks_instance() => return Err(e),
        Ok(_) => {}
        Err(_) => {
            for call in batched.iter() {
                call.apply(gateway)?;
            }
        }
    }
    batch.clear();
    batched.clear();
    Ok(())
}

/// Writes the trace event of `call` (without the newline); false if it has none.
fn write_event(call: &Call, out: &mut String) -> bool {
    match call {
        Call::CheckTool(c) => tool_event(out, "tool_call", c, None),
        Call::Outcome(c, ToolOutcome::Returned(o)) => tool_event(out, "tool_result", c, Some(("result", o))),
        Call::Outcome(c, ToolOutcome::Threw(o)) => tool_event(out, "tool_result", c, Some(("error", o))),
        Call::Compaction { session, run, agent } => {
            out.push_str("{\"kind\":\"compaction\"");
            field(out, "session", session);
            opt_field(out, "run", run);
            opt_field(out, "agent", agent);
            out.push('}');
            true
        }
        Call::Bot(m) if (0..=MAX_SAFE_INT).contains(&m.ts_ms) => {
            out.push_str("{\"kind\":\"bot_message\"");
            field(out, "channel", &m.channel);
            field(out, "account", &m.account);
            field(out, "conversation", &m.conversation);
            opt_field(out, "room", &m.room);
            field(out, "sender", &m.sender);
            field(out, "receiver", &m.receiver);
            let _ = write!(out, ",\"ts_ms\":{}", m.ts_ms);
            opt_field(out, "event_id", &m.event_id);
            out.push('}');
            true
        }
        Call::GroupStart { thread: t, peer, text } => {
            thread(out, "group_message", t);
            field(out, "peer", peer);
            field(out, "text", text);
            out.push('}');
            true
        }
        Call::GroupFinish { thread: t, replies } => {
            thread(out, "group_replies", t);
            out.push_str(",\"replies\":[");
            for (i, r) in replies.iter().enumerate() {
                out.push_str(if i == 0 { "{\"agent\":" } else { ",{\"agent\":" });
                string(out, &r.agent);
                out.push_str(",\"reply\":");
                match &r.reply {
                    Some(text) => string(out, text),
                    None => out.push_str("null"),
                }
                out.push('}');
            }
            out.push_str("]}");
            true
        }
        Call::GroupCancel(t) => {
            thread(out, "group_cancel", t);
            out.push('}');
            true
        }
        Call::Bot(_) | Call::EndSession(_) | Call::Events { .. } => false,
    }
}

/// A `tool_call` / `tool_result` event. The JSON texts go in as they are, with line breaks (which
/// valid JSON has only between tokens) turned into spaces so that the event stays on one line.
fn tool_event(out: &mut String, kind: &str, c: &ToolCall, outcome: Option<(&str, &String)>) -> bool {
    let size = c.args_json.len() + outcome.map_or(0, |(_, o)| o.len());
    if size > MAX_EVENT_TEXT {
        return false;
    }
    let _ = write!(out, "{{\"kind\":\"{kind}\"");
    field(out, "session", &c.session);
    field(out, "tool", &c.tool);
    raw_field(out, "args", &c.args_json);
    opt_field(out, "run", &c.run);
    opt_field(out, "agent", &c.agent);
    opt_field(out, "call_id", &c.call_id);
    if let Some((name, text)) = outcome {
        raw_field(out, name, text);
    }
    out.push('}');
    true
}

fn thread(out: &mut String, kind: &str, t: &GroupThread) {
    let _ = write!(out, "{{\"kind\":\"{kind}\"");
    field(out, "channel", &t.channel);
    field(out, "account", &t.account);
    field(out, "conversation", &t.conversation);
    opt_field(out, "thread", &t.thread);
    field(out, "root", &t.root);
}

fn field(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, ",\"{name}\":");
    string(out, value);
}

fn opt_field(out: &mut String, name: &str, value: &Option<String>) {
    if let Some(v) = value {
        field(out, name, v);
    }
}

fn raw_field(out: &mut String, name: &str, json: &str) {
    let _ = write!(out, ",\"{name}\":");
    out.extend(json.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }));
}

/// A JSON string literal (serde_json's escaping).
fn string(out: &mut String, s: &str) {
    let _ = write!(out, "{}", serde_json::Value::from(s));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BotMessage, GroupReply};

    fn event(call: Call) -> Option<String> {
        let mut out = String::new();
        write_event(&call, &mut out).then_some(out)
    }

    fn tool_call() -> ToolCall {
        ToolCall {
            session: "s\"1\n".into(),
            tool: "read".into(),
            args_json: "{\"path\":\n\"/a\"}".into(),
            run: Some("r".into()),
            agent: None,
            call_id: Some("c\u{1}".into()),
        }
    }

    #[test]
    fn calls_become_one_line_trace_events() {
        let cases: Vec<(Call, Option<&str>)> = vec![
            (
                Call::CheckTool(tool_call()),
                Some(
                    r#"{"kind":"tool_call","session":"s\"1\n","tool":"read","args":{"path": "/a"},"run":"r","call_id":"c\u0001"}"#,
                ),
            ),
            (
                Call::Outcome(tool_call(), ToolOutcome::Threw("\"boom\"".into())),
                Some(
                    r#"{"kind":"tool_result","session":"s\"1\n","tool":"read","args":{"path": "/a"},"run":"r","call_id":"c\u0001","error":"boom"}"#,
                ),
            ),
            (
                Call::Compaction { session: "s".into(), run: None, agent: Some("a".into()) },
                Some(r#"{"kind":"compaction","session":"s","agent":"a"}"#),
            ),
            (Call::EndSession("s".into()), None),
            (Call::Events { events: "{}".into(), first_line: 1 }, None),
            (
                Call::GroupFinish {
                    thread: GroupThread {
                        channel: "d".into(),
                        account: "a".into(),
                        conversation: "c".into(),
                        thread: None,
                        root: "m\\1".into(),
                    },
                    replies: vec![
                        GroupReply { agent: "x".into(), reply: None },
                        GroupReply { agent: "y".into(), reply: Some("hi".into()) },
                    ],
                },
                Some(
                    r#"{"kind":"group_replies","channel":"d","account":"a","conversation":"c","root":"m\\1","replies":[{"agent":"x","reply":null},{"agent":"y","reply":"hi"}]}"#,
                ),
            ),
        ];
        for (call, want) in cases {
            let got = event(call.clone());
            assert_eq!(got.as_deref(), want, "{call:?}");
        }
    }

    #[test]
    fn a_timestamp_the_trace_cannot_carry_makes_a_typed_call() {
        let bot = |ts_ms| {
            Call::Bot(BotMessage {
                channel: "d".into(),
                account: "a".into(),
                conversation: "c".into(),
                room: None,
                sender: "x".into(),
                receiver: "y".into(),
                ts_ms,
                event_id: Some("e".into()),
            })
        };
        assert_eq!(
            event(bot(5)).as_deref(),
            Some(
                r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":5,"event_id":"e"}"#
            )
        );
        assert_eq!(event(bot(-1)), None);
        assert_eq!(event(bot(1 << 53)), None);
    }
}
