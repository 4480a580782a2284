//! What every detector beyond OpenClaw looks at: the call being checked and the session's trail.
//! One struct, so that every detector has the same shape, `check(&Look, &Settings) ->
//! Option<Finding>`.
//!
//! The call is seen three ways, from the most to the least exact: its `argsHash` (the same call,
//! byte for byte), its [`fold`] (the same call re-quoted, re-cased or with its words re-ordered:
//! the rubric's "cosmetic variations", still strong evidence), and its [`Sketch`] (what it aims
//! at: other arguments aimed at the same thing, weak evidence).

use std::collections::VecDeque;

use super::sketch::{is_commentary, Sketch};
use super::trail::Entry;
use crate::digest::{name_id, Digest};
use crate::json::Json;

/// The call being checked.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool's name as the model gave it (for messages).
    pub tool: &'a str,
    /// [`name_id`] of the tool.
    pub tool_id: u64,
    /// `argsHash` of the call.
    pub args: Digest,
    /// [`fold`] of the call.
    pub fold: u64,
    /// What it aims at.
    pub sketch: Sketch,
    /// Its [`payload`]: the characters of its longest string argument.
    pub payload: usize,
}

impl Call<'_> {
    /// True when `e` is this call again, up to cosmetics.
    pub fn same_as(&self, e: &Entry) -> bool {
        e.tool == self.tool_id && e.fold == self.fold
    }
}

/// A call and the trail it is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Look<'a> {
    /// The session's entries, oldest first (without this call).
    pub entries: &'a VecDeque<Entry>,
    /// This call.
    pub call: Call<'a>,
    /// Successive calls (counting this one's predecessor) whose argument grew by repeating
    /// itself ([`super::growing_args`]).
    pub growth: u32,
}

/// For tests: `f` on a look at call `args` (tool 1, fold = `args`, [`Sketch::test_aim`]) after
/// the entries `es`.
#[cfg(test)]
pub(crate) fn looking<T>(es: &[Entry], args: u8, f: impl FnOnce(&Look<'_>) -> T) -> T {
    let entries = es.iter().copied().collect();
    let call = Call {
        tool: "tool",
        tool_id: 1,
        args: [args; 16],
        fold: args as u64,
        sketch: Sketch::test_aim(args),
        payload: 0,
    };
    f(&Look { entries: &entries, call, growth: 0 })
}

/// The arguments with their cosmetics folded away: the words of every string, number and key,
/// lower-cased, with quotes, punctuation and spacing dropped, sorted. `grep -rn "FooBar" src`
/// and `grep -rn 'foobar' src` fold alike; `grep -rn parseConfig src` and `grep -rn
/// loadSettings src` do not. Separators inside a word (`foo_bar`, `foo-bar`) are dropped too, so
/// spellings of one name fold alike.
pub fn fold(tool: u64, args: Option<&Json<'_>>) -> u64 {
    let mut words: Vec<String> = Vec::new();
    if let Some(v) = args {
        collect(v, &mut words);
    }
    words.sort_unstable();
    let mut text = tool.to_string();
    for w in &words {
        text.push(' ');
        text.push_str(w);
    }
    name_id(&text)
}

/// The characters of the longest string argument (commentary aside, any depth): what the call
/// carries. A poll or a read names a target in a few words; an edit or a file written carries
/// its content.
pub fn payload(args: Option<&Json<'_>>) -> usize {
    match args {
        Some(Json::Str(s)) => s.as_str().chars().count(),
        Some(Json::Arr(items)) => items.iter().map(|i| payload(Some(i))).max().unwrap_or(0),
        Some(Json::Obj(members)) => {
            members.iter().filter(|(k, _)| !is_commentary(k.as_str())).map(|(_, v)| payload(Some(v))).max().unwrap_or(0)
        }
        _ => 0,
    }
}

/// The most words folded per call: beyond, a longer argument is compared by its first words.
const MAX_WORDS: usize = 512;

fn collect(v: &Json<'_>, out: &mut Vec<String>) {
    match v {
        Json::Str(s) => words(s.as_str(), out),
        Json::Num(n) => words(&n.to_string(), out),
        Json::Bool(b) => out.push(b.to_string()),
        Json::Arr(items) => items.iter().for_each(|i| collect(i, out)),
        Json::Obj(members) => members.iter().filter(|(k, _)| !is_commentary(k.as_str())).for_each(|(k, v)| {
            words(k.as_str(), out);
            collect(v, out);
        }),
        _ => {}
    }
}

/// Splits on whitespace and on the characters that separate arguments (`,;:=()[]{}|&<>`);
/// within a word only letters and digits are kept.
fn words(s: &str, out: &mut Vec<String>) {
    for raw in s.split(|c: char| c.is_whitespace() || ",;:=()[]{}|&<>".contains(c)) {
        if out.len() >= MAX_WORDS {
            return;
        }
        let w: String = raw.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
        if !w.is_empty() {
            out.push(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(args: &str) -> u64 {
        fold(1, Some(&crate::input::json_value_with(args, "a", Default::default()).expect("JSON")))
    }

    #[test]
    fn re_quoted_re_cased_and_re_spelt_calls_fold_alike() {
        let base = f(r#"{"command":"grep -rn \"fooBar\" src/"}"#);
        assert_eq!(base, f(r#"{"command":"grep -rn 'foo_bar' src/"}"#));
        assert_eq!(base, f(r#"{"command":"grep  -rn FOO-BAR src"}"#));
        assert_eq!(f(r#"{"query":"Scatman John"}"#), f(r#"{"query":"\"scatman john\""}"#));
        assert_eq!(f(r#"{"a":"x y"}"#), f(r#"{"a":"y x"}"#), "re-ordered words");
    }

    #[test]
    fn a_command_described_in_other_words_is_the_same_call() {
        let poll = |d: &str| f(&format!(r#"{{"command":"echo still-running","description":"{d}"}}"#));
        assert_eq!(poll("Check the build"), poll("Poll the CI run again"));
        assert_eq!(poll("x"), f(r#"{"command":"echo still-running"}"#));
    }

    #[test]
    fn other_names_other_files_and_other_ranges_do_not() {
        let base = f(r#"{"command":"grep -rn parseConfig src"}"#);
        assert_ne!(base, f(r#"{"command":"grep -rn loadSettings src"}"#));
        assert_ne!(f(r#"{"command":"sed -n 10,20p a.py"}"#), f(r#"{"command":"sed -n 20,30p a.py"}"#));
        assert_ne!(f(r#"{"path":"/a/b.rs"}"#), f(r#"{"path":"/a/c.rs"}"#));
        assert_ne!(fold(1, None), fold(2, None), "the tool is part of the call");
    }
}
