//! The canonical serialization of a value (`stableStringify`, docs/spec/tool-loop.md §1.1).
//!
//! Loop detection compares calls and outcomes by fingerprint: two calls are "the same" when
//! their arguments serialize to the same canonical text. The text is written into a [`Sink`]:
//! a `String` for tests and messages, or a hasher ([`crate::digest::Hasher`]) so that a decision
//! hashes its input without building the text in memory.
//!
//! A [`Style`] says how strings are written: the documented form removes lone surrogates; the
//! openclaw 2026.9 form keeps them as `JSON.stringify` writes them (`\udXXX`, lowercase hex),
//! in keys too, with keys ordered by their UTF-16 code units lone surrogates included; outcome
//! digests of 2026.9 also canonicalize untrusted-content marker ids ([`markers`]), and then
//! order keys by (canonicalized key, raw key) and write the canonicalized key, as
//! `stableStringify` does when it is given a string normalizer.

pub mod markers;

use std::borrow::Cow;

use crate::json::{Json, LoneSurrogate, Str};

/// Where serialized text goes.
pub trait Sink {
    /// Appends text.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// How strings are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    /// Write lone surrogates as `\udXXX` (and order keys by their code units, lone surrogates
    /// included) instead of removing them.
    pub lone_surrogates: bool,
    /// Canonicalize untrusted-content marker ids in every string, keys included.
    pub marker_ids: bool,
}

impl Style {
    /// The documented form: lone surrogates removed, strings as they are.
    pub const DOCUMENTED: Style = Style { lone_surrogates: false, marker_ids: false };
}

/// Writes `v` in the documented canonical form: keys in UTF-16 order (as [`Json::Obj`] keeps
/// them), no spaces, `undefined` as a bare word, non-finite numbers as strings, lone surrogates
/// dropped.
pub fn write_canonical(v: &Json, out: &mut impl Sink) {
    write_canonical_in(v, Style::DOCUMENTED, out)
}

/// Writes `v` in the canonical form of `style`.
pub fn write_canonical_in(v: &Json, style: Style, out: &mut impl Sink) {
    match v {
        Json::Undefined => out.put("undefined"),
        Json::Null => out.put("null"),
        Json::Bool(true) => out.put("true"),
        Json::Bool(false) => out.put("false"),
        Json::Num(n) if n.is_finite() => write_number(*n, out),
        Json::Num(n) => {
            out.put("\"");
            write_number(*n, out);
            out.put("\"");
        }
        Json::Str(s) => write_str_in(s, style, out),
        Json::Arr(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_canonical_in(item, style, out);
            }
            out.put("]");
        }
        Json::Obj(members) if style == Style::DOCUMENTED || !needs_reorder(members, style) => {
            out.put("{");
            for (i, (k, val)) in members.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_str_in(k, style, out);
                out.put(":");
                write_canonical_in(val, style, out);
            }
            out.put("}");
        }
        Json::Obj(members) => write_reordered(members, style, out),
    }
}

/// True when the members' order (by text) is not the order `style` writes them in: some key
/// has lone surrogates that are kept, or a marker id that is canonicalized.
fn needs_reorder(members: &[(Str<'_>, Json<'_>)], style: Style) -> bool {
    members.iter().any(|(k, _)| {
        (style.lone_surrogates && k.has_lone())
            || (style.marker_ids && matches!(markers::canonicalize(k), Cow::Owned(_)))
    })
}

