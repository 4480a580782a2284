//! The typed face of the guest's `gateway` resource.
//!
//! Why a wrapper: the raw binding takes the store and the resource handle on every call and
//! returns a nested `Result<Result<_, policy-error>, wasmtime::Error>`; a gateway wants
//! `gateway.check_tool_call(&call)?`. Calls borrow their inputs, so the per-call path allocates
//! only what the guest returns.
//!
//! The three decisions of a gateway's hot path (`check_tool_call`, `record_tool_outcome`,
//! `check_bot_message`) go through the guest's `-quick` functions (bot 0.4.0, tools 0.5.0): their
//! strings are packed into one reusable buffer ([`pack`]) and cross the boundary as one string,
//! which saves a guest allocation and a host-to-guest call per string, and they take the
//! gateway's id instead of its handle and return no text, which saves the handle's bookkeeping
//! and the post-return call. The decisions are the plain methods' (the guest runs the same code
//! for all of them).

mod pack;
#[cfg(test)]
mod tests;

use wasmtime::component::ResourceAny;
use wasmtime::Store;

use crate::bindings::exports::loopguard::policy::guard::GuestGateway as Guest;
use crate::bindings::HostState;

use crate::bindings::loopguard::policy::types::{
    AbortInfo, BotMessage, BotStats, BotVerdict, CompactionVerdict, Detector, GatewayStats, GroupReply, GroupStart,
    GroupStep, GroupThread, OutcomeVerdict, OutcomeVerdictQuick, PolicyError, ToolAction, ToolCall, ToolOutcome,
    ToolVerdict,
};
use crate::error::{Error, Result};
use crate::policy::Instance;
use pack::Packer;

/// All loop-guard state of one gateway, living inside its own policy instance.
pub struct Gateway {
    instance: Instance,
    handle: ResourceAny,
    /// The gateway's id in its instance, for the functions that take an id instead of the handle
    /// (`check-bot-message-quick`).
    id: u64,
    /// The buffer the packed calls' strings are packed into, kept to be reused.
    packer: Packer,
}

fn policy_error(e: PolicyError) -> Error {
    Error::Policy { path: e.path, reason: e.reason }
}

impl Gateway {
    /// Wraps a gateway just created in `instance`, asking the guest for its id.
    pub(crate) fn new(instance: Instance, handle: ResourceAny) -> Result<Self> {
        // Built before the call, so that a failure drops the guest resource with it.
        let mut gateway = Gateway { instance, handle, id: 0, packer: Packer::default() };
        gateway.id = gateway.typed("id", |s, g, h| g.call_id(s, h))?;
        Ok(gateway)
    }

    /// The instance this gateway lives in (for `version()` and `replay()`).
    pub fn instance(&mut self) -> &mut Instance {
        &mut self.instance
    }

