//! Channel `botLoopProtection` config: validation and the per-channel layering (docs/spec/bot-loop.md
//! §1, §4).
//!
//! Every `botLoopProtection` object is validated once, here, into a typed [`Layer`] (so the guard
//! never looks at raw JSON). The layers each channel stacks (account over channel top level,
//! rooms over that, Google Chat's `accounts.default` beneath non-default accounts) are merged as
//! far as they can be before the room is known, so [`BotLoopConfig::resolve`] is a few lookups
//! and field picks per message.
//!
//! OpenClaw's own resolver is tolerant (an invalid number is "unset" and falls through to
//! `channels.defaults`; `0.5` floors to 0); validation rejects every such value, so on a valid
//! document the typed resolution below gives OpenClaw's answer.
//!
//! ```
//! use loopguard_policy::config::bot::BotLoopConfig;
//! let doc = serde_json::json!({"channels": {
//!     "defaults": {"botLoopProtection": {"maxEventsPerWindow": 20}},
//!     "discord": {"botLoopProtection": {"maxEventsPerWindow": 8},
//!                 "accounts": {"secondary": {"botLoopProtection": {"cooldownSeconds": 90}}}}}});
//! let cfg = BotLoopConfig::parse(&doc).unwrap();
//! let s = cfg.resolve("discord", "secondary", "any-channel");
//! assert_eq!((s.max_events_per_window.get(), s.cooldown.ms()), (8, 90_000));
//! ```

use std::collections::HashMap;

use std::num::{NonZeroU32, NonZeroU64};

use serde_json::{Map, Value};

use super::error::{type_name, ConfigError};
use super::read::{object_at, opt_bool, opt_int, opt_nonzero, strict_keys};
use crate::time::Millis;

/// Built-in `maxEventsPerWindow`.
pub const DEFAULT_MAX_EVENTS: NonZeroU64 = NonZeroU64::new(20).unwrap();
/// Built-in `windowSeconds`.
pub const DEFAULT_WINDOW_SECONDS: i64 = 60;
/// Built-in `cooldownSeconds`.
pub const DEFAULT_COOLDOWN_SECONDS: i64 = 60;
/// Largest `maxEventsPerWindow`. Why a bound (OpenClaw has none): a pair keeps up to that many
/// events in its window, for each of up to `loopguard.maxPairs` pairs. 5,000 times the
/// default of 20.
pub const MAX_EVENTS_PER_WINDOW: i64 = 100_000;
/// Largest `windowSeconds` and `cooldownSeconds`: 365 days. Longer is no budget a chat needs, and
/// a bound keeps the milliseconds far from overflowing.
pub const MAX_SECONDS: i64 = 365 * 86_400;

/// The resolved settings for one message: what the pair and burst budgets read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairSettings {
    /// `defaultEnabled AND enabled`; false disables both budgets.
    pub enabled: bool,
    /// Events one unordered pair may exchange inside the window.
    pub max_events_per_window: NonZeroU64,
    /// The sliding window.
    pub window: Millis,
    /// The cooldown after either budget trips.
    pub cooldown: Millis,
    /// The burst limit; `None` leaves the burst budget off.
    pub max_conversation_bot_events: Option<NonZeroU32>,
}

/// The five keys of one validated `botLoopProtection` object; `None` = not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layer {
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `maxEventsPerWindow` (1..=[`MAX_EVENTS_PER_WINDOW`]).
    pub max_events: Option<NonZeroU64>,
    /// `windowSeconds` (1..=[`MAX_SECONDS`]).
    pub window_seconds: Option<i64>,
    /// `cooldownSeconds` (1..=[`MAX_SECONDS`]).
    pub cooldown_seconds: Option<i64>,
    /// `maxConversationBotEvents` (1..=500).
    pub max_conversation_bot_events: Option<NonZeroU32>,
}

impl Layer {
    /// `mergePairLoopGuardConfig(broader, narrower)`: key by key, the narrower value wins unless
    /// it is unset. An explicit `false` is kept.
    pub fn under(&self, narrower: &Layer) -> Layer {
        Layer {
            enabled: narrower.enabled.or(self.enabled),
            max_events: narrower.max_events.or(self.max_events),
            window_seconds: narrower.window_seconds.or(self.window_seconds),
            cooldown_seconds: narrower.cooldown_seconds.or(self.cooldown_seconds),
            max_conversation_bot_events: narrower.max_conversation_bot_events.or(self.max_conversation_bot_events),
        }
    }

    /// `resolvePairLoopGuardSettings` with `defaultEnabled` true: `self` is the merged narrow
    /// layer, `defaults` is `channels.defaults.botLoopProtection`, then the built-ins.
    pub fn resolve(&self, defaults: &Layer) -> PairSettings {
        let l = defaults.under(self);
        PairSettings {
            enabled: l.enabled.unwrap_or(true),
            max_events_per_window: l.max_events.unwrap_or(DEFAULT_MAX_EVENTS),
            window: Millis::from_secs(l.window_seconds.unwrap_or(DEFAULT_WINDOW_SECONDS)),
            cooldown: Millis::from_secs(l.cooldown_seconds.unwrap_or(DEFAULT_COOLDOWN_SECONDS)),
            max_conversation_bot_events: l.max_conversation_bot_events,
        }
    }
}

