//! A hook event mapped onto the policy's calls, on the session's state: the one place where the
//! hook meets the policy. Every decision is the policy's; what this file adds is the session
//! bookkeeping the CLIs' protocols need between processes:
//!
//! | event | policy call | reply |
//! |---|---|---|
//! | check, the session already stopped | none | stop, with the text that stopped it |
//! | check | `check-tool-call` | allow: nothing; warn with `notify`: nothing now, the warning text is queued for this call's outcome; block: deny with the policy's message; a block that ends the run ([`ToolVerdict::ends_run`](loopguard_host::ToolVerdict::ends_run): the policy's ladder, the agent sent a blocked call again and again): stop, and every later check stops too |
//! | outcome | `record-tool-outcome` | the queued warning as context; `abort` (post-compaction, ladder): stop with its message, and every later check stops too |
//! | compaction | `compaction-retried` | nothing |
//! | forget | `end-session` | nothing (the caller deletes the file) |

use loopguard_host::{Gateway, OutcomeVerdict, Policy, ToolAction, ToolCall, ToolOutcome};

use super::event::{Call, Event, Hook, Outcome, Reply};
use super::state::Session;

/// What the guard needs to build the session's gateway.
pub struct Policies<'a> {
    /// The loaded policy.
    pub policy: &'a Policy,
    /// The config document, detection default applied.
    pub config: &'a str,
    /// Where the config came from, for messages.
    pub config_name: &'a str,
}

impl Policies<'_> {
    /// A gateway holding this session's state.
    fn gateway(&self, state: &Session) -> Result<Gateway, String> {
        let instance = self.policy.instantiate().map_err(failed)?;
        let mut gateway = instance.create_gateway(self.config).map_err(|e| match e {
            loopguard_host::Error::Policy { .. } => format!("invalid config {}: {e}", self.config_name),
            other => failed(other),
        })?;
        if !state.snapshot.is_empty() {
            gateway.import_state(&state.snapshot).map_err(|e| format!("the session's state was refused: {e}"))?;
        }
        Ok(gateway)
    }
}

/// Applies one event to the session's state and says what to answer.
pub fn apply(hook: &Hook, state: &mut Session, policies: &Policies<'_>) -> Result<Reply, String> {
    let session = hook.session.as_str();
    let reply = match &hook.event {
        Event::Ignore | Event::Warm => return Ok(Reply::Nothing),
        Event::Check(_) if state.stop.is_some() => return Ok(Reply::Stop(state.stop.clone().unwrap_or_default())),
        Event::Check(call) => {
            let mut gateway = policies.gateway(state)?;
            let verdict = gateway.check_tool_call(&tool_call(session, call)).map_err(failed)?;
            let ends_run = verdict.ends_run();
            let message = verdict.message.unwrap_or_default();
            let reply = match verdict.action {
                ToolAction::Allow => Reply::Nothing,
                ToolAction::Warn => {
                    if verdict.notify {
                        state.push_note(call.key(), message);
                    }
                    Reply::Nothing
                }
                ToolAction::Block if ends_run => {
                    state.stop = Some(message.clone());
                    Reply::Stop(message)
                }
                ToolAction::Block => Reply::Deny(message),
            };
            state.snapshot = gateway.export_state().map_err(failed)?;
            reply
        }
        Event::Outcome(call, outcome) => {
            let note = state.take_note(&call.key());
            let mut gateway = policies.gateway(state)?;
            let outcome = match outcome {
                Outcome::Returned(json) => ToolOutcome::Returned(json.clone()),
                Outcome::Threw(json) => ToolOutcome::Threw(json.clone()),
            };
            let verdict = gateway.record_tool_outcome(&tool_call(session, call), &outcome).map_err(failed)?;
            state.snapshot = gateway.export_state().map_err(failed)?;
            match (verdict, note) {
                (OutcomeVerdict::Abort(info), _) => {
                    state.stop = Some(info.message.clone());
                    Reply::Stop(info.message)
                }
                (_, Some(note)) => Reply::Context(note),
                (_, None) => Reply::Nothing,
            }
        }
        Event::Compaction => {
            let mut gateway = policies.gateway(state)?;
            gateway.compaction_retried(session, None, None).map_err(failed)?;
            state.snapshot = gateway.export_state().map_err(failed)?;
            Reply::Nothing
        }
        Event::Forget => {
            policies.gateway(state)?.end_session(session).map_err(failed)?;
            Reply::Nothing
        }
    };
    Ok(reply)
}

fn tool_call(session: &str, call: &Call) -> ToolCall {
    ToolCall {
        session: session.to_string(),
        tool: call.tool.clone(),
        args_json: call.args_json.clone(),
        run: None,
        agent: None,
        call_id: call.call_id.clone(),
    }
}

fn failed(e: loopguard_host::Error) -> String {
    format!("the policy failed: {e}")
}
