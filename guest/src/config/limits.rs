//! loopguard's own config block, `loopguard`.
//!
//! OpenClaw keeps its guard state in the gateway process and never bounds it; a policy that a
//! busy gateway loads for months must. These caps bound every map that grows with traffic. The
//! block also lists the provider tools that send messages (docs/spec/tool-loop.md §1.3 item 7), which
//! OpenClaw learns from its plugins and a sandboxed policy cannot.
//!
//! ```json5
//! { loopguard: { maxSessions: 10000, maxPairs: 1000000, maxGroupThreads: 10000,
//!                sendTools: ["telegram", "whatsapp_send"] } }
//! ```

use std::num::NonZeroUsize;

use super::error::{type_name, ConfigError};
use super::read::{object_at, opt_nonzero, strict_keys};
use serde_json::Value;

/// Caps and lists from the `loopguard` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Agent sessions kept at once; the least recently used is evicted beyond it.
    pub max_sessions: NonZeroUsize,
    /// Bot pairs (and burst buckets) tracked at once; the least recently active is evicted.
    pub max_pairs: NonZeroUsize,
    /// Group threads tracked at once; the least recently active is evicted.
    pub max_group_threads: NonZeroUsize,
    /// Extra tool names whose results are message sends (volatile ids stripped).
    pub send_tools: Vec<String>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_sessions: DEFAULT_SESSIONS,
            max_pairs: DEFAULT_PAIRS,
            max_group_threads: DEFAULT_THREADS,
            send_tools: Vec::new(),
        }
    }
}

/// Built-in `maxSessions`.
const DEFAULT_SESSIONS: NonZeroUsize = NonZeroUsize::new(10_000).unwrap();
/// Built-in `maxPairs`.
const DEFAULT_PAIRS: NonZeroUsize = NonZeroUsize::new(1_000_000).unwrap();
/// Built-in `maxGroupThreads`.
const DEFAULT_THREADS: NonZeroUsize = NonZeroUsize::new(10_000).unwrap();

const PATH: &str = "loopguard";

impl Limits {
    /// Reads and validates the `loopguard` block (absent → defaults).
    pub fn parse(doc: &Value) -> Result<Self, ConfigError> {
        let mut limits = Self::default();
        let Some(obj) = object_at(doc, &[PATH])? else { return Ok(limits) };
        // `compat` is read by `profile::select`; the detectors beyond OpenClaw by `detection`.
        let detection = ["preset", "scope", "historySize", "detectors", "rules"];
        let keys = ["maxSessions", "maxPairs", "maxGroupThreads", "sendTools", "compat"];
        strict_keys(obj, PATH, &[&keys[..], &detection[..]].concat())?;
        let cap = |key: &str, default: NonZeroUsize| -> Result<NonZeroUsize, ConfigError> {
            let n = opt_nonzero(obj, PATH, key, 100_000_000)?;
            // At most 10⁸, so it fits a `usize` on every target.
            Ok(n.and_then(|n| NonZeroUsize::try_from(n).ok()).unwrap_or(default))
        };
        limits.max_sessions = cap("maxSessions", limits.max_sessions)?;
        limits.max_pairs = cap("maxPairs", limits.max_pairs)?;
        limits.max_group_threads = cap("maxGroupThreads", limits.max_group_threads)?;
        if let Some(v) = obj.get("sendTools") {
            let Value::Array(items) = v else {
                return Err(ConfigError::new(
                    "loopguard.sendTools",
                    format!("must be an array of tool names, not {}", type_name(v)),
                ));
            };
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if !s.is_empty() => limits.send_tools.push(s.clone()),
                    other => {
                        return Err(ConfigError::new(
                            format!("loopguard.sendTools[{i}]"),
                            format!("must be a non-empty tool name, not {}", type_name(other)),
                        ))
                    }
                }
            }
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_when_absent() {
        assert_eq!(Limits::parse(&json!({})).unwrap(), Limits::default());
    }

    #[test]
    fn reads_caps_and_send_tools() {
        let l = Limits::parse(&json!({"loopguard": {"maxSessions": 5, "sendTools": ["telegram"]}})).unwrap();
        assert_eq!(l.max_sessions.get(), 5);
        assert_eq!(l.send_tools, vec!["telegram".to_string()]);
    }

    #[test]
    fn bad_values_name_their_path() {
        let cases = [
            (json!({"loopguard": {"maxSessions": 0}}), "loopguard.maxSessions"),
            (json!({"loopguard": {"maxPairs": -3}}), "loopguard.maxPairs"),
            (json!({"loopguard": {"maxGroupThreads": "9"}}), "loopguard.maxGroupThreads"),
            (json!({"loopguard": {"sendTools": "x"}}), "loopguard.sendTools"),
            (json!({"loopguard": {"sendTools": [1]}}), "loopguard.sendTools[0]"),
            (json!({"loopguard": {"nope": 1}}), "loopguard.nope"),
            (json!({"loopguard": 3}), "loopguard"),
        ];
        for (doc, path) in cases {
            assert_eq!(Limits::parse(&doc).unwrap_err().path, path, "{doc}");
        }
    }
}