/// The keys a `botLoopProtection` object may have (zod `.strict()`).
const KEYS: &[&str] =
    &["enabled", "maxEventsPerWindow", "windowSeconds", "cooldownSeconds", "maxConversationBotEvents"];
/// Largest accepted `maxConversationBotEvents`.
const MAX_BURST: i64 = 500;
/// Slack ids up to this length are case-mapped on the stack.
const SLACK_ID_STACK: usize = 120;

/// A byte-wise case mapping for ASCII Slack ids.
type ByteMap = fn(u8) -> u8;

/// Which per-conversation layer a channel has (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Rooms {
    /// No room layer (Discord, Telegram, ClickClack and every other channel).
    #[default]
    None,
    /// `groups[<room>]`, exact key (Matrix, Google Chat).
    Groups,
    /// `channels[<id>]` with case and `channel:` variants and a `"*"` wildcard (Slack).
    Slack,
}

/// One channel's layers, merged as far as they can be before the room is known.
#[derive(Debug, Clone, Default)]
struct ChannelLayers {
    rooms_kind: Rooms,
    /// Channel top level merged with each configured account (and, for Google Chat accounts
    /// other than `default`, with `accounts.default` underneath).
    accounts: HashMap<String, Layer>,
    /// The layer for an account that has no entry under `accounts`.
    unlisted_account: Layer,
    /// Room entries (objects only), their `botLoopProtection` or an empty [`Layer`].
    rooms: HashMap<String, Layer>,
    /// Slack's `"*"` entry.
    wildcard: Option<Layer>,
}

/// Every `botLoopProtection` layer of the document, validated.
#[derive(Debug, Clone)]
pub struct BotLoopConfig {
    /// `channels.defaults.botLoopProtection`.
    defaults: Layer,
    /// By channel name; Feishu is never here (it reads the defaults only).
    channels: HashMap<String, ChannelLayers>,
    /// The settings of every channel without layers of its own (the defaults over the
    /// built-ins), resolved once: with `{}` that is every message.
    unconfigured: PairSettings,
}

impl Default for BotLoopConfig {
    fn default() -> Self {
        Self {
            defaults: Layer::default(),
            channels: HashMap::new(),
            unconfigured: Layer::default().resolve(&Layer::default()),
        }
    }
}

impl BotLoopConfig {
    /// Validates every `botLoopProtection` object under `channels` (strict keys, `enabled` a
    /// boolean, the three numbers integers > 0, `maxConversationBotEvents` 1..=500) and builds
    /// the layers. Other keys of channels, accounts and rooms are not looked at.
    pub fn parse(doc: &Value) -> Result<Self, ConfigError> {
        let mut cfg = Self::default();
        let Some(channels) = object_at(doc, &["channels"])? else {
            return Ok(cfg);
        };
        for (name, value) in channels {
            let path = format!("channels.{name}");
            let channel = as_object(value, &path)?;
            let top = layer_in(channel, &path)?.unwrap_or_default();
            if name == "defaults" {
                cfg.defaults = top;
                continue;
            }
            let layers = channel_layers(name, channel, &path, &top)?;
            // Feishu intentionally uses only the shared baseline (its layers are still validated).
            if name != "feishu" {
                cfg.channels.insert(name.clone(), layers);
            }
        }
        cfg.unconfigured = Layer::default().resolve(&cfg.defaults);
        Ok(cfg)
    }

    /// The settings for a bot message on `channel` to `account` in `room` (§2.3 + §4, with
    /// `defaultEnabled` true).
    pub fn resolve(&self, channel: &str, account: &str, room: &str) -> PairSettings {
        let Some(ch) = self.channels.get(channel) else {
            return self.unconfigured;
        };
        let account_layer = ch.accounts.get(account).unwrap_or(&ch.unlisted_account);
        let config = match ch.rooms_kind {
            Rooms::None => *account_layer,
            Rooms::Groups => match ch.rooms.get(room) {
                Some(room_layer) => account_layer.under(room_layer),
                None => *account_layer,
            },
            Rooms::Slack => account_layer.under(&ch.slack_room(room)),
        };
        config.resolve(&self.defaults)
    }
}

impl ChannelLayers {
    /// Slack's room layer: the first entry among the id as given, lowercase, uppercase, then
    /// `channel:` + each, with the `"*"` entry beneath it key by key.
    fn slack_room(&self, id: &str) -> Layer {
        let entry = self.rooms.get(id).copied().or_else(|| self.slack_variant(id));
        match (self.wildcard, entry) {
            (Some(w), Some(e)) => w.under(&e),
            (w, e) => e.or(w).unwrap_or_default(),
        }
    }

