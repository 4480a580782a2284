//! A JSON reader that sees values the way JavaScript does.
//!
//! Fingerprints must match OpenClaw's, and OpenClaw reads tool arguments with `JSON.parse`. So
//! numbers are IEEE-754 doubles (`1.0` and `1` are one value, `1e400` is Infinity), a later
//! duplicate key replaces an earlier one, and lone UTF-16 surrogates written as `\uD800` escapes
//! are dropped (the canonical serializer removes them anyway, spec/tool-loop.md §1.1).
//!
//! Objects are stored with their keys sorted by UTF-16 code units, the order the canonical
//! serializer needs, so sorting happens once at parse time. Nesting is limited to [`MAX_DEPTH`]
//! so that hostile input gets an error instead of exhausting the guest's stack.

use std::cell::OnceCell;
use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;

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
    /// A string (lone surrogates removed).
    Str(Text<'a>),
    /// An array.
    Arr(Vec<Json<'a>>),
    /// An object, keys unique and sorted by UTF-16 code units.
    Obj(Vec<(Text<'a>, Json<'a>)>),
}

/// A string value or key: its text, and, when the reader saw it, its canonical literal.
///
/// Fingerprinting writes every string of a call back out in `JSON.stringify` form. Most strings
/// in tool arguments and results were written that way to begin with (no escapes, or only the
/// escapes `JSON.stringify` itself uses, like `\n`), so the reader keeps the body of the literal
/// as it appeared and the canonical writer copies it instead of scanning and re-escaping every
/// byte. Strings built in code carry no literal and are escaped when written.
///
/// A literal with escapes is decoded only when its text is read: fingerprinting writes the
/// literal back out and never needs the text, so a tool's multi-kilobyte output is scanned once
/// and not copied.
#[derive(Debug, Clone)]
pub struct Text<'a> {
    text: Repr<'a>,
    literal: Option<&'a str>,
}

#[derive(Debug, Clone)]
enum Repr<'a> {
    /// No escapes: the text is the literal's body.
    Borrowed(&'a str),
    /// Decoded (or built in code).
    Owned(String),
    /// A canonical literal with escapes, decoded on first read.
    Escaped(OnceCell<String>),
}

impl<'a> Text<'a> {
    /// The string.
    pub fn as_str(&self) -> &str {
        match &self.text {
            Repr::Borrowed(s) => s,
            Repr::Owned(s) => s,
            Repr::Escaped(cell) => cell.get_or_init(|| decode_canonical(self.literal.unwrap_or_default())),
        }
    }

    /// Whether JavaScript's `trim` would leave the string as it is; from the literal when there
    /// is one, so that an escaped string need not be decoded.
    pub fn is_js_trimmed(&self) -> bool {
        let Some(lit) = self.literal else {
            let s = self.as_str();
            return crate::digest::js_trim(s).len() == s.len();
        };
        let space = |c: Option<char>| c.is_some_and(crate::digest::is_js_space);
        !space(first_char(lit)) && !space(last_char(lit))
    }

    /// The body of its `JSON.stringify` literal (without quotes), when known.
    pub fn literal(&self) -> Option<&'a str> {
        self.literal
    }
}

impl Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text<'_> {}

impl PartialEq<str> for Text<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(s: &'a str) -> Self {
        Text { text: Repr::Borrowed(s), literal: None }
    }
}

impl From<String> for Text<'_> {
    fn from(s: String) -> Self {
        Text { text: Repr::Owned(s), literal: None }
    }
}

/// The length of the escape at the start of `s` (which starts with its backslash) when it is the
/// one `JSON.stringify` writes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u00xx` in
/// lower-case hex for a control character without a short form. `None` for any other escape.
pub fn canonical_escape_len(s: &[u8]) -> Option<usize> {
    match s.get(1)? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let hex = s.get(2..6)?;
            let digit = |b: u8| match b {
                b'0'..=b'9' => Some(b - b'0'),
                b'a'..=b'f' => Some(b - b'a' + 10),
                _ => None,
            };
            let code = digit(hex[2])? * 16 + digit(hex[3])?;
            let short = matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
            (hex[..2] == *b"00" && code < 0x20 && !short).then_some(6)
        }
        _ => None,
    }
}

