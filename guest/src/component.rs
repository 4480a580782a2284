//! The WIT boundary: converts WIT values to core types and back, and calls the core. Nothing
//! here decides anything about loops or budgets, reads input or keeps state of its own.
//!
//! The glue is generic over [`Core`], the policy's decision API with [`Gateway`] behind it, so
//! that a test fixture (`tests/hostile-policy`, a policy that misbehaves on demand) can depend
//! on this crate with `default-features = false`, wrap the real gateway and export the same
//! component with `export_policy!`. This crate's own export, of the real [`Gateway`], is the
//! default feature `export`.

use std::cell::RefCell;

use crate::bot_loop as bl;
use crate::error::{ErrorKind, PolicyError as CoreError};
use crate::gateway::{Gateway as CoreGateway, Stats};
use crate::group as gr;
use crate::input::json_value_with;
use crate::keyed::KeyOf;
use crate::tool_loop::{self as tl, Outcome};
use crate::trace;

/// The bindings, public so that another crate can export a component through them.
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "policy",
        pub_export_macro: true,
        export_macro_name: "export_policy",
        default_bindings_module: "loopguard_policy::component::bindings",
    });
}

use bindings::exports::loopguard::policy::guard::{Gateway, Guest as GuardGuest, GuestGateway};
use bindings::loopguard::policy::types::{
    AbortInfo, BotMessage, BotVerdict, Budget, Call, Compaction, CompactionVerdict, ErrorKind as WitKind, GroupFinals,
    GroupMessage, GroupReply, GroupRound, GroupStart, GroupStep, GroupThread, KeyedDecision, KeyedVerdict,
    OutcomeVerdict, PolicyError, Stats as WitStats, StopReason, Suppression, ToolAction, ToolCall, ToolOutcome,
    ToolVerdict, Verdict,
};
use bindings::Guest;

/// The decision API the component exports. Every method but [`Core::create`] and
/// [`Core::gateway`] has a default that calls the real gateway, so a wrapper overrides only what
/// it changes. (The defaults name `CoreGateway::` explicitly: for the real gateway, `Self` is
/// `CoreGateway`, and a method call on `&mut CoreGateway` would pick this trait's `&mut self`
/// method over an inherent `&self` one and recurse.)
#[allow(missing_docs)]
pub trait Core: Sized + 'static {
    /// A gateway from a config document.
    fn create(config: &str) -> Result<Self, CoreError>;
    /// The real gateway inside.
    fn gateway(&mut self) -> &mut CoreGateway;

    fn version() -> String {
        crate::POLICY_VERSION.to_string()
    }
    fn interface_version() -> String {
        crate::INTERFACE_VERSION.to_string()
    }
    fn replay(config: &str, trace: &str) -> Result<String, CoreError> {
        crate::replay::replay(config, trace)
    }
    fn check_tool_call(&mut self, call: &tl::ToolCall<'_>) -> Result<tl::ToolVerdict, CoreError> {
        CoreGateway::check_tool_call(self.gateway(), call)
    }
    fn record_tool_outcome(
        &mut self,
        call: &tl::ToolCall<'_>,
        outcome: Outcome<'_>,
    ) -> Result<tl::OutcomeVerdict, CoreError> {
        CoreGateway::record_tool_outcome(self.gateway(), call, outcome)
    }
    fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String, CoreError> {
        CoreGateway::apply_events(self.gateway(), events, first_line)
    }
    fn export_state(&mut self) -> Vec<u8> {
        CoreGateway::export_state(self.gateway())
    }
    fn import_state(&mut self, snapshot: &[u8]) -> Result<(), CoreError> {
        CoreGateway::import_state(self.gateway(), snapshot)
    }
    fn state_key(&mut self, event: &str) -> Result<String, CoreError> {
        CoreGateway::state_key(self.gateway(), event)
    }
    fn decide_keyed(
        &mut self,
        event: &str,
        line: u32,
        state: Option<&[u8]>,
    ) -> Result<(String, Option<Vec<u8>>), CoreError> {
        CoreGateway::decide_keyed(self.gateway(), event, line, state)
    }
}

