//! One trace line's fields, read without building an object for the line.
//!
//! A line's members are looked up by name and never serialized, so they are kept in document
//! order under a [`Field`] tag instead of sorted into a [`Json`] object; members of any other
//! name are read (the line must be JSON) and dropped. Lookups then compare a tag, not a text.
//! The string fields (all but `args`, `result`, `error`, `ts_ms` and `replies`) are kept as text
//! borrowed from the line when their literal has no escapes, without a [`Json`] around them.

use crate::error::{ErrorKind, PolicyError};
use crate::input::MAX_VALUE_BYTES;
use crate::js::same_text;
use crate::json::{self, Json, LoneKeys, TextOrJson};

/// The trace format's field names (spec/trace-format.md).
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
    /// Every field, for the slow path that looks each one up in an object.
    const ALL: [Field; 22] = [
        Field::Kind,
        Field::Session,
        Field::Tool,
        Field::Args,
        Field::Run,
        Field::Agent,
        Field::CallId,
        Field::TsMs,
        Field::Result,
        Field::Error,
        Field::Channel,
        Field::Account,
        Field::Conversation,
        Field::Room,
        Field::Sender,
        Field::Receiver,
        Field::EventId,
        Field::Thread,
        Field::Root,
        Field::Peer,
        Field::Text,
        Field::Replies,
    ];

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

    /// True for the fields whose value is a string (read as borrowed text when it can be).
    fn is_text(self) -> bool {
        !matches!(self, Field::Args | Field::Result | Field::Error | Field::TsMs | Field::Replies)
    }

    /// The field named `name`, if any. Why not a search of [`Field::ALL`]: a line's every key
    /// passes here, and comparing it with up to 22 names (a `memcmp` call each in the
    /// component) cost more than the sorting and lookups this reader saves (callgrind, the
    /// bench's bot trace); the length and the end bytes pick the one candidate.
    fn from_name(name: &str) -> Option<Field> {
        let b = name.as_bytes();
        let (&first, &last) = (b.first()?, b.last()?);
        let candidate = match (b.len(), first, last) {
            (4, b'k', _) => Field::Kind,
            (7, b's', _) => Field::Session,
            (4, b't', b'l') => Field::Tool,
            (4, b'a', _) => Field::Args,
            (3, b'r', _) => Field::Run,
            (5, b'a', _) => Field::Agent,
            (7, b'c', b'd') => Field::CallId,
            (5, b't', _) => Field::TsMs,
            (6, b'r', _) => Field::Result,
            (5, b'e', _) => Field::Error,
            (7, b'c', b'l') => Field::Channel,
            (7, b'a', _) => Field::Account,
            (12, b'c', _) => Field::Conversation,
            (4, b'r', b'm') => Field::Room,
            (6, b's', _) => Field::Sender,
            (8, b'r', _) => Field::Receiver,
            (8, b'e', _) => Field::EventId,
            (6, b't', _) => Field::Thread,
            (4, b'r', b't') => Field::Root,
            (4, b'p', _) => Field::Peer,
            (4, b't', b't') => Field::Text,
            (7, b'r', _) => Field::Replies,
            _ => return None,
        };
        same_text(candidate.name(), name).then_some(candidate)
    }
}

/// The lines of a batch, read before any of them is applied: every line's field values in one
/// vector, so that a line costs no allocation of its own (an allocation and a free per line
/// were ~0.5 k instructions of a bot event in replay; callgrind).
#[derive(Debug, Default)]
pub struct Lines<'a> {
    values: Vec<TextOrJson<'a>>,
    lines: Vec<Slots<'a>>,
}

/// Where one line's fields are in [`Lines::values`].
#[derive(Debug)]
struct Slots<'a> {
    /// The line's number in the trace.
    n: u32,
    /// Its first value.
    start: usize,
    /// Where each field's value is after `start`, plus one; 0 when the line lacks the field.
    at: [u8; Field::ALL.len()],
    /// The text the `args` value was read from (see [`Line::args_text`]).
    args_text: Option<&'a str>,
}

/// One line's fields: each present one once, the later of duplicates (`JSON.parse`).
#[derive(Debug, Clone, Copy)]
pub struct Line<'l, 'a> {
    values: &'l [TextOrJson<'a>],
    at: &'l [u8; Field::ALL.len()],
    args_text: Option<&'a str>,
}

impl<'a> Lines<'a> {
    /// An empty batch with room for `lines` lines of up to ten fields each.
    pub fn with_capacity(lines: usize) -> Self {
        Lines { values: Vec::with_capacity(lines * 10), lines: Vec::with_capacity(lines) }
    }

