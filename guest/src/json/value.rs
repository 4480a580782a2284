//! The values the reader builds: [`Json`], and [`Str`] with the lone surrogates a Rust string
//! cannot hold kept beside its text.

use std::borrow::Cow;
use std::ops::Deref;

use crate::js::cmp_utf16;

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
    pub(super) text: Cow<'a, str>,
    pub(super) lone: Vec<LoneSurrogate>,
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
        self.text == other.text
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        *self.text == *other
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self.text == **other
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
    /// (they differ only in lone surrogates, [`LoneKeys::Distinct`](super::LoneKeys::Distinct)), the one without lone
    /// surrogates is taken, else the first.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        let Json::Obj(members) = self else { return None };
        // A scan, not a search of the sorted keys: objects are small (a trace line has about ten
        // members), and comparing texts for equality is cheaper than ordering them by UTF-16.
        let mut same = members.iter().filter(|(k, _)| k.as_str() == key);
        let (k, v) = same.next()?;
        if k.lone.is_empty() {
            return Some(v);
        }
        // A key with lone surrogates (rare): a key of the same text without them is preferred.
        let plain = same.find(|(k, _)| k.lone.is_empty());
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