impl Core for CoreGateway {
    fn create(config: &str) -> Result<Self, CoreError> {
        CoreGateway::from_config(config)
    }
    fn gateway(&mut self) -> &mut CoreGateway {
        self
    }
}

/// The component, exporting the policy of `C`.
pub struct Component<C>(std::marker::PhantomData<C>);

/// The component of the real gateway.
pub type Policy = Component<CoreGateway>;

#[cfg(feature = "export")]
bindings::export_policy!(Policy with_types_in bindings);

/// The `gateway` resource: the core behind a `RefCell` (WIT methods take `&self`).
pub struct Resource<C>(RefCell<C>);

impl From<CoreError> for PolicyError {
    fn from(e: CoreError) -> Self {
        let kind = match e.kind {
            ErrorKind::Config => WitKind::Config,
            ErrorKind::Snapshot => WitKind::Snapshot,
            ErrorKind::TooLarge => WitKind::TooLarge,
            ErrorKind::Input => WitKind::Input,
        };
        PolicyError { kind, path: e.path, reason: e.reason }
    }
}

impl<C: Core> Guest for Component<C> {
    fn version() -> String {
        C::version()
    }

    fn interface_version() -> String {
        C::interface_version()
    }

    fn replay(config: String, trace: String) -> Result<String, PolicyError> {
        Ok(C::replay(&config, &trace)?)
    }
}

impl<C: Core> GuardGuest for Component<C> {
    type Gateway = Resource<C>;
}

impl<C: Core> GuestGateway for Resource<C> {
    fn create(config: String) -> Result<Gateway, PolicyError> {
        Ok(Gateway::new(Resource(RefCell::new(C::create(&config)?))))
    }

    fn check_tool_call(&self, call: ToolCall) -> Result<ToolVerdict, PolicyError> {
        check(&mut *self.0.borrow_mut(), &call)
    }

    fn record_tool_outcome(&self, call: ToolCall, outcome: ToolOutcome) -> Result<OutcomeVerdict, PolicyError> {
        record(&mut *self.0.borrow_mut(), call, &outcome)
    }

    fn compaction_retried(&self, session: String, run: Option<String>, agent: Option<String>) -> CompactionVerdict {
        compaction(&mut *self.0.borrow_mut(), &Compaction { session, run, agent })
    }

    fn end_session(&self, session: String) {
        self.0.borrow_mut().gateway().end_session(&session);
    }

    fn check_bot_message(&self, m: BotMessage) -> Result<BotVerdict, PolicyError> {
        bot(&mut *self.0.borrow_mut(), &m)
    }

    fn start_group_thread(&self, thread: GroupThread, peer: String, text: String) -> GroupStart {
        group_start(&mut *self.0.borrow_mut(), &GroupMessage { thread, peer, text })
    }

    fn finish_group_round(&self, thread: GroupThread, replies: Vec<GroupReply>) -> GroupStep {
        group_finals(&mut *self.0.borrow_mut(), GroupFinals { thread, replies })
    }

    fn cancel_group_thread(&self, t: GroupThread) -> GroupStep {
        step(self.0.borrow_mut().gateway().cancel_group_thread(&thread(&t)))
    }

    fn apply_events(&self, events: String, first_line: u32) -> Result<String, PolicyError> {
        Ok(self.0.borrow_mut().apply_events(&events, first_line)?)
    }

    fn export_state(&self) -> Vec<u8> {
        self.0.borrow_mut().export_state()
    }

    fn import_state(&self, snapshot: Vec<u8>) -> Result<(), PolicyError> {
        Ok(self.0.borrow_mut().import_state(&snapshot)?)
    }

    fn state_key(&self, event: String) -> Result<String, PolicyError> {
        Ok(self.0.borrow_mut().state_key(&event)?)
    }

    fn decide_keyed(&self, event: String, line: u32, state: Option<Vec<u8>>) -> Result<KeyedDecision, PolicyError> {
        let (decision, state) = self.0.borrow_mut().decide_keyed(&event, line, state.as_deref())?;
        Ok(KeyedDecision { decision, state })
    }

