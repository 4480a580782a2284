//! The detectors beyond OpenClaw (docs/spec/beyond.md): `loopguard.preset`, `loopguard.detectors`,
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

/// When a detector warns and blocks: on the `warn_at`-th and `block_at`-th attempt (validated:
/// 2 ≤ warn_at < block_at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// The attempt that warns.
    pub warn_at: u32,
    /// The attempt that blocks.
    pub block_at: u32,
}

/// The settings of the streak detectors (`sameError`, `sameResult`): the strength of the
/// evidence sets the action ([`crate::tool_loop::beyond::streak`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreakSettings {
    /// `warnAt`, `blockAt`: the same call (up to cosmetics) with the same outcome, back to back.
    pub same: Levels,
    /// `rerunWarnAt`, `rerunBlockAt`: the same call with the same outcome, re-run after other
    /// calls changed something (an edit, then the same test).
    pub rerun: Levels,
    /// `variedWarnAt`, `variedBlockAt`: attempts with other arguments aimed at the same thing.
    pub varied: Levels,
    /// `aimOverlap` (percent): how much the free text of two calls must overlap for them to aim
    /// at the same thing ([`crate::tool_loop::beyond::sketch`]).
    pub aim_overlap: u8,
}

/// The cycle detector's settings: levels count laps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleSettings {
    /// The lap that warns and the lap that blocks.
    pub laps: Levels,
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
    pub same_error: Option<StreakSettings>,
    /// `detectors.sameResult`: the same result (or nothing found) again and again.
    pub same_result: Option<StreakSettings>,
    /// `detectors.cycle`: laps of 2 to `maxPeriod` calls with the same outcomes.
    pub cycle: Option<CycleSettings>,
    /// `detectors.growingArgs`: arguments that grow by repeating themselves.
    pub growing_args: Option<Levels>,
    /// `detectors.ladder.abortAfterBlocks`: end the run after this many blocks in a row.
    pub ladder: Option<NonZeroU32>,
    /// Volatile-field, nothing-found and infrastructure-error rules.
    pub rules: Normalizer,
}

/// The recommended levels, chosen on the tune split of the labelled corpora
/// (scripts/realdata/eval.py --tune): block only on strong evidence (the same call, or the same
/// lap, with the same outcome), warn on weak evidence long before it blocks.
pub const RECOMMENDED: Detection = Detection {
    preset: Some("recommended"),
    scope: HistoryScope::Session,
    history_size: DEFAULT_HISTORY,
    same_error: Some(StreakSettings {
        same: Levels { warn_at: 3, block_at: 4 },
        rerun: Levels { warn_at: 4, block_at: 6 },
        varied: Levels { warn_at: 3, block_at: 8 },
        aim_overlap: 10,
    }),
    same_result: Some(StreakSettings {
        same: Levels { warn_at: 3, block_at: 4 },
        rerun: Levels { warn_at: 4, block_at: 5 },
        varied: Levels { warn_at: 4, block_at: 10 },
        aim_overlap: 10,
    }),
    cycle: Some(CycleSettings { laps: Levels { warn_at: 3, block_at: 5 }, max_period: 30 }),
    growing_args: Some(Levels { warn_at: 3, block_at: 5 }),
    ladder: NonZeroU32::new(3),
    rules: Normalizer::BUILT_IN,
};

/// `cautious`: the recommended detectors and levels, but a block only on strong evidence (the
/// same call, or the same lap, with the same outcome, also re-run after edits; never for other
/// arguments with the same answer, never for growing arguments) and no end of a run. The default of the agent-facing
/// hosts (`loopguard hook`, `loopguard mcp`, the LiteLLM guardrail) for as long as the
/// recommended preset misses a target of the labelled corpora (docs/REAL-LOOPS.md): a guard
/// that ends one healthy session is uninstalled.
pub const CAUTIOUS: Detection = Detection {
    preset: Some("cautious"),
    same_error: Some(StreakSettings { varied: warn_only(BASE_STREAK_ERRORS.varied), ..BASE_STREAK_ERRORS }),
    same_result: Some(StreakSettings { varied: warn_only(BASE_STREAK.varied), ..BASE_STREAK }),
    growing_args: Some(Levels { warn_at: 3, block_at: NEVER }),
    ladder: None,
    ..RECOMMENDED
};

/// A level no count reaches.
const NEVER: u32 = u32::MAX;

