//! One trace line: read by the guest's one JSON reader ([`crate::json`]) into an object whose
//! fields are then looked up by name, with `JSON.parse`'s rules (the later of duplicate keys
//! wins; under [`LoneKeys::Distinct`] a key with lone surrogates is its own key, and
//! [`Json::get`] says which one a lookup takes).

use crate::error::{ErrorKind, PolicyError};
use crate::input::MAX_VALUE_BYTES;
use crate::json::{self, Json, LoneKeys};

/// The trace format's field names (docs/spec/trace-format.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Kind,
    Session,
    Tool,
    Args,
    Run,
    Agent,
    CallId,
    TsMs,
    Result,
    Error,
    Channel,
    Account,
    Conversation,
    Room,
    Sender,
    Receiver,
    EventId,
    Thread,
    Root,
    Peer,
    Text,
    Replies,
}

impl Field {
    /// The field's name in a trace line.
    pub fn name(self) -> &'static str {
        match self {
            Field::Kind => "kind",
            Field::Session => "session",
            Field::Tool => "tool",
            Field::Args => "args",
            Field::Run => "run",
            Field::Agent => "agent",
            Field::CallId => "call_id",
            Field::TsMs => "ts_ms",
            Field::Result => "result",
            Field::Error => "error",
            Field::Channel => "channel",
            Field::Account => "account",
            Field::Conversation => "conversation",
            Field::Room => "room",
            Field::Sender => "sender",
            Field::Receiver => "receiver",
            Field::EventId => "event_id",
            Field::Thread => "thread",
            Field::Root => "root",
            Field::Peer => "peer",
            Field::Text => "text",
            Field::Replies => "replies",
        }
    }
}

/// The lines of a batch, read before any of them is applied, each with its number.
#[derive(Debug, Default)]
pub struct Lines<'a> {
    lines: Vec<(u32, Json<'a>)>,
}

/// One line's fields.
#[derive(Debug, Clone, Copy)]
pub struct Line<'l, 'a> {
    object: &'l Json<'a>,
}

impl<'a> Lines<'a> {
    /// The lines read.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when no line was read.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Reads line `n` into the batch; errors name the line.
    pub fn read(&mut self, text: &'a str, n: u32, keys: LoneKeys) -> Result<(), PolicyError> {
        if text.len() > MAX_VALUE_BYTES {
            return Err(PolicyError::new(
                ErrorKind::TooLarge,
                format!("line {n}"),
                format!("the event is {} bytes; events larger than {MAX_VALUE_BYTES} bytes are refused", text.len()),
            ));
        }
        let object = json::parse_with(text, keys)
            .map_err(|e| PolicyError::input(format!("line {n}"), format!("not valid JSON: {e}")))?;
        if !object.is_object() {
            return Err(PolicyError::input(format!("line {n}"), "an event must be a JSON object"));
        }
        self.lines.push((n, object));
        Ok(())
    }

    /// The lines read, in order, with their numbers.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Line<'_, 'a>)> {
        self.lines.iter().map(|(n, object)| (*n, Line { object }))
    }
}

impl<'l, 'a> Line<'l, 'a> {
    /// The value of a field, if the line has it.
    pub fn value(self, field: Field) -> Option<&'l Json<'a>> {
        self.object.get(field.name())
    }

    /// The value of a string field, if the line has it: `Ok` with its text (lone surrogates
    /// removed) when it is a string, else `Err` with the value.
    pub fn text(self, field: Field) -> Option<Result<&'l str, &'l Json<'a>>> {
        Some(match self.value(field)? {
            Json::Str(s) => Ok(s.as_str()),
            other => Err(other),
        })
    }
}

#[cfg(test)]
mod tests;
