//! Untrusted-content marker ids (openclaw 2026.9 `digestToolOutcome`, tests/oracle/NOTES.md §2.7).
//!
//! OpenClaw wraps fetched web content in `<<<EXTERNAL_UNTRUSTED_CONTENT id="<16 hex>">>>` …
//! `<<<END_EXTERNAL_UNTRUSTED_CONTENT id="<same id>">>>`, with a fresh random id every time. A
//! page that never changes would then never look like no progress, so 2026.9 sets both ids of
//! each pair to `0000000000000000` before hashing an outcome, also when the block is embedded
//! JSON-escaped (its quotes preceded by 1, 3, 7, … backslashes). This is the package's regex
//!
//! ```text
//! (<<<EXTERNAL_UNTRUSTED_CONTENT id=(\\*)")([a-f0-9]{16})(\2">>>(?:(?!<<<(?:END_)?EXTERNAL_UNTRUSTED_CONTENT)[\s\S])*<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\2")\3(\2">>>)
//! ```
//!
//! and its replacement callback, written out by hand (the regex needs back-references and a
//! look-ahead): leftmost matches, scanning on after each one; a match is kept as it is when the
//! backslash count `e` has `e & (e + 1) != 0`, or when some quote inside (a backslash run not
//! preceded by a backslash, then `"`) has a run length (backslashes + 1) that is not a multiple
//! of `e + 1`. The id is 16 ASCII bytes either way, so the text keeps its length.

use std::borrow::Cow;

const START: &str = "<<<EXTERNAL_UNTRUSTED_CONTENT id=";
const END: &str = "<<<END_EXTERNAL_UNTRUSTED_CONTENT id=";
/// What the tempered middle may not cross (the look-ahead has no ` id=`).
const ANY_START: &[u8] = b"<<<EXTERNAL_UNTRUSTED_CONTENT";
const ANY_END: &[u8] = b"<<<END_EXTERNAL_UNTRUSTED_CONTENT";
const CANONICAL_ID: &[u8; 16] = b"0000000000000000";

