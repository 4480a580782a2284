//! `unknown_tool_repeat`: the agent keeps calling a tool the gateway does not have.
//!
//! Models retry a hallucinated tool name with different arguments, so this streak ignores
//! arguments and counts consecutive outcomes that named the same missing tool (the outcome
//! hashing reads the name out of the error, [`extract_unknown_tool_name`]). It
//! runs first and is not gated by any detector switch.
//!
//! Settings: `unknownToolThreshold`. State: the session's history.

use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::js::{is_js_space, js_trim};
use crate::tool_loop::decision::{Detector, Finding, Scope};
use crate::tool_loop::history::Record;

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    let (count, name) = streak(&scope.records, scope.tool_id);
    (count >= s.unknown_tool).then(|| {
        let values = [("name", name.unwrap_or(scope.tool)), ("tool", scope.tool), ("n", &count.to_string())];
        Finding::block(Detector::UnknownToolRepeat, count, render(s.texts.unknown_critical, &values))
    })
}

/// The newest run of records for `tool` whose outcomes named the same missing tool:
/// `(count, missing tool name)`.
pub fn streak<'a>(records: &[&'a Record], tool: u64) -> (u32, Option<&'a str>) {
    let mut name: Option<&str> = None;
    let mut count = 0;
    for r in records.iter().rev() {
        let Some(unknown) = r.unknown_tool.as_deref() else { break };
        if r.tool != tool {
            break;
        }
        match name {
            None => name = Some(unknown),
            Some(n) if n != unknown => break,
            Some(_) => {}
        }
        count += 1;
    }
    (count, name)
}

/// `extractUnknownToolName`: the first match of `unknown tool[:\s]+["']?([a-z0-9_.-]+)` or else
/// `tool\s+["']?([a-z0-9_.-]+)["']?\s+(?:not found|is not available)`, case-insensitive,
/// lowercased.
pub fn extract_unknown_tool_name(error_text: &str) -> Option<String> {
    let t = js_trim(error_text);
    if t.is_empty() {
        return None;
    }
    first_match(t, "unknown tool", unknown_tool_tail).or_else(|| first_match(t, "tool", not_found_tail))
}

/// Tries `tail` after every case-insensitive occurrence of `lead`, leftmost first.
fn first_match(t: &str, lead: &str, tail: fn(&str) -> Option<&str>) -> Option<String> {
    let lower = t.to_ascii_lowercase(); // ASCII-only folding keeps byte offsets
    let mut from = 0;
    while let Some(pos) = lower[from..].find(lead) {
        let at = from + pos;
        if let Some(name) = tail(&t[at + lead.len()..]) {
            return Some(name.to_ascii_lowercase());
        }
        from = at + 1;
        while !lower.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn skip_quote(s: &str) -> &str {
    s.strip_prefix(['"', '\'']).unwrap_or(s)
}

fn take_name(s: &str) -> Option<(&str, &str)> {
    let end = s.find(|c: char| !is_name_char(c)).unwrap_or(s.len());
    (end > 0).then(|| s.split_at(end))
}

/// `[:\s]+["']?([a-z0-9_.-]+)`.
fn unknown_tool_tail(s: &str) -> Option<&str> {
    let rest = s.trim_start_matches(|c: char| c == ':' || is_js_space(c));
    if rest.len() == s.len() {
        return None;
    }
    take_name(skip_quote(rest)).map(|(name, _)| name)
}

/// `\s+["']?([a-z0-9_.-]+)["']?\s+(?:not found|is not available)`.
fn not_found_tail(s: &str) -> Option<&str> {
    let rest = s.trim_start_matches(is_js_space);
    if rest.len() == s.len() {
        return None;
    }
    let (name, after) = take_name(skip_quote(rest))?;
    let after = skip_quote(after);
    let spaced = after.trim_start_matches(is_js_space);
    if spaced.len() == after.len() {
        return None;
    }
    let head = spaced.get(..16).unwrap_or(spaced).to_ascii_lowercase();
    (head.starts_with("not found") || head.starts_with("is not available")).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::name_id;

    fn rec(tool: &str, unknown: Option<&str>) -> Record {
        Record {
            tool: name_id(tool),
            result: Some([1; 16]),
            unknown_tool: unknown.map(Into::into),
            ..Record::default()
        }
    }

    fn of(h: &[Record], tool: &str) -> (u32, Option<String>) {
        let (n, name) = streak(&h.iter().collect::<Vec<_>>(), name_id(tool));
        (n, name.map(str::to_string))
    }

    #[test]
    fn counts_newest_run_of_the_same_missing_name() {
        let h = [rec("x", Some("x")), rec("b", Some("b")), rec("b", Some("b")), rec("b", Some("b"))];
        assert_eq!(of(&h, "b"), (3, Some("b".into())));
    }

    /// NOTES §2.4, case `unknown-tool-not-sticky`: the veto record of a block has no missing
    /// tool's name, so the streak starts over after it.
    #[test]
    fn a_veto_record_ends_the_unknown_tool_streak() {
        let veto = Record { tool: name_id("b"), veto: true, ..Record::default() };
        let h = [rec("b", Some("b")), rec("b", Some("b")), veto, rec("b", Some("b"))];
        assert_eq!(of(&h, "b"), (1, Some("b".into())));
    }

    #[test]
    fn stops_at_another_tool_or_a_known_outcome_or_another_name() {
        assert_eq!(of(&[rec("b", Some("b")), rec("b", None), rec("b", Some("b"))], "b"), (1, Some("b".into())));
        assert_eq!(of(&[rec("b", Some("b")), rec("a", Some("a"))], "b"), (0, None), "the newest is another tool");
        assert_eq!(of(&[rec("b", Some("c")), rec("b", Some("b"))], "b"), (1, Some("b".into())));
    }
}
