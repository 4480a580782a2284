//! Canonical serialization (`stableStringify`) and the digests built on it.
//!
//! Loop detection compares calls and outcomes by fingerprint: two calls are "the same" when their
//! arguments serialize to the same canonical text (spec/tool-loop.md §1.1). The text is streamed
//! straight into blake3 instead of being built in memory, so a decision hashes its input once
//! and allocates nothing for it.
//!
//! OpenClaw hex-encodes SHA-256; only equality matters (§1.2), so a digest here is the first
//! 128 bits of blake3 over a one-byte domain tag and the canonical text. The tag keeps
//! `argsHash` (which includes the tool name), result hashes and `error:` hashes apart, as
//! OpenClaw's prefixes do.

use crate::json::{Json, Text};

/// A 128-bit fingerprint. Equal inputs give equal digests; a collision needs ~2^64 inputs.
pub type Digest = [u8; 16];

/// `a == b` for digests, as two 64-bit compares. Why not `==`: on byte arrays it is a `memcmp`
/// that LLVM expands for ordering (find the first differing byte, compare it) even when only
/// equality is asked, and the detectors compare a digest per history record.
#[inline(always)]
pub fn same(a: &Digest, b: &Digest) -> bool {
    u128::from_ne_bytes(*a) == u128::from_ne_bytes(*b)
}

