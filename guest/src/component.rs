//! The WIT boundary: converts between WIT and core types and calls the core. Nothing here
//! decides anything about loops or budgets.

use std::cell::RefCell;
use std::rc::Rc;

use crate::bot_loop as bl;
use crate::config::Config;
use crate::error::PolicyError as CoreError;
use crate::gateway::Gateway as Core;
use crate::group as gr;
use crate::json::{self, Json};
use crate::packed::Fields;
use crate::registry::Registry;
use crate::tool_loop::{self as tl, Outcome};
use crate::trace;

wit_bindgen::generate!({ path: "../wit", world: "policy" });

use exports::loopguard::policy::guard::{Gateway, Guest as GuardGuest, GuestGateway};
use loopguard::policy::types::{
    AbortInfo, BotMessage, BotStats, BotVerdict, Budget, CompactionVerdict, Detector, GatewayStats, GroupReply,
    GroupRound, GroupStart, GroupStep, GroupThread, OutcomeVerdict, OutcomeVerdictQuick, StopReason, Suppression,
    ToolAction, ToolCall, ToolOutcome, ToolVerdict, ToolVerdictQuick,
};

struct Component;

impl From<CoreError> for PolicyError {
    fn from(e: CoreError) -> Self {
        PolicyError { path: e.path, reason: e.reason }
    }
}

impl Guest for Component {
    fn version() -> String {
        crate::POLICY_VERSION.to_string()
    }

    fn interface_version() -> String {
        crate::INTERFACE_VERSION.to_string()
    }

    fn replay(config: String, trace: String) -> Result<String, PolicyError> {
        Ok(crate::replay::replay(&config, &trace)?)
    }
}

impl GuardGuest for Component {
    type Gateway = GatewayResource;

    #[allow(clippy::too_many_arguments)] // as `check_bot_message_packed`
    fn check_bot_message_quick(
        gateway: u64,
        fields: String,
        channel_len: u32,
        account_len: u32,
        conversation_len: u32,
        room_len: Option<u32>,
        sender_len: u32,
        receiver_len: u32,
        ts_ms: i64,
        event_id_len: Option<u32>,
    ) -> Result<BotVerdict, ()> {
        let lens =
            BotLens { channel_len, account_len, conversation_len, room_len, sender_len, receiver_len, event_id_len };
        live_gateway(gateway)
            .and_then(|core| bot_fields(&fields, &lens, ts_ms).and_then(|m| check_bot(&core, &m)))
            .map_err(remember)
    }

    fn last_error() -> Option<PolicyError> {
        LAST_ERROR.with(|e| e.borrow().clone())
    }

    fn check_tool_call_quick(
        gateway: u64,
        fields: String,
        session_len: u32,
        tool_len: u32,
        run_len: Option<u32>,
        agent_len: Option<u32>,
        call_id_len: Option<u32>,
    ) -> Result<ToolVerdictQuick, ()> {
        let lens =
            CallLens { session: session_len, tool: tool_len, run: run_len, agent: agent_len, call_id: call_id_len };
        let checked = live_gateway(gateway).and_then(|core| check_call(&core, &CallText::packed_call(&fields, lens)?));
        let v = checked.map_err(remember)?;
        if let Some(message) = v.message {
            keep_message(message);
        }
        Ok(ToolVerdictQuick {
            action: action(v.action),
            detector: v.detector.map(detector),
            count: v.count,
            notify: v.notify,
        })
    }

    #[allow(clippy::too_many_arguments)] // as `record_tool_outcome_packed`
    fn record_tool_outcome_quick(
        gateway: u64,
        fields: String,
        session_len: u32,
        tool_len: u32,
        run_len: Option<u32>,
        agent_len: Option<u32>,
        call_id_len: Option<u32>,
        args_len: u32,
        threw: bool,
    ) -> Result<OutcomeVerdictQuick, ()> {
        let lens =
            CallLens { session: session_len, tool: tool_len, run: run_len, agent: agent_len, call_id: call_id_len };
        let recorded = live_gateway(gateway).and_then(|core| {
            let (call, outcome) = CallText::packed_outcome(&fields, lens, args_len)?;
            record_outcome(&core, &call, outcome, threw)
        });
        Ok(match recorded.map_err(remember)? {
            tl::OutcomeVerdict::Recorded => OutcomeVerdictQuick::Recorded,
            tl::OutcomeVerdict::Ignored => OutcomeVerdictQuick::Ignored,
            tl::OutcomeVerdict::Abort { count, message } => {
                keep_message(message);
                OutcomeVerdictQuick::Abort(count)
            }
        })
    }

