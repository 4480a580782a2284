//! One tool-call decision of the workload on each side of the ratio (`benches/decision.rs`): the
//! host's typed call for an event, and the same decision done natively as the component does it.

use std::hint::black_box;

use loopguard_host::{ToolCall, ToolOutcome};
use loopguard_policy::gateway::Gateway as Native;
use loopguard_policy::json;
use loopguard_policy::tool_loop::{Args, Outcome, ToolCall as NativeCall};
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

/// What the component does for one decision, natively: check the call (its arguments as text),
/// read the result, record the outcome (interface 1.0 has one entry per decision).
pub fn native_decide(gw: &mut Native, e: &Event) {
    let call = NativeCall {
        session: &e.session,
        tool: e.tool,
        args: Args::Text(&e.args),
        run: Some("run-1"),
        agent: None,
        call_id: None,
    };
    black_box(gw.check_tool_call(&call).expect("valid args"));
    let result = json::parse(&e.result).expect("valid result");
    black_box(gw.record_tool_outcome(&call, Outcome::Result(&result)).expect("valid args"));
}
