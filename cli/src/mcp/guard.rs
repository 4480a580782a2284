//! The proxy's one link to the policy, the same for both transports.
//!
//! | MCP event | policy call | MCP answer |
//! |---|---|---|
//! | client request `tools/call` | `check-tool-call` (session, `params.name`, `params.arguments`, call id = the request id) | block: the proxy answers with a tool result `isError: true` carrying the policy's message, the server never sees the call; allow/warn: forwarded untouched |
//! | server response to a pending `tools/call` | `record-tool-outcome` (the result without `_meta`, or the JSON-RPC error as a throw) | forwarded untouched, or for a warning the policy said to tell (`notify`) with its text appended once to `result.content` |
//! | client `notifications/cancelled` | none (the call is forgotten, no outcome) | forwarded untouched |
//!
//! No rule about loops lives here: the verdict is the policy's, this maps it onto MCP.
//!
//! Memory: the calls waiting for their result are capped ([`MAX_PENDING`], the oldest dropped
//! first: a call whose response never comes must not stay forever); sessions live in the policy,
//! capped by its `loopguard.maxSessions` (least recently used evicted), and a session the client
//! ends (stdio closed, HTTP `DELETE`) is dropped at once.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use indexmap::IndexMap;
use loopguard_host::{SwappableGateway, ToolAction, ToolCall, ToolOutcome};

use super::jsonrpc::{self, Call};
use crate::metrics::Metrics;

/// At most this many `tools/call` requests wait for their result at once (all sessions).
pub const MAX_PENDING: usize = 4096;

/// A forwarded call waiting for its result.
struct Pending {
    call: ToolCall,
    /// The warning to append to its result.
    note: Option<String>,
}

/// The policy and the calls in flight.
pub struct Guard {
    gateway: Arc<SwappableGateway>,
    /// Where decisions are counted, when the proxy serves metrics.
    metrics: Option<Arc<Metrics>>,
    pending: Mutex<IndexMap<(String, String), Pending>>,
}

impl Guard {
    /// Wraps a gateway built from the proxy's config; `metrics` counts its decisions.
    pub fn new(gateway: Arc<SwappableGateway>, metrics: Option<Arc<Metrics>>) -> Self {
        Guard { gateway, metrics, pending: Mutex::new(IndexMap::new()) }
    }

    /// A client's `tools/call` in `session`: `Some(answer)` when the policy blocks it (the
    /// proxy sends the answer back and forwards nothing), `None` to forward it.
    pub fn on_call(&self, session: &str, call: &Call<'_>) -> Option<String> {
        let tool_call = ToolCall {
            session: session.to_string(),
            tool: call.tool.clone(),
            args_json: call.args_json.clone(),
            run: None,
            agent: None,
            call_id: Some(call.id.clone()),
        };
        let started = Instant::now();
        let verdict = match self.gateway.check_tool_call(&tool_call) {
            Ok(v) => {
                if let Some(m) = &self.metrics {
                    m.tool_call(&v, started.elapsed());
                }
                v
            }
            Err(e) => {
                // Not a broken instance (that is answered by the failure mode), so bad input:
                // the call goes on, unguarded, and the reason is logged.
                eprintln!("loopguard mcp: {} not checked: {e}", call.tool);
                return None;
            }
        };
        let note = match verdict.action {
            ToolAction::Block => return Some(jsonrpc::blocked(call, verdict.message.as_deref().unwrap_or_default())),
            ToolAction::Warn if verdict.notify => verdict.message,
            ToolAction::Warn | ToolAction::Allow => None,
        };
        let mut pending = self.lock();
        if pending.len() >= MAX_PENDING {
            pending.shift_remove_index(0);
        }
        pending.insert((session.to_string(), call.id.clone()), Pending { call: tool_call, note });
        None
    }

    /// A server response in `session`: records the outcome when it answers a pending call;
    /// `Some(text)` when the message to pass on is the response with the warning appended.
    pub fn on_response(&self, session: &str, id: String, outcome: &ToolOutcome, text: &str) -> Option<String> {
        let pending = self.lock().shift_remove(&(session.to_string(), id))?;
        let started = Instant::now();
        match self.gateway.record_tool_outcome(&pending.call, outcome) {
            Ok(verdict) => {
                if let Some(m) = &self.metrics {
                    m.tool_result(&verdict, started.elapsed());
                }
            }
            Err(e) => eprintln!("loopguard mcp: the result of {} not recorded: {e}", pending.call.tool),
        }
        jsonrpc::with_note(text, &pending.note?)
    }

    /// The client cancelled request `id`: no outcome will be recorded for it.
    pub fn on_cancel(&self, session: &str, id: String) {
        self.lock().shift_remove(&(session.to_string(), id));
    }

    /// The session ended: forget its calls and its state in the policy.
    pub fn end(&self, session: &str) {
        self.lock().retain(|(s, _), _| s != session);
        if let Err(e) = self.gateway.end_session(session) {
            eprintln!("loopguard mcp: session {session} not ended: {e}");
        }
    }

    /// Calls waiting for their result (for the memory bound's test).
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<(String, String), Pending>> {
        // A panic elsewhere cannot leave the map half-updated: every change is one call.
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_host::{Policy, Supervision};

    fn guard() -> Guard {
        let policy = Policy::embedded().expect("the embedded policy");
        let config = loopguard_host::agent_config("{}").expect("the defaults");
        let gateway = SwappableGateway::new(policy, &config, Supervision::default()).expect("gateway");
        Guard::new(Arc::new(gateway), None)
    }

    fn call(id: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"m":{id}}}}}}}"#
        )
    }

    #[test]
    fn calls_whose_result_never_comes_stay_under_the_cap_and_an_ended_session_leaves_none() {
        let g = guard();
        for id in 0..MAX_PENDING + 100 {
            let text = call(id);
            let Ok(jsonrpc::Message::ToolsCall(c)) = jsonrpc::classify(&text) else { panic!("a call") };
            assert!(g.on_call("s1", &c).is_none());
        }
        assert_eq!(g.pending(), MAX_PENDING);
        g.end("s1");
        assert_eq!(g.pending(), 0);
    }
}
