//! Reading an object member by member, the caller choosing how to read each value (see
//! [`read_object`]), and the pieces of an object's grammar the reader's own objects share.

use super::parser::{parse_with, LoneKeys, Parser};
use super::{Json, JsonError, Text};

/// Reads a JSON text that should be an object without building the object: `member` gets each
/// key (its text, and whether it held lone surrogates) and the member's value, unread, in
/// document order, duplicates included (the caller applies "the later wins"). A value `member`
/// does not read is read and dropped. Returns `Ok(false)`, having called `member` for nothing,
/// when the text is JSON but not an object.
///
/// Why beside [`parse_with`]: a replayed trace line's members are looked up, never serialized,
/// so sorting them and collecting them into an object is work nobody reads, and its string
/// fields need no [`Str`](super::Str) or [`Json`] around them. Reading a bot line so, with the table of
/// `trace/line.rs`, took a bot event in replay from 22.5 k to 18.0 k instructions, and with keys
/// and string fields as borrowed text from 17.5 k to 15.9 k (callgrind, docs/PERFORMANCE.md).
pub fn read_object<'a>(
    text: &'a str,
    keys: LoneKeys,
    mut member: impl FnMut(&str, bool, Member<'_, 'a>) -> Result<(), JsonError>,
) -> Result<bool, JsonError> {
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0, keys };
    p.ws();
    if p.peek() != Some(b'{') {
        return parse_with(text, keys).map(|_| false);
    }
    p.members_by_name(1, |p, key, lone| {
        let start = p.i;
        member(key, lone, Member { p: &mut *p, depth: 1 })?;
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

/// A value read by [`Member::push_text_or_json`].
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

    /// The value pushed onto `values`: a string without escapes as its borrowed text, anything
    /// else as a JSON tree. Why pushed, not returned: a returned value goes through a return slot
    /// in memory that the caller then copies with wider loads than the stores that wrote it,
    /// which the processor cannot forward (a stall per member; `perf annotate` of a bot replay).
    pub fn push_text_or_json(self, values: &mut Vec<TextOrJson<'a>>) -> Result<(), JsonError> {
        if self.p.peek() != Some(b'"') {
            values.push(TextOrJson::Json(self.p.value(self.depth)?));
            return Ok(());
        }
        let open = self.p.i;
        values.push(match self.p.plain() {
            Some(text) => TextOrJson::Text(text),
            // A string with escapes (rare in a trace line's fields): decoded from where the
            // plain scan stopped.
            None => TextOrJson::Json(Json::Str(self.p.decode(open, open + 1)?.into_str())),
        });
        Ok(())
    }
}

impl<'a> Parser<'a> {
    /// Reads an object's members in document order, duplicates included, for a caller that only
    /// looks keys up: `member` gets each key's text (lone surrogates removed) and whether it held
    /// any, with the reader at the value, and reads the value. A key without escapes goes as the
    /// `&str` [`Parser::plain`] read, never as a [`Text`] (see there why).
    pub(super) fn members_by_name(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, &str, bool) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        if !self.open_members(depth)? {
            return Ok(());
        }
        loop {
            self.key_start()?;
            let open = self.i;
            let decoded: Text<'a>;
            let (key, lone) = match self.plain() {
                Some(key) => (key, false),
                None => {
                    // Decoded (out of line) from where the plain scan stopped.
                    decoded = self.decode(open, open + 1)?;
                    (decoded.as_str(), decoded.has_lone())
                }
            };
            self.colon()?;
            // One call: with a second one (for the decoded key) `member` was not inlined, and
            // its arguments went through the stack.
            member(self, key, lone)?;
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    /// Enters an object (the reader at its `{`): `false` when it is empty (and read).
    pub(super) fn open_members(&mut self, depth: usize) -> Result<bool, JsonError> {
        self.enter(depth)?;
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// Whitespace, then a key's opening quote.
    pub(super) fn key_start(&mut self) -> Result<(), JsonError> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.err("expected a string key in an object"));
        }
        Ok(())
    }

    /// After a key: whitespace, its colon, whitespace.
    pub(super) fn colon(&mut self) -> Result<(), JsonError> {
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.err("expected ':' after an object key"));
        }
        self.i += 1;
        self.ws();
        Ok(())
    }

    /// After a member's value: `true` when another member follows, `false` at the object's end.
    pub(super) fn next_member(&mut self) -> Result<bool, JsonError> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(self.err("expected ',' or '}' in an object")),
        }
    }
}
