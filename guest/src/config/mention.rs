//! Mention patterns: how a text names a participant.
//!
//! The coordinator asks one question twice: in round 1 "which participants did the inbound message
//! @-mention?" (mention gating), and after each round "which participants did a sibling's final
//! reply address?" (follow-up eligibility). Both use the same patterns, resolved per agent the
//! way OpenClaw resolves them (docs/spec/bot-loop.md §5.2):
//!
//! 1. the agent's own `agents.list[].groupChat.mentionPatterns`, when that key is present;
//! 2. else the global `messages.groupChat.mentionPatterns`, when that key is present;
//! 3. else patterns derived from the agent's identity: `@<id>` and, when the entry has a `name`,
//!    `@<name>` (whitespace inside the name matches any run of whitespace).
//!
//! A present but empty list (`[]`) means "this agent is never mentioned"; it does not fall through.
//!
//! Patterns are regular expressions matched case-insensitively anywhere in the text
//! (OpenClaw compiles them with the `i` flag). They are compiled once, when the config is
//! validated, with [`regex_lite`] (linear-time matching, no backtracking blow-up on hostile text);
//! a pattern that does not compile is a config error naming its path, never a run-time panic.
//! `regex_lite` folds case for ASCII only, so configured patterns with non-ASCII letters match
//! case-sensitively for those letters. Derived patterns fold Unicode case: they are built from
//! the lowercased id/name and matched against the lowercased text.
//!
//! A derived `@id` matches only as a whole token: it must be at the start of the text or follow a
//! non-word character (so `bob@main.example` does not mention `main`), and it must be followed by
//! the end of the text or a character that is neither a word character nor `-` (so `@main-bot`
//! does not mention `main`).
//!
//! openclaw 2026.9 (tests/oracle/NOTES.md §5, [`MentionPatterns::matches_at_address`]) only counts
//! an explicit address: the text, lowercased with zero-width characters removed, must contain an
//! `@`, and a match must start at an `@` (`@…`, `<@…`, or right after an `@`) that follows no
//! letter, digit or `_`.

use regex_lite::{Regex, RegexBuilder};
use serde_json::Value;

use super::error::{type_name, ConfigError};

/// Most patterns accepted in one `mentionPatterns` list.
pub const MAX_PATTERNS: usize = 64;
/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 1024;
/// Compiled size limit per pattern: a tiny pattern such as `a{1000}{1000}` must not turn into a
/// huge program in the guest's memory.
const COMPILED_SIZE_LIMIT: usize = 256 * 1024;
/// Deepest group nesting accepted in a pattern.
const NEST_LIMIT: u32 = 64;

/// A text prepared for mention matching: the original, for configured patterns, and its
/// lowercase form, for derived ones. Built once per text and reused for every participant.
#[derive(Debug)]
pub struct Haystack<'a> {
    raw: &'a str,
    lower: String,
    /// `normalizeMentionText`: zero-width characters removed, trimmed, lowercased (only built
    /// for [`Haystack::for_addresses`]).
    address: Option<String>,
}

impl<'a> Haystack<'a> {
    /// Prepares `text` for matching.
    pub fn new(raw: &'a str) -> Self {
        Self { raw, lower: raw.to_lowercase(), address: None }
    }

    /// Prepares `text` for [`MentionPatterns::matches_at_address`] too.
    pub fn for_addresses(raw: &'a str) -> Self {
        let zero_width =
            |c: char| matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}');
        let kept: String = raw.chars().filter(|c| !zero_width(*c)).collect();
        let address = Some(crate::js::js_trim(&kept).to_lowercase());
        Self { raw, lower: raw.to_lowercase(), address }
    }
}

/// One agent's compiled mention patterns (or the global list).
#[derive(Debug, Clone, Default)]
pub struct MentionPatterns {
    regexes: Vec<Regex>,
    /// True for derived patterns, which are lowercase and match the lowercased text.
    derived: bool,
}

