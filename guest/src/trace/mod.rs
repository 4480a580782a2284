//! Trace events: the replay input of docs/spec/trace-format.md.
//!
//! Each line is checked field by field so that a bad event is an error naming its line and
//! field, never a silently dropped event. Events borrow their strings from the parsed line.

use crate::error::PolicyError;
use crate::group::Reply;
use crate::json::Json;
use crate::tool_loop::{Args, Outcome, ToolCall};

mod line;
use line::Field as F;
pub use line::{Line, Lines};

/// Largest integer a JSON number carries exactly (2^53 − 1).
const MAX_SAFE_INT: f64 = 9_007_199_254_740_991.0;

/// One trace event.
#[derive(Debug)]
pub enum Event<'a> {
    /// `tool_call`.
    ToolCall(ToolCall<'a>),
    /// `tool_result`.
    ToolResult(ToolCall<'a>, Outcome<'a>),
    /// `compaction`.
    Compaction {
        /// Session.
        session: &'a str,
        /// Run, as given.
        run: Option<&'a str>,
        /// Agent.
        agent: Option<&'a str>,
    },
    /// `bot_message`.
    BotMessage(BotMessage<'a>),
    /// `group_message`.
    GroupMessage(GroupMessage<'a>),
    /// `group_replies`.
    GroupReplies(GroupThread<'a>, Vec<Reply>),
    /// `group_cancel`.
    GroupCancel(GroupThread<'a>),
}

impl Event<'_> {
    /// The event's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::ToolCall(_) => "tool_call",
            Event::ToolResult(..) => "tool_result",
            Event::Compaction { .. } => "compaction",
            Event::BotMessage(_) => "bot_message",
            Event::GroupMessage(_) => "group_message",
            Event::GroupReplies(..) => "group_replies",
            Event::GroupCancel(_) => "group_cancel",
        }
    }
}

/// A `bot_message` event.
#[derive(Debug)]
pub struct BotMessage<'a> {
    /// Channel (discord, slack, …).
    pub channel: &'a str,
    /// Account id (the pair guard's scope).
    pub account: &'a str,
    /// Conversation id.
    pub conversation: &'a str,
    /// Room key for per-conversation overrides (defaults to `conversation`).
    pub room: &'a str,
    /// Sending bot.
    pub sender: &'a str,
    /// Receiving bot.
    pub receiver: &'a str,
    /// Platform timestamp, ms.
    pub ts_ms: i64,
    /// Provider event id.
    pub event_id: Option<&'a str>,
}

/// The thread fields shared by the group events: the coordinator's own key.
pub use crate::group::ThreadKey as GroupThread;

/// A `group_message` event.
#[derive(Debug)]
pub struct GroupMessage<'a> {
    /// The thread.
    pub thread: GroupThread<'a>,
    /// The peer id of the `"<channel>:<peer>"` broadcast key.
    pub peer: &'a str,
    /// The inbound text.
    pub text: &'a str,
}

/// Reads the event held by a parsed line.
pub fn event<'a>(v: Line<'a, 'a>, n: u32) -> Result<Event<'a>, PolicyError> {
    let f = Fields { v, n };
    let kind = f.req_str(F::Kind)?;
    Ok(match kind {
        "tool_call" | "tool_result" => {
            let call = ToolCall {
                session: f.req_str(F::Session)?,
                tool: f.req_str(F::Tool)?,
                args: Args::Value(f.req_any(F::Args)?),
                run: f.opt_str(F::Run)?,
                agent: f.opt_str(F::Agent)?,
                call_id: f.opt_str(F::CallId)?,
            };
            f.opt_int(F::TsMs)?;
            if kind == "tool_call" {
                Event::ToolCall(call)
            } else {
                let outcome = match (v.value(F::Result), v.value(F::Error)) {
                    (Some(r), None) => Outcome::Result(r),
                    (None, Some(e)) => Outcome::Error(e),
                    (Some(_), Some(_)) => return Err(f.err("result", "has both `result` and `error`; give exactly one")),
                    (None, None) => return Err(f.err("result", "missing: a tool_result needs `result` or `error`")),
                };
                Event::ToolResult(call, outcome)
            }
        }
        "compaction" => Event::Compaction { session: f.req_str(F::Session)?, run: f.opt_str(F::Run)?, agent: f.opt_str(F::Agent)? },
        "bot_message" => {
            let conversation = f.req_str(F::Conversation)?;
            Event::BotMessage(BotMessage {
                channel: f.req_str(F::Channel)?,
                account: f.req_str(F::Account)?,
                conversation,
                room: f.opt_str(F::Room)?.unwrap_or(conversation),
                sender: f.req_str(F::Sender)?,
                receiver: f.req_str(F::Receiver)?,
                ts_ms: f.req_int(F::TsMs)?,
                event_id: f.opt_str(F::EventId)?,
            })
        }
        "group_message" => Event::GroupMessage(GroupMessage {
            thread: f.thread()?,
            peer: f.req_str(F::Peer)?,
            text: f.req_str(F::Text)?,
        }),
        "group_replies" => {
            let thread = f.thread()?;
            Event::GroupReplies(thread, f.replies()?)
        }
        "group_cancel" => Event::GroupCancel(f.thread()?),
        other => {
            return Err(f.err(
                "kind",
                format!("unknown kind {other:?}; expected one of tool_call, tool_result, compaction, bot_message, group_message, group_replies, group_cancel"),
            ))
        }
    })
}

