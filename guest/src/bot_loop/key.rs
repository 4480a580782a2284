//! Keys and ids, reduced to fixed-size digests.
//!
//! A process-wide guard may track a million bot pairs; storing their key text (four ids joined by
//! `"\u{1}"`) and every provider event id as `String`s would cost more than the budgets themselves.
//! So the maps are keyed by a 128-bit blake3 digest of the exact key text OpenClaw builds, and
//! event ids / senders are kept as 64-bit digests. The digest is taken over the same
//! concatenation OpenClaw uses, so two inputs share a key here exactly when they share one there
//! (ids that contain `"\u{1}"` collide in both).
//!
//! Two JavaScript details matter for parity and are spelled out here: the unordered pair is
//! sorted by UTF-16 code units (JS `<` on strings), not by Rust's UTF-8 byte order, and event ids
//! are trimmed with `String.prototype.trim` semantics.

use std::cmp::Ordering;

/// A 128-bit digest of a pair or burst key.
pub type KeyDigest = u128;

/// The separator OpenClaw puts between key parts.
const SEP: &str = "\u{1}";

/// Compares two strings the way JavaScript's `<` does: by UTF-16 code units.
///
/// UTF-8 byte order agrees with this except between supplementary-plane characters (surrogate
/// pairs, `0xD800..`) and U+E000–U+FFFF, so a byte compare would misorder e.g. `"😀"` and `"\u{FF5E}"`.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `scope ␁ conversation ␁ min(sender, receiver) ␁ max(sender, receiver)` (spec §2.4 step 7).
pub fn pair_key(scope: &str, conversation: &str, sender: &str, receiver: &str) -> KeyDigest {
    let (lo, hi) = match cmp_utf16(sender, receiver) {
        Ordering::Greater => (receiver, sender),
        _ => (sender, receiver),
    };
    digest128(&[scope, SEP, conversation, SEP, lo, SEP, hi])
}

/// `scope ␁ conversation ␁ receiver` (spec §2.5 step 2).
pub fn burst_key(scope: &str, conversation: &str, receiver: &str) -> KeyDigest {
    digest128(&[scope, SEP, conversation, SEP, receiver])
}

/// The digest of a trimmed, non-empty event id; `0` means "no id" (absent, or empty after
/// trimming), so a real id never digests to 0.
pub fn event_id_digest(event_id: Option<&str>) -> u64 {
    match event_id.map(js_trim) {
        Some(id) if !id.is_empty() => digest64(id).max(1),
        _ => 0,
    }
}

/// A 64-bit digest of a sender id, for the burst budget's per-sender counts.
pub fn sender_digest(sender: &str) -> u64 {
    digest64(sender)
}

fn digest128(parts: &[&str]) -> KeyDigest {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    let bytes = h.finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(&bytes.as_bytes()[..16]);
    u128::from_le_bytes(first)
}

fn digest64(text: &str) -> u64 {
    let bytes = blake3::hash(text.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// JavaScript `String.prototype.trim`: strips WhiteSpace (TAB, VT, FF, SP, NBSP, U+FEFF and
/// every `Zs` character) and LineTerminators (LF, CR, U+2028, U+2029). Unlike Rust's
/// [`str::trim`] it strips U+FEFF and keeps U+0085 (NEL), which is not JS whitespace.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_order_differs_from_utf8_for_astral_vs_high_bmp() {
        // U+1F600 is the surrogate pair D83D DE00; U+FF5E is one unit FF5E. JS: "😀" < "～".
        assert_eq!(cmp_utf16("\u{1F600}", "\u{FF5E}"), Ordering::Less);
        assert_eq!("\u{1F600}".cmp("\u{FF5E}"), Ordering::Greater, "UTF-8 byte order disagrees");
        assert_eq!(cmp_utf16("a", "b"), Ordering::Less);
        assert_eq!(cmp_utf16("ab", "a"), Ordering::Greater);
        assert_eq!(cmp_utf16("é", "z"), Ordering::Greater);
    }

    #[test]
    fn pair_key_is_unordered_and_uses_utf16_order() {
        assert_eq!(pair_key("s", "c", "a", "b"), pair_key("s", "c", "b", "a"));
        assert_eq!(
            pair_key("s", "c", "\u{1F600}", "\u{FF5E}"),
            digest128(&["s", SEP, "c", SEP, "\u{1F600}", SEP, "\u{FF5E}"])
        );
        assert_ne!(pair_key("s", "c", "a", "b"), pair_key("s2", "c", "a", "b"));
        assert_ne!(pair_key("s", "c", "a", "b"), burst_key("s", "c", "b"));
    }

    #[test]
    fn keys_collide_exactly_like_the_joined_text() {
        // OpenClaw joins with U+0001, so ids containing it collide there too.
        assert_eq!(burst_key("a\u{1}b", "c", "r"), burst_key("a", "b\u{1}c", "r"));
    }

    #[test]
    fn js_trim_strips_js_whitespace_only() {
        let cases: &[(&str, &str)] = &[
            ("  id ", "id"),
            ("\t\n\u{B}\u{C}\r id \u{2028}\u{2029}", "id"),
            ("\u{A0}\u{1680}\u{2000}\u{200A}\u{202F}\u{205F}\u{3000}id", "id"),
            ("\u{FEFF}id\u{FEFF}", "id"),
            ("\u{85}id\u{85}", "\u{85}id\u{85}"), // NEL is not JS whitespace
            ("\u{180E}id", "\u{180E}id"),         // no longer Zs
            ("i d", "i d"),
        ];
        for (input, want) in cases {
            assert_eq!(js_trim(input), *want, "input {input:?}");
        }
    }

    #[test]
    fn blank_ids_mean_no_id() {
        assert_eq!(event_id_digest(None), 0);
        assert_eq!(event_id_digest(Some("")), 0);
        assert_eq!(event_id_digest(Some(" \u{FEFF}\n")), 0);
        assert_ne!(event_id_digest(Some("\u{85}")), 0);
        assert_eq!(event_id_digest(Some(" e1 ")), event_id_digest(Some("e1")));
        assert_ne!(event_id_digest(Some("e1")), event_id_digest(Some("e2")));
    }
}
