//! Settings resolution: raw `botLoopProtection` layers → [`PairSettings`] (spec §1.1, §2.3, §4).
//!
//! Why keep raw values when the config is validated: OpenClaw's resolver is tolerant on its own
//! (an invalid number is "unset" and falls through to `channels.defaults`; `0.5` floors to 0 and
//! turns the pair budget off), and the merge that builds the narrow layer treats only a *missing*
//! key as unset, so an invalid narrow value hides a valid account value. Validation rejects such
//! documents today, but the resolver must still give OpenClaw's answer for any layer it is handed
//! (a relaxed validator, a host that builds layers itself), so these functions work on raw values.
//!
//! ```
//! use loopguard_policy::bot_loop::settings::{resolve, Layer, Raw};
//! let narrow = Layer { max_events: Raw::Num(0.0), ..Layer::EMPTY }; // invalid: falls through
//! let defaults = Layer { max_events: Raw::Num(8.0), ..Layer::EMPTY };
//! assert_eq!(resolve(&narrow, &defaults, true).max_events_per_window, 8);
//! ```

use serde_json::Value;

use super::PairSettings;

/// Built-in `maxEventsPerWindow`.
pub const DEFAULT_MAX_EVENTS: f64 = 20.0;
/// Built-in `windowSeconds`.
pub const DEFAULT_WINDOW_SECONDS: f64 = 60.0;
/// Built-in `cooldownSeconds`.
pub const DEFAULT_COOLDOWN_SECONDS: f64 = 60.0;
/// Largest `maxConversationBotEvents` (after flooring) the resolver accepts.
pub const MAX_BURST_LIMIT: f64 = 500.0;

/// One raw config value as the resolver sees it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Raw {
    /// The key is absent (JS `undefined`): the only value a merge skips.
    #[default]
    Missing,
    /// A boolean.
    Bool(bool),
    /// A number (possibly 0, negative, fractional or non-finite).
    Num(f64),
    /// Anything else (`null`, a string, an array, an object): present, but never valid.
    Other,
}

impl Raw {
    /// Classifies a JSON value (`None` = the key is absent).
    pub fn from_json(value: Option<&Value>) -> Self {
        match value {
            None => Raw::Missing,
            Some(Value::Bool(b)) => Raw::Bool(*b),
            Some(Value::Number(n)) => n.as_f64().map_or(Raw::Other, Raw::Num),
            Some(_) => Raw::Other,
        }
    }

    fn or(self, broader: Raw) -> Raw {
        if self == Raw::Missing {
            broader
        } else {
            self
        }
    }
}

/// The five keys of one `botLoopProtection` object, raw.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Layer {
    /// `enabled`.
    pub enabled: Raw,
    /// `maxEventsPerWindow`.
    pub max_events: Raw,
    /// `windowSeconds`.
    pub window_seconds: Raw,
    /// `cooldownSeconds`.
    pub cooldown_seconds: Raw,
    /// `maxConversationBotEvents`.
    pub max_conversation_bot_events: Raw,
}

impl Layer {
    /// A layer with nothing set (also what `merge(undefined, undefined)` means).
    pub const EMPTY: Layer = Layer {
        enabled: Raw::Missing,
        max_events: Raw::Missing,
        window_seconds: Raw::Missing,
        cooldown_seconds: Raw::Missing,
        max_conversation_bot_events: Raw::Missing,
    };

    /// Reads the five keys of a `botLoopProtection` object (other keys are not looked at).
    pub fn from_object(obj: &serde_json::Map<String, Value>) -> Self {
        Layer {
            enabled: Raw::from_json(obj.get("enabled")),
            max_events: Raw::from_json(obj.get("maxEventsPerWindow")),
            window_seconds: Raw::from_json(obj.get("windowSeconds")),
            cooldown_seconds: Raw::from_json(obj.get("cooldownSeconds")),
            max_conversation_bot_events: Raw::from_json(obj.get("maxConversationBotEvents")),
        }
    }

    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == Layer::EMPTY
    }
}

/// `mergePairLoopGuardConfig(broader, narrower)`: key by key, the narrower value wins unless it
/// is missing. An explicit `false` (or an invalid value) is kept.
pub fn merge(broader: &Layer, narrower: &Layer) -> Layer {
    Layer {
        enabled: narrower.enabled.or(broader.enabled),
        max_events: narrower.max_events.or(broader.max_events),
        window_seconds: narrower.window_seconds.or(broader.window_seconds),
        cooldown_seconds: narrower.cooldown_seconds.or(broader.cooldown_seconds),
        max_conversation_bot_events: narrower.max_conversation_bot_events.or(broader.max_conversation_bot_events),
    }
}

