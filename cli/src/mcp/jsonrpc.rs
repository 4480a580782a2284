//! The JSON-RPC messages of MCP, read only as far as the guard needs them.
//!
//! Why so little parsing: the proxy must be invisible. Every message is forwarded as the bytes
//! it arrived as, ids are never renumbered (the SDKs use a request's id as its progress token),
//! and only three kinds of message matter (docs/PROXIES.md, "What the proxy reads"): a client
//! `tools/call` request, the server's response to one, and the client's `notifications/cancelled`
//! for one. A message is peeked with borrowed [`RawValue`]s; the two messages the proxy writes
//! itself (a blocked call's result, a result with a warning appended) keep every other field as
//! raw text and in its order ([`IndexMap`]).

use std::borrow::Cow;

use indexmap::IndexMap;
use loopguard_host::ToolOutcome;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The JSON-RPC "Parse error" (JSON-RPC 2.0 §5.1): the answer to a client line that is not JSON.
pub const PARSE_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// MCP 2026-07-28 marks each request with its protocol version here; its results need
/// `resultType`.
const MODERN_MARK: &str = "io.modelcontextprotocol/protocolVersion";

/// The fields of one message that the proxy looks at; the rest is never decoded.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<IndexMap<Cow<'a, str>, &'a RawValue>>,
}

#[derive(Deserialize)]
struct CancelParams {
    #[serde(rename = "requestId")]
    request_id: serde_json::Value,
}

/// What one message is to the guard.
pub enum Message<'a> {
    /// A client request `tools/call` with a tool name: the guard decides on it.
    ToolsCall(Call<'a>),
    /// A response (an id and no method): it may answer a pending `tools/call`.
    Response {
        /// The id, normalized ([`id_key`]).
        id: String,
        /// The outcome to record if it answers a `tools/call`.
        outcome: ToolOutcome,
    },
    /// `notifications/cancelled` for this request id ([`id_key`]).
    Cancelled(String),
    /// Anything else (other requests, notifications, server requests, malformed calls): passed on.
    Other,
}

/// A `tools/call` request.
pub struct Call<'a> {
    /// The id as it was sent (echoed unchanged in a blocked answer).
    pub raw_id: &'a RawValue,
    /// The id, normalized ([`id_key`]).
    pub id: String,
    /// `params.name`.
    pub tool: String,
    /// `params.arguments` as sent (`null` when absent).
    pub args_json: String,
    /// Protocol 2026-07-28 (its results carry `resultType`).
    pub modern: bool,
}

/// The text by which a request and its response are matched: ids compare as JSON values, so
/// `1` and `1.0` or differently escaped strings still match.
fn id_key(raw: &RawValue) -> String {
    serde_json::from_str::<serde_json::Value>(raw.get()).map_or_else(|_| raw.get().to_string(), |v| v.to_string())
}

/// Reads one message (a JSON object). `Err` when it is not JSON at all.
pub fn classify(text: &str) -> Result<Message<'_>, serde_json::Error> {
    let peek: Peek<'_> = match serde_json::from_str(text) {
        Ok(peek) => peek,
        // JSON, but not an object of this shape (an array, a number, a wrong-typed field).
        Err(e) if e.is_data() => return Ok(Message::Other),
        Err(e) => return Err(e),
    };
    Ok(match (peek.method.as_deref(), peek.id) {
        (Some("tools/call"), Some(raw_id)) => match peek.params.map(|p| serde_json::from_str::<CallParams>(p.get())) {
            Some(Ok(params)) => Message::ToolsCall(Call {
                raw_id,
                id: id_key(raw_id),
                tool: params.name.into_owned(),
                args_json: params.arguments.map_or("null", RawValue::get).to_string(),
                modern: params.meta.is_some_and(|m| m.contains_key(MODERN_MARK)),
            }),
            // No params or no string name: the server answers -32602 itself.
            _ => Message::Other,
        },
        (Some("notifications/cancelled"), None) => {
            match peek.params.and_then(|p| serde_json::from_str::<CancelParams>(p.get()).ok()) {
                Some(c) => Message::Cancelled(c.request_id.to_string()),
                None => Message::Other,
            }
        }
        (None, Some(id)) => match (peek.result, peek.error) {
            (Some(result), None) => Message::Response { id: id_key(id), outcome: returned(result) },
            (None, Some(error)) => {
                Message::Response { id: id_key(id), outcome: ToolOutcome::Threw(error.get().into()) }
            }
            _ => Message::Other,
        },
        _ => Message::Other,
    })
}

/// The id of a request (a message with a method and an id), as it was sent: what an error the
/// proxy answers itself echoes, so that the client can match it to its call. `None` for a
/// notification, a batch, or text that is not a JSON object.
pub fn request_id(text: &str) -> Option<&RawValue> {
    let peek: Peek<'_> = serde_json::from_str(text).ok()?;
    peek.method.and(peek.id)
}

