//! Trace events: the replay input of spec/trace-format.md.
//!
//! Each line is checked field by field so that a bad event is an error naming its line and
//! field, never a silently dropped event. Events borrow their strings from the parsed line.

use crate::error::{ErrorKind, PolicyError};
use crate::group::Reply;
use crate::input::MAX_VALUE_BYTES;
use crate::json::{self, Json, LoneKeys};
use crate::tool_loop::{Args, Outcome, ToolCall};

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

/// Parses one line into JSON, with errors naming the line.
pub fn parse_line(line: &str, n: u32) -> Result<Json<'_>, PolicyError> {
    parse_line_with(line, n, LoneKeys::Merge)
}

/// [`parse_line`] with the profile's key identity.
pub fn parse_line_with(line: &str, n: u32, keys: LoneKeys) -> Result<Json<'_>, PolicyError> {
    if line.len() > MAX_VALUE_BYTES {
        return Err(PolicyError::new(
            ErrorKind::TooLarge,
            format!("line {n}"),
            format!("the event is {} bytes; events larger than {MAX_VALUE_BYTES} bytes are refused", line.len()),
        ));
    }
    let v = json::parse_with(line, keys)
        .map_err(|e| PolicyError::input(format!("line {n}"), format!("not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(PolicyError::input(format!("line {n}"), "an event must be a JSON object"));
    }
    Ok(v)
}

/// Reads the event held by a parsed line.
pub fn event<'a>(v: &'a Json<'a>, n: u32) -> Result<Event<'a>, PolicyError> {
    let f = Fields { v, n };
    let kind = f.req_str("kind")?;
    Ok(match kind {
        "tool_call" | "tool_result" => {
            let call = ToolCall {
                session: f.req_str("session")?,
                tool: f.req_str("tool")?,
                args: Args::Value(f.req_any("args")?),
                run: f.opt_str("run")?,
                agent: f.opt_str("agent")?,
                call_id: f.opt_str("call_id")?,
            };
            f.opt_int("ts_ms")?;
            if kind == "tool_call" {
                Event::ToolCall(call)
            } else {
                let outcome = match (v.get("result"), v.get("error")) {
                    (Some(r), None) => Outcome::Result(r),
                    (None, Some(e)) => Outcome::Error(e),
                    (Some(_), Some(_)) => return Err(f.err("result", "has both `result` and `error`; give exactly one")),
                    (None, None) => return Err(f.err("result", "missing: a tool_result needs `result` or `error`")),
                };
                Event::ToolResult(call, outcome)
            }
        }
        "compaction" => Event::Compaction { session: f.req_str("session")?, run: f.opt_str("run")?, agent: f.opt_str("agent")? },
        "bot_message" => {
            let conversation = f.req_str("conversation")?;
            Event::BotMessage(BotMessage {
                channel: f.req_str("channel")?,
                account: f.req_str("account")?,
                conversation,
                room: f.opt_str("room")?.unwrap_or(conversation),
                sender: f.req_str("sender")?,
                receiver: f.req_str("receiver")?,
                ts_ms: f.req_int("ts_ms")?,
                event_id: f.opt_str("event_id")?,
            })
        }
        "group_message" => Event::GroupMessage(GroupMessage {
            thread: f.thread()?,
            peer: f.req_str("peer")?,
            text: f.req_str("text")?,
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
    v: &'a Json<'a>,
    n: u32,
}

impl<'a> Fields<'a> {
    fn err(&self, field: &str, reason: impl Into<String>) -> PolicyError {
        PolicyError::input(format!("line {}: {field}", self.n), reason)
    }

    fn req_any(&self, field: &str) -> Result<&'a Json<'a>, PolicyError> {
        self.v.get(field).ok_or_else(|| self.err(field, "missing required field"))
    }

    fn req_str(&self, field: &str) -> Result<&'a str, PolicyError> {
        match self.req_any(field)? {
            Json::Str(s) => Ok(s),
            other => Err(self.err(field, format!("must be a string, not {}", describe(other)))),
        }
    }

    fn opt_str(&self, field: &str) -> Result<Option<&'a str>, PolicyError> {
        match self.v.get(field) {
            None => Ok(None),
            Some(Json::Str(s)) => Ok(Some(s)),
            Some(other) => Err(self.err(field, format!("must be a string when present, not {}", describe(other)))),
        }
    }

    fn int(&self, field: &str, v: &Json<'_>) -> Result<i64, PolicyError> {
        match v {
            Json::Num(x) if x.fract() == 0.0 && *x >= 0.0 && *x <= MAX_SAFE_INT => Ok(*x as i64),
            Json::Num(x) if x.fract() == 0.0 && *x < 0.0 => {
                Err(self.err(field, format!("must be a non-negative integer (milliseconds), not {x}")))
            }
            other => Err(self.err(field, format!("must be an integer (milliseconds), not {}", describe(other)))),
        }
    }

    fn req_int(&self, field: &str) -> Result<i64, PolicyError> {
        self.int(field, self.req_any(field)?)
    }

    fn opt_int(&self, field: &str) -> Result<Option<i64>, PolicyError> {
        self.v.get(field).map(|v| self.int(field, v)).transpose()
    }

    fn thread(&self) -> Result<GroupThread<'a>, PolicyError> {
        Ok(GroupThread {
            channel: self.req_str("channel")?,
            account: self.req_str("account")?,
            conversation: self.req_str("conversation")?,
            thread: self.opt_str("thread")?,
            root: self.req_str("root")?,
        })
    }

    fn replies(&self) -> Result<Vec<Reply>, PolicyError> {
        let Json::Arr(items) = self.req_any("replies")? else {
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