/// Objects whose keys the style changes: sorted by (written key, raw key), each by its UTF-16
/// code units, and written with the written key (`compareStableStrings` over normalized keys).
fn write_reordered(members: &[(Str<'_>, Json<'_>)], style: Style, out: &mut impl Sink) {
    let keep = |k: &Str<'_>| if style.lone_surrogates { k.lone_surrogates().to_vec() } else { Vec::new() };
    let mut keyed: Vec<(Str<'_>, Str<'_>, &Json<'_>)> = members
        .iter()
        .map(|(k, v)| {
            let text = if style.marker_ids { markers::canonicalize(k) } else { Cow::Borrowed(k.as_str()) };
            let raw = Str::with_lone(Cow::Borrowed(k.as_str()), keep(k));
            (Str::with_lone(text, keep(k)), raw, v)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp_units(&b.0).then_with(|| a.1.cmp_units(&b.1)));
    out.put("{");
    for (i, (written, _, val)) in keyed.iter().enumerate() {
        if i > 0 {
            out.put(",");
        }
        write_string_lone(written, written.lone_surrogates(), out);
        out.put(":");
        write_canonical_in(val, style, out);
    }
    out.put("}");
}

/// Writes a number as JavaScript's `String(n)` does (`-0` → `0`, `1e21` → `1e+21`, `Infinity`).
pub fn write_number(n: f64, out: &mut impl Sink) {
    if n == 0.0 {
        out.put("0");
    } else if n.is_nan() {
        out.put("NaN");
    } else if n.is_infinite() {
        out.put(if n > 0.0 { "Infinity" } else { "-Infinity" });
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        // Integers below 2^53 (counts, ids, exit codes, timeouts: most numbers in tool calls)
        // are exact in an i64 and `String(n)` writes all their digits; itoa is ~6x cheaper
        // than the shortest-double search for them.
        out.put(itoa::Buffer::new().format(n as i64));
    } else {
        out.put(ryu_js::Buffer::new().format_finite(n));
    }
}

/// Writes a parsed string (its lone surrogates removed, as `sanitizeSurrogates` does).
pub fn write_str(s: &Str<'_>, out: &mut impl Sink) {
    write_str_in(s, Style::DOCUMENTED, out)
}

/// Writes a parsed string in `style`.
pub fn write_str_in(s: &Str<'_>, style: Style, out: &mut impl Sink) {
    let text = if style.marker_ids { markers::canonicalize(s) } else { Cow::Borrowed(s.as_str()) };
    if style.lone_surrogates {
        write_string_lone(&text, s.lone_surrogates(), out)
    } else {
        write_string(&text, out)
    }
}

/// Writes a JSON string literal exactly as `JSON.stringify` does.
pub fn write_string(s: &str, out: &mut impl Sink) {
    out.put("\"");
    escape_into(s, out);
    out.put("\"");
}

/// Writes `text` with `lone` surrogates at their offsets as `JSON.stringify` does: `\udXXX`.
fn write_string_lone(text: &str, lone: &[LoneSurrogate], out: &mut impl Sink) {
    out.put("\"");
    let mut from = 0;
    for l in lone {
        let at = l.at.clamp(from, text.len());
        escape_into(text.get(from..at).unwrap_or(""), out);
        out.put(&format!("\\u{:04x}", l.unit));
        from = at;
    }
    escape_into(text.get(from..).unwrap_or(""), out);
    out.put("\"");
}

/// The escapes of `JSON.stringify` (quote, backslash, control characters), without the quotes.
fn escape_into(s: &str, out: &mut impl Sink) {
    // Runs without an escape go out whole; every byte escaped is ASCII, so the slices are on
    // char boundaries.
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: Cow<'static, str> = match b {
            b'"' => "\\\"".into(),
            b'\\' => "\\\\".into(),
            b'\n' => "\\n".into(),
            b'\r' => "\\r".into(),
            b'\t' => "\\t".into(),
            0x08 => "\\b".into(),
            0x0c => "\\f".into(),
            0x00..=0x1f => format!("\\u{b:04x}").into(),
            _ => continue,
        };
        out.put(&s[from..i]);
        out.put(&escape);
        from = i + 1;
    }
    out.put(&s[from..]);
}

/// The canonical text of `v` (for tests, messages and `formatError`; hashing streams instead).
pub fn canonical(v: &Json) -> String {
    canonical_in(v, Style::DOCUMENTED)
}

