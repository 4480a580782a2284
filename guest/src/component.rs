//! The WIT boundary: converts between WIT and core types and calls the core. Nothing here
//! decides anything about loops or budgets.

use std::cell::RefCell;

use crate::bot_loop as bl;
use crate::config::Config;
use crate::error::PolicyError as CoreError;
use crate::gateway::Gateway as Core;
use crate::group as gr;
use crate::json::{self, Json};
use crate::tool_loop::{self as tl, Outcome};
use crate::trace;

wit_bindgen::generate!({ path: "../wit", world: "policy" });

use exports::loopguard::policy::guard::{Gateway, Guest as GuardGuest, GuestGateway};
use loopguard::policy::types::{
    AbortInfo, BotMessage, BotStats, BotVerdict, Budget, CompactionVerdict, Detector, GatewayStats, GroupReply,
    GroupRound, GroupStart, GroupStep, GroupThread, OutcomeVerdict, StopReason, Suppression, ToolAction, ToolCall,
    ToolOutcome, ToolVerdict,
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
}

/// The `gateway` resource: the core gateway behind a `RefCell` (WIT methods take `&self`).
struct GatewayResource(RefCell<Core>);

fn parse_json<'a>(text: &'a str, path: &str) -> Result<Json<'a>, PolicyError> {
    check_size(text, path)?;
    json::parse(text).map_err(|e| PolicyError { path: path.into(), reason: format!("not valid JSON: {e}") })
}

fn check_size(text: &str, path: &str) -> Result<(), PolicyError> {
    if text.len() > crate::trace::MAX_EVENT_BYTES {
        return Err(PolicyError {
            path: path.into(),
            reason: format!(
                "{} bytes; values larger than {} bytes are refused",
                text.len(),
                crate::trace::MAX_EVENT_BYTES
            ),
        });
    }
    Ok(())
}

fn core_call<'a>(c: &'a ToolCall, args: &'a Json<'a>) -> tl::ToolCall<'a> {
    tl::ToolCall {
        session: &c.session,
        tool: &c.tool,
        args,
        run: c.run.as_deref(),
        agent: c.agent.as_deref(),
        call_id: c.call_id.as_deref(),
    }
}

fn call_ref(c: &ToolCall) -> tl::CallRef<'_> {
    tl::CallRef {
        session: &c.session,
        tool: &c.tool,
        run: c.run.as_deref(),
        agent: c.agent.as_deref(),
        call_id: c.call_id.as_deref(),
    }
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

impl GuestGateway for GatewayResource {
    fn create(config: String) -> Result<Gateway, PolicyError> {
        let config = Config::parse(&config).map_err(CoreError::from)?;
        Ok(Gateway::new(GatewayResource(RefCell::new(Core::new(config)))))
    }

    fn check_tool_call(&self, call: ToolCall) -> Result<ToolVerdict, PolicyError> {
        check_size(&call.args_json, "call.args-json")?;
        // Plain arguments are fingerprinted straight from their text; the rest are parsed.
        let fast = self.0.borrow_mut().check_tool_call_fast(&call_ref(&call), &call.args_json);
        let v = match fast {
            Some(v) => v,
            None => {
                let args = parse_json(&call.args_json, "call.args-json")?;
                self.0.borrow_mut().check_tool_call_text(&core_call(&call, &args), Some(&call.args_json))
            }
        };
        Ok(ToolVerdict {
            action: match v.action {
                tl::ToolAction::Allow => ToolAction::Allow,
                tl::ToolAction::Warn => ToolAction::Warn,
                tl::ToolAction::Block => ToolAction::Block,
            },
            detector: v.detector.map(detector),
            count: v.count,
            message: v.message,
            notify: v.notify,
        })
    }

