//! Message sends (docs/spec/tool-loop.md §1.3 item 7): every send result carries fresh ids, so a send
//! that keeps failing the same way would never look like no progress; the ids are stripped and
//! the text is dropped.

use crate::json::Json;

/// `message` actions that send (case-sensitive, not trimmed).
const SEND_ACTIONS: &[&str] = &[
    "send",
    "broadcast",
    "reply",
    "thread-reply",
    "sendWithEffect",
    "sendAttachment",
    "upload-file",
    "sticker",
    "poll",
];

/// Keys `stripVolatile` removes anywhere in a send result.
const VOLATILE_KEYS: &[&str] = &[
    "messageId",
    "message_id",
    "messageIds",
    "platformMessageId",
    "platformMessageIds",
    "fileId",
    "file_id",
    "fileKey",
    "pollId",
    "poll_id",
    "receipt",
    "runId",
    "idempotencyKey",
    "ts",
    "timestamp",
    "sentAt",
    "deliveredAt",
    "createdAt",
];

/// True when the result of `tool` (with params `action`) is a message send: `message` with a send
/// action (any other action is not a send, whatever the lists say), or a tool in the profile's
/// `builtin` list or the operator's `extra` list.
pub fn is_send(tool: &str, action: Option<&str>, builtin: &[&str], extra: &[String]) -> bool {
    match tool {
        "message" => action.is_some_and(|a| SEND_ACTIONS.contains(&a)),
        _ => builtin.contains(&tool) || extra.iter().any(|t| t == tool),
    }
}

/// Removes volatile ids anywhere in a send result (`stripVolatile`).
pub fn strip_volatile<'a>(v: &Json<'a>) -> Json<'a> {
    match v {
        Json::Arr(items) => Json::Arr(items.iter().map(strip_volatile).collect()),
        Json::Obj(members) => {
            let delivery = is_delivery_object(v);
            Json::Obj(
                members
                    .iter()
                    .filter(|(k, _)| !(VOLATILE_KEYS.contains(&&**k) || (delivery && k == "id")))
                    .map(|(k, val)| (k.clone(), strip_volatile(val)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// A "message delivery object": string `id` and `text`, plus a string direction, senderId or
/// accountId, or a plain-object conversation.
fn is_delivery_object(v: &Json<'_>) -> bool {
    let s = |k: &str| matches!(v.get(k), Some(Json::Str(_)));
    s("id")
        && s("text")
        && (s("direction") || s("senderId") || s("accountId") || v.get("conversation").is_some_and(Json::is_object))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NOTES §2.6 item 7: 2026.9.6's `isMessagingToolSendAction` also names these two tools.
    #[test]
    fn conversation_tools_are_sends_in_openclaw_2026_9_only() {
        use crate::config::profile::{DOCUMENTED, OPENCLAW_2026_9};
        for tool in ["conversations_send", "conversations_turn"] {
            assert!(is_send(tool, None, OPENCLAW_2026_9.tool.send_tools, &[]), "{tool}");
            assert!(!is_send(tool, None, DOCUMENTED.tool.send_tools, &[]), "{tool}");
        }
        assert!(is_send("sessions_send", None, DOCUMENTED.tool.send_tools, &[]));
        assert!(!is_send("message", Some("read"), OPENCLAW_2026_9.tool.send_tools, &["message".into()]));
        assert!(is_send("telegram", None, DOCUMENTED.tool.send_tools, &["telegram".into()]));
    }
}
