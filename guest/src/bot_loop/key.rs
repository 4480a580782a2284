//! Keys and ids, reduced to fixed-size digests.
//!
//! A process-wide guard may track a million bot pairs; storing their key text (four ids joined by
//! `"\u{1}"`) and every provider event id as `String`s would cost more than the budgets themselves.
//! So the maps are keyed by a 128-bit blake3 digest of the exact key text OpenClaw builds; a pair
//! keeps each event id as a 32-bit tag ([`event_tag`]), a burst bucket keeps event ids and
//! senders as 64-bit digests. The digest is taken over the same concatenation OpenClaw uses, so
//! two inputs share a key here exactly when they share one there (ids that contain `"\u{1}"`
//! collide in both).
//!
//! Two JavaScript details matter for parity and are spelled out here: the unordered pair is
//! sorted by UTF-16 code units (JS `<` on strings), not by Rust's UTF-8 byte order, and event ids
//! are trimmed with `String.prototype.trim` semantics.

use std::cmp::Ordering;

/// A 128-bit digest of a pair or burst key.
pub type KeyDigest = u128;

/// The separator OpenClaw puts between key parts.
const SEP: &str = "\u{1}";

use crate::digest::Hasher;
use crate::js::{cmp_utf16, js_trim};

/// The pair's two ids as `(min, max)` in JavaScript order, or `None` for a self pair (spec §2.4
/// steps 3 and 7): one comparison answers both.
pub fn ordered_pair<'a>(sender: &'a str, receiver: &'a str) -> Option<(&'a str, &'a str)> {
    match cmp_utf16(sender, receiver) {
        Ordering::Less => Some((sender, receiver)),
        Ordering::Greater => Some((receiver, sender)),
        Ordering::Equal => None,
    }
}

/// `scope ␁ conversation ␁ min(sender, receiver) ␁ max(sender, receiver)` (spec §2.4 step 7).
pub fn pair_key(scope: &str, conversation: &str, sender: &str, receiver: &str) -> KeyDigest {
    let (lo, hi) = ordered_pair(sender, receiver).unwrap_or((sender, receiver));
    ordered_pair_key(scope, conversation, (lo, hi))
}

/// [`pair_key`] for ids already ordered by [`ordered_pair`].
pub fn ordered_pair_key(scope: &str, conversation: &str, (lo, hi): (&str, &str)) -> KeyDigest {
    digest128(&[scope, conversation, lo, hi])
}

/// `scope ␁ conversation ␁ receiver` (spec §2.5 step 2).
pub fn burst_key(scope: &str, conversation: &str, receiver: &str) -> KeyDigest {
    digest128(&[scope, conversation, receiver])
}

/// The tag a pair keeps for an event id (see [`super::pair`]): a 32-bit hash of the trimmed
/// id, never 0; `0` means "no id" (absent, or empty after trimming).
///
/// Why not blake3, as for keys: a tag only tells one pair's retained events apart, and a sender
/// able to craft two ids with the same tag gains nothing it could not get by sending the same id
/// twice (a replay takes no slot either way), so collision resistance buys nothing here. What
/// matters is that distinct ids rarely share a tag, and a multiply-rotate hash over 8-byte words
/// with a full-avalanche finish gives that for a few dozen instructions (blake3 costs several
/// hundred, a third of a decision).
pub fn event_tag(event_id: Option<&str>) -> u32 {
    match event_id.map(js_trim) {
        Some(id) if !id.is_empty() => hash32(id.as_bytes()),
        _ => 0,
    }
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

/// The first 128 bits of blake3 over `ids` joined with [`SEP`] (the key text OpenClaw builds),
/// through the buffered [`Hasher`] with a buffer of 128 bytes: a key is two ids, a conversation
/// and a scope, and a longer one goes to blake3 a buffer at a time, to the same digest.
fn digest128(ids: &[&str]) -> KeyDigest {
    let mut h = Hasher::<128>::untagged();
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            h.bytes(SEP.as_bytes());
        }
        h.bytes(id.as_bytes());
    }
    u128::from_le_bytes(h.finish())
}

