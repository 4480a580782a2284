//! What counts as a reply, and whom it addresses, under openclaw 2026.9's rules
//! (tests/oracle/NOTES.md §5).
//!
//! - A final that is only the silent token (`NO_REPLY`, case-insensitive, repeated with white
//!   space between, edge punctuation allowed: `isSilentReplyText`) is a pass, like an empty one.
//! - A sibling's final addresses a participant by its display name as a whole word,
//!   case-insensitively, without `@`: `(?<![\p{L}\p{N}_])NAME(?![\p{L}\p{N}_])` with flags `iu`,
//!   and only when the name has a letter or a digit.
//!
//! Unicode categories are approximated with Rust's `char` properties: a letter is
//! `is_alphabetic` (which also takes a few combining marks), a digit `is_numeric`; case is
//! compared by `to_lowercase` (JavaScript folds a few characters such as `ß` differently).
//! docs/SPEC-CHOICES.md lists these.

use crate::js::{is_js_space, js_trim};

/// `isSilentReplyText(text, token)`.
pub fn is_silent_reply(text: &str, token: &str) -> bool {
    if text.is_empty() {
        return false;
    }
    only_tokens(text, token) || only_tokens(strip_edge_punctuation(js_trim(text)), token)
}

/// `^\s*TOKEN(?:\s+TOKEN)*\s*$`, ASCII case-insensitive.
fn only_tokens(text: &str, token: &str) -> bool {
    let mut words = text.split(is_js_space).filter(|w| !w.is_empty()).peekable();
    words.peek().is_some() && words.all(|w| w.eq_ignore_ascii_case(token))
}

/// The text without a leading and a trailing run of punctuation (`\p{P}+`).
fn strip_edge_punctuation(text: &str) -> &str {
    text.trim_start_matches(is_punctuation).trim_end_matches(is_punctuation)
}

/// Unicode general category P (punctuation), for ASCII exactly and for the common blocks.
pub fn is_punctuation(c: char) -> bool {
    match c {
        '!' | '"' | '#' | '%' | '&' | '\'' | '(' | ')' | '*' | ',' | '-' | '.' | '/' | ':' | ';' | '?' | '@' | '['
        | '\\' | ']' | '_' | '{' | '}' => true,
        '\0'..='\u{7F}' => false,
        '\u{A1}' | '\u{A7}' | '\u{AB}' | '\u{B6}' | '\u{B7}' | '\u{BB}' | '\u{BF}' | '\u{37E}' | '\u{387}' => true,
        '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{2043}' | '\u{2045}'..='\u{2051}' | '\u{2053}'..='\u{205E}' => true,
        '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301F}' => true,
        '\u{FE10}'..='\u{FE19}' | '\u{FE30}'..='\u{FE52}' | '\u{FE54}'..='\u{FE61}' => true,
        '\u{FF01}'..='\u{FF03}' | '\u{FF05}'..='\u{FF0A}' | '\u{FF0C}'..='\u{FF0F}' | '\u{FF1A}' | '\u{FF1B}' => true,
        '\u{FF1F}'
        | '\u{FF20}'
        | '\u{FF3B}'..='\u{FF3D}'
        | '\u{FF3F}'
        | '\u{FF5B}'
        | '\u{FF5D}'
        | '\u{FF5F}'..='\u{FF65}' => true,
        _ => false,
    }
}

/// True when `text` names `name` as a whole word, case-insensitively.
pub fn addresses_by_name(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphabetic() || c.is_numeric() || c == '_';
    if !name.chars().any(|c| c.is_alphabetic() || c.is_numeric()) {
        return false;
    }
    let fold = |c: char| c.to_lowercase();
    for (start, _) in text.char_indices() {
        let mut rest = text[start..].chars();
        let mut matched = 0;
        let ok = name.chars().all(|n| {
            let hit = rest.next().is_some_and(|t| fold(t).eq(fold(n)));
            if hit {
                matched += 1;
            }
            hit
        });
        if !ok || matched == 0 {
            continue;
        }
        let end = start + text[start..].chars().take(matched).map(char::len_utf8).sum::<usize>();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if before.is_none_or(|c| !word(c)) && after.is_none_or(|c| !word(c)) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NOTES §5: `NO_REPLY`, also with edge punctuation, is a pass (package `isSilentReplyText`).
    #[test]
    fn silent_token_replies_are_passes() {
        for t in ["NO_REPLY", "no_reply", "  NO_REPLY  ", "NO_REPLY NO_REPLY", "**NO_REPLY**", "NO_REPLY."] {
            assert!(is_silent_reply(t, "NO_REPLY"), "{t:?}");
        }
        for t in ["", "NO_REPLY please", "NO_REPLYNO_REPLY", "ok", "+NO_REPLY+"] {
            assert!(!is_silent_reply(t, "NO_REPLY"), "{t:?}");
        }
    }

    /// NOTES §5, case `group-rounds` line 2: "ask reviewer to check" addresses `reviewer`.
    #[test]
    fn display_names_address_as_whole_words() {
        assert!(addresses_by_name("ask reviewer to check", "reviewer"));
        assert!(addresses_by_name("ask Scribe about it", "Scribe"));
        assert!(addresses_by_name("SCRIBE, please", "scribe"));
        assert!(!addresses_by_name("the reviewers agree", "reviewer"));
        assert!(!addresses_by_name("pre_reviewer", "reviewer"));
        assert!(!addresses_by_name("--- ---", "---"), "a name without a letter or digit addresses nobody");
        assert!(addresses_by_name("thanks Code Reviewer!", "Code Reviewer"));
    }
}
