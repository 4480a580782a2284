//! The detectors beyond OpenClaw (issue 50): `loopguard.preset`, `loopguard.detectors`,
//! `loopguard.scope`, `loopguard.historySize` and `loopguard.rules`.
//!
//! Why a preset and not five switches: OpenClaw's thresholds (a warning at the 10th identical
//! call) sit above every loop in the labelled corpus of real agents (tests/realdata/); the
//! detectors that catch those loops only help when they are on together, with thresholds chosen
//! on that corpus. One switch turns the set on; each detector can still be tuned or switched off
//! by name. With no preset and no detector named, nothing here runs and every profile decides
//! exactly as before.
//!
//! ```json5
//! { loopguard: { preset: "recommended",
//!                scope: "session",                       // history across runs and compactions
//!                detectors: { cycle: { maxPeriod: 40 }, growingArgs: false,
//!                             ladder: { abortAfterBlocks: 4 } },
//!                rules: { volatile: ["req-[0-9a-f]+"], nothingFound: ["^no rows"] } } }
//! ```

use std::num::NonZeroU32;

use serde_json::{Map, Value};

use super::error::{type_name, ConfigError};
use super::read::{object_at, opt_bool, opt_int, strict_keys};
use super::volatile::{Normalizer, RuleSet};

/// Detectors by config name, for errors and docs.
pub const DETECTOR_NAMES: &[&str] = &["sameError", "sameResult", "cycle", "growingArgs", "ladder"];

/// Where a session's history for these detectors starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryScope {
    /// A new run (a new attempt after a compaction) starts an empty history (OpenClaw's scope).
    #[default]
    Run,
    /// One history per session, across runs and compactions.
    Session,
}

/// When a streak detector warns and blocks: on the `warn_at`-th and `block_at`-th attempt that
/// shows no progress (validated: 2 ≤ warn_at < block_at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// The attempt that warns.
    pub warn_at: u32,
    /// The attempt that blocks.
    pub block_at: u32,
    /// `aimOverlap` (percent, `sameError` and `sameResult`): how much the free text of two calls
    /// must overlap for them to aim at the same thing ([`crate::tool_loop::sketch`]).
    pub aim_overlap: u8,
}

/// The cycle detector's settings: thresholds count laps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleSettings {
    /// The lap that warns and the lap that blocks.
    pub laps: Thresholds,
    /// The longest lap looked for (calls per lap).
    pub max_period: u32,
}

/// Everything the detectors beyond OpenClaw read, validated once.
#[derive(Debug, Clone, Default)]
pub struct Detection {
    /// `loopguard.preset` as given (`"recommended"`), for logs.
    pub preset: Option<&'static str>,
    /// `loopguard.scope`.
    pub scope: HistoryScope,
    /// Calls remembered per session (`loopguard.historySize`).
    pub history_size: usize,
    /// `detectors.sameError`: the same normalised error again and again.
    pub same_error: Option<Thresholds>,
    /// `detectors.sameResult`: the same result (or nothing found) for different arguments.
    pub same_result: Option<Thresholds>,
    /// `detectors.cycle`: laps of 2 to `maxPeriod` calls with the same outcomes.
    pub cycle: Option<CycleSettings>,
    /// `detectors.growingArgs`: arguments that grow by repeating themselves.
    pub growing_args: Option<Thresholds>,
    /// `detectors.ladder.abortAfterBlocks`: end the run after this many blocks in a row.
    pub ladder: Option<NonZeroU32>,
    /// Volatile-field, nothing-found and infrastructure-error rules.
    pub rules: Normalizer,
}

/// The recommended thresholds, chosen on the tune split of tests/realdata (scripts/realdata/eval.py).
pub const RECOMMENDED: Detection = Detection {
    preset: Some("recommended"),
    scope: HistoryScope::Session,
    history_size: DEFAULT_HISTORY,
    same_error: Some(Thresholds { warn_at: 3, block_at: 5, aim_overlap: 10 }),
    same_result: Some(Thresholds { warn_at: 3, block_at: 5, aim_overlap: 10 }),
    cycle: Some(CycleSettings { laps: Thresholds { warn_at: 3, block_at: 5, aim_overlap: 10 }, max_period: 30 }),
    growing_args: Some(Thresholds { warn_at: 3, block_at: 5, aim_overlap: 10 }),
    ladder: NonZeroU32::new(3),
    rules: Normalizer::BUILT_IN,
};

