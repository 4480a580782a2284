//! The reader: RFC 8259's grammar with JavaScript's numbers and lone surrogates (see the
//! module docs of [`super`]).

use std::borrow::Cow;
use std::fmt;

use super::value::{sort_members, Json, LoneSurrogate, Str};
use crate::js::cmp_utf16;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 128;

/// What makes two object keys the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoneKeys {
    /// Their texts: keys that differ only in lone surrogates are one key (the later wins), as
    /// they are once the documented canonical form has removed the surrogates.
    #[default]
    Merge,
    /// Their UTF-16 code units, as `JSON.parse` sees them: lone surrogates make a key different
    /// (openclaw 2026.9, which keeps them).
    Distinct,
}

/// Why a text is not JSON, and where (byte offset from the start of the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What is wrong.
    pub reason: &'static str,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

/// Parses one JSON text (surrounding whitespace allowed), keys compared by [`LoneKeys::Merge`].
pub fn parse(text: &str) -> Result<Json<'_>, JsonError> {
    parse_with(text, LoneKeys::Merge)
}

/// Parses one JSON text with the given key identity.
pub fn parse_with(text: &str, keys: LoneKeys) -> Result<Json<'_>, JsonError> {
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0, keys };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("unexpected text after the JSON value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    keys: LoneKeys,
}

impl<'a> Parser<'a> {
    fn err(&self, reason: &'static str) -> JsonError {
        JsonError { offset: self.i, reason }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
        match self.peek() {
            None => Err(self.err("unexpected end of JSON")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("expected a JSON value")),
        }
    }

    fn word(&mut self, w: &str, v: Json<'a>) -> Result<Json<'a>, JsonError> {
        if !self.s[self.i..].starts_with(w.as_bytes()) {
            return Err(self.err("expected a JSON value"));
        }
        self.i += w.len();
        Ok(v)
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested deeper than 128 levels"));
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
        self.enter(depth)?;
        self.i += 1;
        self.ws();
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                _ => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
        self.enter(depth)?;
        self.i += 1;
        self.ws();
        let mut members = Vec::new();
        if self.peek() == Some(b'}') {
            self.i += 1;
        } else {
            loop {
                self.ws();
                if self.peek() != Some(b'"') {
                    return Err(self.err("expected a string key in an object"));
                }
                let key = self.string()?;
                self.ws();
                if self.peek() != Some(b':') {
                    return Err(self.err("expected ':' after an object key"));
                }
                self.i += 1;
                self.ws();
                members.push((key, self.value(depth)?));
                self.ws();
                match self.peek() {
                    Some(b',') => self.i += 1,
                    Some(b'}') => {
                        self.i += 1;
                        break;
                    }
                    _ => return Err(self.err("expected ',' or '}' in an object")),
                }
            }
        }
        match self.keys {
            LoneKeys::Merge => sort_members(&mut members),
            LoneKeys::Distinct => sort_distinct(&mut members),
        }
        Ok(Json::Obj(members))
    }

    fn number(&mut self) -> Result<Json<'a>, JsonError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let digits = self.i;
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.i - digits <= 15 && !matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            // Speed code for the replay floors (docs/PERFORMANCE.md): every trace line has an
            // integer timestamp, and the general float parse below was ~350 instructions of a bot
            // event. An integer of at most 15 digits is below 2^53, so a double holds it exactly
            // and this is what the correctly rounded parse gives (`-0` included).
            let int = self.src[digits..self.i].bytes().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            let n = int as f64;
            return Ok(Json::Num(if start < digits { -n } else { n }));
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number: digits expected after '.'"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number: digits expected in the exponent"));
            }
            self.digits();
        }
        // Rust's float parsing is correctly rounded, like JS; overflow gives ±Infinity.
        self.src[start..self.i]
            .parse::<f64>()
            .map(Json::Num)
            .map_err(|_| JsonError { offset: start, reason: "invalid number" })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self.s.get(self.i..self.i + 4).and_then(|h| std::str::from_utf8(h).ok());
        match digits.and_then(|h| u32::from_str_radix(h, 16).ok().filter(|_| !h.starts_with('+'))) {
            Some(n) => {
                self.i += 4;
                Ok(n)
            }
            None => Err(self.err("invalid \\u escape: four hex digits expected")),
        }
    }

    /// Reads a string (the reader is at its opening quote): borrowed from the input when it has
    /// no escapes, else decoded, its lone surrogates kept beside the text.
    fn string(&mut self) -> Result<Str<'a>, JsonError> {
        self.i += 1;
        let start = self.i;
        // The decoded text, once an escape was met, and where the text not yet copied starts.
        // Every byte the loop stops at (a quote, a backslash) is ASCII: slices are on char
        // boundaries.
        let mut decoded: Option<String> = None;
        let mut run = start;
        let mut lone = Vec::new();
        loop {
            // Straight to the next byte that ends the plain run: a quote, a backslash or a
            // control character.
            let rest = &self.s[self.i..];
            self.i += rest.iter().position(|&b| matches!(b, b'"' | b'\\' | 0..=0x1f)).unwrap_or(rest.len());
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    let text = match decoded {
                        None => Cow::Borrowed(&self.src[start..self.i]),
                        Some(mut out) => {
                            out.push_str(&self.src[run..self.i]);
                            Cow::Owned(out)
                        }
                    };
                    self.i += 1;
                    return Ok(Str { text, lone });
                }
                Some(b'\\') => {
                    let out = decoded.get_or_insert_with(String::new);
                    out.push_str(&self.src[run..self.i]);
                    self.i += 1;
                    self.escape(out, &mut lone)?;
                    run = self.i;
                }
                Some(_) => return Err(self.err("control character in a string (escape it)")),
            }
        }
    }

    /// Decodes one escape (after its backslash) into `out`; a lone surrogate goes to `lone`.
    fn escape(&mut self, out: &mut String, lone: &mut Vec<LoneSurrogate>) -> Result<(), JsonError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.i += 1;
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) && self.s[self.i..].starts_with(b"\\u") {
                    let save = self.i;
                    self.i += 2;
                    let low = self.hex4()?;
                    if (0xDC00..0xE000).contains(&low) {
                        out.extend(char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)));
                        return Ok(());
                    }
                    self.i = save; // not a pair: the high one is lone, the next escape is read on its own
                }
                match char::from_u32(unit) {
                    Some(c) => out.push(c),
                    None => lone.push(LoneSurrogate { at: out.len(), unit: unit as u16 }),
                }
                return Ok(());
            }
            _ => return Err(self.err("invalid escape in a string")),
        };
        self.i += 1;
        out.push(c);
        Ok(())
    }
}

/// Sorts members for [`LoneKeys::Distinct`]: by text (so that [`Json::get`] can search by
/// text), then by code units; of members with the very same key the last one wins.
fn sort_distinct(members: &mut Vec<(Str<'_>, Json<'_>)>) {
    members.sort_by(|a, b| cmp_utf16(&a.0, &b.0).then_with(|| a.0.cmp_units(&b.0)));
    let mut kept: Vec<(Str<'_>, Json<'_>)> = Vec::with_capacity(members.len());
    for m in members.drain(..) {
        match kept.last_mut() {
            Some(last) if last.0.same_units(&m.0) => *last = m,
            _ => kept.push(m),
        }
    }
    *members = kept;
}