    fn last_message() -> Option<String> {
        LAST_MESSAGE.with(|m| m.borrow().clone())
    }
}

/// The live gateway whose id is `gateway`, for the `-quick` functions.
fn live_gateway(gateway: u64) -> Result<Rc<RefCell<Core>>, PolicyError> {
    GATEWAYS.with(|g| g.borrow().get(gateway)).ok_or_else(|| PolicyError {
        path: "gateway".into(),
        reason: format!("is {gateway}, which is not the id of a live gateway of this instance"),
    })
}

/// The byte lengths of a packed bot message's fields (`check-bot-message-packed`).
struct BotLens {
    channel_len: u32,
    account_len: u32,
    conversation_len: u32,
    room_len: Option<u32>,
    sender_len: u32,
    receiver_len: u32,
    event_id_len: Option<u32>,
}

/// The bot message packed in `fields`; a bad length is an error naming its parameter.
fn bot_fields<'a>(fields: &'a str, l: &BotLens, ts_ms: i64) -> Result<trace::BotMessage<'a>, PolicyError> {
    match cut_bot_fields(fields, l, ts_ms) {
        Some(m) => Ok(m),
        None => Err(bot_fields_error(fields, l)),
    }
}

/// [`bot_fields`] when every length is right (an `Option` travels in registers, a `Result`
/// carrying a `PolicyError` through memory, on each of seven fields).
fn cut_bot_fields<'a>(fields: &'a str, l: &BotLens, ts_ms: i64) -> Option<trace::BotMessage<'a>> {
    let mut rest = fields;
    let mut cut = |len: u32| -> Option<&'a str> {
        let (field, tail) = rest.split_at_checked(usize::try_from(len).ok()?)?;
        rest = tail;
        Some(field)
    };
    let channel = cut(l.channel_len)?;
    let account = cut(l.account_len)?;
    let conversation = cut(l.conversation_len)?;
    let room = match l.room_len {
        Some(len) => cut(len)?,
        None => conversation,
    };
    let sender = cut(l.sender_len)?;
    let receiver = cut(l.receiver_len)?;
    let event_id = match l.event_id_len {
        Some(len) => Some(cut(len)?),
        None => None,
    };
    rest.is_empty().then_some(trace::BotMessage {
        channel,
        account,
        conversation,
        room,
        sender,
        receiver,
        ts_ms,
        event_id,
    })
}

/// Which length of a packed bot message is wrong, worded by the `Fields` reader.
#[cold]
#[inline(never)]
fn bot_fields_error(fields: &str, l: &BotLens) -> PolicyError {
    let mut f = Fields::new(fields);
    let mut check = || -> Result<(), PolicyError> {
        f.take(l.channel_len, "channel-len")?;
        f.take(l.account_len, "account-len")?;
        f.take(l.conversation_len, "conversation-len")?;
        f.take_opt(l.room_len, "room-len")?;
        f.take(l.sender_len, "sender-len")?;
        f.take(l.receiver_len, "receiver-len")?;
        f.take_opt(l.event_id_len, "event-id-len")?;
        Ok(f.finish()?)
    };
    // The reader makes the same checks as `cut_bot_fields`, so one of them fails here.
    check().err().unwrap_or_else(|| PolicyError {
        path: "fields".into(),
        reason: "was refused, but every length checks out; please report this policy bug".into(),
    })
}

