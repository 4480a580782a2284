//! `broadcast`: which agents answer together in a group conversation, and their budget.
//!
//! A broadcast group lets several agents answer one inbound group message. Without a budget they
//! can keep answering each other for ever; OpenClaw's qualified entries therefore carry a round
//! and turn budget (docs/spec/bot-loop.md §5). This module validates the entries once, with
//! path-named errors, and compiles every agent's mention patterns so the coordinator never
//! re-checks anything at run time.
//!
//! ```json5
//! { agents: { list: [{ id: "alpha", name: "Alpha" }, { id: "beta" }] },
//!   broadcast: { strategy: "parallel",
//!                "discord:123": { agents: ["alpha", "beta"], maxRounds: 2, maxTurns: 4 },
//!                "slack:C0123": ["alpha", "beta"],     // array form: all defaults
//!                "1203@g.us": ["alpha"] } }            // legacy WhatsApp: one uncapped pass
//! ```
//!
//! Choices where the spec is silent:
//! - Agent ids are compared after trimming and lowercasing (OpenClaw normalizes agent ids); the
//!   participant lists keep the spelling written in the broadcast entry.
//! - Without `agents.list` (or with an empty one) the only known agent is OpenClaw's implicit
//!   default agent, `main`.
//! - An id listed twice in one entry is an error (it would take two turns for one agent).
//! - The ≤ 16 participants bound applies to legacy arrays too.
//! - An entry whose `agents` is empty is valid (deleting agents prunes entries) and behaves like
//!   no entry.
//! - Keys are matched exactly: a qualified key is `"<channel>:<peer>"` split at its first `:`
//!   (both sides non-empty); a key without `:` is a legacy WhatsApp key.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

mod agents;

use super::error::{type_name, ConfigError};
use super::mention::{Haystack, MentionPatterns};
use super::profile::{GroupRules, Profile, DOCUMENTED};
use super::read::{object_at, opt_bool, opt_int, strict_keys};
use agents::parse_agents;
pub use agents::{normalize_agent_id, IMPLICIT_AGENT};

/// Most participants in one broadcast entry.
pub const MAX_AGENTS: usize = 16;
/// Largest `maxRounds` (the initial round counts).
pub const MAX_ROUNDS: u32 = 4;
/// Largest `maxTurns`.
pub const MAX_TURNS: u32 = 32;

/// `broadcast.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// All participants of a round start at once (the default).
    #[default]
    Parallel,
    /// Participants of a round start one after another. Only the launch order changes; a later
    /// participant does not see an earlier one's reply from the same round.
    Sequential,
}

impl Strategy {
    /// The config spelling, as in the broadcast log line.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Parallel => "parallel",
            Strategy::Sequential => "sequential",
        }
    }
}

/// One qualified `"<channel>:<peer>"` entry, with defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastEntry {
    /// Participants in configured order (the order that decides which turns start).
    pub agents: Vec<String>,
    /// Round 1 runs only the @-mentioned participants (all when none is mentioned).
    pub mention_gating: bool,
    /// Rounds allowed, counting the initial one (1..=4, default 1).
    pub max_rounds: u32,
    /// Agent runs allowed across all rounds (1..=32, default the number of agents).
    pub max_turns: u32,
}

/// What a `"<channel>:<peer>"` resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryRef<'a> {
    /// A qualified entry: budgeted rounds.
    Qualified(&'a BroadcastEntry),
    /// A legacy unqualified WhatsApp array: one uncapped pass.
    Legacy(&'a [String]),
}

/// The `broadcast` entries and the agents' mention patterns.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    /// The profile's coordinator rules.
    pub rules: GroupRules,
    /// Display names (`name` or the id, whitespace collapsed, ≤ 80 UTF-16 units) by normalized
    /// agent id, for [`GroupRules::address_by_display_name`].
    display_names: BTreeMap<String, String>,
    /// `broadcast.strategy`.
    pub strategy: Strategy,
    /// Qualified entries by their exact key.
    qualified: BTreeMap<String, BroadcastEntry>,
    /// Legacy WhatsApp entries by peer id.
    legacy: BTreeMap<String, Vec<String>>,
    /// Configured or derived patterns by normalized agent id.
    agent_patterns: BTreeMap<String, MentionPatterns>,
    /// `messages.groupChat.mentionPatterns`, when present.
    global_patterns: Option<MentionPatterns>,
}