/// Decodes the body of a canonical literal (only the escapes of [`canonical_escape_len`]).
fn decode_canonical(lit: &str) -> String {
    let bytes = lit.as_bytes();
    let mut out = String::with_capacity(lit.len());
    let mut start = 0;
    while let Some(k) = bytes[start..].iter().position(|&b| b == b'\\') {
        let at = start + k;
        out.push_str(&lit[start..at]);
        let (c, len) = escape_at(bytes, at);
        out.push(c);
        start = at + len;
    }
    out.push_str(&lit[start..]);
    out
}

/// The character of the canonical escape at `at` and its length.
fn escape_at(bytes: &[u8], at: usize) -> (char, usize) {
    match bytes.get(at + 1) {
        Some(b'b') => ('\u{8}', 2),
        Some(b'f') => ('\u{c}', 2),
        Some(b'n') => ('\n', 2),
        Some(b'r') => ('\r', 2),
        Some(b't') => ('\t', 2),
        Some(b'u') => {
            let hex = |b: u8| char::from(b).to_digit(16).unwrap_or(0);
            let code = bytes.get(at + 4..at + 6).map_or(0, |h| hex(h[0]) * 16 + hex(h[1]));
            (char::from_u32(code).unwrap_or('\0'), 6)
        }
        Some(&c) => (char::from(c), 2),
        None => ('\\', 1),
    }
}

/// The first character a canonical literal body decodes to.
fn first_char(lit: &str) -> Option<char> {
    let bytes = lit.as_bytes();
    match bytes.first()? {
        b'\\' => Some(escape_at(bytes, 0).0),
        _ => lit.chars().next(),
    }
}

/// The last character a canonical literal body decodes to. An escape ends the body when the
/// backslash that starts it is preceded by an even number of backslashes (pairs are `\\`).
fn last_char(lit: &str) -> Option<char> {
    let bytes = lit.as_bytes();
    let n = bytes.len();
    let starts_escape = |at: usize| bytes[..=at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
    if n >= 2 && bytes[n - 2] == b'\\' && starts_escape(n - 2) {
        return Some(escape_at(bytes, n - 2).0);
    }
    if n >= 6 && bytes[n - 6] == b'\\' && bytes[n - 5] == b'u' && starts_escape(n - 6) {
        return Some(escape_at(bytes, n - 6).0);
    }
    lit.chars().next_back()
}

/// Orders two strings by UTF-16 code units, as JavaScript's default sort does.
///
/// UTF-8 byte order is code point order; it differs from UTF-16 order only between a character
/// in U+E000..=U+FFFF (lead byte 0xEE or 0xEF) and a supplementary one (lead byte 0xF0..=0xF4),
/// so only the first differing byte needs a look.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    match first_difference(x, y) {
        None => x.len().cmp(&y.len()),
        Some(i) => {
            let (p, q) = (x[i], y[i]);
            let bmp_high = |c: u8| (0xEE..=0xEF).contains(&c);
            let astral = |c: u8| c >= 0xF0;
            if (bmp_high(p) && astral(q)) || (astral(p) && bmp_high(q)) {
                q.cmp(&p)
            } else {
                p.cmp(&q)
            }
        }
    }
}

