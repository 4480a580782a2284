//! JavaScript's string semantics, where they differ from Rust's.
//!
//! OpenClaw is TypeScript: it trims ids with `String.prototype.trim`, sorts keys with the
//! default (UTF-16 code unit) sort and matches `\s` in regexes. Rust's `str::trim` strips U+0085
//! and keeps U+FEFF, and Rust orders strings by UTF-8 bytes (code points), so the policy uses
//! these instead wherever OpenClaw's answer depends on them.

use std::cmp::Ordering;

/// JavaScript's `String.prototype.trim`: strips the ECMAScript white space and line terminators,
/// including U+FEFF, but not U+0085 (which Rust's `str::trim` strips).
pub fn js_trim(s: &str) -> &str {
    // Nearly every id starts and ends with a printable ASCII character, which is never white
    // space: nothing to trim, and no char searcher from each end (~0.15 k instructions of a bot
    // event in replay, which trims its event id; callgrind).
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => s,
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

/// Orders two strings by UTF-16 code units, as JavaScript's default sort does.
///
/// UTF-8 byte order is code point order; it differs from UTF-16 order only between a character
/// in U+E000..=U+FFFF (lead byte 0xEE or 0xEF) and a supplementary one (lead byte 0xF0..=0xF4),
/// so only the first differing byte needs a look.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let i = common_prefix(x, y);
    match (x.get(i), y.get(i)) {
        (Some(&p), Some(&q)) => {
            let bmp_high = |c: u8| (0xEE..=0xEF).contains(&c);
            let astral = |c: u8| c >= 0xF0;
            if (bmp_high(p) && astral(q)) || (astral(p) && bmp_high(q)) {
                q.cmp(&p)
            } else {
                p.cmp(&q)
            }
        }
        _ => x.len().cmp(&y.len()),
    }
}

/// `a == b` for texts, with word compares instead of a byte loop (see [`common_prefix`] for
/// why): a short text as two overlapping 4-byte words (or three bytes), a longer one eight bytes
/// per step and its last eight bytes. Measured natively (callgrind, ten key lookups in a
/// nine-member trace line, most keys shorter than eight bytes): 255 instructions per lookup with
/// a byte loop for the tail, 141 with this.
pub fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    n == b.len()
        && match n {
            0 => true,
            1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
            4..=7 => half_word(a, 0) == half_word(b, 0) && half_word(a, n - 4) == half_word(b, n - 4),
            _ => {
                let (words_a, _) = a.as_chunks::<8>();
                let (words_b, _) = b.as_chunks::<8>();
                words_a.iter().zip(words_b).all(|(x, y)| u64::from_le_bytes(*x) == u64::from_le_bytes(*y))
                    && word(a, n - 8) == word(b, n - 8)
            }
        }
}

/// The length of the longest common prefix of `a` and `b`, eight bytes per step.
///
/// Why not `==` and a byte loop: in the component, `==` on texts is wasi-libc's `memcmp`, which
/// compares one byte per step, and key lookups, key sorts and the argument memo compare texts
/// many times per event. Measured on `loopguard replay` of the 200,000-event tool trace of
/// `scripts/bench-replay.py` (callgrind over the first 20,000 events, guest functions named from
/// wasmtime's perf map): `Json::get` and `memcmp` were 8.6 k of 49.5 k instructions per event
/// with byte loops; 4.2 k of 45.4 k with these word compares and the scan of small objects in
/// `Json::get`.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let differ = word(a, i) ^ word(b, i);
        if differ != 0 {
            return i + (differ.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The eight bytes of `s` from `at` as one word.
fn word(s: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"))
}

/// The four bytes of `s` from `at` as one word.
fn half_word(s: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(s[at..at + 4].try_into().expect("four bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_trim_strips_what_javascript_strips_and_nothing_else() {
        let cases = [
            ("", ""),
            ("run-1", "run-1"),
            (" a", "a"),
            ("\u{B}\u{C}a b\r\n", "a b"),
            ("\u{FEFF}a\u{A0}", "a"),
            ("\u{3000}\u{2028}x\u{205F}", "x"),
            ("\u{85}x\u{85}", "\u{85}x\u{85}"),
            ("é ", "é"),
            ("\u{7F}", "\u{7F}"),
            ("  ", ""),
        ];
        for (text, want) in cases {
            assert_eq!(js_trim(text), want, "{text:?}");
        }
    }

    #[test]
    fn utf16_order_differs_from_utf8_for_astral_vs_high_bmp() {
        // U+1F600 is the surrogate pair D83D DE00; U+FF5E is the one unit FF5E: JS sorts 😀 first.
        assert_eq!(cmp_utf16("😀", "\u{FF5E}"), Ordering::Less);
        assert_eq!("😀".cmp("\u{FF5E}"), Ordering::Greater);
        assert_eq!(cmp_utf16("a", "ab"), Ordering::Less);
        assert_eq!(cmp_utf16("b", "a"), Ordering::Greater);
        assert_eq!(cmp_utf16("é", "é"), Ordering::Equal);
    }

    #[test]
    fn utf16_order_holds_past_the_first_eight_bytes() {
        let long = "0123456789abcdef";
        for at in 0..long.len() {
            for (p, q) in [("a", "b"), ("\u{FF5E}", "😀"), ("z", "é")] {
                let (x, y) = (format!("{}{p}", &long[..at]), format!("{}{q}", &long[..at]));
                assert_eq!(cmp_utf16(&x, &y), cmp_utf16(p, q), "{x:?} {y:?}");
                assert_eq!(cmp_utf16(&y, &x), cmp_utf16(q, p), "{y:?} {x:?}");
            }
            assert_eq!(cmp_utf16(&long[..at], long), Ordering::Less);
            assert_eq!(cmp_utf16(long, &long[..at]), Ordering::Greater);
        }
    }

    #[test]
    fn common_prefix_and_same_text_agree_with_byte_loops() {
        let texts: Vec<String> =
            (0..20).map(|n| "ab".repeat(n)).chain(["abababac".into(), "x".into(), "abababab\u{e9}".into()]).collect();
        for a in &texts {
            for b in &texts {
                let bytes = a.bytes().zip(b.bytes()).take_while(|(p, q)| p == q).count();
                assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), bytes, "{a:?} {b:?}");
                assert_eq!(same_text(a, b), a == b, "{a:?} {b:?}");
            }
        }
        assert!(!same_text("0123456789abcdef", "0123456789abcdeF"));
        assert!(!same_text("x0123456789abcdef", "y0123456789abcdef"));
    }

    /// Texts of one length that differ in one byte, at every position: the word steps and the
    /// overlapping last word both look.
    #[test]
    fn same_text_sees_a_difference_anywhere() {
        for len in 1..80 {
            let a: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(same_text(&a, &a.clone()), "{len}");
            for at in 0..len {
                let mut b = a.clone().into_bytes();
                b[at] = b'-';
                let b = String::from_utf8(b).expect("ASCII");
                assert!(!same_text(&a, &b) && !same_text(&b, &a), "{len} bytes, differing at {at}");
            }
        }
    }
}
