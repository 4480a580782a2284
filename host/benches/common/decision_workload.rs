//! One tool-call decision of the workload on each side of the ratio, shared by the decision
//! benchmark (`benches/decision.rs`) and the profiling aid (`examples/wasm_profile.rs`), so that
//! what is profiled is what is measured: the host's typed call for an event, and the same
//! decision done natively exactly as the component does it.

use std::hint::black_box;

use loopguard_host::{ToolCall, ToolOutcome};
use loopguard_policy::gateway::Gateway as Native;
use loopguard_policy::json;
use loopguard_policy::tool_loop::{CallRef, Outcome, ToolCall as NativeCall};
use loopguard_tests::workload::Event;

/// The host's call and outcome for an event (run `run-1`, no agent, no call id).
pub fn wasm_call(e: &Event) -> (ToolCall, ToolOutcome) {
    let call = ToolCall {
        session: e.session.clone(),
        tool: e.tool.into(),
        args_json: e.args.clone(),
        run: Some("run-1".into()),
        agent: None,
        call_id: None,
    };
    (call, ToolOutcome::Returned(e.result.clone()))
}

/// What the component does for one decision, natively: fingerprint the arguments straight from
/// their text (parsing them only when that gives up) and check; on the outcome, reuse the
/// checked call's facts (the arguments are not read again) and hash the result straight from its
/// text (parsing it only when that gives up).
pub fn native_decide(gw: &mut Native, e: &Event) {
    let meta = CallRef { session: &e.session, tool: e.tool, run: Some("run-1"), agent: None, call_id: None };
    let verdict = match gw.check_tool_call_fast(&meta, &e.args) {
        Some(v) => v,
        None => {
            let args = json::parse(&e.args).expect("valid args");
            let call = NativeCall {
                session: &e.session,
                tool: e.tool,
                args: &args,
                run: meta.run,
                agent: None,
                call_id: None,
            };
            gw.check_tool_call_text(&call, Some(&e.args))
        }
    };
    black_box(verdict);
    let facts = match gw.recall_call(&meta, &e.args) {
        Some(f) => f,
        None => gw.call_facts(e.tool, &json::parse(&e.args).expect("valid args"), meta.run),
    };
    let verdict = match gw.record_tool_result_text(&meta, &facts, &e.result) {
        Some(v) => v,
        None => {
            let result = json::parse(&e.result).expect("valid result");
            gw.record_tool_outcome_facts(&meta, &facts, Outcome::Result(&result))
        }
    };
    black_box(verdict);
}
