//! Compatibility profiles: which OpenClaw behaviour the policy reproduces (`loopguard.compat`).
//!
//! OpenClaw releases differ in thresholds, in the texts the model receives and in a few rules.
//! An operator who replaces the gateway's built-in guard with loopguard must see no change, so
//! a profile names the behaviour to match. A profile is data: the defaults of the tunable knobs,
//! the message texts, and switches for the few rules that differ; the detectors read it and
//! are not forked per release. Adding a release is adding a profile here.

use serde_json::Value;

use super::ConfigError;

/// The message texts of the tool-loop detectors and the post-compaction guard. `{tool}`, `{n}`,
/// `{name}` and `{window}` are replaced by the tool, the count, the missing tool's name and the
/// guard's window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolTexts {
    /// `unknown_tool_repeat` block.
    pub unknown_critical: &'static str,
    /// `global_circuit_breaker` block.
    pub global_critical: &'static str,
    /// `known_poll_no_progress` block.
    pub poll_critical: &'static str,
    /// `known_poll_no_progress` warning.
    pub poll_warning: &'static str,
    /// `ping_pong` block.
    pub ping_pong_critical: &'static str,
    /// `ping_pong` warning.
    pub ping_pong_warning: &'static str,
    /// `generic_repeat` block.
    pub generic_critical: &'static str,
    /// `generic_repeat` warning.
    pub generic_warning: &'static str,
    /// The post-compaction abort.
    pub compaction_abort: &'static str,
}

/// `template` with each `{name}` placeholder replaced by its value, in one pass: a value that
/// itself contains `{n}` (a tool name is the model's choice) is not expanded again.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            let name = &after[..close];
            values.iter().find(|(k, _)| *k == name).map(|(_, v)| (close, *v))
        });
        match hit {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A compatibility profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The value of `loopguard.compat` that selects it.
    pub name: &'static str,
    /// The tool-loop message texts.
    pub texts: ToolTexts,
}

/// The behaviour of spec/tool-loop.md and spec/bot-loop.md: every knob configurable, the texts
/// of the documentation. The default.
pub const DOCUMENTED: Profile = Profile {
    name: "documented",
    texts: ToolTexts {
        unknown_critical: "CRITICAL: attempted unavailable tool {name} {n} times. Stop retrying that missing tool and answer without it.",
        global_critical: "CRITICAL: {tool} has repeated identical no-progress outcomes {n} times. Session execution blocked by global circuit breaker to prevent runaway loops.",
        poll_critical: "CRITICAL: Called {tool} with identical arguments and no progress {n} times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste.",
        poll_warning: "WARNING: You have called {tool} {n} times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck.",
        ping_pong_critical: "CRITICAL: You are alternating between repeated tool-call patterns ({n} consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste.",
        ping_pong_warning: "WARNING: You are alternating between repeated tool-call patterns ({n} consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed.",
        generic_critical: "CRITICAL: Called {tool} with identical arguments and identical outcomes {n} times. Session execution blocked to prevent runaway loops.",
        generic_warning: "WARNING: You have called {tool} {n} times with identical arguments. If this is not making progress, stop retrying and report the task as failed.",
        compaction_abort: "CRITICAL: tool {tool} repeated {n} times with identical arguments and identical results within {window} attempts after auto-compaction. The compaction did not break the loop. Aborting to prevent runaway resource use.",
    },
};

/// Every profile, by name.
pub const PROFILES: &[&Profile] = &[&DOCUMENTED];

/// The profile `loopguard.compat` names (absent: [`DOCUMENTED`]); an unknown name is an error
/// that lists the accepted ones.
pub fn select(doc: &Value) -> Result<&'static Profile, ConfigError> {
    let names = || PROFILES.iter().map(|p| format!("\"{}\"", p.name)).collect::<Vec<_>>().join(", ");
    match super::lookup(doc, &["loopguard", "compat"]) {
        None => Ok(&DOCUMENTED),
        Some(Value::String(name)) => PROFILES.iter().copied().find(|p| p.name == name).ok_or_else(|| {
            ConfigError::new(PATH, format!("unknown compatibility profile {name:?}; the accepted ones are {}", names()))
        }),
        Some(other) => Err(ConfigError::new(
            PATH,
            format!("must be a profile name (one of {}), not {}", names(), super::type_name(other)),
        )),
    }
}

const PATH: &str = "loopguard.compat";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_selects_a_profile_or_lists_the_accepted_ones() {
        use serde_json::json;
        assert_eq!(select(&json!({})).unwrap().name, "documented");
        assert_eq!(select(&json!({"loopguard": {"compat": "documented"}})).unwrap().name, "documented");
        let e = select(&json!({"loopguard": {"compat": "openclaw-1999.1"}})).unwrap_err();
        assert_eq!(e.path, "loopguard.compat");
        assert!(e.reason.contains("\"documented\""), "{e}");
        assert!(select(&json!({"loopguard": {"compat": 7}})).is_err());
    }

    #[test]
    fn render_fills_placeholders_once() {
        assert_eq!(render("Called {tool} {n} times.", &[("tool", "{n}"), ("n", "3")]), "Called {n} 3 times.");
        assert_eq!(render("{x} {tool}", &[("tool", "read")]), "{x} read");
        assert_eq!(render("no placeholders {", &[]), "no placeholders {");
    }
}