impl GroupConfig {
    /// Reads `broadcast` (strategy; qualified `"<channel>:<peer>"` keys with array or
    /// strict-object values `{agents, mentionGating?, maxRounds? 1..=4, maxTurns? 1..=32}`; ≤ 16
    /// agents; unknown agent ids rejected; legacy unqualified WhatsApp keys with array values),
    /// `agents.list[].id`, `agents.list[].name` (if present),
    /// `agents.list[].groupChat.mentionPatterns` and `messages.groupChat.mentionPatterns`.
    /// Errors name the path, e.g. `broadcast.discord:123.maxRounds`. Other keys of
    /// `agents.list[]` entries are ignored (they belong to other features).
    pub fn parse(doc: &Value) -> Result<Self, ConfigError> {
        Self::parse_with(doc, &DOCUMENTED)
    }

    /// [`GroupConfig::parse`] under a profile's rules.
    pub fn parse_with(doc: &Value, profile: &Profile) -> Result<Self, ConfigError> {
        let global_patterns = match object_at(doc, &["messages", "groupChat"])?.and_then(|g| g.get("mentionPatterns")) {
            Some(v) => Some(MentionPatterns::compile(v, "messages.groupChat.mentionPatterns")?),
            None => None,
        };
        let rules = profile.group;
        let (agent_patterns, display_names) = parse_agents(doc, rules.derived_mentions)?;
        let mut cfg = Self {
            rules,
            display_names,
            strategy: Strategy::default(),
            qualified: BTreeMap::new(),
            legacy: BTreeMap::new(),
            agent_patterns,
            global_patterns,
        };
        let Some(broadcast) = object_at(doc, &["broadcast"])? else {
            return Ok(cfg);
        };
        for (key, value) in broadcast {
            let path = format!("broadcast.{key}");
            if key == "strategy" {
                cfg.strategy = match value.as_str() {
                    Some("parallel") => Strategy::Parallel,
                    Some("sequential") => Strategy::Sequential,
                    _ => {
                        return Err(ConfigError::new(
                            path,
                            format!("must be \"parallel\" or \"sequential\", not {value}"),
                        ))
                    }
                };
            } else if let Some((channel, peer)) = key.split_once(':') {
                if channel.is_empty() || peer.is_empty() {
                    return Err(ConfigError::new(
                        path,
                        "a qualified key must be \"<channel>:<peer>\", e.g. \"discord:123\"",
                    ));
                }
                let entry = cfg.parse_qualified(value, &path)?;
                cfg.qualified.insert(key.clone(), entry);
            } else {
                let Value::Array(items) = value else {
                    return Err(ConfigError::new(
                        path,
                        format!(
                            "an unqualified (legacy WhatsApp) entry must be an array of agent \
                             ids, not {}; use the key \"whatsapp:{key}\" for an object entry",
                            type_name(value)
                        ),
                    ));
                };
                let agents = cfg.parse_agent_ids(items, &path)?;
                cfg.legacy.insert(key.clone(), agents);
            }
        }
        Ok(cfg)
    }