/// Where serialized text goes: a `String` (tests, messages) or a hasher.
pub trait Sink {
    /// Appends text.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

/// Streams text into blake3 through a small buffer (blake3 prefers big updates).
pub struct Hasher {
    inner: blake3::Hasher,
    buf: [u8; 256],
    len: usize,
}

impl Hasher {
    /// A hasher whose input starts with the domain `tag`.
    pub fn new(tag: u8) -> Self {
        let mut h = Self { inner: blake3::Hasher::new(), buf: [0; 256], len: 0 };
        h.buf[0] = tag;
        h.len = 1;
        h
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        if self.len + b.len() > self.buf.len() {
            self.inner.update(&self.buf[..self.len]);
            self.len = 0;
            if b.len() > self.buf.len() {
                self.inner.update(b);
                return;
            }
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }

    /// The digest of everything written.
    pub fn finish(mut self) -> Digest {
        self.inner.update(&self.buf[..self.len]);
        self.len = 0;
        let full = self.inner.finalize();
        let mut d = [0u8; 16];
        d.copy_from_slice(&full.as_bytes()[..16]);
        d
    }
}

impl Sink for Hasher {
    fn put(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// Domain tags.
pub mod tag {
    /// `argsHash`: tool name + params.
    pub const ARGS: u8 = b'a';
    /// A result hash.
    pub const RESULT: u8 = b'r';
    /// An `error:` hash.
    pub const ERROR: u8 = b'e';
    /// A warning de-duplication key.
    pub const WARN_KEY: u8 = b'w';
    /// A store key (bot pair, burst bucket, group thread).
    pub const KEY: u8 = b'k';
    /// A name id (tool name, run id) inside a session's history.
    pub const NAME: u8 = b'n';
}

/// A 64-bit id for a short name (a tool name or a run id) kept in every history record: records
/// compare names by id, so they hold no strings and snapshots stay small. Within one session's
/// 30-odd records a collision has odds of about 2^-58.
pub fn name_id(name: &str) -> u64 {
    // A keyed one-shot hash: the key separates this domain, and one-shot hashing of a short
    // input skips the streaming hasher's set-up.
    const KEY: [u8; 32] = *b"loopguard name id, v1 (history)!";
    let d = blake3::keyed_hash(&KEY, name.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d.as_bytes()[..8]);
    u64::from_le_bytes(b)
}

/// Writes `v` in the canonical form of spec/tool-loop.md §1.1.
pub fn write_canonical(v: &Json, out: &mut impl Sink) {
    match v {
        Json::Undefined => out.put("undefined"),
        Json::Null => out.put("null"),
        Json::Bool(true) => out.put("true"),
        Json::Bool(false) => out.put("false"),
        Json::Num(n) if n.is_finite() => write_number(*n, out),
        Json::Num(n) => {
            // Non-finite numbers become a JSON string of their text form.
            out.put("\"");
            write_number(*n, out);
            out.put("\"");
        }
        Json::Str(s) => write_text(s, out),
        Json::Arr(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_canonical(item, out);
            }
            out.put("]");
        }
        Json::Obj(members) => {
            // Keys are kept sorted by UTF-16 code units (see `json`).
            out.put("{");
            for (i, (k, val)) in members.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_text(k, out);
                out.put(":");
                write_canonical(val, out);
            }
            out.put("}");
        }
    }
}

/// Writes a number as JavaScript's `String(n)` does (`-0` → `0`, `1e21`, `Infinity`).
pub fn write_number(n: f64, out: &mut impl Sink) {
    if n == 0.0 {
        out.put("0");
    } else if n.is_nan() {
        out.put("NaN");
    } else if n.is_infinite() {
        out.put(if n > 0.0 { "Infinity" } else { "-Infinity" });
    } else if n.fract() == 0.0 && n.abs() < 9.0e15 {
        // Integers (the common case) print as their digits in JS below 1e21.
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut v = n.abs() as u64;
        while v > 0 {
            i -= 1;
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        if n < 0.0 {
            i -= 1;
            buf[i] = b'-';
        }
        out.put(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.put(buf.format_finite(n));
    }
}

/// Writes a string value or key: its literal as read when that is canonical, else escaped.
pub fn write_text(t: &Text<'_>, out: &mut impl Sink) {
    match t.literal() {
        Some(body) => {
            out.put("\"");
            out.put(body);
            out.put("\"");
        }
        None => write_string(t, out),
    }
}

/// Writes a JSON string literal exactly as `JSON.stringify` does.
pub fn write_string(s: &str, out: &mut impl Sink) {
    out.put("\"");
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        let i = start + crate::json::find_special(&bytes[start..]);
        if i == bytes.len() {
            break;
        }
        out.put(&s[start..i]);
        let b = bytes[i];
        match b {
            b'"' => out.put("\\\""),
            b'\\' => out.put("\\\\"),
            b'\n' => out.put("\\n"),
            b'\r' => out.put("\\r"),
            b'\t' => out.put("\\t"),
            0x08 => out.put("\\b"),
            0x0c => out.put("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let u = [b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]];
                out.put(std::str::from_utf8(&u).unwrap_or_default());
            }
        }
        start = i + 1;
    }
    out.put(&s[start..]);
    out.put("\"");
}

/// The canonical text of `v` (for tests and diagnostics; hashing streams instead).
pub fn canonical(v: &Json) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

/// `argsHash`: the tool name and the canonical params, one digest.
pub fn args_digest(tool: &str, params: &Json) -> Digest {
    let mut h = args_hasher(tool);
    write_canonical(params, &mut h);
    h.finish()
}

/// [`args_digest`] of params whose canonical text is already written
/// ([`crate::canonical_text`]).
pub fn args_digest_canonical(tool: &str, canonical: &[u8]) -> Digest {
    let mut h = args_hasher(tool);
    h.bytes(canonical);
    h.finish()
}

/// What an args digest hashes before the canonical params: the tag, the tool name's length
/// (little-endian u64) and the tool name. `len` holds the length's bytes for the returned parts.
pub fn args_prefix<'a>(tool: &'a str, len: &'a mut [u8; 8]) -> [&'a [u8]; 3] {
    *len = (tool.len() as u64).to_le_bytes();
    [&[tag::ARGS], len, tool.as_bytes()]
}

/// The digest of bytes already laid out as a [`Hasher`] would stream them (tag first), hashed
/// in one call.
pub fn digest_of(input: &[u8]) -> Digest {
    let full = blake3::hash(input);
    let mut d = [0u8; 16];
    d.copy_from_slice(&full.as_bytes()[..16]);
    d
}

fn args_hasher(tool: &str) -> Hasher {
    let mut len = [0u8; 8];
    let mut h = Hasher::new(tag::ARGS);
    for part in &args_prefix(tool, &mut len)[1..] {
        h.bytes(part);
    }
    h
}

/// The digest of a canonical value under a domain tag.
pub fn value_digest(tag: u8, v: &Json) -> Digest {
    let mut h = Hasher::new(tag);
    write_canonical(v, &mut h);
    h.finish()
}

/// A digest of several strings, length-prefixed so that no two lists collide.
pub fn key_digest(tag: u8, parts: &[&[u8]]) -> Digest {
    let mut h = Hasher::new(tag);
    for p in parts {
        h.bytes(&(p.len() as u64).to_le_bytes());
        h.bytes(p);
    }
    h.finish()
}

/// JavaScript's `String.prototype.trim`: strips the ECMAScript white space and line
/// terminators, including U+FEFF, but not U+0085 (which Rust's `str::trim` strips).
///
/// A text that starts and ends with a printable ASCII byte is returned as it is without
/// decoding any character: run ids and most texts are such, and the general trim decodes a
/// character at each end through a predicate call.
#[inline]
pub fn js_trim(s: &str) -> &str {
    let printable = |b: u8| b > b' ' && b < 0x80;
    match s.as_bytes() {
        [first, .., last] if printable(*first) && printable(*last) => s,
        [only] if printable(*only) => s,
        _ => s.trim_matches(is_js_space),
    }
}

/// ECMAScript `WhiteSpace` or `LineTerminator` (the set of `trim` and regex `\s`).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn canon(text: &str) -> String {
        canonical(&parse(text).unwrap())
    }

