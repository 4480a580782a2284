//! A call's fingerprint ([`CallFacts`]): what the detectors compare calls by.
//!
//! Both halves of a decision need the call's `argsHash`: the check before the tool runs, and the
//! outcome after it, which names the same call again with the same arguments; each reads and
//! fingerprints the arguments it is given.

use std::borrow::Cow;

use super::history::run_scope;
use super::outcome;
use crate::canonical::Style;
use crate::config::profile::releases::apply_tool_name_aliases;
use crate::config::profile::ToolRules;
use crate::digest::{args_digest_in, name_id, Digest};
use crate::error::PolicyError;
use crate::input::json_value_with;
use crate::json::{Json, LoneKeys};

/// A tool call as the gateway passes it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The session key.
    pub session: &'a str,
    /// The tool name.
    pub tool: &'a str,
    /// The call's arguments.
    pub args: Args<'a>,
    /// The run id, exactly as passed.
    pub run: Option<&'a str>,
    /// The agent id.
    pub agent: Option<&'a str>,
    /// The provider's tool-call id.
    pub call_id: Option<&'a str>,
}

/// The tool name the detectors see: as given, or as the profile's caller normalizes it
/// ([`ToolRules::tool_name_aliases`], the rule of
/// [`normalize_tool_name`](crate::config::profile::releases::normalize_tool_name)).
pub fn tool_name<'t>(raw: &'t str, rules: &ToolRules) -> Cow<'t, str> {
    match rules.tool_name_aliases {
        Some(aliases) => apply_tool_name_aliases(raw, aliases),
        None => Cow::Borrowed(raw),
    }
}

/// A call's arguments as the gateway passes them.
#[derive(Debug, Clone, Copy)]
pub enum Args<'a> {
    /// Already read (trace lines, tests).
    Value(&'a Json<'a>),
    /// JSON text (the typed calls), read here with [`crate::input`]'s limits and named
    /// `call.args-json` in errors.
    Text(&'a str),
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
        let run = run_scope(call.run);
        match call.args {
            Args::Value(v) => Ok(Self::of_value(call.tool, v, run, rules)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profile::{DOCUMENTED, OPENCLAW_2026_9};

    fn call<'a>(tool: &'a str, args: &'a str, run: Option<&'a str>) -> ToolCall<'a> {
        ToolCall { session: "s", tool, args: Args::Text(args), run, agent: None, call_id: None }
    }

    #[test]
    fn text_and_value_arguments_give_the_same_facts() {
        for rules in [&DOCUMENTED.tool, &OPENCLAW_2026_9.tool] {
            for text in [r#"{"action":"poll","id":1}"#, r#"{"b":2,"a":1}"#, "[]"] {
                for (tool, run) in [("process", None), ("Exec ", Some("r1")), ("update_plan", Some(" r2 "))] {
                    let value = crate::json::parse_with(text, lone_keys(rules)).expect("JSON");
                    let by_value = ToolCall { args: Args::Value(&value), ..call(tool, text, run) };
                    assert_eq!(
                        CallFacts::of(&call(tool, text, run), rules).expect("JSON"),
                        CallFacts::of(&by_value, rules).expect("JSON"),
                        "{text}, {tool}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_text_is_an_error_naming_the_argument() {
        let e = CallFacts::of(&call("t", "{x", None), &DOCUMENTED.tool).expect_err("not JSON");
        assert_eq!(e.path, "call.args-json");
    }

    /// NOTES §2.7: what the 2026.9.6 package's `normalizeToolPolicyName(name || "tool")` returns.
    #[test]
    fn openclaw_2026_9_normalizes_tool_names_like_its_caller() {
        let cases = [
            ("Bash", "exec"),
            (" READ ", "read"),
            ("Apply-Patch", "apply_patch"),
            ("CRON", "automations"),
            ("", "tool"),
            ("   ", ""),
            ("exec", "exec"),
            ("Web.Search", "web.search"),
            ("\u{feff}X\u{85}", "x\u{85}"),
        ];
        for (raw, want) in cases {
            assert_eq!(tool_name(raw, &OPENCLAW_2026_9.tool), want, "{raw:?}");
            assert_eq!(tool_name(raw, &DOCUMENTED.tool), raw, "documented: as given");
            assert_eq!(crate::config::profile::releases::normalize_tool_name(raw), want, "{raw:?}");
        }
    }
}
