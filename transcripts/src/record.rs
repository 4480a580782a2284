//! The parts of pi session records this crate reads, borrowed from the row's text.
//!
//! Why typed and borrowed instead of `serde_json::Value`: most of a record (usage, thinking
//! text, provider replay data) is never needed, and building a `Value` for it would cost more
//! than everything else an import does. Unknown fields are skipped by the parser.

use loopguard_policy::js::js_trim;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A JSON member that may be absent, `null`, a string, or something else. JS code in OpenClaw
/// tells these apart (`=== null`, `=== undefined`, `typeof`), so the tree scan must too.
/// Strings are borrowed from the record's text when they hold no escapes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Member<'a> {
    /// The key is not there.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A string.
    Str(Cow<'a, str>),
    /// A number, boolean, array or object.
    Other,
}

impl Member<'_> {
    /// `readNonBlankString`: the string when it is not blank after trimming.
    pub(crate) fn non_blank(&self) -> Option<&str> {
        match self {
            Member::Str(s) if !js_trim(s).is_empty() => Some(s),
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

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Member<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Member<'a>, E> {
                Ok(Member::Null)
            }
            fn visit_none<E>(self) -> Result<Member<'a>, E> {
                Ok(Member::Null)
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Member<'a>, E> {
                Ok(Member::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Member<'a>, E> {
                Ok(Member::Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Member<'a>, E> {
                Ok(Member::Str(Cow::Owned(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Member<'a>, E> {
                Ok(Member::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Member<'a>, E> {
                Ok(Member::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Member<'a>, E> {
                Ok(Member::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Member<'a>, E> {
                Ok(Member::Other)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Member<'a>, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Member::Other)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Member<'a>, A::Error> {
                while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(Member::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `readNonBlankString` on a JSON value.
pub(crate) fn non_blank_value(v: &serde_json::Value) -> Option<&str> {
    v.as_str().filter(|s| !js_trim(s).is_empty())
}

/// The tree facts of one record (OpenClaw's `TRANSCRIPT_NAVIGATION_KEYS` plus `version`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Nav<'a> {
    #[serde(rename = "type", borrow)]
    pub ty: Member<'a>,
    #[serde(borrow)]
    pub id: Member<'a>,
    #[serde(rename = "parentId", borrow)]
    pub parent_id: Member<'a>,
    #[serde(rename = "targetId", borrow)]
    pub target_id: Member<'a>,
    #[serde(rename = "appendParentId", borrow)]
    pub append_parent_id: Member<'a>,
    #[serde(rename = "appendMode", borrow)]
    pub append_mode: Member<'a>,
    pub version: Option<serde_json::Number>,
}

impl<'a> Nav<'a> {
    /// The `navigation` member of a compressed row's `navigation_json`.
    pub(crate) fn from_navigation_json(text: &'a str) -> Result<Nav<'a>, serde_json::Error> {
        #[derive(Deserialize)]
        struct Wrapper<'a> {
            #[serde(borrow)]
            navigation: Nav<'a>,
        }
        serde_json::from_str::<Wrapper<'a>>(text).map(|w| w.navigation)
    }
}

/// `__openclaw` metadata (only `runId` is read).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct OpenClawMeta<'a> {
    #[serde(rename = "runId", borrow)]
    pub run_id: Member<'a>,
}

/// A record, with the members the mapping reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Entry<'a> {
    #[serde(rename = "type", default, borrow)]
    pub ty: Member<'a>,
    #[serde(default, borrow)]
    pub timestamp: Member<'a>,
    #[serde(borrow, default)]
    pub message: Option<Message<'a>>,
    #[serde(rename = "__openclaw", default, borrow, deserialize_with = "lenient")]
    pub openclaw: Option<OpenClawMeta<'a>>,
}

/// A member that is used only if it has the expected shape (`"__openclaw":"x"` is ignored, not
/// an error that loses the record).
fn lenient<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    let raw: &'de RawValue = Deserialize::deserialize(d)?;
    Ok(serde_json::from_str(raw.get()).ok())
}

/// A `message` record's message.
#[derive(Debug, Deserialize)]
pub(crate) struct Message<'a> {
    #[serde(default, borrow)]
    pub role: Member<'a>,
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    #[serde(rename = "toolCallId", default, borrow)]
    pub tool_call_id: Member<'a>,
    #[serde(rename = "toolUseId", default, borrow)]
    pub tool_use_id: Member<'a>,
    #[serde(rename = "tool_call_id", default, borrow)]
    pub tool_call_id_snake: Member<'a>,
    #[serde(rename = "tool_use_id", default, borrow)]
    pub tool_use_id_snake: Member<'a>,
    #[serde(rename = "callId", default, borrow)]
    pub call_id: Member<'a>,
    #[serde(rename = "call_id", default, borrow)]
    pub call_id_snake: Member<'a>,
    #[serde(rename = "toolName", default, borrow)]
    pub tool_name: Member<'a>,
    #[serde(borrow, default)]
    pub details: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    pub is_error: Option<serde_json::Value>,
    #[serde(rename = "__openclaw", default, borrow, deserialize_with = "lenient")]
    pub openclaw: Option<OpenClawMeta<'a>>,
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
        .filter_map(|m| m.as_str())
        .map(js_trim)
        .find(|s| !s.is_empty())
        .map(str::to_string)
    }
}

/// One part of an assistant message's `content`; only tool call parts are kept.
#[derive(Debug, Deserialize)]
pub(crate) struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub id: Member<'a>,
    #[serde(default, borrow)]
    pub name: Member<'a>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
}

/// `TOOL_CALL_TYPES` of 2026.9.6 `tool-result-pairing`.
pub(crate) fn is_tool_call_type(ty: &str) -> bool {
    matches!(ty, "toolCall" | "toolUse" | "functionCall")
}

/// One element of `content`: a [`Part`] when it is an object of that shape, else skipped (a part
/// that is a string, or has odd members, must not fail the whole message).
pub(crate) struct AnyPart<'a>(pub Option<Part<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for AnyPart<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        if !raw.get().starts_with('{') {
            return Ok(AnyPart(None));
        }
        Ok(AnyPart(serde_json::from_str::<Part<'de>>(raw.get()).ok()))
    }
}

/// The parts of an assistant message's content (none if `content` is not an array).
pub(crate) fn parse_parts(content: &RawValue) -> Vec<Part<'_>> {
    match serde_json::from_str::<Vec<AnyPart<'_>>>(content.get()) {
        Ok(parts) => parts.into_iter().filter_map(|p| p.0).collect(),
        Err(_) => Vec::new(),
    }
}
