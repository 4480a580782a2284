//! One message from either side, through the guard: what to forward and what to answer.
//! Both transports call these two functions, so stdio and HTTP decide alike.

use super::guard::Guard;
use super::jsonrpc::{self, Message};

/// What becomes of a client message.
pub enum Forward {
    /// The bytes as they came.
    Original,
    /// A batch without its blocked calls.
    Rest(String),
    /// Nothing (the proxy answered it all).
    Nothing,
}

/// A client message's fate: what goes to the server, and the proxy's own answer to the client.
pub struct Step {
    /// To the server.
    pub forward: Forward,
    /// To the client, from the proxy.
    pub answer: Option<String>,
}

/// A message from the client in `session`.
pub fn from_client(guard: &Guard, session: &str, text: &str) -> Step {
    if text.trim().is_empty() {
        return Step { forward: Forward::Original, answer: None };
    }
    if let Some(items) = jsonrpc::batch(text) {
        // JSON-RPC batches (MCP 2025-03-26 only): blocked elements are answered as a batch,
        // the rest forwarded as a batch.
        let (mut answers, mut rest) = (Vec::new(), Vec::new());
        for item in &items {
            match client_message(guard, session, item.get()) {
                Some(answer) => answers.push(answer),
                None => rest.push(item.get().to_string()),
            }
        }
        return match (answers.is_empty(), rest.is_empty()) {
            (true, _) => Step { forward: Forward::Original, answer: None },
            (false, true) => Step { forward: Forward::Nothing, answer: Some(jsonrpc::join(&answers)) },
            (false, false) => {
                Step { forward: Forward::Rest(jsonrpc::join(&rest)), answer: Some(jsonrpc::join(&answers)) }
            }
        };
    }
    match jsonrpc::classify(text) {
        // Not JSON: answered with the error JSON-RPC names for it, the server never sees it.
        Err(_) => Step { forward: Forward::Nothing, answer: Some(jsonrpc::PARSE_ERROR.to_string()) },
        Ok(_) => match client_message(guard, session, text) {
            Some(answer) => Step { forward: Forward::Nothing, answer: Some(answer) },
            None => Step { forward: Forward::Original, answer: None },
        },
    }
}

/// One client message (not a batch): `Some(answer)` when the proxy answers it instead of the
/// server.
pub fn client_message(guard: &Guard, session: &str, text: &str) -> Option<String> {
    match jsonrpc::classify(text) {
        Ok(Message::ToolsCall(call)) => guard.on_call(session, &call),
        Ok(Message::Cancelled(id)) => {
            guard.on_cancel(session, id);
            None
        }
        _ => None,
    }
}

/// A message from the server in `session`: `Some(text)` when it is to be passed on changed (a
/// warning appended), `None` to pass on the bytes as they came (malformed ones included).
pub fn from_server(guard: &Guard, session: &str, text: &str) -> Option<String> {
    if let Some(items) = jsonrpc::batch(text) {
        let mut changed = false;
        let items: Vec<String> = items
            .iter()
            .map(|item| match response(guard, session, item.get()) {
                Some(new) => {
                    changed = true;
                    new
                }
                None => item.get().to_string(),
            })
            .collect();
        return changed.then(|| jsonrpc::join(&items));
    }
    response(guard, session, text)
}

fn response(guard: &Guard, session: &str, text: &str) -> Option<String> {
    match jsonrpc::classify(text) {
        Ok(Message::Response { id, outcome }) => guard.on_response(session, id, &outcome, text),
        _ => None,
    }
}
