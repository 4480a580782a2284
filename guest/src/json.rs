//! A JSON reader that sees values the way JavaScript's `JSON.parse` does.
//!
//! Fingerprints must match OpenClaw's, and OpenClaw reads tool arguments with `JSON.parse`. So
//! numbers are IEEE-754 doubles (`1.0` and `1` are one value, `1e400` is Infinity), a later
//! duplicate key replaces an earlier one, and a lone UTF-16 surrogate written as a `\uD800`
//! escape is kept beside the text (a Rust string cannot hold it): the documented canonical form
//! drops it, OpenClaw 2026.9 keeps it.
//!
//! Why not `serde_json`: it refuses `1e400` ("number out of range") and lone surrogate escapes,
//! both of which `JSON.parse` accepts, so it would turn valid tool arguments into errors and
//! change decisions. This reader is the plain recursive-descent grammar of RFC 8259 with those
//! two JavaScript rules, and nothing else.
//!
//! Objects are stored with their keys sorted by UTF-16 code units, the order the canonical
//! serializer needs, so sorting happens once. Nesting is limited to [`MAX_DEPTH`] so that hostile
//! input gets an error instead of exhausting the guest's stack.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use crate::js::cmp_utf16;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 128;

/// A JSON value, plus `Undefined` for the synthetic objects outcome hashing builds.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    /// JS `undefined`: never produced by the parser; serialized as the bare word `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Any number, as a double.
    Num(f64),
    /// A string.
    Str(Str<'a>),
    /// An array.
    Arr(Vec<Json<'a>>),
    /// An object, keys unique and sorted by UTF-16 code units.
    Obj(Vec<(Str<'a>, Json<'a>)>),
}

/// A lone UTF-16 surrogate of a string: the code unit and the byte offset in the text where it
/// stood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoneSurrogate {
    /// Byte offset into the string's text.
    pub at: usize,
    /// The surrogate code unit (0xD800..=0xDFFF).
    pub unit: u16,
}

/// A string value or key: its text (borrowed from the input when it had no escapes) and the
/// lone surrogates it held, if any.
#[derive(Debug, Clone, Eq)]
pub struct Str<'a> {
    text: Cow<'a, str>,
    lone: Vec<LoneSurrogate>,
}

impl Str<'_> {
    /// The string without its lone surrogates.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The lone surrogates `JSON.parse` would have kept, in order.
    pub fn lone_surrogates(&self) -> &[LoneSurrogate] {
        &self.lone
    }
}

impl Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

/// Two strings are equal when their texts are: keys that differ only in lone surrogates are one
/// key, as they are once the canonical form has removed them.
impl PartialEq for Str<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl<'a> From<&'a str> for Str<'a> {
    fn from(s: &'a str) -> Self {
        Str { text: Cow::Borrowed(s), lone: Vec::new() }
    }
}

impl From<String> for Str<'_> {
    fn from(s: String) -> Self {
        Str { text: Cow::Owned(s), lone: Vec::new() }
    }
}

impl<'a> Json<'a> {
    /// The value of `key` if `self` is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(members) => members.binary_search_by(|(k, _)| cmp_utf16(k, key)).ok().map(|i| &members[i].1),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// True for plain objects.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Obj(_))
    }

    /// Builds an object from members in any order (sorted here; later duplicates win).
    pub fn object(mut members: Vec<(Str<'a>, Json<'a>)>) -> Json<'a> {
        sort_members(&mut members);
        Json::Obj(members)
    }
}

/// Sorts members by key and keeps the last of each run of equal keys (`JSON.parse` semantics).
fn sort_members(members: &mut Vec<(Str<'_>, Json<'_>)>) {
    // A stable sort keeps duplicates in document order; then the last of each run wins.
    members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    let mut kept: Vec<(Str<'_>, Json<'_>)> = Vec::with_capacity(members.len());
    for m in members.drain(..) {
        match kept.last_mut() {
            Some(last) if last.0 == m.0 => *last = m,
            _ => kept.push(m),
        }
    }
    *members = kept;
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

/// Parses one JSON text (surrounding whitespace allowed).
pub fn parse(text: &str) -> Result<Json<'_>, JsonError> {
    let mut p = Parser { s: text.as_bytes(), src: text, i: 0 };
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
            return Ok(Json::Obj(members));
        }
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
                    sort_members(&mut members);
                    return Ok(Json::Obj(members));
                }
                _ => return Err(self.err("expected ',' or '}' in an object")),
            }
        }
    }

    fn number(&mut self) -> Result<Json<'a>, JsonError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
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

    fn string(&mut self) -> Result<Str<'a>, JsonError> {
        self.i += 1; // the opening quote
        let start = self.i;
        let special = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
        self.i += self.s[self.i..].iter().position(special).unwrap_or(self.s.len() - self.i);
        if self.peek() == Some(b'"') {
            // No escapes: borrow. We stopped on an ASCII byte, so this is a char boundary.
            self.i += 1;
            return Ok(Str::from(&self.src[start..self.i - 1]));
        }
        let mut out = String::from(&self.src[start..self.i]);
        let mut lone = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Str { text: Cow::Owned(out), lone });
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out, &mut lone)?;
                }
                Some(b) if b < 0x20 => return Err(self.err("control character in a string (escape it)")),
                Some(_) => {
                    let run = self.i;
                    self.i += self.s[self.i..].iter().position(special).unwrap_or(self.s.len() - self.i);
                    out.push_str(&self.src[run..self.i]);
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_doubles_as_in_javascript() {
        for (text, want) in
            [("1.0", 1.0), ("-0", 0.0), ("1e400", f64::INFINITY), ("9007199254740993", 9007199254740992.0)]
        {
            assert_eq!(parse(text), Ok(Json::Num(want)), "{text}");
        }
        for bad in ["01", "1.", ".5", "1e", "+1", "-", "0x10"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn later_duplicate_keys_win_and_keys_sort_by_utf16() {
        let v = parse(r#"{"b":1,"a":2,"b":3,"\uffff":4,"😀":5}"#).unwrap();
        let Json::Obj(members) = &v else { panic!("an object") };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "😀", "\u{ffff}"]);
        assert_eq!(v.get("b"), Some(&Json::Num(3.0)));
    }

    #[test]
    fn lone_surrogates_are_kept_beside_the_text() {
        let Json::Str(s) = parse(r#""a\ud800b\udc00\ud83d\ude00""#).unwrap() else { panic!("a string") };
        assert_eq!(s.as_str(), "ab😀");
        assert_eq!(s.lone_surrogates(), [LoneSurrogate { at: 1, unit: 0xD800 }, LoneSurrogate { at: 2, unit: 0xDC00 }]);
    }

    #[test]
    fn errors_name_the_byte() {
        assert_eq!(parse("[1,]").unwrap_err().to_string(), "expected a JSON value at byte 3");
        assert_eq!(parse("\"a\u{1}\"").unwrap_err().offset, 2);
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep).unwrap_err().to_string(), "nested deeper than 128 levels at byte 128");
        assert!(parse(&format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH))).is_ok());
    }
}