/// Calls remembered per session by default (at least `maxPeriod × blockAt` of the cycle detector
/// when `historySize` is unset): five laps of the longest default cycle, and some.
const DEFAULT_HISTORY: usize = 160;
/// The largest `historySize` accepted.
const MAX_HISTORY: i64 = 2048;
/// The longest cycle period accepted.
const MAX_PERIOD: i64 = 200;

impl Detection {
    /// True when any detector is on (otherwise the gateway skips this layer entirely).
    pub fn is_on(&self) -> bool {
        self.same_error.is_some()
            || self.same_result.is_some()
            || self.cycle.is_some()
            || self.growing_args.is_some()
            || self.ladder.is_some()
    }

    /// Reads `loopguard.preset`, `scope`, `historySize`, `detectors` and `rules`.
    pub fn parse(doc: &Value) -> Result<Self, ConfigError> {
        let Some(block) = object_at(doc, &["loopguard"])? else { return Ok(Self::off()) };
        let mut d = match block.get("preset") {
            None | Some(Value::Null) => Self::off(),
            Some(Value::String(s)) if s == "recommended" => RECOMMENDED,
            Some(Value::String(s)) if s == "off" => Self::off(),
            Some(other) => {
                return Err(ConfigError::new(
                    "loopguard.preset",
                    format!("must be \"recommended\" or \"off\", not {other}"),
                ))
            }
        };
        match block.get("scope") {
            None => {}
            Some(Value::String(s)) if s == "run" => d.scope = HistoryScope::Run,
            Some(Value::String(s)) if s == "session" => d.scope = HistoryScope::Session,
            Some(other) => {
                return Err(ConfigError::new("loopguard.scope", format!("must be \"run\" or \"session\", not {other}")))
            }
        }
        if let Some(n) = opt_int(block, "loopguard", "historySize", 4, MAX_HISTORY)? {
            d.history_size = n as usize;
        }
        if let Some(dets) = object_at(doc, &["loopguard", "detectors"])? {
            d.detectors(dets)?;
        }
        if let Some(rules) = object_at(doc, &["loopguard", "rules"])? {
            d.rules = Normalizer::new(&read_rules(rules)?).map_err(|(path, e)| ConfigError::new(path, e))?;
        }
        if let Some(c) = d.cycle {
            let need = (c.max_period as usize).saturating_mul(c.laps.block_at as usize);
            if !block.contains_key("historySize") {
                // Unset: long enough for the cycle detector's laps.
                d.history_size = d.history_size.max(need);
            } else if d.history_size < need {
                return Err(ConfigError::new(
                    "loopguard.historySize",
                    format!(
                        "is {}, too short to see {} laps of {} calls; raise it to {need} or lower \
                         detectors.cycle.maxPeriod",
                        d.history_size, c.laps.block_at, c.max_period
                    ),
                ));
            }
        }
        Ok(d)
    }

    fn off() -> Self {
        Detection { preset: None, history_size: DEFAULT_HISTORY, rules: Normalizer::BUILT_IN, ..Default::default() }
    }

