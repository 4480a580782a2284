//! The parts of pi session records this crate reads, borrowed from the row's text.
//!
//! Why typed and borrowed instead of `serde_json::Value`: most of a record (usage, thinking
//! text, provider replay data) is never needed, and building a `Value` for it would cost more
//! than everything else an import does. Unknown fields are skipped by the parser.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A JSON member that may be absent, `null`, a string, or something else. JS code in OpenClaw
/// tells these apart (`=== null`, `=== undefined`, `typeof`), so the tree scan must too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Member {
    /// The key is not there.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A string.
    Str(String),
    /// A number, boolean, array or object.
    Other,
}

impl Member {
    /// `readNonBlankString`: the string when it is not blank after trimming.
    pub(crate) fn non_blank(&self) -> Option<&str> {
        match self {
            Member::Str(s) if !crate::text::js_trim(s).is_empty() => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Member::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Member, E> {
                Ok(Member::Null)
            }
            fn visit_none<E>(self) -> Result<Member, E> {
                Ok(Member::Null)
            }
            fn visit_str<E>(self, v: &str) -> Result<Member, E> {
                Ok(Member::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Member, E> {
                Ok(Member::Str(v))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Member, E> {
                Ok(Member::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Member, E> {
                Ok(Member::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Member, E> {
                Ok(Member::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Member, E> {
                Ok(Member::Other)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Member, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Member::Other)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Member, A::Error> {
                while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(Member::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// The tree facts of one record (OpenClaw's `TRANSCRIPT_NAVIGATION_KEYS` plus `version`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Nav {
    #[serde(rename = "type")]
    pub ty: Member,
    pub id: Member,
    #[serde(rename = "parentId")]
    pub parent_id: Member,
    #[serde(rename = "targetId")]
    pub target_id: Member,
    #[serde(rename = "appendParentId")]
    pub append_parent_id: Member,
    #[serde(rename = "appendMode")]
    pub append_mode: Member,
    pub version: Option<serde_json::Number>,
}

impl Nav {
    /// The `navigation` member of a compressed row's `navigation_json`.
    pub(crate) fn from_navigation_json(text: &str) -> Result<Nav, serde_json::Error> {
        #[derive(Deserialize)]
        struct Wrapper {
            navigation: Nav,
        }
        serde_json::from_str::<Wrapper>(text).map(|w| w.navigation)
    }
}

/// `__openclaw` metadata (only `runId` is read).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct OpenClawMeta {
    #[serde(rename = "runId")]
    pub run_id: Member,
}

/// A record, with the members the mapping reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Entry<'a> {
    #[serde(rename = "type", default)]
    pub ty: Member,
    #[serde(default)]
    pub timestamp: Member,
    #[serde(borrow, default)]
    pub message: Option<&'a RawValue>,
    #[serde(rename = "__openclaw", default)]
    pub openclaw: Option<OpenClawMeta>,
}

/// A `message` record's message.
#[derive(Debug, Deserialize)]
pub(crate) struct Message<'a> {
    #[serde(default)]
    pub role: Member,
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    #[serde(rename = "toolCallId", default)]
    pub tool_call_id: Member,
    #[serde(rename = "toolUseId", default)]
    pub tool_use_id: Member,
    #[serde(rename = "tool_call_id", default)]
    pub tool_call_id_snake: Member,
    #[serde(rename = "tool_use_id", default)]
    pub tool_use_id_snake: Member,
    #[serde(rename = "callId", default)]
    pub call_id: Member,
    #[serde(rename = "call_id", default)]
    pub call_id_snake: Member,
    #[serde(rename = "toolName", default)]
    pub tool_name: Member,
    #[serde(borrow, default)]
    pub details: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    pub is_error: Option<serde_json::Value>,
    #[serde(rename = "__openclaw", default)]
    pub openclaw: Option<OpenClawMeta>,
}

impl Message<'_> {
    /// `extractToolResultIds(message)[0]`: the first of the id members that is a non-empty
    /// string after trimming (2026.9.6 `tool-result-pairing`).
    pub(crate) fn result_call_id(&self) -> Option<String> {
        [
            &self.tool_call_id,
            &self.tool_use_id,
            &self.tool_call_id_snake,
            &self.tool_use_id_snake,
            &self.call_id,
            &self.call_id_snake,
        ]
        .into_iter()
        .filter_map(Member::as_str)
        .map(crate::text::js_trim)
        .find(|s| !s.is_empty())
        .map(str::to_string)
    }
}

/// One part of an assistant message's `content`; only tool call parts are kept.
#[derive(Debug, Deserialize)]
pub(crate) struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: Option<Cow<'a, str>>,
    #[serde(default)]
    pub id: Member,
    #[serde(default)]
    pub name: Member,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
}

/// `TOOL_CALL_TYPES` of 2026.9.6 `tool-result-pairing`.
pub(crate) fn is_tool_call_type(ty: &str) -> bool {
    matches!(ty, "toolCall" | "toolUse" | "functionCall")
}

/// A part of an assistant message's content that is not an object (or has odd members) must not
/// fail the whole message: parse each part on its own.
pub(crate) fn parse_parts(content: &RawValue) -> Vec<Result<Part<'_>, serde_json::Error>> {
    match serde_json::from_str::<Vec<&RawValue>>(content.get()) {
        Ok(parts) => parts.into_iter().map(|p| serde_json::from_str::<Part<'_>>(p.get())).collect(),
        Err(_) => Vec::new(),
    }
}
