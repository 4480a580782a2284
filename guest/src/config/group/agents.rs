//! `agents.list[]` as the group coordinator reads it: ids, display names and mention patterns.

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::error::{type_name, ConfigError};
use super::super::mention::MentionPatterns;
use super::super::profile::DerivedMentions;
use super::super::read::lookup;

/// The agent OpenClaw runs when `agents.list` is absent or empty.
pub const IMPLICIT_AGENT: &str = "main";

/// Agent ids are compared trimmed and lowercased.
pub fn normalize_agent_id(id: &str) -> String {
    id.trim().to_lowercase()
}

/// Names longer than this (in UTF-16 units) are cut, as OpenClaw cuts them.
const MAX_DISPLAY_NAME: usize = 80;

/// `(identity.name ?? name ?? id).replace(/\s+/g, " ").trim().slice(0, 80) || id` (the
/// `identity` block is not read).
fn display_name(id: &str, name: Option<&str>) -> String {
    let raw = name.unwrap_or(id);
    let collapsed: Vec<&str> = raw.split(crate::js::is_js_space).filter(|w| !w.is_empty()).collect();
    let mut out = String::new();
    let mut units = 0;
    for c in collapsed.join(" ").chars() {
        units += c.len_utf16();
        if units > MAX_DISPLAY_NAME {
            break;
        }
        out.push(c);
    }
    if out.is_empty() {
        id.to_string()
    } else {
        out
    }
}

pub(super) type Agents = (BTreeMap<String, MentionPatterns>, BTreeMap<String, String>);

/// Reads `agents.list[]`: ids, names and own patterns. Returns each known agent's own configured
/// patterns, or its derived ones (marked so [`GroupConfig::mentions`] can put the global list
/// first), and the display names.
pub(super) fn parse_agents(doc: &Value, derive: DerivedMentions) -> Result<Agents, ConfigError> {
    let mut out = BTreeMap::new();
    let mut names = BTreeMap::new();
    let items = match lookup(doc, &["agents", "list"]) {
        None => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(other) => {
            return Err(ConfigError::new(
                "agents.list",
                format!("must be an array of agent entries, not {}", type_name(other)),
            ))
        }
    };
    if let Some(agents) = lookup(doc, &["agents"]) {
        if !agents.is_object() {
            return Err(ConfigError::new("agents", format!("must be an object, not {}", type_name(agents))));
        }
    }
    for (i, item) in items.iter().enumerate() {
        let path = format!("agents.list[{i}]");
        let Value::Object(obj) = item else {
            return Err(ConfigError::new(path, format!("must be an object with an id, not {}", type_name(item))));
        };
        let id = match obj.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.as_str(),
            Some(other) => {
                return Err(ConfigError::new(
                    format!("{path}.id"),
                    format!("must be a non-empty string, not {}", type_name(other)),
                ))
            }
            None => return Err(ConfigError::new(format!("{path}.id"), "is required: give the agent an id")),
        };
        let name = match obj.get("name") {
            None => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => {
                return Err(ConfigError::new(
                    format!("{path}.name"),
                    format!("must be a string, not {}", type_name(other)),
                ))
            }
        };
        let own = match obj.get("groupChat") {
            None => None,
            Some(Value::Object(g)) => match g.get("mentionPatterns") {
                Some(v) => {
                    let p = format!("{path}.groupChat.mentionPatterns");
                    Some(MentionPatterns::compile(v, &p)?)
                }
                None => None,
            },
            Some(other) => {
                return Err(ConfigError::new(
                    format!("{path}.groupChat"),
                    format!("must be an object, not {}", type_name(other)),
                ))
            }
        };
        let patterns = own.unwrap_or_else(|| derived(derive, id, name));
        names.entry(normalize_agent_id(id)).or_insert_with(|| display_name(id, name));
        out.insert(normalize_agent_id(id), patterns);
    }
    if out.is_empty() {
        out.insert(IMPLICIT_AGENT.to_string(), derived(derive, IMPLICIT_AGENT, None));
    }
    Ok((out, names))
}

fn derived(derive: DerivedMentions, id: &str, name: Option<&str>) -> MentionPatterns {
    match derive {
        DerivedMentions::IdAndName => MentionPatterns::derived(id, name),
        DerivedMentions::None => MentionPatterns::none_derived(),
    }
}
