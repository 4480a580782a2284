//! Packs a tool call, a tool outcome or a bot message into one string for the guest's packed
//! methods (`check-tool-call-packed`, `record-tool-outcome-packed`, `check-bot-message-packed`,
//! interface 0.3.0).
//!
//! Why: wasmtime passes every string argument of a component call with a separate call into the
//! guest's allocator and a copy, about a thousand host instructions each, and the guest allocates
//! and frees each one. A bot message has six to eight strings and a tool decision about ten, so
//! that work was a large share of a small decision. Packed, a call passes one string and a few
//! integers. The buffer is kept by the gateway and reused, so packing allocates nothing once it
//! has grown to the largest call.
//!
//! The layouts (field order, which length is implied) are the WIT's; the guest checks every
//! length, so a mistake here is a `policy-error` naming the length, not a wrong decision.

use crate::bindings::loopguard::policy::types::{BotMessage, ToolCall, ToolOutcome};
use crate::error::{Error, Result};

/// The UTF-8 byte lengths of a packed tool call's fields before its arguments, in `fields`
/// order; `None` for an absent optional field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallLens {
    pub session: u32,
    pub tool: u32,
    pub run: Option<u32>,
    pub agent: Option<u32>,
    pub call_id: Option<u32>,
}

/// The UTF-8 byte lengths of a packed bot message's fields, in `fields` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BotLens {
    pub channel: u32,
    pub account: u32,
    pub conversation: u32,
    pub room: Option<u32>,
    pub sender: u32,
    pub receiver: u32,
    pub event_id: Option<u32>,
}

/// The reusable buffer the fields are packed into.
#[derive(Debug, Default)]
pub(crate) struct Packer {
    buf: String,
}

impl Packer {
    /// `fields` for `check-tool-call-packed`: session, tool, run, agent, call-id, args-json.
    pub(crate) fn tool_call(&mut self, call: &ToolCall) -> Result<(&str, CallLens)> {
        self.buf.clear();
        let lens = self.call_head(call);
        self.buf.push_str(&call.args_json);
        Ok((self.fields("call")?, lens))
    }

    /// `fields` for `record-tool-outcome-packed`: the call as for [`Packer::tool_call`], then the
    /// outcome's text. Also returns the args' length and whether the tool threw.
    pub(crate) fn outcome(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> Result<(&str, CallLens, u32, bool)> {
        self.buf.clear();
        let lens = self.call_head(call);
        let args = self.push(&call.args_json);
        let (text, threw) = match outcome {
            ToolOutcome::Returned(text) => (text, false),
            ToolOutcome::Threw(text) => (text, true),
        };
        self.buf.push_str(text);
        Ok((self.fields("call")?, lens, args, threw))
    }

    /// `fields` for `check-bot-message-packed`: channel, account, conversation, room, sender,
    /// receiver, event-id.
    pub(crate) fn bot_message(&mut self, m: &BotMessage) -> Result<(&str, BotLens)> {
        self.buf.clear();
        let lens = BotLens {
            channel: self.push(&m.channel),
            account: self.push(&m.account),
            conversation: self.push(&m.conversation),
            room: m.room.as_deref().map(|r| self.push(r)),
            sender: self.push(&m.sender),
            receiver: self.push(&m.receiver),
            event_id: m.event_id.as_deref().map(|e| self.push(e)),
        };
        Ok((self.fields("message")?, lens))
    }

    fn call_head(&mut self, call: &ToolCall) -> CallLens {
        CallLens {
            session: self.push(&call.session),
            tool: self.push(&call.tool),
            run: call.run.as_deref().map(|r| self.push(r)),
            agent: call.agent.as_deref().map(|a| self.push(a)),
            call_id: call.call_id.as_deref().map(|c| self.push(c)),
        }
    }

    /// Appends `field` and returns its length. Saturates past `u32::MAX`, which
    /// [`Packer::fields`] then refuses (every field is shorter than the whole).
    fn push(&mut self, field: &str) -> u32 {
        self.buf.push_str(field);
        u32::try_from(field.len()).unwrap_or(u32::MAX)
    }

    /// The packed string, unless it is too long for the 32-bit lengths (and for any guest).
    fn fields(&self, what: &str) -> Result<&str> {
        if u32::try_from(self.buf.len()).is_err() {
            return Err(Error::Policy {
                path: what.into(),
                reason: format!("{} bytes of strings; a call can carry at most 4 GiB", self.buf.len()),
            });
        }
        Ok(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(run: Option<&str>, agent: Option<&str>, call_id: Option<&str>) -> ToolCall {
        ToolCall {
            session: "sé".into(),
            tool: "read".into(),
            args_json: r#"{"p":"ü"}"#.into(),
            run: run.map(Into::into),
            agent: agent.map(Into::into),
            call_id: call_id.map(Into::into),
        }
    }

    #[test]
    fn a_tool_call_is_packed_in_wit_order_with_byte_lengths() {
        let mut p = Packer::default();
        let (fields, lens) = p.tool_call(&call(Some("r"), None, Some("c1"))).unwrap();
        assert_eq!(fields, r#"séreadrc1{"p":"ü"}"#);
        assert_eq!(lens, CallLens { session: 3, tool: 4, run: Some(1), agent: None, call_id: Some(2) });
    }

    #[test]
    fn an_outcome_follows_the_args_and_says_whether_it_threw() {
        let mut p = Packer::default();
        let (fields, lens, args, threw) =
            p.outcome(&call(None, Some(""), None), &ToolOutcome::Threw("\"boom\"".into())).unwrap();
        assert_eq!(fields, r#"séread{"p":"ü"}"boom""#);
        assert_eq!(lens, CallLens { session: 3, tool: 4, run: None, agent: Some(0), call_id: None });
        assert_eq!((args, threw), (10, true));
        let (fields, .., threw) = p.outcome(&call(None, None, None), &ToolOutcome::Returned("1".into())).unwrap();
        assert_eq!((fields, threw), (r#"séread{"p":"ü"}1"#, false));
    }

    #[test]
    fn a_bot_message_is_packed_in_wit_order() {
        let m = BotMessage {
            channel: "discord".into(),
            account: "a".into(),
            conversation: "c".into(),
            room: None,
            sender: "bot-1".into(),
            receiver: "bot-2".into(),
            ts_ms: 5,
            event_id: Some("e".into()),
        };
        let mut p = Packer::default();
        let (fields, lens) = p.bot_message(&m).unwrap();
        assert_eq!(fields, "discordacbot-1bot-2e");
        let expected =
            BotLens { channel: 7, account: 1, conversation: 1, room: None, sender: 5, receiver: 5, event_id: Some(1) };
        assert_eq!(lens, expected);
    }

    #[test]
    fn the_buffer_is_reused_between_calls() {
        let mut p = Packer::default();
        p.tool_call(&call(Some("a long run id"), Some("agent"), Some("call"))).unwrap();
        let capacity = p.buf.capacity();
        let (fields, _) = p.tool_call(&call(None, None, None)).unwrap();
        assert_eq!(fields, r#"séread{"p":"ü"}"#);
        assert_eq!(p.buf.capacity(), capacity, "a shorter call fits in the buffer already grown");
    }
}
