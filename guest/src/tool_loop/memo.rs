//! What a call costs to fingerprint, paid once per call instead of once per hook.
//!
//! A gateway reports every tool call twice: before it runs (`check`) and after (`outcome`), both
//! times with the same arguments text. Parsing that text, writing its canonical form and hashing
//! it is most of a decision's work, and so is hashing the tool name and run id into their
//! [`name_id`]s. So the gateway remembers the [`CallFacts`] of its last few checked calls, keyed
//! by the exact session, tool, run and arguments text; the outcome that follows reuses them and
//! does not even parse the arguments. Only exact text equality is trusted, so a hit can never
//! give another call's facts.
//!
//! Memory stays bounded: [`SLOTS`] entries, each holding at most [`MAX_TEXT`] bytes of
//! arguments (longer texts are simply not remembered), slots reused round-robin without
//! reallocating once warm.

use crate::bytes::same_bytes;
use crate::canonical_text::CanonicalText;
use crate::digest::{args_prefix, digest_of, name_id, Digest};
use crate::json::Json;

use super::history::run_scope;

/// Calls remembered at once: enough for a handful of sessions whose check and outcome interleave.
pub const SLOTS: usize = 8;

/// Longest arguments text remembered (bytes).
pub const MAX_TEXT: usize = 16 * 1024;

/// Names whose [`name_id`] is cached (tool names and run ids repeat all day).
pub const NAMES: usize = 16;

/// Everything the detectors need from a call besides its history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFacts {
    /// `argsHash`: tool name + canonical params (`update_plan` reduced to its shape).
    pub args: Digest,
    /// The params' string `action`, if any (what `process` and `message` outcomes look at).
    pub action: Option<Box<str>>,
    /// [`name_id`] of the tool name.
    pub tool_id: u64,
    /// Run scope: [`name_id`] of the normalized run id.
    pub run: Option<u64>,
}

/// The action of a call's params, as the detectors and outcome hashing read it.
pub fn action_of<'j>(args: &'j Json<'_>) -> Option<&'j str> {
    args.get("action").and_then(Json::as_str)
}

#[derive(Debug, Clone, Default)]
struct Slot {
    session: String,
    tool: String,
    run: Option<String>,
    text: String,
    facts: Option<CallFacts>,
}