    fn key_of(&self, call: Call) -> String {
        match &call {
            Call::CheckToolCall(c) | Call::RecordToolOutcome((c, _)) => KeyOf::Session(&c.session).text(),
            Call::CompactionRetried(c) => KeyOf::Session(&c.session).text(),
            Call::CheckBotMessage(m) => KeyOf::Bot { account: &m.account, conversation: &m.conversation }.text(),
            Call::StartGroupThread(m) => KeyOf::Group(&thread(&m.thread)).text(),
            Call::FinishGroupRound(f) => KeyOf::Group(&thread(&f.thread)).text(),
            Call::CancelGroupThread(t) => KeyOf::Group(&thread(t)).text(),
        }
    }

    fn decide_call(&self, call: Call, state: Option<Vec<u8>>) -> Result<KeyedVerdict, PolicyError> {
        let mut core = self.0.borrow_mut();
        let own = core.gateway().set_aside();
        let result = on_key_state(&mut *core, state.as_deref(), call);
        core.gateway().restore(own);
        let (verdict, state) = result?;
        Ok(KeyedVerdict { verdict, state })
    }

    fn apply_calls(&self, calls: Vec<Call>) -> Vec<Result<Verdict, PolicyError>> {
        let mut core = self.0.borrow_mut();
        let mut made = Vec::with_capacity(calls.len());
        for call in calls {
            let result = make(&mut *core, call);
            let failed = result.is_err();
            made.push(result);
            if failed {
                break;
            }
        }
        made
    }

    fn stats(&self) -> WitStats {
        let Stats { sessions, evicted_sessions, bot_pairs, evicted_pairs, group_threads } =
            self.0.borrow_mut().gateway().stats();
        WitStats {
            sessions,
            evicted_sessions,
            bot_pairs,
            evicted_pairs,
            group_threads,
            memory_bytes: core::arch::wasm32::memory_size(0) as u64 * 65_536,
        }
    }
}

/// `call` decided on a key's `state` (the gateway's own state set aside by the caller).
fn on_key_state<C: Core>(
    core: &mut C,
    state: Option<&[u8]>,
    call: Call,
) -> Result<(Verdict, Option<Vec<u8>>), PolicyError> {
    if let Some(blob) = state {
        core.import_state(blob)?;
    }
    let verdict = make(core, call)?;
    Ok((verdict, core.gateway().key_state()))
}

/// Makes one call as its own method would.
fn make<C: Core>(core: &mut C, call: Call) -> Result<Verdict, PolicyError> {
    Ok(match call {
        Call::CheckToolCall(c) => Verdict::CheckToolCall(check(core, &c)?),
        Call::RecordToolOutcome((c, o)) => Verdict::RecordToolOutcome(record(core, c, &o)?),
        Call::CompactionRetried(c) => Verdict::CompactionRetried(compaction(core, &c)),
        Call::CheckBotMessage(m) => Verdict::CheckBotMessage(bot(core, &m)?),
        Call::StartGroupThread(m) => Verdict::StartGroupThread(group_start(core, &m)),
        Call::FinishGroupRound(f) => Verdict::FinishGroupRound(group_finals(core, f)),
        Call::CancelGroupThread(t) => Verdict::CancelGroupThread(step(core.gateway().cancel_group_thread(&thread(&t)))),
    })
}

fn check<C: Core>(core: &mut C, call: &ToolCall) -> Result<ToolVerdict, PolicyError> {
    let v = core.check_tool_call(&core_call(call))?;
    Ok(ToolVerdict {
        action: match v.action {
            tl::ToolAction::Allow => ToolAction::Allow,
            tl::ToolAction::Warn => ToolAction::Warn,
            tl::ToolAction::Block => ToolAction::Block,
        },
        detector: v.detector.map(|d| d.as_str().to_string()),
        count: v.count,
        message: v.message,
        notify: v.notify,
    })
}