    #[test]
    fn js_trim_strips_what_javascript_strips_and_nothing_else() {
        let cases = [
            ("", ""),
            ("a", "a"),
            ("run-1", "run-1"),
            (" a", "a"),
            ("a\t", "a"),
            ("\u{B}\u{C}a b\r\n", "a b"),
            ("\u{FEFF}a\u{A0}", "a"),
            ("\u{3000}\u{2028}x\u{205F}", "x"),
            ("\u{85}x\u{85}", "\u{85}x\u{85}"),
            ("é", "é"),
            ("é ", "é"),
            ("\u{7F}", "\u{7F}"),
            ("  ", ""),
        ];
        for (text, want) in cases {
            assert_eq!(js_trim(text), want, "{text:?}");
            assert_eq!(js_trim(text), text.trim_matches(is_js_space), "{text:?}, general trim");
        }
    }

    #[test]
    fn canonical_form_matches_stable_stringify() {
        let cases = [
            (r#"{"b":1,"a":[true,null,"x"]}"#, r#"{"a":[true,null,"x"],"b":1}"#),
            ("1.0", "1"),
            ("-0", "0"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("0.1", "0.1"),
            ("123456789012345680000", "123456789012345680000"),
            ("-42", "-42"),
            ("9007199254740993", "9007199254740992"),
            ("1.5e300", "1.5e+300"),
            ("-0.000001", "-0.000001"),
            ("1e400", "\"Infinity\""),
            ("-1e400", "\"-Infinity\""),
            (r#""tab\there \u0001 \"q\" \\ / é""#, r#""tab\there \u0001 \"q\" \\ / é""#),
            (r#"{"z":{"y":2,"x":1}}"#, r#"{"z":{"x":1,"y":2}}"#),
            ("[]", "[]"),
            ("{}", "{}"),
            (r#""\u2028""#, "\"\u{2028}\""),
            (r#""a\ud800""#, r#""a""#),
        ];
        for (input, want) in cases {
            assert_eq!(canon(input), want, "input {input}");
        }
    }

    #[test]
    fn undefined_is_a_bare_word_and_differs_from_null() {
        let with_undef = Json::object(vec![("a".into(), Json::Num(1.0)), ("b".into(), Json::Undefined)]);
        assert_eq!(canonical(&with_undef), r#"{"a":1,"b":undefined}"#);
        let plain = parse(r#"{"a":1}"#).unwrap();
        assert_ne!(value_digest(tag::RESULT, &with_undef), value_digest(tag::RESULT, &plain));
        assert_ne!(value_digest(tag::RESULT, &Json::Undefined), value_digest(tag::RESULT, &Json::Null));
    }

    #[test]
    fn args_digest_depends_on_tool_and_params_not_key_order() {
        let a = parse(r#"{"x":1,"y":[1,2]}"#).unwrap();
        let b = parse(r#"{"y":[1,2.0],"x":1}"#).unwrap();
        assert_eq!(args_digest("read", &a), args_digest("read", &b));
        assert_ne!(args_digest("read", &a), args_digest("list", &a));
        // Large payloads are hashed whole: a change at the end is seen.
        let big1 = Json::Str("x".repeat(40_000).into());
        let big2 = Json::Str(format!("{}y", "x".repeat(39_999)).into());
        assert_ne!(args_digest("t", &big1), args_digest("t", &big2));
    }

    #[test]
    fn domains_are_separate() {
        let v = Json::Str("x".into());
        assert_ne!(value_digest(tag::RESULT, &v), value_digest(tag::ERROR, &v));
    }

    #[test]
    fn js_trim_differs_from_rust_trim_on_feff_and_0085() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(js_trim("\u{2028}\t a"), "a");
    }
}