/// The index of the first byte where `x` and `y` differ, within their common length; eight bytes
/// per step (keys are sorted on every object read).
fn first_difference(x: &[u8], y: &[u8]) -> Option<usize> {
    let n = x.len().min(y.len());
    let mut i = 0;
    while i + 8 <= n {
        let mut p = [0u8; 8];
        let mut q = [0u8; 8];
        p.copy_from_slice(&x[i..i + 8]);
        q.copy_from_slice(&y[i..i + 8]);
        let diff = u64::from_le_bytes(p) ^ u64::from_le_bytes(q);
        if diff != 0 {
            return Some(i + (diff.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..n).find(|&k| x[k] != y[k])
}

impl<'a> Json<'a> {
    /// The value of `key` if `self` is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(members) if members.len() <= 8 => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
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
    pub fn object(mut members: Vec<(Text<'a>, Json<'a>)>) -> Json<'a> {
        sort_members(&mut members);
        Json::Obj(members)
    }
}

fn sort_members(members: &mut Vec<(Text<'_>, Json<'_>)>) {
    if members.windows(2).all(|w| cmp_utf16(&w[0].0, &w[1].0) == Ordering::Less) {
        return; // already sorted and unique (also every object of < 2 members)
    }
    // Stable sort keeps duplicates in document order; keep the last of each run, in place.
    members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    let mut kept = 0;
    for i in 0..members.len() {
        if kept > 0 && members[kept - 1].0 == members[i].0 {
            members.swap(kept - 1, i);
        } else {
            members.swap(kept, i);
            kept += 1;
        }
    }
    members.truncate(kept);
}

/// The index of the first byte in `s` that is `"`, `\\` or a C0 control, or `s.len()`.
///
/// Strings are most of a tool call's bytes, and both parsing and canonical writing scan them
/// for these bytes. In the component (WebAssembly with SIMD) this looks at sixteen bytes per
/// step with vector compares; natively, and for the last few bytes, eight per step with SWAR
/// bit tricks on a `u64`.
///
/// In the component the first sixteen bytes are looked at before any loop: most strings (keys,
/// ids, short values) end there, and wasmtime puts an interruption check with its register
/// spills at every loop header, which cost more than the scan itself.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub fn find_special(s: &[u8]) -> usize {
    if s.len() < 16 {
        return find_special_short(s);
    }
    match specials16(&s[..16]) {
        0 => find_special_from16(s),
        hit => hit.trailing_zeros() as usize,
    }
}

/// The bit mask of the special bytes among sixteen.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(crate) fn specials16(chunk: &[u8]) -> u16 {
    use core::arch::wasm32::{i64x2, i8x16_bitmask, i8x16_eq, u8x16_lt, u8x16_splat, v128_or};
    let mut w = [0u8; 16];
    w.copy_from_slice(chunk);
    let x = u128::from_le_bytes(w);
    let v = i64x2(x as i64, (x >> 64) as i64);
    let quote = i8x16_eq(v, u8x16_splat(b'"'));
    let slash = i8x16_eq(v, u8x16_splat(b'\\'));
    let control = u8x16_lt(v, u8x16_splat(0x20));
    i8x16_bitmask(v128_or(v128_or(quote, slash), control))
}

/// [`find_special`] past a first sixteen bytes without a hit (`s.len() >= 16`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(never)]
fn find_special_from16(s: &[u8]) -> usize {
    let n = s.len();
    let mut i = 16;
    while i + 16 <= n {
        let hit = specials16(&s[i..i + 16]);
        if hit != 0 {
            return i + hit.trailing_zeros() as usize;
        }
        i += 16;
    }
    // The last sixteen bytes, overlapping bytes already found plain: a hit is past them.
    match specials16(&s[n - 16..]) {
        0 => n,
        hit => n - 16 + hit.trailing_zeros() as usize,
    }
}

/// [`find_special`] of fewer than sixteen bytes (the end of a text), out of line so that the
/// vector loop needs no stack frame.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(never)]
pub(crate) fn find_special_short(s: &[u8]) -> usize {
    find_special_swar(s)
}

/// [`find_special`] outside the component.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub fn find_special(s: &[u8]) -> usize {
    find_special_swar(s)
}

/// [`find_special`] eight bytes per step.
#[inline(always)]
fn find_special_swar(s: &[u8]) -> usize {
    let mut i = 0;
    while i + 8 <= s.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        if let Some(at) = special_in(u64::from_le_bytes(w)) {
            return i + at;
        }
        i += 8;
    }
    // The tail, padded with a byte that is never special.
    let mut w = [b'a'; 8];
    w[..s.len() - i].copy_from_slice(&s[i..]);
    match special_in(u64::from_le_bytes(w)) {
        Some(at) => i + at,
        None => s.len(),
    }
}

/// The index of the first special byte in eight little-endian bytes.
///
/// A byte is zero (or < 0x20) exactly when the subtraction borrows into its high bit and the byte
/// itself did not have its high bit set. A borrow can only flag bytes *above* a true hit, so
/// the lowest flagged byte is exact.
#[inline(always)]
fn special_in(x: u64) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (LO * u64::from(b'"'));
    let slash = x ^ (LO * u64::from(b'\\'));
    let hit =
        ((quote.wrapping_sub(LO) & !quote) | (slash.wrapping_sub(LO) & !slash) | (x.wrapping_sub(LO * 0x20) & !x)) & HI;
    (hit != 0).then(|| (hit.trailing_zeros() / 8) as usize)
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
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        src: text,
        members: Vec::with_capacity(STACK_CAPACITY),
        items: Vec::with_capacity(STACK_CAPACITY),
    };
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
    i: usize,
    src: &'a str,
    /// Members of the objects being read, innermost last: each object is collected here and
    /// then moved into a vector of exactly its size, so reading costs one allocation per object
    /// instead of a doubling series.
    members: Vec<(Text<'a>, Json<'a>)>,
    /// The same for array items.
    items: Vec<Json<'a>>,
}

