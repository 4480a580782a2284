//! The config document, validated once at construction.
//!
//! A gateway hands loopguard its OpenClaw-style config (JSON or JSON5). Only the parts the guards
//! read are looked at (see `docs/spec/trace-format.md`, "Config"); everything else is ignored, so an
//! operator can pass the gateway's whole config file. The parts that are read are validated the
//! way OpenClaw's schema validates them (strict keys, path-named errors), once, here: the
//! detectors never re-check.
//!
//! loopguard adds one block of its own, `loopguard`, for what OpenClaw keeps implicit:
//! memory caps and the extra message-send tools (see [`Limits`]).

mod error;

pub mod bot;
pub mod detection;
pub mod group;
pub mod limits;
pub mod mention;
pub mod profile;
mod read;
pub mod tool;
pub mod volatile;

pub use error::{type_name, ConfigError};
pub use limits::Limits;
pub use read::{lookup, object_at, opt_bool, opt_int, opt_nonzero, strict_keys};

use serde_json::Value;

/// Deepest nesting accepted in a config document.
const MAX_CONFIG_DEPTH: usize = 64;
/// Largest config document accepted, in bytes.
pub const MAX_CONFIG_BYTES: usize = 4 * 1024 * 1024;

/// Everything the policy reads from the config document.
#[derive(Debug, Clone)]
pub struct Config {
    /// `tools.loopDetection` and the per-agent overrides.
    pub tools: tool::ToolLoopConfig,
    /// `channels.*.botLoopProtection` layers.
    pub bot: bot::BotLoopConfig,
    /// `broadcast` and the agents' mention patterns.
    pub group: group::GroupConfig,
    /// loopguard's own caps and lists.
    pub limits: Limits,
    /// The compatibility profile (`loopguard.compat`).
    pub profile: &'static profile::Profile,
    /// The detectors beyond OpenClaw (`loopguard.preset`, `loopguard.detectors`; off unless named).
    pub detection: detection::Detection,
}

impl Config {
    /// Parses and validates a config document (JSON or JSON5; `{}` or an empty text means all
    /// defaults). A leading UTF-8 byte-order mark, which Windows editors write, is skipped.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        if text.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::new(
                "config",
                format!("the document is {} bytes; the limit is {MAX_CONFIG_BYTES}", text.len()),
            ));
        }
        if text.trim().is_empty() {
            return Self::from_value(&Value::Object(Default::default()));
        }
        check_depth(text)?;
        let doc: Value =
            json5::from_str(text).map_err(|e| ConfigError::new("config", format!("not valid JSON or JSON5: {e}")))?;
        Self::from_value(&doc)
    }

    /// Validates an already parsed document.
    pub fn from_value(doc: &Value) -> Result<Self, ConfigError> {
        if !doc.is_object() {
            return Err(ConfigError::new("config", format!("the document must be an object, not {}", type_name(doc))));
        }
        let profile = profile::select(doc)?;
        Ok(Self {
            profile,
            tools: tool::ToolLoopConfig::parse(doc, profile)?,
            bot: bot::BotLoopConfig::parse(doc)?,
            group: group::GroupConfig::parse_with(doc, profile)?,
            limits: Limits::parse(doc)?,
            detection: detection::Detection::parse(doc)?,
        })
    }
}

impl Config {
    /// How trace lines and typed inputs are read for this profile: keys that differ only in lone
    /// surrogates are one key, unless the profile keeps lone surrogates.
    pub fn lone_keys(&self) -> crate::json::LoneKeys {
        if self.profile.tool.keep_lone_surrogates {
            crate::json::LoneKeys::Distinct
        } else {
            crate::json::LoneKeys::Merge
        }
    }
}

/// Refuses documents nested deeper than [`MAX_CONFIG_DEPTH`] before the JSON5 parser (which
/// recurses) sees them. Brackets inside strings and `//` / `/* */` comments are skipped, so a
/// comment such as `// it's` cannot hide the nesting that follows it.
fn check_depth(text: &str) -> Result<(), ConfigError> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_CONFIG_DEPTH {
                    return Err(ConfigError::new("config", format!("nested deeper than {MAX_CONFIG_DEPTH} levels")));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_braces_mean_defaults() {
        assert!(Config::parse("").is_ok());
        assert!(Config::parse("{}").is_ok());
        assert!(Config::parse("// json5 comment\n{tools: {loopDetection: {enabled: true,}}}").is_ok());
    }

    /// A document a Windows editor saved with a UTF-8 byte-order mark.
    #[test]
    fn a_leading_byte_order_mark_is_skipped() {
        for doc in [
            "\u{FEFF}{\"tools\":{\"loopDetection\":{\"enabled\":true}}}",
            "\u{FEFF}{tools: {loopDetection: {enabled: true}}}",
        ] {
            assert_eq!(Config::parse(doc).expect(doc).tools.for_agent(None).enabled, Some(true), "{doc}");
        }
        assert!(Config::parse("\u{FEFF}").is_ok());
    }

    #[test]
    fn non_object_and_bad_syntax_are_errors() {
        assert_eq!(Config::parse("[]").unwrap_err().path, "config");
        let e = Config::parse("{tools:").unwrap_err();
        assert_eq!(e.path, "config");
        assert!(e.reason.contains("JSON"), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let e = Config::parse(&format!("{{\"x\":{deep}}}")).unwrap_err();
        assert!(e.reason.contains("nested deeper"), "{e}");
    }

    /// Regression (fuzz/regressions/config_parser): comments hid nesting from the depth check and
    /// the JSON5 parser exhausted the guest's stack.
    #[test]
    fn comments_cannot_hide_deep_nesting() {
        for doc in [
            format!("// it's\n{}", "[".repeat(20_000)),
            "[/*]*/".repeat(20_000),
            format!("/* ' */ {}", "{\"a\":".repeat(20_000)),
        ] {
            let e = Config::parse(&doc).unwrap_err();
            assert!(e.reason.contains("nested deeper"), "{e}");
        }
        assert!(Config::parse("// it's fine\n{tools: {/* ok */ loopDetection: {enabled: true}}}").is_ok());
    }
}