    fn detectors(&mut self, dets: &Map<String, Value>) -> Result<(), ConfigError> {
        const P: &str = "loopguard.detectors";
        strict_keys(dets, P, DETECTOR_NAMES)?;
        let base = |x: Option<Thresholds>| x.unwrap_or(Thresholds { warn_at: 3, block_at: 5, aim_overlap: 10 });
        for (name, v) in dets {
            let path = format!("{P}.{name}");
            let Some(obj) = switch(v, &path)? else {
                match name.as_str() {
                    "sameError" => self.same_error = None,
                    "sameResult" => self.same_result = None,
                    "cycle" => self.cycle = None,
                    "growingArgs" => self.growing_args = None,
                    _ => self.ladder = None,
                }
                continue;
            };
            match name.as_str() {
                "sameError" => self.same_error = Some(thresholds(&obj, &path, base(self.same_error), &["aimOverlap"])?),
                "sameResult" => {
                    self.same_result = Some(thresholds(&obj, &path, base(self.same_result), &["aimOverlap"])?)
                }
                "growingArgs" => self.growing_args = Some(thresholds(&obj, &path, base(self.growing_args), &[])?),
                "cycle" => {
                    let old = self.cycle.unwrap_or(CycleSettings { laps: base(None), max_period: 30 });
                    let laps = thresholds(&obj, &path, old.laps, &["maxPeriod"])?;
                    let max_period =
                        opt_int(&obj, &path, "maxPeriod", 2, MAX_PERIOD)?.map_or(old.max_period, |n| n as u32);
                    self.cycle = Some(CycleSettings { laps, max_period });
                }
                _ => {
                    strict_keys(&obj, &path, &["enabled", "abortAfterBlocks"])?;
                    let n = opt_int(&obj, &path, "abortAfterBlocks", 1, 1000)?;
                    let old = self.ladder.map_or(3, NonZeroU32::get);
                    self.ladder = NonZeroU32::new(n.map_or(old, |n| n as u32));
                }
            }
        }
        Ok(())
    }
}

/// `false` or `{enabled: false}` switches a detector off (`None`); `true` or an object switches it
/// on (`Some` of its settings).
fn switch(v: &Value, path: &str) -> Result<Option<Map<String, Value>>, ConfigError> {
    match v {
        Value::Bool(false) => Ok(None),
        Value::Bool(true) => Ok(Some(Map::new())),
        Value::Object(o) => match opt_bool(o, path, "enabled")? {
            Some(false) => Ok(None),
            _ => Ok(Some(o.clone())),
        },
        other => Err(ConfigError::new(
            path,
            format!("must be true, false or an object of settings, not {}", type_name(other)),
        )),
    }
}

/// `warnAt` and `blockAt` over `old`, checked: 2 ≤ warnAt < blockAt.
fn thresholds(
    obj: &Map<String, Value>,
    path: &str,
    old: Thresholds,
    extra: &[&str],
) -> Result<Thresholds, ConfigError> {
    let mut keys = vec!["enabled", "warnAt", "blockAt"];
    keys.extend_from_slice(extra);
    strict_keys(obj, path, &keys)?;
    let warn_at = opt_int(obj, path, "warnAt", 2, 1000)?.map_or(old.warn_at, |n| n as u32);
    let block_at = opt_int(obj, path, "blockAt", 2, 1000)?.map_or(old.block_at, |n| n as u32);
    let aim_overlap = opt_int(obj, path, "aimOverlap", 0, 100)?.map_or(old.aim_overlap, |n| n as u8);
    if block_at <= warn_at {
        return Err(ConfigError::new(
            format!("{path}.blockAt"),
            format!("is {block_at}; it must be greater than warnAt ({warn_at})"),
        ));
    }
    Ok(Thresholds { warn_at, block_at, aim_overlap })
}

/// `loopguard.rules`: `volatile`, `nothingFound`, `infrastructure`, each a list of regular
/// expressions added to the built-in ones.
fn read_rules(rules: &Map<String, Value>) -> Result<RuleSet, ConfigError> {
    const P: &str = "loopguard.rules";
    strict_keys(rules, P, &["volatile", "nothingFound", "infrastructure"])?;
    let list = |key: &str| -> Result<Vec<(String, String)>, ConfigError> {
        let Some(v) = rules.get(key) else { return Ok(Vec::new()) };
        let Value::Array(items) = v else {
            return Err(ConfigError::new(
                format!("{P}.{key}"),
                format!("must be an array of regular expressions, not {}", type_name(v)),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) if !s.is_empty() => Ok((format!("{P}.{key}[{i}]"), s.clone())),
                other => Err(ConfigError::new(
                    format!("{P}.{key}[{i}]"),
                    format!("must be a non-empty regular expression, not {}", type_name(other)),
                )),
            })
            .collect()
    };
    Ok(RuleSet {
        volatile: list("volatile")?,
        nothing_found: list("nothingFound")?,
        infrastructure: list("infrastructure")?,
    })
}

#[cfg(test)]
mod tests;
