//! `tools.loopDetection` and its per-agent overrides (docs/spec/tool-loop.md §5).
//!
//! Validation follows OpenClaw's zod schema: strict keys, positive integers, booleans, and the
//! two ordering rules (warning < critical < global), each error naming its path; every integer
//! also has an upper bound of loopguard's ([`MAX_HISTORY_SIZE`], [`MAX_THRESHOLD`],
//! [`MAX_WINDOW_SIZE`]). Resolution
//! follows OpenClaw's runtime: the per-agent merge, `asPositiveInt` fall-backs and the clamp that
//! repairs an ordering broken by the merge (the merge is not re-validated). Every agent's block is
//! resolved once, here, so a decision only looks its settings up.

use std::collections::HashMap;
use std::num::{NonZeroU32, NonZeroUsize};

use super::error::{type_name, ConfigError};
use super::profile::{Profile, ToolRules, ToolTexts, DOCUMENTED};
use super::read::{object_at, strict_keys};
use crate::js::js_trim;
use serde_json::{Map, Value};

/// Settings the detectors use, fully resolved for one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    /// The merged `enabled`: `None` when unset or `null`. Rolling detectors run only on
    /// `Some(true)`; calls are recorded and the post-compaction guard is on unless `Some(false)`.
    pub enabled: Option<bool>,
    /// Records kept per session.
    pub history_size: NonZeroUsize,
    /// Warning threshold. The four thresholds stay plain counts: each is at least 1 (validated
    /// by [`ToolLoopConfig::parse`], resolved by [`as_positive_int`] over the profile's positive
    /// defaults), and the detectors only compare counts with them.
    pub warning: u32,
    /// Unknown-tool threshold.
    pub unknown_tool: u32,
    /// Critical threshold (> warning).
    pub critical: u32,
    /// Global circuit breaker threshold (> critical).
    pub global: u32,
    /// `detectors.genericRepeat`.
    pub generic_repeat: bool,
    /// `detectors.knownPollNoProgress`.
    pub known_poll: bool,
    /// `detectors.pingPong`.
    pub ping_pong: bool,
    /// `postCompactionGuard.windowSize`.
    pub window_size: NonZeroU32,
    /// The texts of the compatibility profile.
    pub texts: &'static ToolTexts,
    /// The rules of the compatibility profile.
    pub rules: &'static ToolRules,
}

impl Default for LoopSettings {
    fn default() -> Self {
        resolve(None, &DOCUMENTED)
    }
}

/// The resolved settings of the global block and of every agent that has its own block.
#[derive(Debug, Clone, Default)]
pub struct ToolLoopConfig {
    global: LoopSettings,
    /// Normalized agent id → settings, first `agents.list` entry wins.
    agents: HashMap<String, LoopSettings>,
}

impl ToolLoopConfig {
    /// Validates `tools.loopDetection` and `agents.list[].tools.loopDetection`, resolved under
    /// `profile`.
    pub fn parse(doc: &Value, profile: &'static Profile) -> Result<Self, ConfigError> {
        let global = object_at(doc, &["tools", "loopDetection"])?;
        if let Some(g) = global {
            validate(g, "tools.loopDetection")?;
        }
        let mut agents = HashMap::new();
        let list = match super::read::lookup(doc, &["agents", "list"]) {
            None => &[][..],
            Some(Value::Array(items)) => items.as_slice(),
            Some(other) => {
                return Err(ConfigError::new(
                    "agents.list",
                    format!("must be an array of agents, not {}", type_name(other)),
                ))
            }
        };
        for (i, entry) in list.iter().enumerate() {
            let path = format!("agents.list[{i}]");
            let Value::Object(entry) = entry else {
                return Err(ConfigError::new(path, format!("must be an object, not {}", type_name(entry))));
            };
            let id = match entry.get("id") {
                Some(Value::String(id)) => id,
                Some(other) => {
                    return Err(ConfigError::new(
                        format!("{path}.id"),
                        format!("must be a string, not {}", type_name(other)),
                    ))
                }
                None => continue,
            };
            let block = match entry.get("tools").and_then(|t| t.as_object()).and_then(|t| t.get("loopDetection")) {
                None => None,
                Some(Value::Object(b)) => Some(b),
                Some(other) => {
                    return Err(ConfigError::new(
                        format!("{path}.tools.loopDetection"),
                        format!("must be an object, not {}", type_name(other)),
                    ))
                }
            };
            if let Some(b) = block {
                validate(b, &format!("{path}.tools.loopDetection"))?;
            }
            // The first entry whose normalized id matches is the one OpenClaw selects.
            let key = normalize_agent_id(id);
            agents.entry(key).or_insert_with(|| resolve(Some(&merge(global, block)), profile));
        }
        Ok(Self { global: resolve(global, profile), agents })
    }

