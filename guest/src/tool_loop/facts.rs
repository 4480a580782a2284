//! A call's fingerprint ([`CallFacts`]), read once per call by the gateway.
//!
//! Both halves of a decision need the call's `argsHash`: the check before the tool runs, and the
//! outcome after it, which names the same call again with the same arguments. When the
//! arguments come as JSON text (the typed calls of every host) or were read from a known text (a
//! trace line's `args`), [`FactsMemo`] keeps the facts of the last [`MEMO_SLOTS`] calls by tool
//! name and text, so the outcome of a recent check reuses them instead of reading,
//! canonicalizing and hashing the arguments again.
//!
//! Why a memo (a floor needs it): reading and fingerprinting the arguments a second time was a
//! third of a decision. Measured on the decision benchmark's workload: 43.9 k instructions per
//! decision natively without the memo, 36.7 k with it (callgrind, `decision_profile`). Bounded:
//! at most [`MEMO_SLOTS`] texts of at most [`MEMO_MAX_TEXT`] bytes each. It changes no decision:
//! the facts are a function of the tool name, the text and the profile, which a gateway never
//! changes (a new config is a new gateway).

use std::collections::VecDeque;

use super::history::run_scope;
use super::session::tool_name;
use super::{outcome, ToolCall};
use crate::canonical::Style;
use crate::config::profile::ToolRules;
use crate::digest::{args_digest_in, name_id, Digest};
use crate::error::PolicyError;
use crate::input::json_value_with;
use crate::js::same_text;
use crate::json::{Json, LoneKeys};

/// Calls whose facts the memo keeps (calls of other sessions may come between a check and its
/// outcome; a gateway rarely has more than a few tool calls in flight at once).
pub const MEMO_SLOTS: usize = 8;

/// Longest argument text the memo keeps; longer calls are fingerprinted each time.
pub const MEMO_MAX_TEXT: usize = 4096;

/// A call's arguments as the gateway passes them.
#[derive(Debug, Clone, Copy)]
pub enum Args<'a> {
    /// Already read (trace lines, tests).
    Value(&'a Json<'a>),
    /// JSON text (the typed calls), read here with [`crate::input`]'s limits and named
    /// `call.args-json` in errors.
    Text(&'a str),
    /// Already read from `text` (a trace line's `args`, read with the profile's key identity):
    /// the memo keys it by `text`, so that a `tool_result` line finds its `tool_call`'s facts.
    Read {
        /// The value.
        value: &'a Json<'a>,
        /// The JSON text it was read from.
        text: &'a str,
    },
}

/// The fingerprint of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFacts {
    /// `argsHash`: tool name + canonical params (`update_plan` reduced to its shape).
    pub args: Digest,
    /// The params' string `action`, if any (what `process` and `message` outcomes look at).
    pub action: Option<String>,
    /// [`name_id`] of the tool name.
    pub tool_id: u64,
    /// Run scope: [`name_id`] of the normalized run id.
    pub run: Option<u64>,
}

impl CallFacts {
    /// The facts of `call` under a profile's rules (the tool name as the profile's caller
    /// normalizes it, the `update_plan` shape, lone surrogates). Fails only on argument text
    /// that is not JSON or is too large.
    pub fn of(call: &ToolCall<'_>, rules: &ToolRules) -> Result<Self, PolicyError> {
        Self::of_args(call, rules, run_scope(call.run))
    }

    /// [`CallFacts::of`] with the run scope already known.
    fn of_args(call: &ToolCall<'_>, rules: &ToolRules, run: Option<u64>) -> Result<Self, PolicyError> {
        match call.args {
            Args::Value(v) | Args::Read { value: v, .. } => Ok(Self::of_value(call.tool, v, run, rules)),
            Args::Text(text) => {
                let v = json_value_with(text, "call.args-json", lone_keys(rules))?;
                Ok(Self::of_value(call.tool, &v, run, rules))
            }
        }
    }

    fn of_value(tool: &str, params: &Json<'_>, run: Option<u64>, rules: &ToolRules) -> Self {
        let tool = tool_name(tool, rules);
        let style = Style { lone_surrogates: rules.keep_lone_surrogates, marker_ids: false };
        let args = if tool == "update_plan" && rules.update_plan_shape {
            args_digest_in(&tool, &outcome::plan_shape(params), style)
        } else {
            args_digest_in(&tool, params, style)
        };
        CallFacts {
            args,
            action: params.get("action").and_then(Json::as_str).map(str::to_string),
            tool_id: name_id(&tool),
            run,
        }
    }
}

fn lone_keys(rules: &ToolRules) -> LoneKeys {
    if rules.keep_lone_surrogates {
        LoneKeys::Distinct
    } else {
        LoneKeys::Merge
    }
}

