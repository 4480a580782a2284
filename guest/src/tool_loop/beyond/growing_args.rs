//! `growing_args`: arguments that grow by repeating themselves.
//!
//! A model that loses track appends what it already wrote (the same paragraph to a file, the same
//! clause to a query, the same command to a script) and calls again; every call is new to the
//! argument-keyed detectors, and each is longer than the last. A step of growth is a call of the
//! same tool whose longest string argument is the previous one with a part added at its start or
//! end that the previous one already contained (a repetition), or that repeats the previous one.
//!
//! Settings: `loopguard.detectors.growingArgs` (`warnAt`, `blockAt`: the call, counting the first
//! of the run of growth, that warns and blocks). State: the previous call's longest string
//! argument and the number of growth steps in a row, in the session's
//! [`Trail`](super::trail::Trail).

use super::look::Look;
use crate::config::detection::Levels;
use crate::digest::{key_digest, tag};
use crate::json::Json;
use crate::tool_loop::decision::{Detector, Finding};

/// The shortest repeated part that counts (shorter additions are ordinary edits).
pub const MIN_PART: usize = 8;

/// Checks a call whose run of growth has `steps` steps; `None` when this detector has nothing to say.
pub fn check(look: &Look<'_>, t: &Levels) -> Option<Finding> {
    let (tool, tool_id, steps) = (look.call.tool, look.call.tool_id, look.growth);
    let call = steps + 1;
    if steps > 0 && call >= t.block_at {
        let m = format!(
            "loopguard: the arguments of {tool} have grown by repeating themselves {steps} times in a \
             row; blocked. Start again from what the call needs."
        );
        return Some(Finding::block(Detector::GrowingArgs, call, m));
    }
    (steps > 0 && call >= t.warn_at).then(|| {
        let m = format!(
            "loopguard: the arguments of {tool} keep growing by repeating text already in them \
             ({steps} times). Check what you are sending."
        );
        Finding::warn(Detector::GrowingArgs, call, key_digest(tag::WARN_KEY, &[b"growing", &tool_id.to_le_bytes()]), m)
    })
}

/// True when `cur` is `prev` grown by a repetition: `prev` plus, at its start or end, a part of
/// at least [`MIN_PART`] bytes that `prev` already contains or that contains `prev`.
pub fn grows(prev: &str, cur: &str) -> bool {
    if cur.len() < prev.len() + MIN_PART || prev.len() < MIN_PART {
        return false;
    }
    let added = if let Some(rest) = cur.strip_prefix(prev) {
        rest
    } else if let Some(rest) = cur.strip_suffix(prev) {
        rest
    } else {
        return false;
    };
    let part = added.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';');
    part.len() >= MIN_PART && (prev.contains(part) || part.contains(prev.trim()))
}

/// The longest string among a call's arguments (string leaves, any depth).
pub fn longest_string<'a>(args: &'a Json<'a>) -> Option<&'a str> {
    match args {
        Json::Str(s) => Some(s.as_str()),
        Json::Arr(items) => items.iter().filter_map(longest_string).max_by_key(|s| s.len()),
        Json::Obj(members) => members.iter().filter_map(|(_, v)| longest_string(v)).max_by_key(|s| s.len()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tool_loop::beyond::look::Call;
    use crate::tool_loop::beyond::sketch::Sketch;
    use std::collections::VecDeque;

    const T: Levels = Levels { warn_at: 3, block_at: 5 };

    fn check(tool: &str, tool_id: u64, growth: u32, t: &Levels) -> Option<Finding> {
        let entries = VecDeque::new();
        let call = Call { tool, tool_id, args: [0; 16], fold: 0, sketch: Sketch::default(), payload: 0 };
        super::check(&Look { entries: &entries, call, growth }, t)
    }

    #[test]
    fn a_query_that_appends_itself_again_and_again() {
        let a = "Search[Steve Green birth]";
        let b = format!("{a}, {a}");
        let c = format!("{b}, {a}");
        assert!(grows(a, &b));
        assert!(grows(&b, &c));
        assert_eq!(check("search", 1, 2, &T).map(|f| (f.critical, f.count)), Some((false, 3)));
        assert_eq!(check("search", 1, 4, &T).map(|f| (f.critical, f.count)), Some((true, 5)));
    }

    #[test]
    fn a_paragraph_written_again_at_the_end_of_a_file() {
        let p = "The quick brown fox jumps over the lazy dog.\n";
        assert!(grows(&format!("# Title\n{p}"), &format!("# Title\n{p}{p}")));
    }

    #[test]
    fn ordinary_edits_and_new_text_are_not_growth() {
        assert!(!grows("ls -la src", "ls -la src/tool_loop"), "a short addition");
        assert!(!grows("def f(x):\n    return x", "def f(x):\n    return x + compute_offset(x)"), "new text");
        assert!(!grows("abcdefghij", "abcdefghij"), "no growth");
        assert_eq!(check("search", 1, 1, &T), None);
    }

    #[test]
    fn the_longest_string_argument_is_compared() {
        let doc = crate::input::json_value_with(
            r#"{"path":"/a","content":{"text":"long text here"}}"#,
            "a",
            Default::default(),
        )
        .unwrap();
        assert_eq!(longest_string(&doc), Some("long text here"));
    }
}