struct Fields<'a> {
    v: Line<'a, 'a>,
    n: u32,
}

impl<'a> Fields<'a> {
    fn err(&self, field: &str, reason: impl Into<String>) -> PolicyError {
        PolicyError::input(format!("line {}: {field}", self.n), reason)
    }

    fn req_any(&self, field: F) -> Result<&'a Json<'a>, PolicyError> {
        self.v.value(field).ok_or_else(|| self.missing(field))
    }

    fn missing(&self, field: F) -> PolicyError {
        self.err(field.name(), "missing required field")
    }

    fn req_str(&self, field: F) -> Result<&'a str, PolicyError> {
        match self.v.text(field) {
            Some(Ok(s)) => Ok(s),
            other => Err(self.not_str(field, other.and_then(Result::err), "")),
        }
    }

    fn opt_str(&self, field: F) -> Result<Option<&'a str>, PolicyError> {
        match self.v.text(field) {
            None => Ok(None),
            Some(Ok(s)) => Ok(Some(s)),
            Some(Err(other)) => Err(self.not_str(field, Some(other), " when present")),
        }
    }

    /// The error of a string field that is missing (`found` `None`) or not a string.
    fn not_str(&self, field: F, found: Option<&Json<'_>>, when: &str) -> PolicyError {
        match found {
            None => self.missing(field),
            Some(other) => self.err(field.name(), format!("must be a string{when}, not {}", describe(other))),
        }
    }

    fn int(&self, field: F, v: &Json<'_>) -> Result<i64, PolicyError> {
        match v {
            Json::Num(x) if x.fract() == 0.0 && *x >= 0.0 && *x <= MAX_SAFE_INT => Ok(*x as i64),
            Json::Num(x) if x.fract() == 0.0 && *x < 0.0 => {
                Err(self.err(field.name(), format!("must be a non-negative integer (milliseconds), not {x}")))
            }
            other => Err(self.err(field.name(), format!("must be an integer (milliseconds), not {}", describe(other)))),
        }
    }

    fn req_int(&self, field: F) -> Result<i64, PolicyError> {
        self.int(field, self.req_any(field)?)
    }

    fn opt_int(&self, field: F) -> Result<Option<i64>, PolicyError> {
        self.v.value(field).map(|v| self.int(field, v)).transpose()
    }

    fn thread(&self) -> Result<GroupThread<'a>, PolicyError> {
        Ok(GroupThread {
            channel: self.req_str(F::Channel)?,
            account: self.req_str(F::Account)?,
            conversation: self.req_str(F::Conversation)?,
            thread: self.opt_str(F::Thread)?,
            root: self.req_str(F::Root)?,
        })
    }

    fn replies(&self) -> Result<Vec<Reply>, PolicyError> {
        let Json::Arr(items) = self.req_any(F::Replies)? else {
            return Err(self.err("replies", "must be a list of {\"agent\": id, \"reply\": string or null}"));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = format!("replies[{i}]");
                let agent = match item.get("agent") {
                    Some(Json::Str(a)) => a.to_string(),
                    _ => return Err(self.err(&format!("{field}.agent"), "must be an agent id string")),
                };
                let reply = match item.get("reply") {
                    Some(Json::Null) => None,
                    Some(Json::Str(r)) => Some(r.to_string()),
                    _ => {
                        return Err(
                            self.err(&format!("{field}.reply"), "must be a string, or null for NO_REPLY / failed")
                        )
                    }
                };
                Ok(Reply { agent, reply })
            })
            .collect()
    }
}

fn describe(v: &Json<'_>) -> String {
    match v {
        Json::Undefined => "undefined".into(),
        Json::Null => "null".into(),
        Json::Bool(_) => "a boolean".into(),
        Json::Num(n) => format!("the number {n}"),
        Json::Str(_) => "a string".into(),
        Json::Arr(_) => "an array".into(),
        Json::Obj(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::LoneKeys;

    /// The error `event` gives for one line, as `path: reason`.
    fn error(text: &str) -> String {
        let mut lines = Lines::default();
        lines.read(text, 7, LoneKeys::Merge).expect("valid JSON");
        let (n, line) = lines.iter().next().expect("one line");
        let e = event(line, n).expect_err("a bad event");
        format!("{}: {}", e.path, e.reason)
    }

    #[test]
    fn a_string_field_that_is_missing_or_not_a_string_is_named_with_its_line() {
        let bot = |extra: &str| {
            format!(
                r#"{{"kind":"bot_message","channel":"discord","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1{extra}}}"#
            )
        };
        assert_eq!(error(&bot(r#","sender":5"#)), "line 7: sender: must be a string, not the number 5");
        assert_eq!(error(&bot(r#","room":null"#)), "line 7: room: must be a string when present, not null");
        assert_eq!(
            error(&bot(r#","event_id":["e"]"#)),
            "line 7: event_id: must be a string when present, not an array"
        );
        assert_eq!(
            error(r#"{"kind":"bot_message","channel":"discord","account":"a","sender":"x","receiver":"y","ts_ms":1}"#),
            "line 7: conversation: missing required field"
        );
        assert_eq!(error(r#"{"kind":"compaction"}"#), "line 7: session: missing required field");
        assert_eq!(error(r#"{"kind":"compaction","session":{}}"#), "line 7: session: must be a string, not an object");
    }
}