/// Checks a bot message on `core`.
fn check_bot(core: &RefCell<Core>, msg: &trace::BotMessage<'_>) -> Result<BotVerdict, PolicyError> {
    if msg.ts_ms < 0 {
        return Err(PolicyError {
            path: "message.ts-ms".into(),
            reason: format!("must be a non-negative timestamp in milliseconds, not {}", msg.ts_ms),
        });
    }
    Ok(match core.borrow_mut().bot_message(msg) {
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

/// Keeps `e` for `last-error`.
#[cold]
fn remember(e: PolicyError) {
    LAST_ERROR.with(|last| *last.borrow_mut() = Some(e));
}

/// Keeps a `-quick` tool verdict's message for `last-message`.
#[cold]
fn keep_message(message: String) {
    LAST_MESSAGE.with(|last| *last.borrow_mut() = Some(message));
}

/// The `gateway` resource: the core gateway behind a `RefCell` (WIT methods take `&self`),
/// shared with the registry that the id-taking functions look it up in.
struct GatewayResource {
    core: Rc<RefCell<Core>>,
    id: u64,
}

thread_local! {
    /// Every live gateway of this instance, by id (a component instance is single-threaded).
    static GATEWAYS: RefCell<Registry<RefCell<Core>>> = const { RefCell::new(Registry::new()) };
    /// The error of the last failed `-quick` call, for `last-error`.
    static LAST_ERROR: RefCell<Option<PolicyError>> = const { RefCell::new(None) };
    /// The message of the last `-quick` tool verdict that had one, for `last-message`.
    static LAST_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn parse_json<'a>(text: &'a str, path: &str) -> Result<Json<'a>, PolicyError> {
    check_size(text, path)?;
    json::parse(text).map_err(|e| PolicyError { path: path.into(), reason: format!("not valid JSON: {e}") })
}

#[inline(always)]
fn check_size(text: &str, path: &str) -> Result<(), PolicyError> {
    if text.len() > crate::trace::MAX_EVENT_BYTES {
        return Err(size_error(text, path));
    }
    Ok(())
}

/// The error of [`check_size`], out of line: the check itself is one comparison per call.
#[cold]
#[inline(never)]
fn size_error(text: &str, path: &str) -> PolicyError {
    PolicyError {
        path: path.into(),
        reason: format!("{} bytes; values larger than {} bytes are refused", text.len(), crate::trace::MAX_EVENT_BYTES),
    }
}

/// A tool call with every field borrowed: what the plain and the packed methods share.
struct CallText<'a> {
    meta: tl::CallRef<'a>,
    args_json: &'a str,
}

impl<'a> CallText<'a> {
    fn plain(c: &'a ToolCall) -> Self {
        CallText {
            meta: tl::CallRef {
                session: &c.session,
                tool: &c.tool,
                run: c.run.as_deref(),
                agent: c.agent.as_deref(),
                call_id: c.call_id.as_deref(),
            },
            args_json: &c.args_json,
        }
    }

    /// Reads session, tool, run, agent and call-id from `f` (the args are what follows).
    fn packed(f: &mut Fields<'a>, lens: CallLens) -> Result<tl::CallRef<'a>, PolicyError> {
        Ok(tl::CallRef {
            session: f.take(lens.session, "session-len")?,
            tool: f.take(lens.tool, "tool-len")?,
            run: f.take_opt(lens.run, "run-len")?,
            agent: f.take_opt(lens.agent, "agent-len")?,
            call_id: f.take_opt(lens.call_id, "call-id-len")?,
        })
    }

    /// A call packed as `check-tool-call-packed` takes it: the arguments are the rest.
    fn packed_call(fields: &'a str, lens: CallLens) -> Result<Self, PolicyError> {
        let mut f = Fields::new(fields);
        let meta = Self::packed(&mut f, lens)?;
        Ok(CallText { meta, args_json: f.rest() })
    }

    /// A call and its outcome packed as `record-tool-outcome-packed` takes them: `args_len`
    /// bytes of arguments, then the outcome's text.
    fn packed_outcome(fields: &'a str, lens: CallLens, args_len: u32) -> Result<(Self, &'a str), PolicyError> {
        let mut f = Fields::new(fields);
        let meta = Self::packed(&mut f, lens)?;
        let args_json = f.take(args_len, "args-len")?;
        Ok((CallText { meta, args_json }, f.rest()))
    }
}

/// The length parameters of a packed tool call, in `fields` order.
#[derive(Clone, Copy)]
struct CallLens {
    session: u32,
    tool: u32,
    run: Option<u32>,
    agent: Option<u32>,
    call_id: Option<u32>,
}

fn detector(d: tl::Detector) -> Detector {
    match d {
        tl::Detector::GenericRepeat => Detector::GenericRepeat,
        tl::Detector::KnownPollNoProgress => Detector::KnownPollNoProgress,
        tl::Detector::PingPong => Detector::PingPong,
        tl::Detector::UnknownToolRepeat => Detector::UnknownToolRepeat,
        tl::Detector::GlobalCircuitBreaker => Detector::GlobalCircuitBreaker,
        tl::Detector::CompactionLoopPersisted => Detector::CompactionLoopPersisted,
    }
}

fn action(a: tl::ToolAction) -> ToolAction {
    match a {
        tl::ToolAction::Allow => ToolAction::Allow,
        tl::ToolAction::Warn => ToolAction::Warn,
        tl::ToolAction::Block => ToolAction::Block,
    }
}

/// The check behind the plain, packed and quick tool functions, on borrowed fields.
fn check_call(core: &RefCell<Core>, c: &CallText<'_>) -> Result<tl::ToolVerdict, PolicyError> {
    check_size(c.args_json, "call.args-json")?;
    // Plain arguments are fingerprinted straight from their text; the rest are parsed.
    let fast = core.borrow_mut().check_tool_call_fast(&c.meta, c.args_json);
    Ok(match fast {
        Some(v) => v,
        None => {
            let args = parse_json(c.args_json, "call.args-json")?;
            let m = &c.meta;
            let call = tl::ToolCall {
                session: m.session,
                tool: m.tool,
                args: &args,
                run: m.run,
                agent: m.agent,
                call_id: m.call_id,
            };
            core.borrow_mut().check_tool_call_text(&call, Some(c.args_json))
        }
    })
}

/// The outcome behind the plain, packed and quick tool functions: `outcome` is the result's
/// JSON text, or the error's if `threw`.
fn record_outcome(
    core: &RefCell<Core>,
    c: &CallText<'_>,
    outcome: &str,
    threw: bool,
) -> Result<tl::OutcomeVerdict, PolicyError> {
    let mut core = core.borrow_mut();
    let meta = &c.meta;
    // The check of this call usually came just before with the same text: reuse its facts
    // instead of parsing the arguments again.
    let facts = match core.recall_call(meta, c.args_json) {
        Some(f) => f,
        None => {
            check_size(c.args_json, "call.args-json")?;
            match core.text_call_facts(meta.tool, c.args_json, meta.run) {
                Some(f) => f,
                None => {
                    let args = parse_json(c.args_json, "call.args-json")?;
                    core.call_facts(meta.tool, &args, meta.run)
                }
            }
        }
    };
    let path = if threw { "outcome.error" } else { "outcome.result" };
    check_size(outcome, path)?;
    let fast = if threw { None } else { core.record_tool_result_text(meta, &facts, outcome) };
    Ok(match fast {
        Some(v) => v,
        None => {
            let value = parse_json(outcome, path)?;
            let o = if threw { Outcome::Error(&value) } else { Outcome::Result(&value) };
            core.record_tool_outcome_facts(meta, &facts, o)
        }
    })
}

/// The plain and packed methods' verdicts, with their text.
impl GatewayResource {
    fn check_call(&self, c: &CallText<'_>) -> Result<ToolVerdict, PolicyError> {
        let v = check_call(&self.core, c)?;
        Ok(ToolVerdict {
            action: action(v.action),
            detector: v.detector.map(detector),
            count: v.count,
            message: v.message,
            notify: v.notify,
        })
    }

    fn record_outcome(&self, c: &CallText<'_>, outcome: &str, threw: bool) -> Result<OutcomeVerdict, PolicyError> {
        Ok(match record_outcome(&self.core, c, outcome, threw)? {
            tl::OutcomeVerdict::Recorded => OutcomeVerdict::Recorded,
            tl::OutcomeVerdict::Ignored => OutcomeVerdict::Ignored,
            tl::OutcomeVerdict::Abort { count, message } => OutcomeVerdict::Abort(AbortInfo {
                detector: Detector::CompactionLoopPersisted,
                count,
                tool: c.meta.tool.to_string(),
                message,
            }),
        })
    }
}

impl GuestGateway for GatewayResource {
    fn create(config: String) -> Result<Gateway, PolicyError> {
        let config = Config::parse(&config).map_err(CoreError::from)?;
        let core = Rc::new(RefCell::new(Core::new(config)));
        let id = GATEWAYS.with(|g| g.borrow_mut().register(&core));
        Ok(Gateway::new(GatewayResource { core, id }))
    }

    fn check_tool_call(&self, call: ToolCall) -> Result<ToolVerdict, PolicyError> {
        self.check_call(&CallText::plain(&call))
    }

    fn record_tool_outcome(&self, call: ToolCall, outcome: ToolOutcome) -> Result<OutcomeVerdict, PolicyError> {
        let (text, threw) = match &outcome {
            ToolOutcome::Returned(text) => (text.as_str(), false),
            ToolOutcome::Threw(text) => (text.as_str(), true),
        };
        self.record_outcome(&CallText::plain(&call), text, threw)
    }

    fn check_tool_call_packed(
        &self,
        fields: String,
        session_len: u32,
        tool_len: u32,
        run_len: Option<u32>,
        agent_len: Option<u32>,
        call_id_len: Option<u32>,
    ) -> Result<ToolVerdict, PolicyError> {
        let lens =
            CallLens { session: session_len, tool: tool_len, run: run_len, agent: agent_len, call_id: call_id_len };
        self.check_call(&CallText::packed_call(&fields, lens)?)
    }

    #[allow(clippy::too_many_arguments)] // flat scalars on purpose: see `check-tool-call-packed` in the WIT
    fn record_tool_outcome_packed(
        &self,
        fields: String,
        session_len: u32,
        tool_len: u32,
        run_len: Option<u32>,
        agent_len: Option<u32>,
        call_id_len: Option<u32>,
        args_len: u32,
        threw: bool,
    ) -> Result<OutcomeVerdict, PolicyError> {
        let lens =
            CallLens { session: session_len, tool: tool_len, run: run_len, agent: agent_len, call_id: call_id_len };
        let (call, outcome) = CallText::packed_outcome(&fields, lens, args_len)?;
        self.record_outcome(&call, outcome, threw)
    }

    fn compaction_retried(&self, session: String, run: Option<String>, agent: Option<String>) -> CompactionVerdict {
        match self.core.borrow_mut().compaction_retried(&session, run.as_deref(), agent.as_deref()) {
            tl::CompactionVerdict::Armed(n) => CompactionVerdict::Armed(n),
            tl::CompactionVerdict::Disabled => CompactionVerdict::Disabled,
        }
    }

    fn end_session(&self, session: String) {
        self.core.borrow_mut().end_session(&session);
    }

    fn apply_events(&self, events: String, first_line: u32) -> Result<String, PolicyError> {
        Ok(self.core.borrow_mut().apply_events(&events, first_line)?)
    }

    fn export_state(&self) -> Vec<u8> {
        self.core.borrow().export_state()
    }

    fn import_state(&self, snapshot: Vec<u8>) -> Result<(), PolicyError> {
        Ok(self.core.borrow_mut().import_state(&snapshot)?)
    }

    fn stats(&self) -> GatewayStats {
        let s = self.core.borrow().stats();
        GatewayStats { sessions: s.sessions, evicted_sessions: s.evicted_sessions }
    }

    fn check_bot_message(&self, m: BotMessage) -> Result<BotVerdict, PolicyError> {
        check_bot(
            &self.core,
            &trace::BotMessage {
                channel: &m.channel,
                account: &m.account,
                conversation: &m.conversation,
                room: m.room.as_deref().unwrap_or(&m.conversation),
                sender: &m.sender,
                receiver: &m.receiver,
                ts_ms: m.ts_ms,
                event_id: m.event_id.as_deref(),
            },
        )
    }

    #[allow(clippy::too_many_arguments)] // flat scalars on purpose: see `check-bot-message-packed` in the WIT
    fn check_bot_message_packed(
        &self,
        fields: String,
        channel_len: u32,
        account_len: u32,
        conversation_len: u32,
        room_len: Option<u32>,
        sender_len: u32,
        receiver_len: u32,
        ts_ms: i64,
        event_id_len: Option<u32>,
    ) -> Result<BotVerdict, PolicyError> {
        let lens =
            BotLens { channel_len, account_len, conversation_len, room_len, sender_len, receiver_len, event_id_len };
        check_bot(&self.core, &bot_fields(&fields, &lens, ts_ms)?)
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn start_group_thread(&self, t: GroupThread, peer: String, text: String) -> GroupStart {
        let m = trace::GroupMessage { thread: thread(&t), peer: &peer, text: &text };
        match self.core.borrow_mut().group_message(&m) {
            gr::GroupStart::Round { round, participants } => GroupStart::Round(GroupRound { round, participants }),
            gr::GroupStart::Legacy { participants } => GroupStart::Legacy(participants),
            gr::GroupStart::None => GroupStart::None,
        }
    }

    fn finish_group_round(&self, t: GroupThread, replies: Vec<GroupReply>) -> GroupStep {
        let replies: Vec<gr::Reply> =
            replies.into_iter().map(|r| gr::Reply { agent: r.agent, reply: r.reply }).collect();
        step(self.core.borrow_mut().group_replies(&thread(&t), &replies))
    }

    fn cancel_group_thread(&self, t: GroupThread) -> GroupStep {
        step(self.core.borrow_mut().group_cancel(&thread(&t)))
    }

    fn bot_stats(&self) -> BotStats {
        let s = self.core.borrow().stats();
        BotStats {
            pairs: s.bot_pairs,
            evicted_pairs: s.evicted_pairs,
            group_threads: s.group_threads,
            memory_bytes: core::arch::wasm32::memory_size(0) as u64 * 65_536,
        }
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

export!(Component);
