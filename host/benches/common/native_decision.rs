//! One tool-call decision done natively exactly as the component does it, shared by the
//! decision benchmark (`benches/decision.rs`) and the profiling aid (`examples/wasm_profile.rs
//! --native`), so that the native side of the ratio and its profile are the same code.

use std::hint::black_box;

use loopguard_policy::gateway::Gateway as Native;
use loopguard_policy::json;
use loopguard_policy::tool_loop::{CallRef, Outcome, ToolCall as NativeCall};
use loopguard_tests::workload::Event;

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