/// The canonical text of `v` in `style`.
pub fn canonical_in(v: &Json, style: Style) -> String {
    let mut s = String::new();
    write_canonical_in(v, style, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn canon(text: &str) -> String {
        canonical(&parse(text).unwrap())
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
            ("9007199254740991", "9007199254740991"),
            ("-9007199254740991", "-9007199254740991"),
            ("120000", "120000"),
            ("-1", "-1"),
            ("1e3", "1000"),
            ("2.5", "2.5"),
            ("-7.0", "-7"),
            ("1.5e300", "1.5e+300"),
            ("-0.000001", "-0.000001"),
            ("1e400", "\"Infinity\""),
            ("-1e400", "\"-Infinity\""),
            (r#""tab\there \u0001 \"q\" \\ \/ é""#, r#""tab\there \u0001 \"q\" \\ / é""#),
            (r#"{"z":{"y":2,"x":1}}"#, r#"{"z":{"x":1,"y":2}}"#),
            ("[]", "[]"),
            ("{}", "{}"),
            (r#""\u2028\u001F\u0041""#, "\"\u{2028}\\u001fA\""),
            (r#""a\ud800""#, r#""a""#),
        ];
        for (input, want) in cases {
            assert_eq!(canon(input), want, "input {input}");
        }
    }

    /// The outputs of the openclaw 2026.9.6 package's `stableStringify` on the same JSON
    /// (tests/oracle/NOTES.md §2.7): lone surrogates kept as `\udXXX`, in keys too, keys that
    /// differ only in them kept apart and ordered by their code units.
    #[test]
    fn the_openclaw_2026_9_style_writes_lone_surrogates_as_json_stringify_does() {
        use crate::json::{parse_with, LoneKeys};
        let js = Style { lone_surrogates: true, marker_ids: false };
        let cases = [
            (r#"{"a\ud800":1,"a":2}"#, r#"{"a":2,"a\ud800":1}"#),
            (r#"{"ab":1,"a\ud800":2}"#, r#"{"ab":1,"a\ud800":2}"#),
            (r#""x\udc00y""#, r#""x\udc00y""#),
            (r#"["\ud83d\ude00","\ud83d"]"#, "[\"\u{1F600}\",\"\\ud83d\"]"),
            (r#"{"\udc00k":[1,"x\ud83d"]}"#, r#"{"\udc00k":[1,"x\ud83d"]}"#),
        ];
        for (input, want) in cases {
            assert_eq!(canonical_in(&parse_with(input, LoneKeys::Distinct).unwrap(), js), want, "input {input}");
        }
        // The documented form drops them, and merges keys that then coincide.
        assert_eq!(canonical(&parse(r#"{"a\ud800":1,"a":2}"#).unwrap()), r#"{"a":2}"#);
    }

    /// `stableStringify(value, normalizer)` of the 2026.9.6 package: a key is written
    /// canonicalized and ordered by (canonicalized key, raw key).
    #[test]
    fn marker_ids_in_keys_are_canonicalized_and_reordered() {
        let id = "0123456789abcdef";
        let key = format!(
            "<<<EXTERNAL_UNTRUSTED_CONTENT id=\\\"{id}\\\">>>x<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\\\"{id}\\\">>>"
        );
        let input = format!(r#"{{"b":1,"{key}":2,"a":3}}"#);
        let style = Style { lone_surrogates: true, marker_ids: true };
        let zero = key.replace(id, "0000000000000000");
        assert_eq!(canonical_in(&parse(&input).unwrap(), style), format!(r#"{{"{zero}":2,"a":3,"b":1}}"#));
    }

    #[test]
    fn undefined_is_a_bare_word() {
        let v = Json::object(vec![("b".into(), Json::Undefined), ("a".into(), Json::Num(1.0))]);
        assert_eq!(canonical(&v), r#"{"a":1,"b":undefined}"#);
    }
}
