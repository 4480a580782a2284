//! Reading an object member by member, the caller choosing how to read each value (see
//! [`read_object`]).

use super::parser::{parse_with, LoneKeys, Parser};
use super::{Json, JsonError, Text};

/// Reads a JSON text that should be an object without building the object: `member` gets each
/// key (as [`Text`]) and the member's value, unread, in document order, duplicates included (the
/// caller applies "the later wins"). A value `member` does not read is read and dropped. Returns
/// `Ok(false)`, having called `member` for nothing, when the text is JSON but not an object.
///
/// Why beside [`parse_with`]: a replayed trace line's members are looked up, never serialized,
/// so sorting them and collecting them into an object is work nobody reads, and its string
/// fields need no [`Str`](super::Str) or [`Json`] around them. Reading a bot line so, with the table of
/// `trace/line.rs`, took a bot event in replay from 22.5 k to 18.0 k instructions, and with keys
/// and string fields as borrowed text from 17.5 k to 15.9 k (callgrind, docs/PERFORMANCE.md).
pub fn read_object<'a>(
    text: &'a str,
    keys: LoneKeys,
    mut member: impl FnMut(Text<'a>, Member<'_, 'a>) -> Result<(), JsonError>,
) -> Result<bool, JsonError> {
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0, keys };
    p.ws();
    if p.peek() != Some(b'{') {
        return parse_with(text, keys).map(|_| false);
    }
    p.members(1, |p, key| {
        let start = p.i;
        member(key, Member { p: &mut *p, depth: 1 })?;
        if p.i == start {
            // Not read by the caller: still JSON that must be valid. (A value is never empty.)
            p.value(1)?;
        }
        Ok(())
    })?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("unexpected text after the JSON value"));
    }
    Ok(true)
}

/// An object member's value, not yet read (see [`read_object`]).
pub struct Member<'p, 'a> {
    p: &'p mut Parser<'a>,
    depth: usize,
}

/// A value read by [`Member::text_or_json`].
#[derive(Debug, Clone, PartialEq)]
pub enum TextOrJson<'a> {
    /// A string literal without escapes, borrowed.
    Text(&'a str),
    /// Any other value.
    Json(Json<'a>),
}

impl<'a> Member<'_, 'a> {
    /// The value as a JSON tree.
    pub fn json(self) -> Result<Json<'a>, JsonError> {
        self.p.value(self.depth)
    }

    /// The value as a JSON tree, and the text it was read from.
    pub fn json_and_text(self) -> Result<(Json<'a>, &'a str), JsonError> {
        let start = self.p.i;
        let value = self.p.value(self.depth)?;
        Ok((value, &self.p.src[start..self.p.i]))
    }

    /// A string without escapes as its borrowed text, anything else as a JSON tree.
    pub fn text_or_json(self) -> Result<TextOrJson<'a>, JsonError> {
        if self.p.peek() == Some(b'"') {
            return Ok(match self.p.text()? {
                Text::Plain { text, .. } => TextOrJson::Text(text),
                Text::Decoded(s) => TextOrJson::Json(Json::Str(s)),
            });
        }
        self.p.value(self.depth).map(TextOrJson::Json)
    }
}