fn record<C: Core>(core: &mut C, call: ToolCall, outcome: &ToolOutcome) -> Result<OutcomeVerdict, PolicyError> {
    let keys = core.gateway().config().lone_keys();
    let (text, path, threw) = match outcome {
        ToolOutcome::Returned(text) => (text, "outcome.result", false),
        ToolOutcome::Threw(text) => (text, "outcome.error", true),
    };
    let value = json_value_with(text, path, keys)?;
    let o = if threw { Outcome::Error(&value) } else { Outcome::Result(&value) };
    Ok(match core.record_tool_outcome(&core_call(&call), o)? {
        tl::OutcomeVerdict::Recorded => OutcomeVerdict::Recorded,
        tl::OutcomeVerdict::Ignored => OutcomeVerdict::Ignored,
        tl::OutcomeVerdict::Abort { detector, count, message } => OutcomeVerdict::Abort(AbortInfo {
            detector: detector.as_str().to_string(),
            count,
            tool: call.tool,
            message,
        }),
    })
}

fn compaction<C: Core>(core: &mut C, c: &Compaction) -> CompactionVerdict {
    match core.gateway().compaction_retried(&c.session, c.run.as_deref(), c.agent.as_deref()) {
        tl::CompactionVerdict::Armed(n) => CompactionVerdict::Armed(n),
        tl::CompactionVerdict::Disabled => CompactionVerdict::Disabled,
    }
}

fn bot<C: Core>(core: &mut C, m: &BotMessage) -> Result<BotVerdict, PolicyError> {
    let message = trace::BotMessage {
        channel: &m.channel,
        account: &m.account,
        conversation: &m.conversation,
        room: m.room.as_deref().unwrap_or(&m.conversation),
        sender: &m.sender,
        receiver: &m.receiver,
        ts_ms: m.ts_ms,
        event_id: m.event_id.as_deref(),
    };
    Ok(match core.gateway().check_bot_message(&message)? {
        bl::BotDecision::Allow => BotVerdict::Allow,
        bl::BotDecision::Suppress { cooldown_until_ms, budget } => BotVerdict::Suppress(Suppression {
            cooldown_until_ms,
            budget: match budget {
                bl::Budget::Pair => Budget::Pair,
                bl::Budget::Burst => Budget::Burst,
            },
        }),
    })
}

fn group_start<C: Core>(core: &mut C, m: &GroupMessage) -> GroupStart {
    let message = trace::GroupMessage { thread: thread(&m.thread), peer: &m.peer, text: &m.text };
    match core.gateway().start_group_thread(&message) {
        gr::GroupStart::Round { round, participants } => GroupStart::Round(GroupRound { round, participants }),
        gr::GroupStart::Legacy { participants } => GroupStart::Legacy(participants),
        gr::GroupStart::None => GroupStart::None,
    }
}

fn group_finals<C: Core>(core: &mut C, f: GroupFinals) -> GroupStep {
    let replies: Vec<gr::Reply> = f.replies.into_iter().map(|r| gr::Reply { agent: r.agent, reply: r.reply }).collect();
    step(core.gateway().finish_group_round(&thread(&f.thread), &replies))
}

fn core_call(c: &ToolCall) -> tl::ToolCall<'_> {
    tl::ToolCall {
        session: &c.session,
        tool: &c.tool,
        args: tl::Args::Text(&c.args_json),
        run: c.run.as_deref(),
        agent: c.agent.as_deref(),
        call_id: c.call_id.as_deref(),
    }
}

fn thread(t: &GroupThread) -> trace::GroupThread<'_> {
    trace::GroupThread {
        channel: &t.channel,
        account: &t.account,
        conversation: &t.conversation,
        thread: t.thread.as_deref(),
        root: &t.root,
    }
}

fn step(s: gr::GroupStep) -> GroupStep {
    match s {
        gr::GroupStep::Round { round, participants } => GroupStep::Round(GroupRound { round, participants }),
        gr::GroupStep::Stop(reason) => GroupStep::Stop(match reason {
            gr::StopReason::AllPassed => StopReason::AllPassed,
            gr::StopReason::MaxRounds => StopReason::MaxRounds,
            gr::StopReason::MaxTurns => StopReason::MaxTurns,
            gr::StopReason::NoEligible => StopReason::NoEligible,
            gr::StopReason::Cancelled => StopReason::Cancelled,
        }),
    }
}