/// `resolvePairLoopGuardSettings`: `config` is the merged narrow layer, `defaults` is
/// `channels.defaults.botLoopProtection`. Each field resolves on its own.
pub fn resolve(config: &Layer, defaults: &Layer, default_enabled: bool) -> PairSettings {
    PairSettings {
        enabled: resolve_enabled(config.enabled, defaults.enabled) && default_enabled,
        max_events_per_window: resolve_positive(config.max_events, defaults.max_events, DEFAULT_MAX_EVENTS),
        window_ms: seconds_to_ms(resolve_positive(
            config.window_seconds,
            defaults.window_seconds,
            DEFAULT_WINDOW_SECONDS,
        )),
        cooldown_ms: seconds_to_ms(resolve_positive(
            config.cooldown_seconds,
            defaults.cooldown_seconds,
            DEFAULT_COOLDOWN_SECONDS,
        )),
        max_conversation_bot_events: resolve_burst_limit(
            config.max_conversation_bot_events,
            defaults.max_conversation_bot_events,
        ),
    }
}

/// The first boolean of `config`, `defaults`, else `true`.
pub fn resolve_enabled(config: Raw, defaults: Raw) -> bool {
    match (config, defaults) {
        (Raw::Bool(b), _) | (_, Raw::Bool(b)) => b,
        _ => true,
    }
}

/// The first finite number > 0 of `config`, `defaults`, `builtin`, floored. A value in (0, 1)
/// is accepted and floors to 0 (which then disables the pair budget, §2.4 step 4).
pub fn resolve_positive(config: Raw, defaults: Raw, builtin: f64) -> i64 {
    let pick = [config, defaults].into_iter().find_map(positive).unwrap_or(builtin);
    floor_to_i64(pick)
}

/// The first finite number > 0 whose floor is ≤ 500, of `config` then `defaults`, floored.
/// `None` (burst budget off) when neither qualifies, or when the chosen value floors to 0.
pub fn resolve_burst_limit(config: Raw, defaults: Raw) -> Option<u32> {
    let pick = [config, defaults].into_iter().filter_map(positive).find(|n| n.floor() <= MAX_BURST_LIMIT)?;
    // pick is in (0, 501), so the floor is an integer in 0..=500.
    match floor_to_i64(pick) {
        0 => None,
        n => u32::try_from(n).ok(),
    }
}

fn positive(raw: Raw) -> Option<f64> {
    match raw {
        Raw::Num(n) if n.is_finite() && n > 0.0 => Some(n),
        _ => None,
    }
}

/// Floors a finite positive number; values beyond `i64` saturate (`as` saturates).
fn floor_to_i64(n: f64) -> i64 {
    n.floor() as i64
}