/// `levels` with the block taken away.
const fn warn_only(levels: Levels) -> Levels {
    Levels { warn_at: levels.warn_at, block_at: NEVER }
}
const BASE_STREAK_ERRORS: StreakSettings = match RECOMMENDED.same_error {
    Some(s) => s,
    None => unreachable!(),
};

/// What a detector named in `loopguard.detectors` starts from when no preset set it.
const BASE_STREAK: StreakSettings = match RECOMMENDED.same_result {
    Some(s) => s,
    None => unreachable!(),
};
const BASE_LEVELS: Levels = Levels { warn_at: 3, block_at: 5 };

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
            Some(Value::String(s)) if s == "cautious" => CAUTIOUS,
            Some(Value::String(s)) if s == "off" => Self::off(),
            Some(other) => {
                return Err(ConfigError::new(
                    "loopguard.preset",
                    format!("must be \"recommended\", \"cautious\" or \"off\", not {other}"),
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
            if need > MAX_HISTORY as usize {
                return Err(ConfigError::new(
                    "loopguard.detectors.cycle.maxPeriod",
                    format!(
                        "is {}; {} laps of it need a history of {need} calls, more than the {MAX_HISTORY} a \
                         session keeps: lower maxPeriod or blockAt",
                        c.max_period, c.laps.block_at
                    ),
                ));
            }
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
                "sameError" => {
                    self.same_error = Some(streak(&obj, &path, self.same_error.unwrap_or(BASE_STREAK_ERRORS))?)
                }
                "sameResult" => self.same_result = Some(streak(&obj, &path, self.same_result.unwrap_or(BASE_STREAK))?),
                "growingArgs" => {
                    strict_keys(&obj, &path, &["enabled", "warnAt", "blockAt"])?;
                    let old = self.growing_args.unwrap_or(BASE_LEVELS);
                    self.growing_args = Some(levels(&obj, &path, "warnAt", "blockAt", old)?);
                }
                "cycle" => {
                    strict_keys(&obj, &path, &["enabled", "warnAt", "blockAt", "maxPeriod"])?;
                    let old = self.cycle.unwrap_or(CycleSettings { laps: BASE_LEVELS, max_period: 30 });
                    let laps = levels(&obj, &path, "warnAt", "blockAt", old.laps)?;
                    let max_period =
                        opt_int(&obj, &path, "maxPeriod", 2, MAX_PERIOD)?.map_or(old.max_period, |n| n as u32);
                    self.cycle = Some(CycleSettings { laps, max_period });
                }
                _ => {
                    strict_keys(&obj, &path, &["enabled", "abortAfterBlocks"])?;
                    let n = opt_int(&obj, &path, "abortAfterBlocks", 2, 1000)?;
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

/// A streak detector's settings over `old`.
fn streak(obj: &Map<String, Value>, path: &str, old: StreakSettings) -> Result<StreakSettings, ConfigError> {
    let keys =
        ["enabled", "warnAt", "blockAt", "rerunWarnAt", "rerunBlockAt", "variedWarnAt", "variedBlockAt", "aimOverlap"];
    strict_keys(obj, path, &keys)?;
    let same = levels(obj, path, "warnAt", "blockAt", old.same)?;
    let rerun = levels(obj, path, "rerunWarnAt", "rerunBlockAt", old.rerun)?;
    let varied = levels(obj, path, "variedWarnAt", "variedBlockAt", old.varied)?;
    let aim_overlap = opt_int(obj, path, "aimOverlap", 0, 100)?.map_or(old.aim_overlap, |n| n as u8);
    Ok(StreakSettings { same, rerun, varied, aim_overlap })
}

/// Two levels over `old`, checked: 2 ≤ warn < block ≤ 1000.
fn levels(obj: &Map<String, Value>, path: &str, warn: &str, block: &str, old: Levels) -> Result<Levels, ConfigError> {
    let warn_at = opt_int(obj, path, warn, 2, 1000)?.map_or(old.warn_at, |n| n as u32);
    let block_at = opt_int(obj, path, block, 2, 1000)?.map_or(old.block_at, |n| n as u32);
    if block_at <= warn_at {
        return Err(ConfigError::new(
            format!("{path}.{block}"),
            format!("is {block_at}; it must be greater than {warn} ({warn_at})"),
        ));
    }
    Ok(Levels { warn_at, block_at })
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
