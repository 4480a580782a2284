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
    s.trim_matches(is_js_space)
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
    let i = x.iter().zip(y).take_while(|(p, q)| p == q).count();
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
}