impl MentionPatterns {
    /// Compiles a configured `mentionPatterns` value found at `path`.
    pub fn compile(value: &Value, path: &str) -> Result<Self, ConfigError> {
        let Value::Array(items) = value else {
            return Err(ConfigError::new(
                path,
                format!("must be an array of regular expressions, not {}", type_name(value)),
            ));
        };
        if items.len() > MAX_PATTERNS {
            return Err(ConfigError::new(
                path,
                format!("lists {} patterns; at most {MAX_PATTERNS} are allowed", items.len()),
            ));
        }
        let mut regexes = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            let Value::String(source) = item else {
                return Err(ConfigError::new(
                    item_path,
                    format!("must be a regular expression string, not {}", type_name(item)),
                ));
            };
            if source.len() > MAX_PATTERN_LEN {
                return Err(ConfigError::new(
                    item_path,
                    format!("is {} bytes long; shorten it to at most {MAX_PATTERN_LEN}", source.len()),
                ));
            }
            let regex = build(source).map_err(|e| {
                ConfigError::new(item_path, format!("is not a valid regular expression ({e}); fix or remove it"))
            })?;
            regexes.push(regex);
        }
        Ok(Self { regexes, derived: false })
    }

    /// The identity-derived patterns for an agent with this `id` and optional display `name`.
    /// Never fails: an escaped literal always compiles, and one that somehow does not is skipped.
    pub fn derived(id: &str, name: Option<&str>) -> Self {
        let mut literals = vec![regex_lite::escape(&id.trim().to_lowercase())];
        if let Some(name) = name {
            let lower = name.trim().to_lowercase();
            let parts: Vec<String> = lower.split_whitespace().map(regex_lite::escape).collect();
            if !parts.is_empty() {
                literals.push(parts.join(r"\s+"));
            }
        }
        literals.retain(|l| !l.is_empty());
        literals.dedup();
        let regexes = literals.iter().filter_map(|lit| build(&format!(r"(?:^|\W)@{lit}(?:[^\w-]|$)")).ok()).collect();
        Self { regexes, derived: true }
    }

    /// No patterns, yielding to the global list like derived ones (openclaw 2026.9 derives
    /// patterns from `identity`, which is not read).
    pub fn none_derived() -> Self {
        Self { regexes: Vec::new(), derived: true }
    }

    /// openclaw 2026.9's explicit address (`resolveGroupThreadMentionedAgentIds`): some match in
    /// the normalized text starts at an `@` that follows no letter, digit or `_`.
    pub fn matches_at_address(&self, text: &Haystack<'_>) -> bool {
        let Some(hay) = text.address.as_deref() else { return false };
        if !hay.contains('@') {
            return false;
        }
        let before = |i: usize| hay[..i].chars().next_back();
        let word = |c: char| (c as u32) <= 0xFFFF && (c.is_alphabetic() || c.is_numeric() || c == '_');
        self.regexes.iter().any(|r| {
            r.find_iter(hay).any(|m| {
                let at = if m.as_str().starts_with('@') {
                    Some(m.start())
                } else if m.as_str().starts_with("<@") {
                    Some(m.start() + 1)
                } else if before(m.start()) == Some('@') {
                    Some(m.start() - 1)
                } else {
                    None
                };
                at.is_some_and(|at| before(at).is_none_or(|c| !word(c)))
            })
        })
    }

    /// True when any pattern matches the text.
    pub fn matches(&self, text: &Haystack<'_>) -> bool {
        let hay = if self.derived { text.lower.as_str() } else { text.raw };
        self.regexes.iter().any(|r| r.is_match(hay))
    }

    /// True for identity-derived patterns (which yield to the global list), false for a
    /// configured list.
    pub fn is_derived(&self) -> bool {
        self.derived
    }

    /// Number of compiled patterns.
    pub fn len(&self) -> usize {
        self.regexes.len()
    }

    /// True when no pattern can match (an explicit `[]`).
    pub fn is_empty(&self) -> bool {
        self.regexes.is_empty()
    }
}