    fn slack_variant(&self, id: &str) -> Option<Layer> {
        if self.rooms.is_empty() {
            return None;
        }
        if id.is_ascii() && id.len() <= SLACK_ID_STACK {
            let mut buf = [0u8; SLACK_ID_STACK + 8];
            let mut look = |prefix: &str, map: ByteMap| -> Option<Layer> {
                let n = prefix.len() + id.len();
                buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
                for (dst, src) in buf[prefix.len()..n].iter_mut().zip(id.bytes()) {
                    *dst = map(src);
                }
                let key = std::str::from_utf8(&buf[..n]).ok()?;
                self.rooms.get(key).copied()
            };
            let same: ByteMap = |b| b;
            let lower: ByteMap = |b| b.to_ascii_lowercase();
            let upper: ByteMap = |b| b.to_ascii_uppercase();
            return look("", lower)
                .or_else(|| look("", upper))
                .or_else(|| look("channel:", same))
                .or_else(|| look("channel:", lower))
                .or_else(|| look("channel:", upper));
        }
        let (lower, upper) = (id.to_lowercase(), id.to_uppercase());
        [lower.clone(), upper.clone(), format!("channel:{id}"), format!("channel:{lower}"), format!("channel:{upper}")]
            .iter()
            .find_map(|k| self.rooms.get(k).copied())
    }
}

/// Builds one channel's layers, validating its account and room `botLoopProtection` objects.
fn channel_layers(
    name: &str,
    channel: &Map<String, Value>,
    path: &str,
    top: &Layer,
) -> Result<ChannelLayers, ConfigError> {
    let mut layers = ChannelLayers {
        rooms_kind: match name {
            "matrix" | "googlechat" => Rooms::Groups,
            "slack" => Rooms::Slack,
            _ => Rooms::None,
        },
        unlisted_account: *top,
        ..ChannelLayers::default()
    };
    let mut raw_accounts = Vec::new();
    if let Some(accounts) = optional_object(channel, "accounts", path)? {
        for (id, account) in accounts {
            let account_path = format!("{path}.accounts.{id}");
            let layer = layer_in(as_object(account, &account_path)?, &account_path)?.unwrap_or_default();
            raw_accounts.push((id.clone(), layer));
        }
    }
    // Google Chat: accounts other than `default` inherit `accounts.default` beneath them.
    let beneath = match name {
        "googlechat" => raw_accounts.iter().find(|(id, _)| id == "default").map(|(_, l)| *l),
        _ => None,
    };
    let stack = |id: &str, account: &Layer| match beneath {
        Some(default) if id != "default" => default.under(&top.under(account)),
        _ => top.under(account),
    };
    layers.unlisted_account = stack("", &Layer::default());
    for (id, layer) in &raw_accounts {
        layers.accounts.insert(id.clone(), stack(id, layer));
    }
    let room_map = match layers.rooms_kind {
        Rooms::Slack => "channels",
        _ => "groups",
    };
    let strict = layers.rooms_kind != Rooms::None;
    let rooms = if strict {
        optional_object(channel, room_map, path)?
    } else {
        channel.get(room_map).and_then(Value::as_object)
    };
    for (id, room) in rooms.into_iter().flatten() {
        let room_path = format!("{path}.{room_map}.{id}");
        let room = match room {
            Value::Object(room) => room,
            _ if !strict => continue,
            other => return Err(not_object(&room_path, other)),
        };
        let layer = layer_in(room, &room_path)?.unwrap_or_default();
        if layers.rooms_kind == Rooms::Slack && id == "*" {
            layers.wildcard = Some(layer);
        }
        layers.rooms.insert(id.clone(), layer);
    }
    if !strict {
        layers.rooms.clear();
    }
    Ok(layers)
}

/// Validates and reads `<container>.botLoopProtection`, if present.
fn layer_in(container: &Map<String, Value>, path: &str) -> Result<Option<Layer>, ConfigError> {
    let path = format!("{path}.botLoopProtection");
    let Some(value) = container.get("botLoopProtection") else {
        return Ok(None);
    };
    let obj = as_object(value, &path)?;
    strict_keys(obj, &path, KEYS)?;
    Ok(Some(Layer {
        enabled: opt_bool(obj, &path, "enabled")?,
        max_events: opt_nonzero(obj, &path, "maxEventsPerWindow", MAX_EVENTS_PER_WINDOW)?,
        window_seconds: opt_int(obj, &path, "windowSeconds", 1, MAX_SECONDS)?,
        cooldown_seconds: opt_int(obj, &path, "cooldownSeconds", 1, MAX_SECONDS)?,
        max_conversation_bot_events: opt_nonzero(obj, &path, "maxConversationBotEvents", MAX_BURST)?
            .and_then(|n| NonZeroU32::try_from(n).ok()),
    }))
}

fn optional_object<'a>(
    parent: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Map<String, Value>>, ConfigError> {
    parent.get(key).map(|v| as_object(v, &format!("{path}.{key}"))).transpose()
}

fn as_object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| not_object(path, value))
}

fn not_object(path: &str, value: &Value) -> ConfigError {
    ConfigError::new(path, format!("must be an object, not {}", type_name(value)))
}

#[cfg(test)]
mod tests;
