//! Strings as JavaScript holds them: UTF-16 code units, lone surrogates included.
//!
//! A Rust string cannot hold a lone surrogate, so a [`Str`] keeps them beside its text. The
//! documented canonical form removes them; openclaw 2026.9 keeps them (`JSON.stringify` writes
//! `\udXXX`), so keys that differ only in them are different keys, sorted by their code units.
//! These helpers give the code units, the order, the equality and the `trim` JavaScript would
//! use on such a string.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::value::{LoneSurrogate, Str};
use crate::js::{cmp_utf16, is_js_space};

impl<'a> Str<'a> {
    /// A string from its text and its lone surrogates (sorted by offset, each on a char
    /// boundary of `text`; out-of-place entries are dropped).
    pub fn with_lone(text: Cow<'a, str>, mut lone: Vec<LoneSurrogate>) -> Self {
        lone.retain(|l| text.is_char_boundary(l.at) && (0xD800..=0xDFFF).contains(&l.unit));
        lone.sort_by_key(|l| l.at);
        Str { text, lone }
    }

    /// True when the string holds lone surrogates.
    pub fn has_lone(&self) -> bool {
        !self.lone.is_empty()
    }

    /// The UTF-16 code units JavaScript would hold, lone surrogates in place.
    pub fn units(&self) -> impl Iterator<Item = u16> + '_ {
        let mut lone = self.lone.iter().peekable();
        let mut chars = self.text.char_indices().peekable();
        let mut pending: Option<u16> = None;
        std::iter::from_fn(move || {
            if let Some(low) = pending.take() {
                return Some(low);
            }
            let at = chars.peek().map_or(self.text.len(), |(i, _)| *i);
            if let Some(l) = lone.next_if(|l| l.at <= at) {
                return Some(l.unit);
            }
            let (_, c) = chars.next()?;
            let mut buf = [0u16; 2];
            let units = c.encode_utf16(&mut buf);
            if units.len() == 2 {
                pending = Some(units[1]);
            }
            Some(units[0])
        })
    }

    /// JavaScript's `<` order (UTF-16 code units), lone surrogates included.
    pub fn cmp_units(&self, other: &Str<'_>) -> Ordering {
        if self.lone.is_empty() && other.lone.is_empty() {
            return cmp_utf16(&self.text, &other.text);
        }
        self.units().cmp(other.units())
    }

    /// JavaScript's `===`: the same text and the same lone surrogates.
    pub fn same_units(&self, other: &Str<'_>) -> bool {
        self.text == other.text && self.lone == other.lone
    }

    /// `String.prototype.trim`: a lone surrogate is not white space, so it stops the trim.
    pub fn js_trimmed(&self) -> Str<'a> {
        let first_lone = self.lone.first().map_or(self.text.len(), |l| l.at);
        let last_lone = self.lone.last().map_or(0, |l| l.at);
        let lead = self.text[..first_lone].len() - self.text[..first_lone].trim_start_matches(is_js_space).len();
        let tail_from = if self.lone.is_empty() { lead } else { last_lone };
        let tail = &self.text[tail_from..];
        let end = tail_from + tail.trim_end_matches(is_js_space).len();
        if lead == 0 && end == self.text.len() {
            return self.clone();
        }
        let end = end.max(lead);
        let lone = self.lone.iter().map(|l| LoneSurrogate { at: l.at - lead, unit: l.unit }).collect();
        let text = match &self.text {
            Cow::Borrowed(t) => Cow::Borrowed(&t[lead..end]),
            Cow::Owned(t) => Cow::Owned(t[lead..end].to_string()),
        };
        Str { text, lone }
    }
}

/// A string being built from parts, lone surrogates kept at their places.
#[derive(Debug, Default)]
pub struct StrBuf {
    text: String,
    lone: Vec<LoneSurrogate>,
}

impl StrBuf {
    /// Appends plain text.
    pub fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// Appends a string with its lone surrogates.
    pub fn push(&mut self, s: &Str<'_>) {
        let base = self.text.len();
        self.lone.extend(s.lone.iter().map(|l| LoneSurrogate { at: base + l.at, unit: l.unit }));
        self.text.push_str(&s.text);
    }

    /// Appends one lone surrogate code unit (anything else is ignored).
    pub fn push_lone(&mut self, unit: u16) {
        if (0xD800..=0xDFFF).contains(&unit) {
            self.lone.push(LoneSurrogate { at: self.text.len(), unit });
        }
    }

    /// The string built.
    pub fn finish(self) -> Str<'static> {
        Str { text: Cow::Owned(self.text), lone: self.lone }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_with, Json, LoneKeys};
    use super::*;

    fn s(text: &str) -> Str<'static> {
        match parse_with(text, LoneKeys::Distinct).unwrap() {
            Json::Str(s) => Str::with_lone(Cow::Owned(s.as_str().to_string()), s.lone_surrogates().to_vec()),
            other => panic!("not a string: {other:?}"),
        }
    }

    #[test]
    fn units_put_lone_surrogates_back_in_place() {
        assert_eq!(
            s(r#""a\ud800b😀\udc00""#).units().collect::<Vec<_>>(),
            [0x61, 0xD800, 0x62, 0xD83D, 0xDE00, 0xDC00]
        );
        assert_eq!(s(r#""\udfff""#).units().collect::<Vec<_>>(), [0xDFFF]);
    }

    #[test]
    fn order_and_equality_count_lone_surrogates() {
        // JS: "ab" < "a\ud800" (0x62 < 0xD800), while the texts alone would order "a" first.
        assert_eq!(s(r#""ab""#).cmp_units(&s(r#""a\ud800""#)), Ordering::Less);
        assert!(!s(r#""a""#).same_units(&s(r#""a\ud800""#)));
        assert!(s(r#""a\ud800""#).same_units(&s(r#""a\ud800""#)));
    }

    #[test]
    fn trim_stops_at_a_lone_surrogate() {
        let t = s(r#"" \ud800  x \udc00 ""#).js_trimmed();
        assert_eq!(t.units().collect::<Vec<_>>(), [0xD800, 0x20, 0x20, 0x78, 0x20, 0xDC00]);
        assert_eq!(s(r#""  \ud800""#).js_trimmed().units().collect::<Vec<_>>(), [0xD800]);
        assert_eq!(s(r#""  ""#).js_trimmed().as_str(), "");
    }
}