/// A 32-bit hash, never 0: 8-byte words folded in with a rotate, xor and odd multiply (each
/// step a bijection of the state, so inputs of one length that differ in one word never meet),
/// then murmur3's 64-bit finalizer, which carries every input bit to every output bit.
/// Little-endian word loads and wrapping 64-bit arithmetic give the same tags on every host.
fn hash32(bytes: &[u8]) -> u32 {
    const M: u64 = 0x9E37_79B9_7F4A_7C15; // 2^64 / φ, odd
    let mut h = (bytes.len() as u64).wrapping_mul(M) ^ 0x6C6F_6F70_6775_6172;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(M);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let tail = rest.iter().rev().fold(0u64, |t, &b| (t << 8) | u64::from(b));
        h = (h.rotate_left(23) ^ tail).wrapping_mul(M);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^= h >> 33;
    (h as u32).max(1)
}

fn digest64(text: &str) -> u64 {
    let bytes = blake3::hash(text.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    u64::from_le_bytes(first)
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
    fn ordered_pair_sorts_by_utf16_and_spots_self_pairs() {
        assert_eq!(ordered_pair("b", "a"), Some(("a", "b")));
        assert_eq!(ordered_pair("a", "b"), Some(("a", "b")));
        assert_eq!(ordered_pair("\u{FF5E}", "\u{1F600}"), Some(("\u{1F600}", "\u{FF5E}")));
        assert_eq!(ordered_pair("é", "é"), None);
        assert_eq!(ordered_pair("a", "a"), None);
    }

    #[test]
    fn pair_key_is_unordered_and_uses_utf16_order() {
        assert_eq!(pair_key("s", "c", "a", "b"), pair_key("s", "c", "b", "a"));
        let joined = "s\u{1}c\u{1}\u{1F600}\u{1}\u{FF5E}";
        let want = u128::from_le_bytes(blake3::hash(joined.as_bytes()).as_bytes()[..16].try_into().unwrap());
        assert_eq!(pair_key("s", "c", "\u{1F600}", "\u{FF5E}"), want);
        assert_ne!(pair_key("s", "c", "a", "b"), pair_key("s2", "c", "a", "b"));
        assert_ne!(pair_key("s", "c", "a", "b"), burst_key("s", "c", "b"));
    }

    #[test]
    fn keys_are_blake3_of_the_joined_text() {
        // Snapshots hold these digests: they must stay blake3 of the joined text, whatever its
        // length.
        for n in [0, 1, 100, 250, 251, 252, 300, 5_000] {
            let long = "x".repeat(n);
            let joined = format!("s\u{1}c\u{1}{long}\u{1}z");
            let want = u128::from_le_bytes(blake3::hash(joined.as_bytes()).as_bytes()[..16].try_into().unwrap());
            assert_eq!(pair_key("s", "c", &long, "z"), want, "id of {n} bytes");
        }
    }

    #[test]
    fn keys_collide_exactly_like_the_joined_text() {
        // OpenClaw joins with U+0001, so ids containing it collide there too.
        assert_eq!(burst_key("a\u{1}b", "c", "r"), burst_key("a", "b\u{1}c", "r"));
    }

    #[test]
    fn event_tags_trim_like_ids_and_rarely_collide() {
        assert_eq!(event_tag(None), 0);
        assert_eq!(event_tag(Some(" \u{FEFF}\n")), 0);
        assert_ne!(event_tag(Some("\u{85}")), 0);
        assert_eq!(event_tag(Some(" e1 ")), event_tag(Some("e1")));
        // 200,000 ids that differ in a digit or two, in the tail, by length: a good 32-bit hash
        // has about 200000² / 2^33 ≈ 4.7 colliding pairs among them.
        let mut tags: Vec<u32> = (0..100_000).map(|i| event_tag(Some(&format!("evt-{i}-1700000000123")))).collect();
        tags.extend((0..100_000u32).map(|i| event_tag(Some(&format!("{i:x}")))));
        tags.sort_unstable();
        let collisions = tags.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(collisions <= 20, "{collisions} collisions");
        // Every length of the final word, and a trailing NUL, make new tags.
        let ids = ["", "a", "a\0", "ab", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgh\0"];
        let mut distinct: Vec<u32> = ids.iter().map(|id| hash32(id.as_bytes())).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ids.len());
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