    /// The settings for a call from `agent` (absent or `""` → the global block alone).
    pub fn for_agent(&self, agent: Option<&str>) -> &LoopSettings {
        match agent {
            Some(a) if !a.is_empty() && !self.agents.is_empty() => {
                self.agents.get(&normalize_agent_id(a)).unwrap_or(&self.global)
            }
            _ => &self.global,
        }
    }
}

const KEYS: &[&str] = &[
    "enabled",
    "historySize",
    "warningThreshold",
    "unknownToolThreshold",
    "criticalThreshold",
    "globalCircuitBreakerThreshold",
    "detectors",
    "postCompactionGuard",
];

/// Largest `historySize`. Why a bound (OpenClaw has none): every session keeps that many records
/// (~150 bytes each) and every detector scans them on every call, so an unbounded value is bounded
/// only by the sandbox's memory cap, and fails later and elsewhere. 10,000 is 333 times
/// the default of 30.
pub const MAX_HISTORY_SIZE: i64 = 10_000;
/// Largest threshold. A detector counts calls in the history, so a threshold above
/// [`MAX_HISTORY_SIZE`] already never fires: the bound leaves room to say "never".
pub const MAX_THRESHOLD: i64 = 1_000_000;
/// Largest `postCompactionGuard.windowSize`: the guard keeps one pair of digests per outcome in
/// its window (default 3).
pub const MAX_WINDOW_SIZE: i64 = 10_000;

/// The integer keys and their upper bounds (docs/spec/tool-loop.md §5).
const INT_KEYS: &[(&str, i64)] = &[
    ("historySize", MAX_HISTORY_SIZE),
    ("warningThreshold", MAX_THRESHOLD),
    ("unknownToolThreshold", MAX_THRESHOLD),
    ("criticalThreshold", MAX_THRESHOLD),
    ("globalCircuitBreakerThreshold", MAX_THRESHOLD),
];

/// zod `.strict()` with positive integers, booleans and the ordering refinements, plus loopguard's
/// upper bounds.
fn validate(block: &Map<String, Value>, path: &str) -> Result<(), ConfigError> {
    strict_keys(block, path, KEYS)?;
    super::read::opt_bool(block, path, "enabled")?;
    for (key, max) in INT_KEYS {
        super::read::opt_int(block, path, key, 1, *max)?;
    }
    if let Some(d) = object_at(&Value::Object(block.clone()), &["detectors"])
        .map_err(|e| ConfigError::new(format!("{path}.detectors"), e.reason))?
    {
        let p = format!("{path}.detectors");
        strict_keys(d, &p, &["genericRepeat", "knownPollNoProgress", "pingPong"])?;
        for key in ["genericRepeat", "knownPollNoProgress", "pingPong"] {
            super::read::opt_bool(d, &p, key)?;
        }
    }
    match block.get("postCompactionGuard") {
        None => {}
        Some(Value::Object(g)) => {
            let p = format!("{path}.postCompactionGuard");
            strict_keys(g, &p, &["windowSize"])?;
            super::read::opt_int(g, &p, "windowSize", 1, MAX_WINDOW_SIZE)?;
        }
        Some(other) => {
            return Err(ConfigError::new(
                format!("{path}.postCompactionGuard"),
                format!("must be an object, not {}", type_name(other)),
            ))
        }
    }
    let num = |k: &str| block.get(k).and_then(Value::as_f64);
    if let (Some(w), Some(c)) = (num("warningThreshold"), num("criticalThreshold")) {
        if w >= c {
            return Err(ConfigError::new(
                format!("{path}.criticalThreshold"),
                format!("{path}.warningThreshold must be lower than criticalThreshold."),
            ));
        }
    }
    if let (Some(c), Some(g)) = (num("criticalThreshold"), num("globalCircuitBreakerThreshold")) {
        if c >= g {
            return Err(ConfigError::new(
                format!("{path}.globalCircuitBreakerThreshold"),
                format!("{path}.criticalThreshold must be lower than globalCircuitBreakerThreshold."),
            ));
        }
    }
    Ok(())
}