/// The facts of the last calls given as text, newest last.
#[derive(Debug, Clone, Default)]
pub struct FactsMemo {
    slots: VecDeque<Slot>,
    /// The last run id and its [`run_scope`]: a gateway's calls come in runs of many calls, and
    /// each scope is a keyed blake3 hash, two per decision without it.
    last_run: Option<(Box<str>, Option<u64>)>,
}

/// Longest run id whose scope the memo keeps.
const MEMO_MAX_RUN: usize = 256;

#[derive(Debug, Clone)]
struct Slot {
    tool: String,
    text: String,
    facts: CallFacts,
}

impl FactsMemo {
    /// [`CallFacts::of`], reusing the facts of a recent call with the same tool name and
    /// argument text.
    pub fn facts(&mut self, call: &ToolCall<'_>, rules: &ToolRules) -> Result<CallFacts, PolicyError> {
        let (Args::Text(text) | Args::Read { text, .. }) = call.args else { return CallFacts::of(call, rules) };
        let run = self.run_scope(call.run);
        let hit = |s: &&Slot| same_text(&s.text, text) && same_text(&s.tool, call.tool);
        if let Some(slot) = self.slots.iter().rev().find(hit) {
            return Ok(CallFacts { run, ..slot.facts.clone() });
        }
        let facts = CallFacts::of_args(call, rules, run)?;
        if text.len() <= MEMO_MAX_TEXT {
            // The oldest slot's buffers are reused: no allocation once the memo is full.
            let (mut tool, mut buf) = match self.slots.len() {
                MEMO_SLOTS => self.slots.pop_front().map(|s| (s.tool, s.text)),
                _ => None,
            }
            .unwrap_or_default();
            tool.clear();
            tool.push_str(call.tool);
            buf.clear();
            buf.push_str(text);
            self.slots.push_back(Slot { tool, text: buf, facts: facts.clone() });
        }
        Ok(facts)
    }

    /// [`run_scope`] of `run`, remembered for the last run id.
    fn run_scope(&mut self, run: Option<&str>) -> Option<u64> {
        let run = run?;
        match &self.last_run {
            Some((last, scope)) if same_text(last, run) => *scope,
            _ => {
                let scope = run_scope(Some(run));
                if run.len() <= MEMO_MAX_RUN {
                    self.last_run = Some((run.into(), scope));
                }
                scope
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profile::{DOCUMENTED, OPENCLAW_2026_9};

    fn call<'a>(tool: &'a str, args: &'a str, run: Option<&'a str>) -> ToolCall<'a> {
        ToolCall { session: "s", tool, args: Args::Text(args), run, agent: None, call_id: None }
    }

    #[test]
    fn remembered_facts_are_the_facts_of_the_call() {
        for rules in [&DOCUMENTED.tool, &OPENCLAW_2026_9.tool] {
            let mut memo = FactsMemo::default();
            let texts = [r#"{"action":"poll","id":1}"#, r#"{"b":2,"a":1}"#, r#"{"a":1,"b":2}"#, "[]"];
            for round in 0..3 {
                for (i, text) in texts.iter().enumerate() {
                    for (tool, run) in [("process", None), ("Exec ", Some("r1")), ("update_plan", Some(" r2 "))] {
                        let c = call(tool, text, run);
                        let want = CallFacts::of(&c, rules).expect("JSON");
                        assert_eq!(memo.facts(&c, rules).expect("JSON"), want, "round {round}, text {i}, {tool}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_memo_is_bounded_and_forgets_the_oldest() {
        let mut memo = FactsMemo::default();
        let rules = &DOCUMENTED.tool;
        for i in 0..3 * MEMO_SLOTS {
            memo.facts(&call("t", &format!("{{\"i\":{i}}}"), None), rules).expect("JSON");
        }
        let long = format!("{{\"x\":\"{}\"}}", "y".repeat(MEMO_MAX_TEXT));
        memo.facts(&call("t", &long, None), rules).expect("JSON");
        assert_eq!(memo.slots.len(), MEMO_SLOTS);
        assert!(memo.slots.iter().all(|s| s.text.len() <= MEMO_MAX_TEXT));
        assert_eq!(&*memo.slots[0].text, format!("{{\"i\":{}}}", 2 * MEMO_SLOTS));
    }

    #[test]
    fn bad_text_is_an_error_naming_the_argument_every_time() {
        let mut memo = FactsMemo::default();
        for _ in 0..2 {
            let e = memo.facts(&call("t", "{x", None), &DOCUMENTED.tool).expect_err("not JSON");
            assert_eq!(e.path, "call.args-json");
        }
        assert!(memo.slots.is_empty());
    }
}