    fn record_tool_outcome(&self, call: ToolCall, outcome: ToolOutcome) -> Result<OutcomeVerdict, PolicyError> {
        let mut core = self.0.borrow_mut();
        let meta = call_ref(&call);
        // The check of this call usually came just before with the same text: reuse its facts
        // instead of parsing the arguments again.
        let facts = match core.recall_call(&meta, &call.args_json) {
            Some(f) => f,
            None => {
                check_size(&call.args_json, "call.args-json")?;
                match core.text_call_facts(&call.tool, &call.args_json, call.run.as_deref()) {
                    Some(f) => f,
                    None => {
                        let args = parse_json(&call.args_json, "call.args-json")?;
                        core.call_facts(&call.tool, &args, call.run.as_deref())
                    }
                }
            }
        };
        let value = match &outcome {
            ToolOutcome::Returned(text) => parse_json(text, "outcome.result")?,
            ToolOutcome::Threw(text) => parse_json(text, "outcome.error")?,
        };
        let o = match outcome {
            ToolOutcome::Returned(_) => Outcome::Result(&value),
            ToolOutcome::Threw(_) => Outcome::Error(&value),
        };
        let v = core.record_tool_outcome_facts(&meta, &facts, o);
        drop(core);
        Ok(match v {
            tl::OutcomeVerdict::Recorded => OutcomeVerdict::Recorded,
            tl::OutcomeVerdict::Ignored => OutcomeVerdict::Ignored,
            tl::OutcomeVerdict::Abort { count, message } => OutcomeVerdict::Abort(AbortInfo {
                detector: Detector::CompactionLoopPersisted,
                count,
                tool: call.tool,
                message,
            }),
        })
    }

    fn compaction_retried(&self, session: String, run: Option<String>, agent: Option<String>) -> CompactionVerdict {
        match self.0.borrow_mut().compaction_retried(&session, run.as_deref(), agent.as_deref()) {
            tl::CompactionVerdict::Armed(n) => CompactionVerdict::Armed(n),
            tl::CompactionVerdict::Disabled => CompactionVerdict::Disabled,
        }
    }

    fn end_session(&self, session: String) {
        self.0.borrow_mut().end_session(&session);
    }

    fn apply_events(&self, events: String, first_line: u32) -> Result<String, PolicyError> {
        Ok(self.0.borrow_mut().apply_events(&events, first_line)?)
    }

    fn export_state(&self) -> Vec<u8> {
        self.0.borrow().export_state()
    }

    fn import_state(&self, snapshot: Vec<u8>) -> Result<(), PolicyError> {
        Ok(self.0.borrow_mut().import_state(&snapshot)?)
    }

    fn stats(&self) -> GatewayStats {
        let s = self.0.borrow().stats();
        GatewayStats { sessions: s.sessions, evicted_sessions: s.evicted_sessions }
    }

    fn check_bot_message(&self, m: BotMessage) -> Result<BotVerdict, PolicyError> {
        if m.ts_ms < 0 {
            return Err(PolicyError {
                path: "message.ts-ms".into(),
                reason: format!("must be a non-negative timestamp in milliseconds, not {}", m.ts_ms),
            });
        }
        let msg = trace::BotMessage {
            channel: &m.channel,
            account: &m.account,
            conversation: &m.conversation,
            room: m.room.as_deref().unwrap_or(&m.conversation),
            sender: &m.sender,
            receiver: &m.receiver,
            ts_ms: m.ts_ms,
            event_id: m.event_id.as_deref(),
        };
        Ok(match self.0.borrow_mut().bot_message(&msg) {
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

    fn start_group_thread(&self, t: GroupThread, peer: String, text: String) -> GroupStart {
        let m = trace::GroupMessage { thread: thread(&t), peer: &peer, text: &text };
        match self.0.borrow_mut().group_message(&m) {
            gr::GroupStart::Round { round, participants } => GroupStart::Round(GroupRound { round, participants }),
            gr::GroupStart::Legacy { participants } => GroupStart::Legacy(participants),
            gr::GroupStart::None => GroupStart::None,
        }
    }

    fn finish_group_round(&self, t: GroupThread, replies: Vec<GroupReply>) -> GroupStep {
        let replies: Vec<gr::Reply> =
            replies.into_iter().map(|r| gr::Reply { agent: r.agent, reply: r.reply }).collect();
        step(self.0.borrow_mut().group_replies(&thread(&t), &replies))
    }

    fn cancel_group_thread(&self, t: GroupThread) -> GroupStep {
        step(self.0.borrow_mut().group_cancel(&thread(&t)))
    }

    fn bot_stats(&self) -> BotStats {
        let s = self.0.borrow().stats();
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