/// `text` with every replaceable marker pair's ids set to `0000000000000000`.
pub fn canonicalize(text: &str) -> Cow<'_, str> {
    if !text.contains(START) {
        return Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut ids: Vec<(usize, usize)> = Vec::new(); // offsets of (start id, end id) to replace
    let mut from = 0;
    while let Some(found) = text[from..].find(START) {
        let s = from + found;
        match match_at(b, s + START.len()) {
            Some(m) => {
                if replaceable(&b[m.middle.0..m.middle.1], m.escapes) {
                    ids.push((m.start_id, m.end_id));
                }
                from = m.end;
            }
            None => from = s + 1,
        }
    }
    if ids.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = b.to_vec();
    for (a, z) in ids {
        out[a..a + 16].copy_from_slice(CANONICAL_ID);
        out[z..z + 16].copy_from_slice(CANONICAL_ID);
    }
    // Only ASCII hex digits were overwritten with ASCII digits: still UTF-8.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// One match: where its ids are, group 4 (from after the first id to before the second), the
/// backslash count and where the match ends.
struct Match {
    start_id: usize,
    end_id: usize,
    middle: (usize, usize),
    escapes: usize,
    end: usize,
}

/// `i` is right after `id=`: `(\\*)"` + 16 hex + `\2">>>` + middle + `END id=\2"` + id + `\2">>>`.
fn match_at(b: &[u8], i: usize) -> Option<Match> {
    let escapes = b[i..].iter().take_while(|&&c| c == b'\\').count();
    let mut j = i + escapes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let start_id = j;
    let id = b.get(j..j + 16)?;
    if !id.iter().all(|c| matches!(c, b'a'..=b'f' | b'0'..=b'9')) {
        return None;
    }
    j += 16;
    let close = |at: usize| -> Option<usize> {
        let run = b.get(at..at + escapes)?;
        (run.iter().all(|&c| c == b'\\') && b.get(at + escapes..at + escapes + 4) == Some(b"\">>>"))
            .then_some(at + escapes + 4)
    };
    let middle_start = j;
    j = close(j)?;
    // The tempered middle stops at the first start or end marker; only an end marker may follow.
    let rest = &b[j..];
    let stop = find(rest, ANY_START).into_iter().chain(find(rest, ANY_END)).min()?;
    let at = j + stop;
    if !b[at..].starts_with(END.as_bytes()) {
        return None;
    }
    let mut k = at + END.len();
    if b.get(k..k + escapes)?.iter().any(|&c| c != b'\\') || b.get(k + escapes) != Some(&b'"') {
        return None;
    }
    k += escapes + 1;
    let middle_end = k;
    if b.get(k..k + 16) != Some(id) {
        return None;
    }
    let end_id = k;
    let end = close(k + 16)?;
    Some(Match { start_id, end_id, middle: (middle_start, middle_end), escapes, end })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The callback's test: `e & (e + 1) == 0` and every quote run in `middle` a multiple of `e + 1`.
fn replaceable(middle: &[u8], e: usize) -> bool {
    if e & (e + 1) != 0 {
        return false;
    }
    let mut i = 0;
    while i < middle.len() {
        let run = middle[i..].iter().take_while(|&&c| c == b'\\').count();
        let preceded = i > 0 && middle[i - 1] == b'\\';
        if !preceded && middle.get(i + run) == Some(&b'"') {
            if (run + 1) % (e + 1) != 0 {
                return false;
            }
            i += run + 1;
            continue;
        }
        i += run.max(1);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(id: &str, q: &str, body: &str) -> String {
        format!("<<<EXTERNAL_UNTRUSTED_CONTENT id={q}{id}{q}>>>\n{body}\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id={q}{id}{q}>>>")
    }

    const ID: &str = "0123456789abcdef";
    const ZERO: &str = "0000000000000000";

    /// NOTES §2.7, case `untrusted-marker-ids`: the random id does not change the digest.
    #[test]
    fn marker_ids_become_zero() {
        assert_eq!(canonicalize(&block(ID, "\"", "page")), block(ZERO, "\"", "page"));
        let two = format!("a {} b {} c", block(ID, "\"", "x"), block("fedcba9876543210", "\"", "y"));
        assert_eq!(canonicalize(&two), format!("a {} b {} c", block(ZERO, "\"", "x"), block(ZERO, "\"", "y")));
    }

    /// NOTES §2.7, case `untrusted-marker-escaped`: 1 and 3 backslashes are canonicalized, 2 are not.
    #[test]
    fn escaped_blocks_follow_the_backslash_rule() {
        for (q, replaced) in [("\\\"", true), ("\\\\\"", false), ("\\\\\\\"", true)] {
            let want = if replaced { block(ZERO, q, "body") } else { block(ID, q, "body") };
            assert_eq!(canonicalize(&block(ID, q, "body")), want, "quote {q}");
        }
        // A quote in the body whose run is not a multiple of e+1 keeps the ids.
        assert_eq!(canonicalize(&block(ID, "\\\"", "say \"hi\"")), block(ID, "\\\"", "say \"hi\""));
        assert_eq!(canonicalize(&block(ID, "\\\"", "say \\\"hi\\\"")), block(ZERO, "\\\"", "say \\\"hi\\\""));
    }

    #[test]
    fn unmatched_or_malformed_blocks_are_left_alone() {
        let other_end = format!(
            "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"{ID}\">>>x<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"0123456789abcdee\">>>"
        );
        assert_eq!(canonicalize(&other_end), other_end, "the two ids differ");
        let upper = block("0123456789ABCDEF", "\"", "x");
        assert_eq!(canonicalize(&upper), upper, "uppercase hex is not an id");
        let nested = format!("<<<EXTERNAL_UNTRUSTED_CONTENT id=\"{ID}\">>> {}", block(ID, "\"", "x"));
        assert_eq!(
            canonicalize(&nested),
            format!("<<<EXTERNAL_UNTRUSTED_CONTENT id=\"{ID}\">>> {}", block(ZERO, "\"", "x")),
            "an unclosed start is skipped; the inner pair still matches"
        );
        assert!(matches!(canonicalize("plain text"), Cow::Borrowed(_)));
    }
}
