//! The typed face of the guest's `gateway` resource.
//!
//! Why a wrapper: the raw binding takes the store and the resource handle on every call and
//! returns a nested `Result<Result<_, policy-error>, wasmtime::Error>`; a gateway wants
//! `gateway.check_tool_call(&call)?`, with every call under the sandbox's deadline.

use wasmtime::component::ResourceAny;
use wasmtime::Store;

use crate::bindings::exports::loopguard::policy::guard::GuestGateway as Guest;
use crate::bindings::HostState;

use crate::bindings::loopguard::policy::types::{
    BotMessage, BotVerdict, Call, CompactionVerdict, GroupReply, GroupStart, GroupStep, GroupThread, KeyedDecision,
    KeyedVerdict, OutcomeVerdict, PolicyError, Stats, ToolCall, ToolOutcome, ToolVerdict, Verdict,
};
use crate::error::{Error, Result};
use crate::policy::{Instance, Policy};

/// All loop-guard state of one gateway, living inside its own policy instance.
pub struct Gateway {
    instance: Instance,
    handle: ResourceAny,
}

// Building a gateway lives here, beside the type it builds, so that `policy.rs` (engine,
// component, instances) needs nothing from this file.
impl Policy {
    /// Shorthand for `instantiate()?.create_gateway(config)`.
    pub fn gateway(&self, config: &str) -> Result<Gateway> {
        self.instantiate()?.create_gateway(config)
    }
}

impl Instance {
    /// Builds a gateway from a config document; the gateway owns this instance.
    pub fn create_gateway(mut self, config: &str) -> Result<Gateway> {
        let deadline = self.limits.batch(config.len());
        let created =
            self.call("create", deadline, |store, b| b.loopguard_policy_guard().gateway().call_create(store, config));
        let handle = created?.map_err(Error::policy)?;
        Ok(Gateway { instance: self, handle })
    }
}

impl Gateway {
    /// The instance this gateway lives in (for `version()` and `replay()`).
    pub fn instance(&mut self) -> &mut Instance {
        &mut self.instance
    }

    /// Runs a call under the per-call deadline.
    fn typed<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Store<HostState>, Guest<'_>, ResourceAny) -> wasmtime::Result<T>,
    ) -> Result<T> {
        let (deadline, handle) = (self.instance.limits.call_deadline, self.handle);
        self.instance.call(name, deadline, |store, b| f(store, b.loopguard_policy_guard().gateway(), handle))
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
    pub fn check_tool_call(&mut self, call: &ToolCall) -> Result<ToolVerdict> {
        self.typed("check-tool-call", |s, g, h| g.call_check_tool_call(s, h, call))?.map_err(Error::policy)
    }

    /// Records how a tool call ended; may return the post-compaction abort.
    pub fn record_tool_outcome(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> Result<OutcomeVerdict> {
        self.typed("record-tool-outcome", |s, g, h| g.call_record_tool_outcome(s, h, call, outcome))?
            .map_err(Error::policy)
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

    /// Decides whether a bot-authored inbound message may be handled or must be suppressed.
    pub fn check_bot_message(&mut self, message: &BotMessage) -> Result<BotVerdict> {
        self.typed("check-bot-message", |s, g, h| g.call_check_bot_message(s, h, message))?.map_err(Error::policy)
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

    /// Applies trace events (JSON Lines) whose first line has number `first_line`, and returns
    /// their decisions as JSON Lines.
    pub fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String> {
        self.batch("apply-events", events.len(), |s, g, h| g.call_apply_events(s, h, events, first_line))?
            .map_err(Error::policy)
    }

    /// Exports the whole state as a versioned snapshot.
    pub fn export_state(&mut self) -> Result<Vec<u8>> {
        self.batch("export-state", 0, |s, g, h| g.call_export_state(s, h))
    }

    /// Replaces the state with a snapshot from `export_state` (of this or an older policy).
    pub fn import_state(&mut self, snapshot: &[u8]) -> Result<()> {
        self.batch("import-state", snapshot.len(), |s, g, h| g.call_import_state(s, h, snapshot))?
            .map_err(Error::policy)
    }

    /// Counters for metrics (sessions, bot pairs, group threads, guest memory).
    pub fn stats(&mut self) -> Result<Stats> {
        self.typed("stats", |s, g, h| g.call_stats(s, h))
    }

    /// The key of the state `event` (one trace line) decides on (interface 1.1): what a
    /// [`crate::store::StateStore`] keeps one blob under.
    pub fn state_key(&mut self, event: &str) -> Result<String> {
        self.batch("state-key", event.len(), |s, g, h| g.call_state_key(s, h, event))?.map_err(Error::policy)
    }

    /// Decides `event` (one trace line, numbered `line`) on one key's `state` and returns the
    /// decision line and the key's new state (interface 1.1); the gateway's own state is untouched.
    pub fn decide_keyed(&mut self, event: &str, line: u32, state: Option<&[u8]>) -> Result<KeyedDecision> {
        let bytes = event.len() + state.map_or(0, <[u8]>::len);
        self.batch("decide-keyed", bytes, |s, g, h| g.call_decide_keyed(s, h, event, line, state))?
            .map_err(Error::policy)
    }

    /// The key of the state `call` decides on (interface 1.2): the same key as its trace event.
    pub fn key_of(&mut self, call: &Call) -> Result<String> {
        self.typed("key-of", |s, g, h| g.call_key_of(s, h, call))
    }

    /// Makes `call` on one key's `state` and returns what the call's own method returns, with
    /// the key's new state (interface 1.2); the gateway's own state is untouched.
    pub fn decide_call(&mut self, call: &Call, state: Option<&[u8]>) -> Result<KeyedVerdict> {
        let bytes = input_bytes(call) + state.map_or(0, <[u8]>::len);
        self.batch("decide-call", bytes, |s, g, h| g.call_decide_call(s, h, call, state))?.map_err(Error::policy)
    }

    /// Makes `calls` in order in one guest call (interface 1.2) until one fails, and returns the
    /// result of each call made: all `Ok`, or the last one the `Err` of the call that failed
    /// (which changed nothing); the calls after it are not made.
    pub fn apply_calls(&mut self, calls: &[Call]) -> Result<Vec<std::result::Result<Verdict, PolicyError>>> {
        self.batch("apply-calls", calls.iter().map(input_bytes).sum(), |s, g, h| g.call_apply_calls(s, h, calls))
    }
}

/// The bytes of a call's text inputs, for the batch deadline (which grows with the input).
pub(crate) fn input_bytes(call: &Call) -> usize {
    match call {
        Call::CheckToolCall(c) => c.args_json.len(),
        Call::RecordToolOutcome((c, ToolOutcome::Returned(o) | ToolOutcome::Threw(o))) => c.args_json.len() + o.len(),
        Call::StartGroupThread(m) => m.text.len(),
        Call::FinishGroupRound(f) => f.replies.iter().map(|r| r.reply.as_ref().map_or(0, String::len)).sum(),
        Call::CompactionRetried(_) | Call::CheckBotMessage(_) | Call::CancelGroupThread(_) => 0,
    }
}

impl Drop for Gateway {
    /// Runs the guest destructor. A trapped instance cannot run it, and the memory goes away with
    /// the store anyway, so a failure here is ignored.
    fn drop(&mut self) {
        self.instance.store.set_epoch_deadline(crate::limits::ticks(self.instance.limits.call_deadline));
        let _ = self.handle.resource_drop(&mut self.instance.store);
    }
}