/// Initial room in each stack: enough for the tool arguments and results seen in practice, so a
/// parse allocates its stacks once and never grows them.
const STACK_CAPACITY: usize = 16;

impl<'a> Parser<'a> {
    fn err(&self, reason: &'static str) -> JsonError {
        JsonError { offset: self.i, reason }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
        match self.s.get(self.i) {
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
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(self.err("expected a JSON value"))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            Err(self.err("nested deeper than 128 levels"))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
        self.enter(depth)?;
        self.i += 1;
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Json::Arr(Vec::new()));
        }
        let base = self.items.len();
        loop {
            self.ws();
            let v = self.value(depth)?;
            self.items.push(v);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    let mut items = Vec::with_capacity(self.items.len() - base);
                    items.extend(self.items.drain(base..));
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
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Json::Obj(Vec::new()));
        }
        let base = self.members.len();
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.err("expected a string key in an object"));
            }
            let key = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(self.err("expected ':' after an object key"));
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth)?;
            self.members.push((key, v));
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    let mut members = Vec::with_capacity(self.members.len() - base);
                    members.extend(self.members.drain(base..));
                    sort_members(&mut members);
                    return Ok(Json::Obj(members));
                }
                _ => return Err(self.err("expected ',' or '}' in an object")),
            }
        }
    }

    fn number(&mut self) -> Result<Json<'a>, JsonError> {
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match self.s.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !matches!(self.s.get(self.i), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number: digits expected after '.'"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.s.get(self.i) {
                self.i += 1;
            }
            if !matches!(self.s.get(self.i), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number: digits expected in the exponent"));
            }
            self.digits();
        }
        let text = &self.src[start..self.i];
        // Fast path: a plain integer of at most 15 digits is exact as a double.
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) {
            let v = digits.bytes().fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0')) as f64;
            return Ok(Json::Num(if text.len() != digits.len() { -v } else { v }));
        }
        // Rust's float parsing is correctly rounded, like JS; overflow gives ±Infinity.
        self.src[start..self.i]
            .parse::<f64>()
            .map(Json::Num)
            .map_err(|_| JsonError { offset: start, reason: "invalid number" })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut n = 0u32;
        for _ in 0..4 {
            let d = match self.s.get(self.i) {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape: four hex digits expected")),
            };
            n = n * 16 + u32::from(d);
            self.i += 1;
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<Text<'a>, JsonError> {
        self.i += 1; // opening quote
        let start = self.i;
        self.i += find_special(&self.s[self.i..]);
        if self.s.get(self.i) == Some(&b'"') {
            // No escapes: borrow. We stopped on an ASCII byte, so this is a char boundary; and
            // with no quote, backslash or control inside, the text is its own literal.
            self.i += 1;
            let text = &self.src[start..self.i - 1];
            return Ok(Text { text: Repr::Borrowed(text), literal: Some(text) });
        }
        // Escapes, usually only those `JSON.stringify` writes: keep the literal and decode it
        // when (if ever) the text is read.
        let mut j = self.i;
        while self.s.get(j) == Some(&b'\\') {
            let Some(len) = canonical_escape_len(&self.s[j..]) else { break };
            j += len;
            j += find_special(&self.s[j..]);
            if self.s.get(j) == Some(&b'"') {
                self.i = j + 1;
                let literal = &self.src[start..j];
                return Ok(Text { text: Repr::Escaped(OnceCell::new()), literal: Some(literal) });
            }
        }
        // Anything else (other escapes, errors) is decoded now, by the full rules.
        // Escapes only shorten a string, so the rest of the text bounds its length; reserving
        // that (up to a few KiB) saves the doubling series for the tool output strings carry.
        let mut out = String::with_capacity((self.s.len() - start).min(4096));
        let mut canonical = true;
        self.i = start;
        loop {
            let run_start = self.i;
            self.i += find_special(&self.s[self.i..]);
            // The input is a &str, and we stopped on an ASCII byte, so this is a char boundary.
            out.push_str(&self.src[run_start..self.i]);
            match self.s.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    let literal = canonical.then(|| &self.src[start..self.i - 1]);
                    return Ok(Text { text: Repr::Owned(out), literal });
                }
                Some(b'\\') => {
                    self.i += 1;
                    canonical &= self.escape(&mut out)?;
                }
                Some(_) => return Err(self.err("control character in a string (escape it)")),
            }
        }
    }

    /// Decodes one escape (after its backslash) into `out`; true when the escape is the one
    /// `JSON.stringify` writes for that character, so that the literal stays canonical.
    fn escape(&mut self, out: &mut String) -> Result<bool, JsonError> {
        let c = match self.s.get(self.i) {
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
                let digits = self.i;
                let hi = self.hex4()?;
                if (0xD800..0xDC00).contains(&hi) && self.s[self.i..].starts_with(b"\\u") {
                    let save = self.i;
                    self.i += 2;
                    let lo = self.hex4()?;
                    if (0xDC00..0xE000).contains(&lo) {
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        out.extend(char::from_u32(cp));
                        return Ok(false);
                    }
                    self.i = save; // lone high surrogate: dropped; the next escape stands alone
                    return Ok(false);
                }
                // Lone surrogates are removed (sanitizeSurrogates); everything else is a char.
                out.extend(char::from_u32(hi));
                // `JSON.stringify` writes `\u00xx` (lower-case hex) only for controls without a
                // short form.
                let lower_hex = self.s[digits..self.i].iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
                return Ok(hi < 0x20 && !matches!(hi, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) && lower_hex);
            }
            _ => return Err(self.err("invalid escape in a string")),
        };
        self.i += 1;
        out.push(c);
        Ok(c != '/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_doubles_like_js() {
        assert_eq!(parse("1.0").unwrap(), Json::Num(1.0));
        assert_eq!(parse("1e400").unwrap(), Json::Num(f64::INFINITY));
        assert_eq!(parse("-1e400").unwrap(), Json::Num(f64::NEG_INFINITY));
        assert_eq!(parse("9007199254740993").unwrap(), Json::Num(9007199254740992.0));
        for bad in ["01", "1.", ".5", "+1", "1e", "-", "NaN", "Infinity"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cmp_utf16_agrees_with_comparing_utf16_code_units() {
        let prefix = "a_common_prefix_longer_than_a_word_";
        let tails = ["", "a", "b", "ab", "\u{FF61}", "\u{1F600}", "\u{E000}", "\u{FFFF}", "\u{10000}", "z\u{1F600}"];
        for p in ["", "x", prefix] {
            for a in tails {
                for b in tails {
                    let (a, b) = (format!("{p}{a}"), format!("{p}{b}"));
                    let want = a.encode_utf16().cmp(b.encode_utf16());
                    assert_eq!(cmp_utf16(&a, &b), want, "{a:?} vs {b:?}");
                }
            }
        }
    }

    #[test]
    fn later_duplicate_keys_win_and_keys_sort_by_utf16() {
        let v = parse(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(v, Json::Obj(vec![("a".into(), Json::Num(2.0)), ("b".into(), Json::Num(3.0))]));
        // U+FF61 sorts after U+1F600 in UTF-8 byte order but before it in UTF-16 order? No:
        // the surrogate D83D < FF61, so the emoji sorts first in UTF-16.
        let v = parse("{\"\u{FF61}\":1,\"\u{1F600}\":2}").unwrap();
        let Json::Obj(m) = v else { panic!() };
        assert_eq!(m[0].0, "\u{1F600}");
    }

    #[test]
    fn a_literal_is_kept_exactly_when_it_is_what_json_stringify_writes() {
        for (text, kept) in [
            (r#""plain text""#, true),
            (r#""line\nbreak\ttab\r\b\f \" \\ end""#, true),
            (r#""ctl \u001f \u0000 \u000b""#, true),
            (r#""upper hex \u001F""#, false),
            (r#""short form exists \u000a""#, false),
            (r#""slash \/""#, false),
            (r#""letter \u0041""#, false),
            (r#""pair \ud83d\ude00""#, false),
            (r#""lone \ud800""#, false),
            ("\"raw \u{1F600} \u{2028} \u{7f}\"", true),
        ] {
            let Json::Str(t) = parse(text).unwrap() else { panic!("{text}") };
            assert_eq!(t.literal().is_some(), kept, "{text}");
            if let Some(body) = t.literal() {
                let mut escaped = String::new();
                crate::digest::write_string(&t, &mut escaped);
                assert_eq!(format!("\"{body}\""), escaped, "{text}");
            }
        }
    }

    #[test]
    fn an_escaped_literal_decodes_to_the_text_json_parse_gives() {
        for text in [
            r#""line\nbreak\ttab\r\b\f \" \\ end""#,
            r#""ctl \u001f \u0000 \u000b and é""#,
            r#""\\n is a backslash and an n""#,
            r#""\n""#,
        ] {
            let Json::Str(t) = parse(text).unwrap() else { panic!("{text}") };
            assert!(t.literal().is_some(), "{text}");
            let want: String = serde_json::from_str(text).unwrap();
            assert_eq!(t.as_str(), want, "{text}");
        }
    }

    #[test]
    fn trimming_is_judged_from_the_literal_as_js_trim_judges_the_text() {
        for (text, trimmed) in [
            (r#""plain""#, true),
            (r#""""#, true),
            (r#""\nleading newline""#, false),
            (r#""trailing newline\n""#, false),
            (r#""trailing tab\t""#, false),
            (r#""\u000b vertical tab first""#, false),
            (r#""vertical tab last \u000b""#, false),
            (r#""\u0001 other control first""#, true),
            (r#""ends in a backslash and n \\n""#, true),
            (r#""ends in a backslash \\""#, true),
            (r#""ends in an escaped quote \"""#, true),
            (r#""backslash then u000b as text \\u000b""#, true),
            (r#""three backslashes then a newline \\\n""#, false),
            ("\"\u{3000}ideographic space\"", false),
            ("\"byte order mark\u{FEFF}\"", false),
            ("\"next line \u{85}\"", true),
            (r#""x""#, true),
        ] {
            let Json::Str(t) = parse(text).unwrap() else { panic!("{text}") };
            let want: String = serde_json::from_str(text).unwrap();
            assert_eq!(crate::digest::js_trim(&want).len() == want.len(), trimmed, "table entry {text}");
            assert_eq!(t.is_js_trimmed(), trimmed, "{text}");
        }
    }

    #[test]
    fn lone_surrogates_are_removed_and_pairs_kept() {
        assert_eq!(parse(r#""a\ud800b""#).unwrap(), Json::Str("ab".into()));
        assert_eq!(parse(r#""a\udc00b""#).unwrap(), Json::Str("ab".into()));
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap(), Json::Str("\u{1F600}".into()));
        assert_eq!(parse(r#""\ud800\u0041""#).unwrap(), Json::Str("A".into()));
    }

    #[test]
    fn find_special_finds_the_first_quote_backslash_or_control() {
        for (text, want) in [
            ("", 0),
            ("abc", 3),
            ("abcdefghijklmnop\"", 16),
            ("abcdefgh\\ijk", 8),
            ("abcdefghijklm\u{1f}", 13),
            ("é日本語\u{7f}\u{80}\u{ff}abcdefgh\"", "é日本語\u{7f}\u{80}\u{ff}abcdefgh".len()),
            ("\"", 0),
            (" !#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}~\t", " !#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}~".len()),
        ] {
            assert_eq!(find_special(text.as_bytes()), want, "{text:?}");
        }
    }

    #[test]
    fn find_special_agrees_with_a_byte_scan_at_every_position() {
        let naive = |s: &[u8]| s.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(s.len());
        // Up to three 16-byte steps: the component scans sixteen bytes at a time and ends with
        // an overlapping last step.
        for len in 0..48 {
            for filler in [b'x', 0x1f + 1, 0x7f, 0x80, 0xff, b'"' + 1, b'\\' - 1] {
                for at in 0..len {
                    for special in [b'"', b'\\', 0, 0x1f, b'\n'] {
                        let mut buf = vec![filler; len];
                        buf[at] = special;
                        // A second special later must not move the answer.
                        if at + 3 < len {
                            buf[at + 3] = 0;
                        }
                        assert_eq!(find_special(&buf), naive(&buf), "{buf:?}");
                    }
                }
                assert_eq!(find_special(&vec![filler; len]), len);
            }
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(parse(&deep).unwrap_err().reason, "nested deeper than 128 levels");
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn malformed_text_reports_an_offset() {
        let e = parse(r#"{"a":1,}"#).unwrap_err();
        assert_eq!(e.offset, 7);
        assert!(parse("\"abc").is_err());
        assert!(parse("[1 2]").is_err());
        assert!(parse("{} x").is_err());
        assert!(parse("\"a\u{1}\"").is_err());
    }
}
