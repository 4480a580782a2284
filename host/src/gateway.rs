//! The typed face of the guest's `gateway` resource.
//!
//! Why a wrapper: the raw binding takes the store and the resource handle on every call and
//! returns a nested `Result<Result<_, policy-error>, wasmtime::Error>`; a gateway wants
//! `gateway.check_tool_call(&call)?`. Calls borrow their inputs, so the per-call path allocates
//! only what the guest returns.

use wasmtime::component::ResourceAny;

use crate::bindings::loopguard::policy::types::{
    BotMessage, BotStats, BotVerdict, CompactionVerdict, GatewayStats, GroupReply, GroupStart, GroupStep, GroupThread,
    OutcomeVerdict, PolicyError, ToolCall, ToolOutcome, ToolVerdict,
};
use crate::error::{Error, Result};
use crate::policy::Instance;

/// All loop-guard state of one gateway, living inside its own policy instance.
pub struct Gateway {
    instance: Instance,
    handle: ResourceAny,
}

fn policy_error(e: PolicyError) -> Error {
    Error::Policy { path: e.path, reason: e.reason }
}

impl Gateway {
    pub(crate) fn new(instance: Instance, handle: ResourceAny) -> Self {
        Gateway { instance, handle }
    }

    /// The instance this gateway lives in (for `version()` and `replay()`).
    pub fn instance(&mut self) -> &mut Instance {
        &mut self.instance
    }

    /// Checks a tool call before it runs (and records it unless blocked or disabled).
    pub fn check_tool_call(&mut self, call: &ToolCall) -> Result<ToolVerdict> {
        let Instance { store, bindings, .. } = &mut self.instance;
        let out = bindings.loopguard_policy_guard().gateway().call_check_tool_call(&mut *store, self.handle, call);
        out.map_err(Error::trap)?.map_err(policy_error)
    }

    /// Records how a tool call ended; may return the post-compaction abort.
    pub fn record_tool_outcome(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> Result<OutcomeVerdict> {
        let Instance { store, bindings, .. } = &mut self.instance;
        let out = bindings.loopguard_policy_guard().gateway().call_record_tool_outcome(
            &mut *store,
            self.handle,
            call,
            outcome,
        );
        out.map_err(Error::trap)?.map_err(policy_error)
    }

    /// Arms the post-compaction guard for `session` and `run`.
    pub fn compaction_retried(
        &mut self,
        session: &str,
        run: Option<&str>,
        agent: Option<&str>,
    ) -> Result<CompactionVerdict> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings
            .loopguard_policy_guard()
            .gateway()
            .call_compaction_retried(&mut *store, self.handle, session, run, agent)
            .map_err(Error::trap)
    }

    /// Forgets a session.
    pub fn end_session(&mut self, session: &str) -> Result<()> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings
            .loopguard_policy_guard()
            .gateway()
            .call_end_session(&mut *store, self.handle, session)
            .map_err(Error::trap)
    }

    /// Applies trace events (JSON Lines) whose first line has number `first_line`, and returns
    /// their decisions as JSON Lines.
    pub fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String> {
        let Instance { store, bindings, .. } = &mut self.instance;
        let out =
            bindings.loopguard_policy_guard().gateway().call_apply_events(&mut *store, self.handle, events, first_line);
        out.map_err(Error::trap)?.map_err(policy_error)
    }

    /// Exports the whole state as a versioned snapshot.
    pub fn export_state(&mut self) -> Result<Vec<u8>> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings.loopguard_policy_guard().gateway().call_export_state(&mut *store, self.handle).map_err(Error::trap)
    }

    /// Replaces the state with a snapshot from `export_state` (of this or an older policy).
    pub fn import_state(&mut self, snapshot: &[u8]) -> Result<()> {
        let Instance { store, bindings, .. } = &mut self.instance;
        let out = bindings.loopguard_policy_guard().gateway().call_import_state(&mut *store, self.handle, snapshot);
        out.map_err(Error::trap)?.map_err(policy_error)
    }

    /// Counters for metrics.
    pub fn stats(&mut self) -> Result<GatewayStats> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings.loopguard_policy_guard().gateway().call_stats(&mut *store, self.handle).map_err(Error::trap)
    }
}

/// Channel bot loops and agent group threads (interface 0.2).
impl Gateway {
    /// Decides whether a bot-authored inbound message may be handled or must be suppressed.
    pub fn check_bot_message(&mut self, message: &BotMessage) -> Result<BotVerdict> {
        let Instance { store, bindings, .. } = &mut self.instance;
        let out = bindings.loopguard_policy_guard().gateway().call_check_bot_message(&mut *store, self.handle, message);
        out.map_err(Error::trap)?.map_err(policy_error)
    }

    /// An inbound message to a conversation with a broadcast entry: which agents run round 1.
    pub fn start_group_thread(&mut self, thread: &GroupThread, peer: &str, text: &str) -> Result<GroupStart> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings
            .loopguard_policy_guard()
            .gateway()
            .call_start_group_thread(&mut *store, self.handle, thread, peer, text)
            .map_err(Error::trap)
    }

    /// The finals of the round just run: the next round, or why the thread stops.
    pub fn finish_group_round(&mut self, thread: &GroupThread, replies: &[GroupReply]) -> Result<GroupStep> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings
            .loopguard_policy_guard()
            .gateway()
            .call_finish_group_round(&mut *store, self.handle, thread, replies)
            .map_err(Error::trap)
    }

    /// The thread was cancelled.
    pub fn cancel_group_thread(&mut self, thread: &GroupThread) -> Result<GroupStep> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings
            .loopguard_policy_guard()
            .gateway()
            .call_cancel_group_thread(&mut *store, self.handle, thread)
            .map_err(Error::trap)
    }

    /// Counters of the bot-loop and group-thread state.
    pub fn bot_stats(&mut self) -> Result<BotStats> {
        let Instance { store, bindings, .. } = &mut self.instance;
        bindings.loopguard_policy_guard().gateway().call_bot_stats(&mut *store, self.handle).map_err(Error::trap)
    }
}

impl Drop for Gateway {
    /// Runs the guest destructor. A trapped instance cannot run it, and the memory goes away with
    /// the store anyway, so a failure here is ignored.
    fn drop(&mut self) {
        let _ = self.handle.resource_drop(&mut self.instance.store);
    }
}