/// `resolveToolLoopDetectionConfig`: agent over global, key by key, with a one-level merge of
/// `detectors` and `postCompactionGuard`. A `null` agent key still wins (and later resolves like
/// an unset key); a `null` agent sub-block adds nothing.
pub fn merge(global: Option<&Map<String, Value>>, agent: Option<&Map<String, Value>>) -> Map<String, Value> {
    let (g, a) = match (global, agent) {
        (None, None) => return Map::new(),
        (Some(g), None) => return g.clone(),
        (None, Some(a)) => return a.clone(),
        (Some(g), Some(a)) => (g, a),
    };
    let mut out = g.clone();
    for (k, v) in a {
        if k == "detectors" || k == "postCompactionGuard" {
            let Value::Object(sub) = v else {
                if !v.is_null() {
                    out.insert(k.clone(), v.clone());
                }
                continue;
            };
            let mut merged = match g.get(k) {
                Some(Value::Object(gs)) => gs.clone(),
                _ => Map::new(),
            };
            for (sk, sv) in sub {
                merged.insert(sk.clone(), sv.clone());
            }
            out.insert(k.clone(), Value::Object(merged));
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// OpenClaw's `asPositiveInt` without its fallback: an integer-valued number > 0 (capped at
/// `u32::MAX`), else `None`.
fn as_positive(v: Option<&Value>) -> Option<NonZeroU32> {
    let f = v.and_then(Value::as_f64).filter(|f| *f > 0.0 && f.fract() == 0.0 && f.is_finite())?;
    NonZeroU32::new(f.min(u32::MAX as f64) as u32)
}

/// OpenClaw's `asPositiveInt`: an integer-valued number > 0, else the fallback.
pub fn as_positive_int(v: Option<&Value>, fallback: u32) -> u32 {
    as_positive(v).map_or(fallback, NonZeroU32::get)
}

/// Runtime resolution of a (merged) block under `profile`, with the ordering clamp.
pub fn resolve(block: Option<&Map<String, Value>>, profile: &'static Profile) -> LoopSettings {
    let empty = Map::new();
    let b = block.unwrap_or(&empty);
    let get = |k: &str| b.get(k);
    let sub = |outer: &str, k: &str| b.get(outer).and_then(Value::as_object).and_then(|o| o.get(k));
    let flag = |k: &str| sub("detectors", k).and_then(Value::as_bool).unwrap_or(true);
    let d = &profile.defaults;
    let warning = as_positive_int(get("warningThreshold"), d.warning);
    let mut critical = as_positive_int(get("criticalThreshold"), d.critical);
    if critical <= warning {
        critical = warning.saturating_add(1);
    }
    let mut global = as_positive_int(get("globalCircuitBreakerThreshold"), d.global);
    if global <= critical {
        global = critical.saturating_add(1);
    }
    LoopSettings {
        enabled: get("enabled").and_then(Value::as_bool),
        // Lossless on the 32- and 64-bit targets the policy builds for; saturating on a narrower one.
        history_size: NonZeroUsize::try_from(as_positive(get("historySize")).unwrap_or(d.history_size))
            .unwrap_or(NonZeroUsize::MAX),
        warning,
        unknown_tool: as_positive_int(get("unknownToolThreshold"), d.unknown_tool),
        critical,
        global,
        generic_repeat: flag("genericRepeat"),
        known_poll: flag("knownPollNoProgress"),
        ping_pong: flag("pingPong"),
        window_size: as_positive(sub("postCompactionGuard", "windowSize")).unwrap_or(d.window_size),
        texts: &profile.texts,
        rules: &profile.tool,
    }
}

/// OpenClaw's `normalizeAgentId`.
pub fn normalize_agent_id(id: &str) -> String {
    let t = js_trim(id);
    if t.is_empty() {
        return "main".into();
    }
    let simple = t.len() <= 64
        && t.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if simple {
        return t.to_ascii_lowercase();
    }
    let lower = t.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut in_run = false;
    for c in lower.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    let trimmed: String = out.trim_matches('-').chars().take(64).collect();
    if trimmed.is_empty() {
        "main".into()
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests;
