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
use std::cmp::Ordering;
use std::ops::Deref;

use crate::js::{cmp_utf16, same_text};

mod lone;
mod parser;
pub use lone::StrBuf;
pub use parser::{parse, parse_with, JsonError, LoneKeys};

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
/// lone surrogates it held, if any (sorted by offset; several may share one).
#[derive(Debug, Clone, Eq)]
pub struct Str<'a> {
    text: Cow<'a, str>,
    lone: Vec<LoneSurrogate>,
}

impl<'a> Str<'a> {
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
        same_text(&self.text, &other.text)
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        same_text(&self.text, other)
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        same_text(&self.text, other)
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
    /// The value of `key` if `self` is an object that has it. When several keys have this text
    /// (they differ only in lone surrogates, [`LoneKeys::Distinct`]), the one without lone
    /// surrogates is taken, else the first.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        let Json::Obj(members) = self else { return None };
        // Keys with one text are adjacent (sorted): find where they start.
        let first = members.partition_point(|(k, _)| cmp_utf16(k, key) == Ordering::Less);
        let (k, v) = members.get(first).filter(|(k, _)| same_text(k, key))?;
        if k.lone.is_empty() {
            return Some(v);
        }
        // A key with lone surrogates (rare): a key of the same text without them is preferred.
        let plain = members[first..].iter().take_while(|(k, _)| same_text(k, key)).find(|(k, _)| k.lone.is_empty());
        Some(plain.map_or(v, |(_, v)| v))
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
pub(crate) fn sort_members(members: &mut Vec<(Str<'_>, Json<'_>)>) {
    // A stable sort keeps duplicates in document order; then the last of each run wins (it is
    // swapped into the kept slot before the earlier one is dropped).
    members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    members.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
}

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
