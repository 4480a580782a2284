//! Profiling aid: the decision benchmark's workload through the wasmtime host, ROUNDS times
//! (`perf stat -e instructions` on two round counts gives instructions per decision).
use loopguard_host::{Policy, ToolCall, ToolOutcome};
use std::hint::black_box;

const TOOLS: [&str; 6] = ["read", "exec", "grep", "edit", "web_fetch", "process"];

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut events = Vec::new();
    for step in 0..30 {
        for session in 0..1000 {
            let tool = TOOLS[step % TOOLS.len()];
            let args = format!(
                r#"{{"path":"/home/dev/projects/service-{session}/src/module_{step}/handler.rs","command":"cargo test -p service-{session} --lib module_{step}::tests -- --nocapture","cwd":"/home/dev/projects/service-{session}","timeout_ms":120000,"env":{{"RUST_LOG":"debug","CI":"false"}},"step":{step}}}"#
            );
            let result = format!(
                r#"{{"content":[{{"type":"text","text":"running 12 tests\ntest module_{step}::tests::parses ... ok\ntest module_{step}::tests::rejects_empty ... ok\ntest module_{step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_{step}::tests::round_trips stdout ----\nassertion failed: left == right (session {session})\n\ntest result: FAILED. 11 passed; 1 failed"}}],"exitCode":101,"durationMs":{}}}"#,
                1_000 + step * 7
            );
            let call = ToolCall {
                session: format!("agent:main:session-{session}"),
                tool: tool.into(),
                args_json: args,
                run: Some("run-1".into()),
                agent: None,
                call_id: None,
            };
            events.push((call, ToolOutcome::Returned(result)));
        }
    }
    let policy = Policy::embedded().expect("policy");
    let mut gw = policy.gateway(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).expect("config");
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        for (call, outcome) in &events {
            black_box(gw.check_tool_call(call).expect("call"));
            black_box(gw.record_tool_outcome(call, outcome).expect("outcome"));
        }
    }
    eprintln!("{:.2} µs per decision", start.elapsed().as_secs_f64() * 1e6 / (rounds * events.len()) as f64);
}
