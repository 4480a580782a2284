//! The WIT boundary: converts between WIT and core types and calls the core. Nothing here
//! decides anything about loops or budgets.

use std::cell::RefCell;

use crate::config::Config;
use crate::error::PolicyError as CoreError;
use crate::gateway::Gateway as Core;
use crate::json::{self, Json};
use crate::tool_loop::{self as tl, Outcome};

wit_bindgen::generate!({ path: "../wit", world: "policy" });

use exports::loopguard::policy::guard::{Gateway, Guest as GuardGuest, GuestGateway};
use loopguard::policy::types::{
    AbortInfo, CompactionVerdict, Detector, GatewayStats, OutcomeVerdict, ToolAction, ToolCall,
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

fn parse_json(text: &str, path: &str) -> Result<Json, PolicyError> {
    if text.len() > crate::trace::MAX_EVENT_BYTES {
        return Err(PolicyError {
            path: path.into(),
            reason: format!("{} bytes; values larger than {} bytes are refused", text.len(), crate::trace::MAX_EVENT_BYTES),
        });
    }
    json::parse(text).map_err(|e| PolicyError { path: path.into(), reason: format!("not valid JSON: {e}") })
}

fn core_call<'a>(c: &'a ToolCall, args: &'a Json) -> tl::ToolCall<'a> {
    tl::ToolCall {
        session: &c.session,
        tool: &c.tool,
        args,
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
        let args = parse_json(&call.args_json, "call.args-json")?;
        let v = self.0.borrow_mut().check_tool_call(&core_call(&call, &args));
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
        let args = parse_json(&call.args_json, "call.args-json")?;
        let value = match &outcome {
            ToolOutcome::Returned(text) => parse_json(text, "outcome.result")?,
            ToolOutcome::Threw(text) => parse_json(text, "outcome.error")?,
        };
        let o = match outcome {
            ToolOutcome::Returned(_) => Outcome::Result(&value),
            ToolOutcome::Threw(_) => Outcome::Error(&value),
        };
        let v = self.0.borrow_mut().record_tool_outcome(&core_call(&call, &args), o);
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
}

export!(Component);