fn build(source: &str) -> Result<Regex, regex_lite::Error> {
    RegexBuilder::new(source).case_insensitive(true).size_limit(COMPILED_SIZE_LIMIT).nest_limit(NEST_LIMIT).build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn derived_hits(id: &str, name: Option<&str>, text: &str) -> bool {
        MentionPatterns::derived(id, name).matches(&Haystack::new(text))
    }

    #[test]
    fn derived_patterns_match_at_id_and_at_name_case_insensitively() {
        // (id, name, text, mentioned?)
        let table: &[(&str, Option<&str>, &str, bool)] = &[
            ("main", None, "@main what do you think?", true),
            ("main", None, "hey @MAIN", true),
            ("main", None, "(@main)", true),
            ("main", None, "main, what do you think?", false), // no @: not an explicit mention
            ("main", None, "bob@main.example", false),         // an e-mail address, not a mention
            ("main", None, "@main-bot please", false),         // a different handle
            ("main", None, "@mainly", false),
            ("reviewer", Some("Code Reviewer"), "@code   reviewer look", true),
            ("reviewer", Some("Code Reviewer"), "@Reviewer look", true),
            ("reviewer", Some("Code Reviewer"), "@code look", false),
            ("ärzte", Some("Ärzte Bot"), "@ÄRZTE bot hallo", true), // Unicode case folding
            ("a.b", None, "@axb", false),                           // the id is a literal
            ("a.b", None, "@a.b hi", true),
        ];
        for &(id, name, text, want) in table {
            assert_eq!(derived_hits(id, name, text), want, "id {id:?} name {name:?} text {text:?}");
        }
    }

    #[test]
    fn configured_patterns_are_case_insensitive_regexes() {
        let p = MentionPatterns::compile(&json!([r"\bclaude\b", "^hey bot"]), "p").expect("valid patterns");
        assert!(p.matches(&Haystack::new("ask Claude")));
        assert!(p.matches(&Haystack::new("HEY BOT, hi")));
        assert!(!p.matches(&Haystack::new("claudette")));
        assert_eq!(p.len(), 2);
    }

    /// NOTES §5: 2026.9.6 needs an `@` address at a word start (case `group-rounds`).
    #[test]
    fn openclaw_2026_9_mentions_are_at_addresses() {
        let p = MentionPatterns::compile(&json!(["@planner", "planner", "<@u1>"]), "p").expect("valid patterns");
        let hit = |t: &str| p.matches_at_address(&Haystack::for_addresses(t));
        assert!(hit("@Planner please look"));
        assert!(hit("(@planner)"));
        assert!(hit("hi <@U1>"), "a `<@` match addresses at its `@`");
        assert!(!hit("x@planner"), "an `@` after a letter is an e-mail address");
        assert!(!hit("planner, please"), "no `@` anywhere");
        assert!(!hit("@team planner"), "`planner` matched, but not at an `@`");
        assert!(hit("ask @\u{200B}planner"), "zero-width characters are removed first");
        assert!(!p.matches_at_address(&Haystack::new("@planner")), "a plain haystack has no address text");
    }

    #[test]
    fn empty_list_never_matches() {
        let p = MentionPatterns::compile(&json!([]), "p").expect("valid patterns");
        assert!(p.is_empty());
        assert!(!p.matches(&Haystack::new("@anyone")));
    }

    #[test]
    fn bad_patterns_are_errors_naming_the_item() {
        // (value, path of the error, words in the reason)
        let long = "a".repeat(MAX_PATTERN_LEN + 1);
        let many: Vec<String> = (0..=MAX_PATTERNS).map(|i| format!("p{i}")).collect();
        let table: Vec<(Value, &str, &str)> = vec![
            (json!(["ok", "(unclosed"]), "m[1]", "not a valid regular expression"),
            (json!(["a{1000}{1000}{1000}"]), "m[0]", "not a valid regular expression"),
            (json!([5]), "m[0]", "must be a regular expression string, not a number"),
            (json!("@bot"), "m", "must be an array"),
            (json!(null), "m", "not null"),
            (json!([long]), "m[0]", "shorten it"),
            (json!(many), "m", "at most 64"),
        ];
        for (value, path, reason) in table {
            let e = MentionPatterns::compile(&value, "m").expect_err("invalid patterns");
            assert_eq!(e.path, path, "{value}");
            assert!(e.reason.contains(reason), "{value}: {e}");
        }
    }
}