    /// The lines read.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when no line was read.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Reads line `n` into the batch; errors name the line (and leave the batch to be dropped).
    pub fn read(&mut self, text: &'a str, n: u32, keys: LoneKeys) -> Result<(), PolicyError> {
        if text.len() > MAX_VALUE_BYTES {
            return Err(PolicyError::new(
                ErrorKind::TooLarge,
                format!("line {n}"),
                format!("the event is {} bytes; events larger than {MAX_VALUE_BYTES} bytes are refused", text.len()),
            ));
        }
        let not_json = |e: json::JsonError| PolicyError::input(format!("line {n}"), format!("not valid JSON: {e}"));
        let mut line = Slots { n, start: self.values.len(), at: [0; Field::ALL.len()], args_text: None };
        let values = &mut self.values;
        // Keys that differ only in lone surrogates are distinct keys under `LoneKeys::Distinct`,
        // and `Json::get` has a rule for choosing among them: such a line (never written by a
        // gateway) is read as an object and looked up by that rule.
        let mut lone_key = false;
        let object = json::read_object(text, keys, |key, lone, value| {
            lone_key |= lone;
            match Field::from_name(key) {
                Some(field) if field.is_text() => {
                    value.push_text_or_json(values)?;
                    line.pushed(values, field);
                }
                Some(Field::Args) => {
                    let (args, text) = value.json_and_text()?;
                    values.push(TextOrJson::Json(args));
                    line.pushed(values, Field::Args);
                    line.args_text = Some(text);
                }
                Some(field) => {
                    values.push(TextOrJson::Json(value.json()?));
                    line.pushed(values, field);
                }
                None => {}
            }
            Ok(())
        })
        .map_err(not_json)?;
        if !object {
            return Err(PolicyError::input(format!("line {n}"), "an event must be a JSON object"));
        }
        if lone_key && keys == LoneKeys::Distinct {
            let object = json::parse_with(text, keys).map_err(not_json)?;
            values.truncate(line.start);
            line.at = [0; Field::ALL.len()];
            line.args_text = None;
            for field in Field::ALL {
                if let Some(value) = object.get(field.name()) {
                    values.push(TextOrJson::Json(value.clone()));
                    line.pushed(values, field);
                }
            }
        }
        self.lines.push(line);
        Ok(())
    }

    /// The lines read, in order, with their numbers.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Line<'_, 'a>)> {
        self.lines.iter().map(|l| (l.n, Line { values: &self.values[l.start..], at: &l.at, args_text: l.args_text }))
    }
}

impl Slots<'_> {
    /// The value just pushed onto `values` is `field`'s: the later of duplicates wins (it takes
    /// the earlier one's place, so a line holds at most one value per field: at most 22, which
    /// fits the byte in [`Slots::at`]). Why values are pushed, then placed: built in place, a
    /// value is not copied (see `json::Member::push_text_or_json`).
    fn pushed(&mut self, values: &mut Vec<TextOrJson<'_>>, field: Field) {
        match self.at[field as usize] {
            0 => self.at[field as usize] = (values.len() - self.start) as u8,
            at => {
                if let Some(value) = values.pop() {
                    values[self.start + usize::from(at) - 1] = value;
                }
            }
        }
    }
}

impl<'l, 'a> Line<'l, 'a> {
    fn slot(self, field: Field) -> Option<&'l TextOrJson<'a>> {
        let at = usize::from(self.at[field as usize]);
        at.checked_sub(1).map(|i| &self.values[i])
    }

    /// The value of a string field, if the line has it: `Ok` with its text (lone surrogates
    /// removed) when it is a string, else `Err` with the value.
    pub fn text(self, field: Field) -> Option<Result<&'l str, &'l Json<'a>>> {
        Some(match self.slot(field)? {
            TextOrJson::Text(s) => Ok(s),
            TextOrJson::Json(Json::Str(s)) => Ok(s.as_str()),
            TextOrJson::Json(other) => Err(other),
        })
    }

    /// The JSON text the `args` value was read from (the later of duplicates), if read member by
    /// member: the key by which a `tool_result` line finds its `tool_call`'s facts (`FactsMemo`).
    pub fn args_text(self) -> Option<&'a str> {
        self.args_text
    }

    /// The value of a field that is not a string field (`args`, `result`, `error`, `ts_ms`,
    /// `replies`), if the line has it. (Only string fields are kept as text.)
    pub fn value(self, field: Field) -> Option<&'l Json<'a>> {
        debug_assert!(!field.is_text(), "{field:?} is a string field: read it with `text`");
        match self.slot(field)? {
            TextOrJson::Json(v) => Some(v),
            TextOrJson::Text(_) => None,
        }
    }
}

#[cfg(test)]
mod tests;
