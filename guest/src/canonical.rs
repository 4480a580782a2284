//! The canonical serialization of a value (`stableStringify`, spec/tool-loop.md §1.1).
//!
//! Loop detection compares calls and outcomes by fingerprint: two calls are "the same" when
//! their arguments serialize to the same canonical text. The text is written into a [`Sink`]:
//! a `String` for tests and messages, or a hasher ([`crate::digest::Hasher`]) so that a decision
//! hashes its input without building the text in memory.

use crate::json::{Json, Str};

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

/// Writes `v` in the canonical form: keys in UTF-16 order (as [`Json::Obj`] keeps them), no
/// spaces, `undefined` as a bare word, non-finite numbers as strings, lone surrogates dropped.
pub fn write_canonical(v: &Json, out: &mut impl Sink) {
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
        Json::Str(s) => write_str(s, out),
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
            out.put("{");
            for (i, (k, val)) in members.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_str(k, out);
                out.put(":");
                write_canonical(val, out);
            }
            out.put("}");
        }
    }
}

/// Writes a number as JavaScript's `String(n)` does (`-0` → `0`, `1e21` → `1e+21`, `Infinity`).
pub fn write_number(n: f64, out: &mut impl Sink) {
    if n == 0.0 {
        out.put("0");
    } else if n.is_nan() {
        out.put("NaN");
    } else if n.is_infinite() {
        out.put(if n > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        out.put(ryu_js::Buffer::new().format_finite(n));
    }
}

/// Writes a parsed string (its lone surrogates removed, as `sanitizeSurrogates` does).
pub fn write_str(s: &Str<'_>, out: &mut impl Sink) {
    write_string(s.as_str(), out)
}

/// Writes a JSON string literal exactly as `JSON.stringify` does.
pub fn write_string(s: &str, out: &mut impl Sink) {
    out.put("\"");
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.put(&s[start..i]);
        if escape.is_empty() {
            out.put(&format!("\\u{b:04x}"));
        } else {
            out.put(escape);
        }
        start = i + 1;
    }
    out.put(&s[start..]);
    out.put("\"");
}

/// The canonical text of `v` (for tests, messages and `formatError`; hashing streams instead).
pub fn canonical(v: &Json) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
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

    #[test]
    fn undefined_is_a_bare_word() {
        let v = Json::object(vec![("b".into(), Json::Undefined), ("a".into(), Json::Num(1.0))]);
        assert_eq!(canonical(&v), r#"{"a":1,"b":undefined}"#);
    }
}