/// `seconds × 1000`, saturating. Written as a bound check rather than `saturating_mul`, which
/// wasm32 compiles to a 128-bit multiply call on every message.
fn seconds_to_ms(seconds: i64) -> i64 {
    const LIMIT: i64 = i64::MAX / 1000;
    if seconds > LIMIT {
        i64::MAX
    } else if seconds < -LIMIT {
        i64::MIN
    } else {
        seconds * 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Raw::{Bool, Missing, Num, Other};

    fn layer(enabled: Raw, max: Raw, window: Raw, cooldown: Raw, burst: Raw) -> Layer {
        Layer {
            enabled,
            max_events: max,
            window_seconds: window,
            cooldown_seconds: cooldown,
            max_conversation_bot_events: burst,
        }
    }

    fn settings(enabled: bool, max: i64, window_ms: i64, cooldown_ms: i64, burst: Option<u32>) -> PairSettings {
        PairSettings { enabled, max_events_per_window: max, window_ms, cooldown_ms, max_conversation_bot_events: burst }
    }

    const M: Raw = Missing;

    #[test]
    fn seconds_to_ms_saturates_like_saturating_mul() {
        let limit = i64::MAX / 1000;
        for s in [0, 1, 60, limit - 1, limit, limit + 1, i64::MAX, -1, -limit, -limit - 1, i64::MIN] {
            assert_eq!(seconds_to_ms(s), s.saturating_mul(1000), "{s}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn spec_4_5_resolution_vectors() {
        let cases: &[(&str, Layer, Layer, bool, PairSettings)] = &[
            ("narrow over broad, per field",
             layer(M, Num(4.0), Num(10.0), M, M), layer(M, Num(8.0), Num(120.0), Num(30.0), M), true,
             settings(true, 4, 10_000, 30_000, None)),
            ("config enabled false beats defaults true",
             layer(Bool(false), M, M, M, M), layer(Bool(true), M, M, M, M), true,
             settings(false, 20, 60_000, 60_000, None)),
            ("defaults enabled false disables",
             Layer::EMPTY, layer(Bool(false), M, M, M, M), true,
             settings(false, 20, 60_000, 60_000, None)),
            ("defaultEnabled false disables",
             Layer::EMPTY, Layer::EMPTY, false,
             settings(false, 20, 60_000, 60_000, None)),
            ("invalid numbers fall back to built-ins",
             layer(M, Num(0.0), Num(-1.0), Num(-5.0), M), Layer::EMPTY, true,
             settings(true, 20, 60_000, 60_000, None)),
            ("burst limit 10",
             layer(M, M, M, M, Num(10.0)), Layer::EMPTY, true,
             settings(true, 20, 60_000, 60_000, Some(10))),
            ("burst limit 501 is absent",
             layer(M, M, M, M, Num(501.0)), Layer::EMPTY, true,
             settings(true, 20, 60_000, 60_000, None)),
            ("no config at all: built-ins",
             Layer::EMPTY, Layer::EMPTY, true,
             settings(true, 20, 60_000, 60_000, None)),
        ];
        for (name, config, defaults, default_enabled, want) in cases {
            assert_eq!(resolve(config, defaults, *default_enabled), *want, "{name}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn spec_4_5_merge_vectors() {
        let broad = layer(Bool(true), Num(8.0), Num(120.0), Num(30.0), M);
        assert_eq!(
            merge(&broad, &layer(M, Num(2.0), M, M, M)),
            layer(Bool(true), Num(2.0), Num(120.0), Num(30.0), M),
            "merge per field"
        );
        let off = layer(Bool(false), M, M, M, M);
        assert_eq!(merge(&off, &Layer::EMPTY), off, "explicit false survives; undefined is ignored");
        assert!(merge(&Layer::EMPTY, &Layer::EMPTY).is_empty(), "merge(undefined, undefined)");
    }

    #[rustfmt::skip]
    #[test]
    fn runtime_tolerance_of_section_1_1() {
        // (config, defaults, builtin) → resolved number
        let cases: &[(&str, Raw, Raw, i64)] = &[
            ("floors", Num(7.9), M, 7),
            ("0 < x < 1 floors to 0, does not fall through", Num(0.5), Num(9.0), 0),
            ("0 falls through to defaults", Num(0.0), Num(9.0), 9),
            ("negative falls through", Num(-3.0), Num(9.0), 9),
            ("NaN falls through", Num(f64::NAN), Num(9.0), 9),
            ("infinity falls through", Num(f64::INFINITY), Num(9.0), 9),
            ("null / non-number falls through", Other, Num(9.0), 9),
            ("a boolean is not a number", Bool(true), M, 20),
            ("defaults invalid too: built-in", Num(0.0), Num(-1.0), 20),
            ("defaults fractional", M, Num(2.7), 2),
        ];
        for (name, config, defaults, want) in cases {
            assert_eq!(resolve_positive(*config, *defaults, DEFAULT_MAX_EVENTS), *want, "{name}");
        }
    }

    #[test]
    fn seconds_floor_before_times_1000() {
        let s = resolve(&layer(M, M, Num(1.9), Num(0.5), M), &Layer::EMPTY, true);
        assert_eq!((s.window_ms, s.cooldown_ms), (1_000, 0));
    }

    #[rustfmt::skip]
    #[test]
    fn enabled_tolerance() {
        let cases: &[(&str, Raw, Raw, bool)] = &[
            ("config false", Bool(false), Bool(true), false),
            ("config true beats defaults false", Bool(true), Bool(false), true),
            ("non-boolean config falls through", Other, Bool(false), false),
            ("a number is not a boolean", Num(0.0), M, true),
            ("nothing set", M, M, true),
        ];
        for (name, config, defaults, want) in cases {
            assert_eq!(resolve_enabled(*config, *defaults), *want, "{name}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn burst_limit_tolerance() {
        let cases: &[(&str, Raw, Raw, Option<u32>)] = &[
            ("10", Num(10.0), M, Some(10)),
            ("500.9 floors to 500", Num(500.9), M, Some(500)),
            ("501 is unset, falls to defaults", Num(501.0), Num(7.0), Some(7)),
            ("0 is unset", Num(0.0), Num(7.0), Some(7)),
            ("negative is unset", Num(-1.0), M, None),
            ("0.5 is taken and floors to 0: off despite defaults", Num(0.5), Num(7.0), None),
            ("null is unset", Other, Num(7.0), Some(7)),
            ("defaults only", M, Num(3.2), Some(3)),
            ("nowhere", M, M, None),
        ];
        for (name, config, defaults, want) in cases {
            assert_eq!(resolve_burst_limit(*config, *defaults), *want, "{name}");
        }
    }

    #[test]
    fn invalid_narrow_value_hides_account_value_and_falls_to_defaults() {
        // §4.3: the room's `maxEventsPerWindow: 0` overwrites the account's 5 in the merge, then
        // the resolver skips it and lands on channels.defaults (8), not on the account value.
        let account = layer(M, Num(5.0), M, M, M);
        let room = layer(M, Num(0.0), M, M, M);
        let defaults = layer(M, Num(8.0), M, M, M);
        assert_eq!(resolve(&merge(&account, &room), &defaults, true).max_events_per_window, 8);
        let room_null = layer(M, Other, M, M, M);
        assert_eq!(resolve(&merge(&account, &room_null), &Layer::EMPTY, true).max_events_per_window, 20);
    }

    #[test]
    fn raw_classifies_json() {
        use serde_json::json;
        assert_eq!(Raw::from_json(None), Missing);
        assert_eq!(Raw::from_json(Some(&json!(null))), Other);
        assert_eq!(Raw::from_json(Some(&json!("5"))), Other);
        assert_eq!(Raw::from_json(Some(&json!(5))), Num(5.0));
        assert_eq!(Raw::from_json(Some(&json!(false))), Bool(false));
    }
}