    /// The entry for a message from `peer` on `channel`: the qualified `"<channel>:<peer>"`
    /// entry, else (WhatsApp only) the legacy unqualified `peer` entry.
    pub fn entry(&self, channel: &str, peer: &str) -> Option<EntryRef<'_>> {
        if let Some(e) = self.qualified.get(&format!("{channel}:{peer}")) {
            return Some(EntryRef::Qualified(e));
        }
        if channel == "whatsapp" {
            return self.legacy.get(peer).map(|a| EntryRef::Legacy(a));
        }
        None
    }

    /// True when `text` mentions `agent` by its resolved patterns (own, else global, else
    /// derived), as the profile counts a mention ([`GroupRules::mentions_need_at`]). An agent
    /// the config does not know (e.g. after a reload) is never mentioned.
    pub fn mentions(&self, agent: &str, text: &Haystack<'_>) -> bool {
        let patterns = match self.agent_patterns.get(&normalize_agent_id(agent)) {
            Some(own) if !own.is_derived() => own,
            Some(derived) => self.global_patterns.as_ref().unwrap_or(derived),
            None => return false,
        };
        if self.rules.mentions_need_at {
            patterns.matches_at_address(text)
        } else {
            patterns.matches(text)
        }
    }

    /// A text prepared for [`GroupConfig::mentions`] under the profile's rules.
    pub fn haystack<'t>(&self, text: &'t str) -> Haystack<'t> {
        if self.rules.mentions_need_at {
            Haystack::for_addresses(text)
        } else {
            Haystack::new(text)
        }
    }

    /// The display name of `agent` (its `name`, else the id).
    pub fn display_name<'s>(&'s self, agent: &'s str) -> &'s str {
        self.display_names.get(&normalize_agent_id(agent)).map_or(agent, String::as_str)
    }

    fn parse_qualified(&self, value: &Value, path: &str) -> Result<BroadcastEntry, ConfigError> {
        let (items, obj): (&Vec<Value>, Option<&Map<String, Value>>) = match value {
            Value::Array(items) => (items, None),
            Value::Object(obj) => {
                strict_keys(obj, path, &["agents", "mentionGating", "maxRounds", "maxTurns"])?;
                match obj.get("agents") {
                    Some(Value::Array(items)) => (items, Some(obj)),
                    Some(other) => {
                        return Err(ConfigError::new(
                            format!("{path}.agents"),
                            format!("must be an array of agent ids, not {}", type_name(other)),
                        ))
                    }
                    None => {
                        return Err(ConfigError::new(
                            format!("{path}.agents"),
                            "is required: list the participating agent ids",
                        ))
                    }
                }
            }
            other => {
                return Err(ConfigError::new(
                    path,
                    format!(
                        "must be an array of agent ids or an object {{agents, mentionGating?, \
                         maxRounds?, maxTurns?}}, not {}",
                        type_name(other)
                    ),
                ))
            }
        };
        let agents = self.parse_agent_ids(items, path_agents(path, obj.is_some()).as_str())?;
        let mut entry =
            BroadcastEntry { max_turns: agents.len().max(1) as u32, agents, mention_gating: true, max_rounds: 1 };
        if let Some(obj) = obj {
            if let Some(g) = opt_bool(obj, path, "mentionGating")? {
                entry.mention_gating = g;
            }
            if let Some(n) = opt_int(obj, path, "maxRounds", 1, i64::from(MAX_ROUNDS))? {
                entry.max_rounds = n as u32;
            }
            if let Some(n) = opt_int(obj, path, "maxTurns", 1, i64::from(MAX_TURNS))? {
                entry.max_turns = n as u32;
            }
        }
        Ok(entry)
    }

    /// Validates an agent-id array at `path` (the array itself).
    fn parse_agent_ids(&self, items: &[Value], path: &str) -> Result<Vec<String>, ConfigError> {
        if items.len() > MAX_AGENTS {
            return Err(ConfigError::new(
                path,
                format!("lists {} agents; at most {MAX_AGENTS} may take part", items.len()),
            ));
        }
        let mut agents: Vec<String> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            let id = match item {
                Value::String(s) if !s.trim().is_empty() => s.trim(),
                other => {
                    return Err(ConfigError::new(
                        item_path,
                        format!("must be a non-empty agent id, not {}", type_name(other)),
                    ))
                }
            };
            let norm = normalize_agent_id(id);
            if !self.agent_patterns.contains_key(&norm) {
                return Err(ConfigError::new(
                    item_path,
                    format!("unknown agent id \"{id}\"; {}", self.known_ids_hint()),
                ));
            }
            if agents.iter().any(|a| normalize_agent_id(a) == norm) {
                return Err(ConfigError::new(
                    item_path,
                    format!("agent \"{id}\" is listed twice; remove the duplicate"),
                ));
            }
            agents.push(id.to_string());
        }
        Ok(agents)
    }

    fn known_ids_hint(&self) -> String {
        let ids: Vec<&str> = self.agent_patterns.keys().take(20).map(String::as_str).collect();
        let more = if self.agent_patterns.len() > ids.len() { ", …" } else { "" };
        format!("add it to agents.list or use one of: {}{more}", ids.join(", "))
    }
}

fn path_agents(path: &str, object_form: bool) -> String {
    if object_form {
        format!("{path}.agents")
    } else {
        path.to_string()
    }
}
