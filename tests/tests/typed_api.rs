//! The typed gateway API of the host library agrees with the JSON Lines path (`apply-events`),
//! survives a snapshot round trip, and reports malformed input as a policy error, not a trap.

use loopguard_host::{OutcomeVerdict, Policy, ToolAction, ToolCall, ToolOutcome};
use loopguard_tests::{policy_wasm, workspace_root};
use serde_json::Value;

const CONFIG: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;

fn policy() -> Policy {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
    Policy::from_file(policy_wasm()).expect("the built policy loads")
}

fn call(session: &str, tool: &str, args: &str) -> ToolCall {
    ToolCall {
        session: session.into(),
        tool: tool.into(),
        args_json: args.into(),
        run: None,
        agent: None,
        call_id: None,
    }
}

/// A loop: the same read with the same result, 25 times, in one session.
fn events() -> Vec<(ToolCall, ToolOutcome)> {
    (0..25)
        .map(|_| (call("s1", "read", r#"{"path":"/a"}"#), ToolOutcome::Returned(r#"{"content":"same"}"#.into())))
        .collect()
}

fn trace_of(events: &[(ToolCall, ToolOutcome)]) -> String {
    let mut trace = String::new();
    for (c, o) in events {
        let head = format!(r#""session":"{}","tool":"{}","args":{}"#, c.session, c.tool, c.args_json);
        trace.push_str(&format!("{{\"kind\":\"tool_call\",{head}}}\n"));
        let out = match o {
            ToolOutcome::Returned(r) => format!(r#""result":{r}"#),
            ToolOutcome::Threw(e) => format!(r#""error":{e}"#),
        };
        trace.push_str(&format!("{{\"kind\":\"tool_result\",{head},{out}}}\n"));
    }
    trace
}

fn action_name(a: ToolAction) -> &'static str {
    match a {
        ToolAction::Allow => "allow",
        ToolAction::Warn => "warn",
        ToolAction::Block => "block",
    }
}

#[test]
fn typed_calls_agree_with_apply_events() {
    let policy = policy();
    let events = events();
    let decisions = policy.gateway(CONFIG).expect("config").apply_events(&trace_of(&events), 1).expect("trace");
    let decisions: Vec<Value> = decisions.lines().map(|l| serde_json::from_str(l).expect("JSON decision")).collect();

    let mut gw = policy.gateway(CONFIG).expect("config");
    let mut fired = false;
    for (i, (c, o)) in events.iter().enumerate() {
        let v = gw.check_tool_call(c).expect("valid call");
        let d = &decisions[2 * i];
        assert_eq!(d["action"], action_name(v.action), "event {i}: {d} vs {v:?}");
        assert_eq!(d.get("count").and_then(Value::as_u64).unwrap_or(0), u64::from(v.count), "event {i}: {d} vs {v:?}");
        assert_eq!(d.get("message").and_then(Value::as_str), v.message.as_deref(), "event {i}");
        fired |= v.action != ToolAction::Allow;
        let r = gw.record_tool_outcome(c, o).expect("valid outcome");
        let expected = match r {
            OutcomeVerdict::Recorded => "recorded",
            OutcomeVerdict::Ignored => "ignored",
            OutcomeVerdict::Abort(_) => "abort",
        };
        assert_eq!(decisions[2 * i + 1]["action"], expected, "outcome {i}");
    }
    assert!(fired, "25 identical calls must make some detector fire");
    assert_eq!(gw.stats().expect("stats").sessions, 1);
    gw.end_session("s1").expect("end");
    assert_eq!(gw.stats().expect("stats").sessions, 0);
}

#[test]
fn a_snapshot_carries_the_state_into_a_fresh_instance() {
    let policy = policy();
    let events = events();
    let (before, after) = events.split_at(12);
    let mut original = policy.gateway(CONFIG).expect("config");
    for (c, o) in before {
        original.check_tool_call(c).expect("call");
        original.record_tool_outcome(c, o).expect("outcome");
    }
    let snapshot = original.export_state().expect("export");
    let mut restored = policy.gateway(CONFIG).expect("config");
    restored.import_state(&snapshot).expect("import");
    for (c, o) in after {
        assert_eq!(original.check_tool_call(c).expect("call"), restored.check_tool_call(c).expect("call"));
        assert_eq!(original.record_tool_outcome(c, o).expect("o"), restored.record_tool_outcome(c, o).expect("o"));
    }
}

#[test]
fn malformed_input_is_a_policy_error_and_the_gateway_goes_on() {
    let policy = policy();
    let mut gw = policy.gateway(CONFIG).expect("config");
    let err = gw.check_tool_call(&call("s1", "read", "{not json")).expect_err("bad args");
    assert!(matches!(err, loopguard_host::Error::Policy { .. }), "{err:?}");
    assert!(err.to_string().contains("args"), "{err}");
    let err = gw.import_state(b"definitely not a snapshot").expect_err("bad snapshot");
    assert!(matches!(err, loopguard_host::Error::Policy { .. }), "{err:?}");
    // Neither error poisoned the instance.
    assert_eq!(gw.check_tool_call(&call("s1", "read", "{}")).expect("valid").action, ToolAction::Allow);
    let err = policy.gateway(r#"{"tools":{"loopDetection":{"historySize":0}}}"#).err().expect("bad config");
    assert!(err.to_string().starts_with("tools.loopDetection.historySize"), "{err}");
}
