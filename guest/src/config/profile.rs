//! Compatibility profiles: which OpenClaw behaviour the policy reproduces (`loopguard.compat`).
//!
//! OpenClaw releases differ in thresholds, in the texts the model receives and in a few rules.
//! An operator who replaces the gateway's built-in guard with loopguard must see no change, so
//! a profile names the behaviour to match. A profile is data: the defaults of the tunable knobs
//! ([`ToolDefaults`]), the message texts ([`ToolTexts`]), and switches for the few rules that
//! differ ([`ToolRules`], [`BotRules`], [`GroupRules`]); the detectors read it and are not forked
//! per release. Adding a release is adding one constant in [`releases`] and listing it in
//! [`PROFILES`].
//!
//! | value of `loopguard.compat` | profile |
//! |---|---|
//! | `"documented"` (the default) | [`DOCUMENTED`]: docs/spec/tool-loop.md and docs/spec/bot-loop.md |
//! | `"openclaw-2026.9"` | [`OPENCLAW_2026_9`]: the `openclaw@2026.9.6` package (tests/oracle/NOTES.md §2–§5) |
//!
//! Knobs a release cannot express (its thresholds are constants, its schema rejects the keys)
//! keep working in its profile when a config sets them explicitly: that is the operator's
//! choice. With none set, the decisions are the release's.

mod parts;
pub mod releases;

use serde_json::Value;

use super::error::ConfigError;
pub use parts::{
    BotRules, DerivedMentions, GroupRules, Profile, RecordCalls, RecoveryTexts, ToolDefaults, ToolRules, ToolTexts,
};
pub use releases::{DOCUMENTED, OPENCLAW_2026_9};

/// Every profile, by name.
pub const PROFILES: &[&Profile] = &[&DOCUMENTED, &OPENCLAW_2026_9];

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

/// The profile `loopguard.compat` names (absent: [`DOCUMENTED`]); an unknown name is an error
/// that lists the accepted ones.
pub fn select(doc: &Value) -> Result<&'static Profile, ConfigError> {
    let names = || PROFILES.iter().map(|p| format!("\"{}\"", p.name)).collect::<Vec<_>>().join(", ");
    match super::read::lookup(doc, &["loopguard", "compat"]) {
        None => Ok(&DOCUMENTED),
        Some(Value::String(name)) => PROFILES.iter().copied().find(|p| p.name == name).ok_or_else(|| {
            ConfigError::new(PATH, format!("unknown compatibility profile {name:?}; the accepted ones are {}", names()))
        }),
        Some(other) => Err(ConfigError::new(
            PATH,
            format!("must be a profile name (one of {}), not {}", names(), super::error::type_name(other)),
        )),
    }
}

const PATH: &str = "loopguard.compat";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::num::NonZeroU32;

    #[test]
    fn compat_selects_a_profile_or_lists_the_accepted_ones() {
        assert_eq!(select(&json!({})).unwrap().name, "documented");
        assert_eq!(select(&json!({"loopguard": {"compat": "documented"}})).unwrap().name, "documented");
        assert_eq!(select(&json!({"loopguard": {"compat": "openclaw-2026.9"}})).unwrap().name, "openclaw-2026.9");
        let e = select(&json!({"loopguard": {"compat": "openclaw-1999.1"}})).unwrap_err();
        assert_eq!(e.path, "loopguard.compat");
        assert!(e.reason.contains("\"documented\", \"openclaw-2026.9\""), "{e}");
        assert!(select(&json!({"loopguard": {"compat": 7}})).is_err());
    }

    #[test]
    fn render_fills_placeholders_once() {
        assert_eq!(render("Called {tool} {n} times.", &[("tool", "{n}"), ("n", "3")]), "Called {n} 3 times.");
        assert_eq!(render("{x} {tool}", &[("tool", "read")]), "{x} read");
        assert_eq!(render("no placeholders {", &[]), "no placeholders {");
    }

    /// NOTES §2.1: 2026.9.6's fixed values are the documented defaults.
    #[test]
    fn openclaw_2026_9_fixed_values_equal_the_documented_defaults() {
        assert_eq!(OPENCLAW_2026_9.defaults, DOCUMENTED.defaults);
        assert_eq!(
            DOCUMENTED.defaults,
            ToolDefaults {
                history_size: NonZeroU32::new(30).unwrap(),
                warning: 10,
                unknown_tool: 10,
                critical: 20,
                global: 30,
                window_size: NonZeroU32::new(3).unwrap(),
            }
        );
    }
}