/// A `tools/call` result as the outcome the policy compares: the result without its `_meta`
/// (server info, timings: not part of what the tool returned).
fn returned(result: &RawValue) -> ToolOutcome {
    let text = match serde_json::from_str::<IndexMap<&str, &RawValue>>(result.get()) {
        Ok(mut fields) => {
            fields.shift_remove("_meta");
            serde_json::to_string(&fields).unwrap_or_else(|_| result.get().into())
        }
        Err(_) => result.get().into(),
    };
    ToolOutcome::Returned(text)
}

/// The proxy's own answer to a blocked call: a tool result (not a JSON-RPC error, so that the
/// model reads the text) with `isError: true`, the same id, and `resultType` on 2026-07-28.
pub fn blocked(call: &Call<'_>, message: &str) -> String {
    let text = serde_json::Value::from(message).to_string();
    let kind = if call.modern { r#","resultType":"complete""# } else { "" };
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":{text}}}],"isError":true{kind}}}}}"#,
        call.raw_id.get()
    )
}

/// The response with `{"type":"text","text":note}` appended to `result.content`; `None` when it
/// has no such array (then it is passed on as it is). Other fields keep their text and order.
pub fn with_note(text: &str, note: &str) -> Option<String> {
    let mut message: IndexMap<&str, Box<RawValue>> = serde_json::from_str(text).ok()?;
    let mut result: IndexMap<&str, Box<RawValue>> = serde_json::from_str(message.get("result")?.get()).ok()?;
    let mut content: Vec<Box<RawValue>> = serde_json::from_str(result.get("content")?.get()).ok()?;
    let block = format!(r#"{{"type":"text","text":{}}}"#, serde_json::Value::from(note));
    content.push(RawValue::from_string(block).ok()?);
    result.insert("content", RawValue::from_string(serde_json::to_string(&content).ok()?).ok()?);
    message.insert("result", RawValue::from_string(serde_json::to_string(&result).ok()?).ok()?);
    serde_json::to_string(&message).ok()
}

/// The elements of a batch (a JSON array), or `None` when `text` is not an array.
pub fn batch(text: &str) -> Option<Vec<&RawValue>> {
    if !text.trim_start().starts_with('[') {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// A batch written back as a JSON array.
pub fn join(items: &[String]) -> String {
    format!("[{}]", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(text: &str) -> Call<'_> {
        match classify(text) {
            Ok(Message::ToolsCall(c)) => c,
            _ => panic!("not a tools/call: {text}"),
        }
    }

    #[test]
    fn a_blocked_answer_echoes_the_id_and_says_result_type_only_on_2026_07_28() {
        let old = r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"echo","arguments":{"m":1}}}"#;
        assert_eq!(
            blocked(&call(old), "stop \"now\""),
            r#"{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"stop \"now\""}],"isError":true}}"#
        );
        let new = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let c = call(new);
        assert_eq!((c.args_json.as_str(), c.id.as_str()), ("null", "7"));
        assert!(blocked(&c, "x").ends_with(r#""isError":true,"resultType":"complete"}}"#));
    }

    #[test]
    fn a_note_is_appended_and_every_other_field_keeps_its_text_and_order() {
        let text =
            r#"{"result":{"z":1,"content":[{"type":"text","text":"Echo: a"}],"a":{"b": 2}},"jsonrpc":"2.0","id":3}"#;
        assert_eq!(
            with_note(text, "note").as_deref(),
            Some(
                r#"{"result":{"z":1,"content":[{"type":"text","text":"Echo: a"},{"type":"text","text":"note"}],"a":{"b": 2}},"jsonrpc":"2.0","id":3}"#
            )
        );
        assert_eq!(with_note(r#"{"id":1,"result":{}}"#, "n"), None);
    }

    #[test]
    fn responses_cancellations_and_the_rest_are_told_apart() {
        match classify(r#"{"jsonrpc":"2.0","id":1.0,"result":{"content":[],"_meta":{"t":1}}}"#) {
            Ok(Message::Response { id, outcome: ToolOutcome::Returned(r) }) => {
                assert_eq!((id.as_str(), r.as_str()), ("1.0", r#"{"content":[]}"#))
            }
            _ => panic!("response"),
        }
        match classify(r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad"}}"#) {
            Ok(Message::Response { outcome: ToolOutcome::Threw(e), .. }) => assert!(e.contains("-32602")),
            _ => panic!("error response"),
        }
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}"#),
            Ok(Message::Cancelled(id)) if id == "\"x\""
        ));
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"[1,2]"#,
            r#"{"id":{}}"#,
        ] {
            assert!(matches!(classify(other), Ok(Message::Other)), "{other}");
        }
        assert!(classify("{not json").is_err());
    }
}
