//! The reader: RFC 8259's grammar with JavaScript's numbers and lone surrogates (see the
//! module docs of [`super`]).

use std::borrow::Cow;
use std::fmt;

use super::{len_until, lone::sort_distinct, sort_members, verbatim_len, Json, LoneSurrogate, Str, Text, MAX_DEPTH};

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

pub(super) struct Parser<'a> {
    pub(super) s: &'a [u8],
    pub(super) src: &'a str,
    pub(super) i: usize,
    pub(super) keys: LoneKeys,
}

impl<'a> Parser<'a> {
    pub(super) fn err(&self, reason: &'static str) -> JsonError {
        JsonError { offset: self.i, reason }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
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

    pub(super) fn enter(&self, depth: usize) -> Result<(), JsonError> {
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
        // Room for eight members up front: an object of five to eight (a typical call's arguments)
        // otherwise grows its vector once, a reallocation and a copy of ~76-byte members. A
        // decision 59.0 k -> 58.4 k instructions through wasmtime (callgrind, `decision_profile`).
        let mut members = Vec::with_capacity(8);
        if self.open_members(depth)? {
            loop {
                self.key_start()?;
                let open = self.i;
                // The key as a `Str` at once, not a `Text` first (see `Parser::plain`): a
                // decision ~2 % faster (`decision_profile`, paired runs).
                let key = match self.plain() {
                    Some(key) => Str::read(Cow::Borrowed(key), Vec::new(), Some(&self.src[open..self.i])),
                    None => self.decode(open, open + 1)?.into_str(),
                };
                self.colon()?;
                members.push((key, self.value(depth)?));
                if !self.next_member()? {
                    break;
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
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        let digits = self.i;
        // The integer part's value, exact while it has at most 15 digits (below 2^53).
        let mut int: u64 = 0;
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while let Some(d @ b'0'..=b'9') = self.peek() {
                    int = int.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                    self.i += 1;
                }
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.i - digits <= 15 && !matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            // A double holds such an integer exactly, so this is what the correctly rounded
            // parse below gives (`-0` included). Why: a trace line's timestamp is one, and the
            // general parse was ~350 instructions of a bot event in replay (callgrind).
            let n = int as f64;
            return Ok(Json::Num(if negative { -n } else { n }));
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
        self.text().map(Text::into_str)
    }

    /// Reads a string (the reader is at its opening quote). Inlined: it runs for every key and
    /// string value, and as a call its frame and saved registers cost more than the scan
    /// (callgrind, bot events in replay).
    #[inline(always)]
    pub(super) fn text(&mut self) -> Result<Text<'a>, JsonError> {
        let open = self.i;
        match self.plain() {
            Some(text) => Ok(Text::Plain { text, literal: &self.src[open..self.i] }),
            None => self.decode(open, open + 1),
        }
    }

    /// Reads a string without escapes (the reader is at its opening quote): its text, borrowed,
    /// with the reader past the closing quote. Any other string gives `None`, the reader at the
    /// first byte that is not plain text (where [`Parser::decode`] goes on).
    ///
    /// Why apart from [`Parser::text`]: a [`Text`] made on this path and on the decoding one
    /// lives in memory, written a field at a time and then copied whole, and the processor
    /// cannot forward narrow stores to a wide load: the copy waits for the stores to retire
    /// (`perf annotate` of a bot replay: the two such copies per member were ~30 % of reading a
    /// line). Callers on the hot paths take this `&str` as it is.
    #[inline(always)]
    pub(super) fn plain(&mut self) -> Option<&'a str> {
        let start = self.i + 1; // after the opening quote
        self.i = start + verbatim_len(&self.s[start..]);
        if self.peek() != Some(b'"') {
            return None;
        }
        self.i += 1;
        // `verbatim_len` stops on an ASCII byte, so both ends are char boundaries.
        Some(&self.src[start..self.i - 1])
    }

    /// The rest of [`Parser::text`] for a string with escapes (the reader is at the first one).
    /// A function of its own so that the common case, inlined into every caller, stays small:
    /// a bot event in replay took 15.9 k -> 15.8 k instructions with this apart, then 15.25 k
    /// with `text` inlined (callgrind).
    #[inline(never)]
    pub(super) fn decode(&mut self, open: usize, start: usize) -> Result<Text<'a>, JsonError> {
        let mut out = String::with_capacity(self.i - start + len_until(&self.s[self.i..], b'"'));
        out.push_str(&self.src[start..self.i]);
        let mut lone = Vec::new();
        // Whether every escape so far is the one `JSON.stringify` writes for its character.
        let mut as_stringify_writes = true;
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    let literal = as_stringify_writes.then(|| &self.src[open..self.i]);
                    return Ok(Text::Decoded(Str::read(Cow::Owned(out), lone, literal)));
                }
                Some(b'\\') => {
                    self.i += 1;
                    as_stringify_writes &= stringify_escape(&self.s[self.i..]);
                    self.escape(&mut out, &mut lone)?;
                }
                Some(b) if b < 0x20 => return Err(self.err("control character in a string (escape it)")),
                Some(_) => {
                    let run = self.i;
                    self.i += verbatim_len(&self.s[self.i..]);
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

/// True when the escape starting at `after` (the bytes after its backslash) is the one
/// `JSON.stringify` writes for its character: `\"`, `\\`, the five short control escapes, and
/// `\u00xx` (lowercase hex) for the other control characters. `\/`, `\u0041`, `\u001F` and
/// every surrogate escape are not.
fn stringify_escape(after: &[u8]) -> bool {
    match after {
        [b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't', ..] => true,
        [b'u', b'0', b'0', hi @ (b'0' | b'1'), lo, ..] => {
            let short = *hi == b'0' && matches!(lo, b'8' | b'9' | b'a' | b'c' | b'd');
            (lo.is_ascii_digit() || (b'a'..=b'f').contains(lo)) && !short
        }
        _ => false,
    }
}