    /// Runs a typed call under the call deadline.
    fn typed<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Store<HostState>, Guest<'_>, ResourceAny) -> wasmtime::Result<T>,
    ) -> Result<T> {
        typed(&mut self.instance, self.handle, name, f)
    }

    /// Runs a call whose work grows with `input_bytes` under the batch deadline.
    fn batch<T>(
        &mut self,
        name: &'static str,
        input_bytes: usize,
        f: impl FnOnce(&mut Store<HostState>, Guest<'_>, ResourceAny) -> wasmtime::Result<T>,
    ) -> Result<T> {
        let (deadline, handle) = (self.instance.limits.batch(input_bytes), self.handle);
        self.instance.call(name, deadline, |store, b| f(store, b.loopguard_policy_guard().gateway(), handle))
    }

    /// Checks a tool call before it runs (and records it unless blocked or disabled).
    ///
    /// Reported as `check-tool-call`; the call made is `check-tool-call-quick` (interface 0.5.0),
    /// which takes the gateway's id instead of its handle and returns a verdict without text, so
    /// that the call needs no post-return. A warning's or a block's message is fetched with
    /// `last-message` (allowed calls, the common case, make one call); a failure's error with
    /// `last-error`.
    pub fn check_tool_call(&mut self, call: &ToolCall) -> Result<ToolVerdict> {
        let (fields, l) = self.packer.tool_call(call)?;
        let (id, deadline) = (self.id, self.instance.limits.call_deadline);
        let verdict = self.instance.call("check-tool-call", deadline, |s, b| {
            b.loopguard_policy_guard()
                .call_check_tool_call_quick(s, id, fields, l.session, l.tool, l.run, l.agent, l.call_id)
        })?;
        let v = verdict.map_err(|()| self.last_error("check-tool-call"))?;
        let message = match v.action {
            ToolAction::Allow => None,
            ToolAction::Warn | ToolAction::Block => Some(self.last_message("check-tool-call")?),
        };
        Ok(ToolVerdict { action: v.action, detector: v.detector, count: v.count, message, notify: v.notify })
    }

    /// Records how a tool call ended; may return the post-compaction abort. Reported as
    /// `record-tool-outcome`; the call made is `record-tool-outcome-quick` (as for
    /// [`Gateway::check_tool_call`], with an abort's message from `last-message`).
    pub fn record_tool_outcome(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> Result<OutcomeVerdict> {
        let (fields, l, args, threw) = self.packer.outcome(call, outcome)?;
        let (id, deadline) = (self.id, self.instance.limits.call_deadline);
        let verdict = self.instance.call("record-tool-outcome", deadline, |s, b| {
            b.loopguard_policy_guard().call_record_tool_outcome_quick(
                s, id, fields, l.session, l.tool, l.run, l.agent, l.call_id, args, threw,
            )
        })?;
        Ok(match verdict.map_err(|()| self.last_error("record-tool-outcome"))? {
            OutcomeVerdictQuick::Recorded => OutcomeVerdict::Recorded,
            OutcomeVerdictQuick::Ignored => OutcomeVerdict::Ignored,
            OutcomeVerdictQuick::Abort(count) => OutcomeVerdict::Abort(AbortInfo {
                detector: Detector::CompactionLoopPersisted,
                count,
                tool: call.tool.clone(),
                message: self.last_message("record-tool-outcome")?,
            }),
        })
    }

    /// Arms the post-compaction guard for `session` and `run`.
    pub fn compaction_retried(
        &mut self,
        session: &str,
        run: Option<&str>,
        agent: Option<&str>,
    ) -> Result<CompactionVerdict> {
        self.typed("compaction-retried", |s, g, h| g.call_compaction_retried(s, h, session, run, agent))
    }

    /// Forgets a session.
    pub fn end_session(&mut self, session: &str) -> Result<()> {
        self.typed("end-session", |s, g, h| g.call_end_session(s, h, session))
    }

    /// Applies trace events (JSON Lines) whose first line has number `first_line`, and returns
    /// their decisions as JSON Lines.
    pub fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String> {
        self.batch("apply-events", events.len(), |s, g, h| g.call_apply_events(s, h, events, first_line))?
            .map_err(policy_error)
    }

    /// Exports the whole state as a versioned snapshot.
    pub fn export_state(&mut self) -> Result<Vec<u8>> {
        self.batch("export-state", 0, |s, g, h| g.call_export_state(s, h))
    }

    /// Replaces the state with a snapshot from `export_state` (of this or an older policy).
    pub fn import_state(&mut self, snapshot: &[u8]) -> Result<()> {
        self.batch("import-state", snapshot.len(), |s, g, h| g.call_import_state(s, h, snapshot))?.map_err(policy_error)
    }

    /// Counters for metrics.
    pub fn stats(&mut self) -> Result<GatewayStats> {
        self.typed("stats", |s, g, h| g.call_stats(s, h))
    }
}

/// Channel bot loops and agent group threads (interface 0.2, packed bot calls 0.3, quick 0.4).
impl Gateway {
    /// Decides whether a bot-authored inbound message may be handled or must be suppressed.
    /// Reported as `check-bot-message`; the call made is `check-bot-message-quick` (interface
    /// 0.4.0), which takes the gateway's id instead of its handle and whose result needs no
    /// post-return call. On failure, `last-error` fetches the same `policy-error` that
    /// `check-bot-message` returns.
    pub fn check_bot_message(&mut self, message: &BotMessage) -> Result<BotVerdict> {
        let (fields, l) = self.packer.bot_message(message)?;
        let (id, deadline) = (self.id, self.instance.limits.call_deadline);
        let verdict = self.instance.call("check-bot-message", deadline, |s, b| {
            b.loopguard_policy_guard().call_check_bot_message_quick(
                s,
                id,
                fields,
                l.channel,
                l.account,
                l.conversation,
                l.room,
                l.sender,
                l.receiver,
                message.ts_ms,
                l.event_id,
            )
        })?;
        verdict.map_err(|()| self.last_error("check-bot-message"))
    }

    /// The error a `-quick` call just failed with. A policy that fails such a call without
    /// recording why breaks the interface's contract, and is reported as doing so.
    #[cold]
    fn last_error(&mut self, call: &'static str) -> Error {
        let deadline = self.instance.limits.call_deadline;
        match self.instance.call("last-error", deadline, |s, b| b.loopguard_policy_guard().call_last_error(s)) {
            Ok(Some(e)) => policy_error(e),
            Ok(None) => Error::Policy {
                path: call.into(),
                reason: "the policy failed the call without saying why (last-error is none)".into(),
            },
            Err(e) => e,
        }
    }

    /// The message of the `-quick` tool verdict just returned. A policy that returns a warning,
    /// a block or an abort without keeping its message breaks the interface's contract, and is
    /// reported as doing so.
    fn last_message(&mut self, call: &'static str) -> Result<String> {
        let deadline = self.instance.limits.call_deadline;
        let message =
            self.instance.call("last-message", deadline, |s, b| b.loopguard_policy_guard().call_last_message(s))?;
        message.ok_or_else(|| Error::Policy {
            path: call.into(),
            reason: "the policy gave a verdict that needs a message without one (last-message is none)".into(),
        })
    }

    /// An inbound message to a conversation with a broadcast entry: which agents run round 1.
    pub fn start_group_thread(&mut self, thread: &GroupThread, peer: &str, text: &str) -> Result<GroupStart> {
        self.typed("start-group-thread", |s, g, h| g.call_start_group_thread(s, h, thread, peer, text))
    }

    /// The finals of the round just run: the next round, or why the thread stops.
    pub fn finish_group_round(&mut self, thread: &GroupThread, replies: &[GroupReply]) -> Result<GroupStep> {
        self.typed("finish-group-round", |s, g, h| g.call_finish_group_round(s, h, thread, replies))
    }

    /// The thread was cancelled.
    pub fn cancel_group_thread(&mut self, thread: &GroupThread) -> Result<GroupStep> {
        self.typed("cancel-group-thread", |s, g, h| g.call_cancel_group_thread(s, h, thread))
    }

    /// Counters of the bot-loop and group-thread state.
    pub fn bot_stats(&mut self) -> Result<BotStats> {
        self.typed("bot-stats", |s, g, h| g.call_bot_stats(s, h))
    }
}

/// Runs a typed call on `instance` under the call deadline. A function, not a method, so that a
/// call can borrow the gateway's packing buffer while it runs.
fn typed<T>(
    instance: &mut Instance,
    handle: ResourceAny,
    name: &'static str,
    f: impl FnOnce(&mut Store<HostState>, Guest<'_>, ResourceAny) -> wasmtime::Result<T>,
) -> Result<T> {
    let deadline = instance.limits.call_deadline;
    instance.call(name, deadline, |store, b| f(store, b.loopguard_policy_guard().gateway(), handle))
}

impl Drop for Gateway {
    /// Runs the guest destructor. A trapped instance cannot run it, and the memory goes away with
    /// the store anyway, so a failure here is ignored.
    fn drop(&mut self) {
        self.instance.store.set_epoch_deadline(crate::limits::ticks(self.instance.limits.call_deadline));
        let _ = self.handle.resource_drop(&mut self.instance.store);
    }
}