impl Slot {
    fn matches(&self, session: &str, tool: &str, run: Option<&str>, text: &str) -> bool {
        let same = |a: &str, b: &str| same_bytes(a.as_bytes(), b.as_bytes());
        self.facts.is_some()
            && same(&self.text, text)
            && same(&self.tool, tool)
            && same(&self.session, session)
            && match (self.run.as_deref(), run) {
                (Some(a), Some(b)) => same(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

/// The facts of recently checked calls, and the ids of recently seen names.
#[derive(Debug, Clone, Default)]
pub struct CallMemo {
    slots: Vec<Slot>,
    next: usize,
    names: Vec<(String, u64)>,
    next_name: usize,
    canonical: CanonicalText,
}

impl CallMemo {
    /// The facts remembered for exactly this call, if any.
    pub fn recall(&self, session: &str, tool: &str, run: Option<&str>, text: &str) -> Option<&CallFacts> {
        // Newest first: the outcome usually follows its own check directly.
        let n = self.slots.len();
        (0..n)
            .map(|k| &self.slots[(self.next + n - 1 - k) % n])
            .find(|s| s.matches(session, tool, run, text))
            .and_then(|s| s.facts.as_ref())
    }

    /// Remembers the facts of a checked call (unless its text is too long to keep).
    pub fn remember(&mut self, session: &str, tool: &str, run: Option<&str>, text: &str, facts: &CallFacts) {
        if text.len() > MAX_TEXT {
            return;
        }
        if self.slots.len() < SLOTS {
            self.slots.push(Slot::default());
            self.next = self.slots.len() - 1;
        }
        let slot = &mut self.slots[self.next];
        self.next = (self.next + 1) % SLOTS;
        for (dst, src) in [(&mut slot.session, session), (&mut slot.tool, tool), (&mut slot.text, text)] {
            dst.clear();
            dst.push_str(src);
        }
        match (run, &mut slot.run) {
            (Some(r), Some(dst)) => {
                dst.clear();
                dst.push_str(r);
            }
            (r, dst) => *dst = r.map(str::to_string),
        }
        slot.facts = Some(facts.clone());
    }

    /// [`name_id`] of `name`, from the cache when it was seen lately.
    pub fn name_id(&mut self, name: &str) -> u64 {
        if let Some((_, id)) = self.names.iter().find(|(n, _)| same_bytes(n.as_bytes(), name.as_bytes())) {
            return *id;
        }
        let id = name_id(name);
        if self.names.len() < NAMES {
            self.names.push((name.to_string(), id));
        } else {
            let slot = &mut self.names[self.next_name];
            slot.0.clear();
            slot.0.push_str(name);
            slot.1 = id;
            self.next_name = (self.next_name + 1) % NAMES;
        }
        id
    }

    /// The facts of a call from its arguments text, read without a tree when the text is in
    /// the common case of [`crate::canonical_text`]; `None` sends the caller to the tree path
    /// (`update_plan`, whose params are reduced to a shape, always goes there).
    pub fn text_facts(&mut self, tool: &str, text: &str, run: Option<&str>) -> Option<CallFacts> {
        if tool == "update_plan" {
            return None;
        }
        let mut len = [0u8; 8];
        let written = self.canonical.write_after(&args_prefix(tool, &mut len), text)?;
        let args = digest_of(written.prefixed);
        let action = written.action.map(Box::from);
        Some(CallFacts {
            args,
            action,
            tool_id: self.name_id(tool),
            run: super::history::normalize_run(run).map(|r| self.name_id(r)),
        })
    }

    /// The facts of a call whose params were parsed.
    pub fn facts(&mut self, tool: &str, args: &Json<'_>, run: Option<&str>) -> CallFacts {
        CallFacts {
            args: super::call_digest(tool, args),
            action: action_of(args).map(Box::from),
            tool_id: self.name_id(tool),
            run: super::history::normalize_run(run).map(|r| self.name_id(r)),
        }
    }
}

/// The facts of a call, computed without a memo (tests, native callers).
pub fn facts(tool: &str, args: &Json<'_>, run: Option<&str>) -> CallFacts {
    CallFacts {
        args: super::call_digest(tool, args),
        action: action_of(args).map(Box::from),
        tool_id: name_id(tool),
        run: run_scope(run),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn facts_of(text: &str) -> CallFacts {
        facts("read", &parse(text).unwrap(), Some("r"))
    }

    #[test]
    fn facts_from_the_text_equal_facts_from_the_tree() {
        let mut memo = CallMemo::default();
        for (tool, text) in [
            ("exec", r#"{"command":"ls -la","cwd":"/tmp","env":{"B":"2","A":"1"},"timeout":30}"#),
            ("process", r#"{"sessionId":"abc","action":"poll"}"#),
            ("read", "\"just a string\""),
            ("a-very-long-tool-name-for-the-prefix", "[1,2,{\"z\":0,\"y\":null}]"),
        ] {
            let tree = memo.facts(tool, &parse(text).unwrap(), Some("r"));
            let fast = memo.text_facts(tool, text, Some("r")).expect("the common case");
            assert_eq!(fast.args, tree.args, "{tool} {text}");
            assert_eq!(fast.action, tree.action, "{tool} {text}");
            assert_eq!((fast.tool_id, fast.run), (tree.tool_id, tree.run));
        }
    }

    #[test]
    fn only_the_exact_call_is_recalled() {
        let mut m = CallMemo::default();
        let f = facts_of(r#"{"p":1}"#);
        m.remember("s", "read", Some("r"), r#"{"p":1}"#, &f);
        assert_eq!(m.recall("s", "read", Some("r"), r#"{"p":1}"#), Some(&f));
        for (session, tool, run, text) in [
            ("s", "read", Some("r"), r#"{"p":2}"#),
            ("s", "read", Some("r"), r#"{"p": 1}"#),
            ("t", "read", Some("r"), r#"{"p":1}"#),
            ("s", "exec", Some("r"), r#"{"p":1}"#),
            ("s", "read", None, r#"{"p":1}"#),
            ("s", "read", Some("r2"), r#"{"p":1}"#),
        ] {
            assert_eq!(m.recall(session, tool, run, text), None, "{session} {tool} {run:?} {text}");
        }
    }

    #[test]
    fn the_memo_keeps_the_last_slots_calls_and_forgets_older_ones() {
        let mut m = CallMemo::default();
        let texts: Vec<String> = (0..SLOTS + 3).map(|i| format!(r#"{{"p":{i}}}"#)).collect();
        for t in &texts {
            m.remember("s", "read", None, t, &facts_of(t));
        }
        for (i, t) in texts.iter().enumerate() {
            let kept = i >= 3;
            assert_eq!(m.recall("s", "read", None, t).is_some(), kept, "{t}");
        }
        assert_eq!(m.slots.len(), SLOTS);
    }

    #[test]
    fn long_texts_are_not_remembered() {
        let mut m = CallMemo::default();
        let long = format!(r#"{{"p":"{}"}}"#, "x".repeat(MAX_TEXT));
        m.remember("s", "read", None, &long, &facts_of(&long));
        assert_eq!(m.recall("s", "read", None, &long), None);
    }

    #[test]
    fn name_ids_are_cached_and_bounded() {
        let mut m = CallMemo::default();
        for i in 0..NAMES * 3 {
            let name = format!("tool-{}", i % (NAMES + 4));
            assert_eq!(m.name_id(&name), name_id(&name));
        }
        assert_eq!(m.names.len(), NAMES);
    }

    /// Through the gateway: an outcome whose text differs from the checked call's must get its
    /// own digest, and one that matches gives what a gateway without the memo records.
    #[test]
    fn outcomes_through_the_memo_record_what_plain_outcomes_record() {
        use crate::config::Config;
        use crate::gateway::Gateway;
        use crate::tool_loop::{Outcome, ToolCall};
        let cfg = || Config::parse(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).unwrap();
        let (ta, tb) = (r#"{"p":1}"#, r#"{"p":2,"action":"poll"}"#);
        let (a, b, r) = (parse(ta).unwrap(), parse(tb).unwrap(), parse("1").unwrap());
        let call = |args| ToolCall { session: "s", tool: "process", args, run: Some("r"), agent: None, call_id: None };
        let run = |memo: bool| {
            let mut g = Gateway::new(cfg());
            let text = |t| memo.then_some(t);
            g.check_tool_call_text(&call(&a), text(ta));
            g.record_tool_outcome_text(&call(&b), text(tb), Outcome::Result(&r));
            g.check_tool_call_text(&call(&b), text(tb));
            g.record_tool_outcome_text(&call(&b), text(tb), Outcome::Result(&r));
            let s = g
                .sessions
                .get("s")
                .unwrap()
                .history()
                .scoped(run_scope(Some("r")))
                .map(|r| (r.args, r.result))
                .collect::<Vec<_>>();
            s
        };
        let (with_memo, without) = (run(true), run(false));
        assert_eq!(with_memo, without);
        assert_eq!(with_memo.len(), 3, "the first outcome did not attach to the other call");
    }
}
