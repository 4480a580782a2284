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

use std::cmp::Ordering;
use std::fmt;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 128;

/// A JSON value, plus `Undefined` for the synthetic objects outcome hashing builds.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// JS `undefined`: never produced by the parser; serialized as the bare word `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Any number, as a double.
    Num(f64),
    /// A string (lone surrogates removed).
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, keys unique and sorted by UTF-16 code units.
    Obj(Vec<(String, Json)>),
}

/// Orders two strings by UTF-16 code units, as JavaScript's default sort does.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order equals code point order; it differs from UTF-16 order only between
    // supplementary characters and U+E000..=U+FFFF, whose UTF-8 lead bytes are >= 0xEE.
    if !a.bytes().chain(b.bytes()).any(|x| x >= 0xEE) {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

impl Json {
    /// The value of `key` if `self` is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(members) => members
                .binary_search_by(|(k, _)| cmp_utf16(k, key))
                .ok()
                .map(|i| &members[i].1),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// True for plain objects.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Obj(_))
    }

    /// Builds an object from members in any order (sorted here; later duplicates win).
    pub fn object(mut members: Vec<(String, Json)>) -> Json {
        sort_members(&mut members);
        Json::Obj(members)
    }
}

fn sort_members(members: &mut Vec<(String, Json)>) {
    if members.len() < 2 {
        return;
    }
    // Stable sort keeps duplicates in document order; keep the last of each run.
    members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    let mut out: Vec<(String, Json)> = Vec::with_capacity(members.len());
    for m in members.drain(..) {
        match out.last_mut() {
            Some(last) if last.0 == m.0 => *last = m,
            _ => out.push(m),
        }
    }
    *members = out;
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
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut p = Parser { s: text.as_bytes(), i: 0, src: text };
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
}

impl Parser<'_> {
    fn err(&self, reason: &'static str) -> JsonError {
        JsonError { offset: self.i, reason }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
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

    fn word(&mut self, w: &str, v: Json) -> Result<Json, JsonError> {
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

    fn array(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.enter(depth)?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                _ => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.enter(depth)?;
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Json::Obj(members));
        }
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
            members.push((key, v));
            self.ws();
            match self.s.get(self.i) {
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

    fn number(&mut self) -> Result<Json, JsonError> {
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

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1; // opening quote
        let mut out = String::new();
        loop {
            let run_start = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input is a &str, and we stopped on an ASCII byte, so this is a char boundary.
            out.push_str(&self.src[run_start..self.i]);
            match self.s.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.err("control character in a string (escape it)")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
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
                let hi = self.hex4()?;
                if (0xD800..0xDC00).contains(&hi) && self.s[self.i..].starts_with(b"\\u") {
                    let save = self.i;
                    self.i += 2;
                    let lo = self.hex4()?;
                    if (0xDC00..0xE000).contains(&lo) {
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        out.extend(char::from_u32(cp));
                        return Ok(());
                    }
                    self.i = save; // lone high surrogate: dropped; the next escape stands alone
                    return Ok(());
                }
                // Lone surrogates are removed (sanitizeSurrogates); everything else is a char.
                out.extend(char::from_u32(hi));
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
    fn lone_surrogates_are_removed_and_pairs_kept() {
        assert_eq!(parse(r#""a\ud800b""#).unwrap(), Json::Str("ab".into()));
        assert_eq!(parse(r#""a\udc00b""#).unwrap(), Json::Str("ab".into()));
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap(), Json::Str("\u{1F600}".into()));
        assert_eq!(parse(r#""\ud800\u0041""#).unwrap(), Json::Str("A".into()));
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
