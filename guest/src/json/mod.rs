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

mod lone;
mod parser;
mod value;
pub use lone::StrBuf;
pub use parser::{parse, parse_with, JsonError, LoneKeys, MAX_DEPTH};
pub use value::{Json, LoneSurrogate, Str};

#[cfg(test)]
mod tests {
    use super::{parse, Json};

    #[test]
    fn get_finds_each_key_and_nothing_else_in_small_and_large_objects() {
        for len in [0, 3, 40] {
            let text = format!("{{{}}}", (0..len).map(|i| format!("\"k{i:02}\":{i}")).collect::<Vec<_>>().join(","));
            let v = parse(&text).expect("JSON");
            for i in 0..len {
                assert_eq!(v.get(&format!("k{i:02}")), Some(&Json::Num(f64::from(i))), "{len}");
            }
            for missing in ["", "k", "k0", "k015", "k99", "z"] {
                assert_eq!(v.get(missing), None, "{missing} in {len}");
            }
        }
    }

    #[test]
    fn numbers_are_the_doubles_a_correctly_rounded_parse_gives() {
        let digits = ["0", "7", "1767225600000", "999999999999999", "1000000000000000", "9007199254740993"];
        let mut texts: Vec<String> = digits.iter().flat_map(|d| [d.to_string(), format!("-{d}")]).collect();
        texts.extend(["1.0", "1e3", "-0.0", "123456789012345678901234567890", "1E400", "-1e-400"].map(String::from));
        for text in texts {
            let want: f64 = text.parse().expect("a number");
            match parse(&text) {
                Ok(Json::Num(n)) => {
                    assert_eq!(n.to_bits(), want.to_bits(), "{text}: {n} vs {want}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
