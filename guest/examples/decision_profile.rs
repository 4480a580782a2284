//! Profiling helper: the decision benchmark's workload natively (for callgrind / perf).
//! Run: `cargo run --release -p loopguard-policy --example decision_profile [ROUNDS]`.
use std::hint::black_box;
use std::time::Instant;

use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;
use loopguard_policy::json;
use loopguard_policy::tool_loop::{Outcome, ToolCall};

const TOOLS: [&str; 6] = ["read", "exec", "grep", "edit", "web_fetch", "process"];

fn event(session: usize, step: usize) -> (String, &'static str, String, String) {
    let tool = TOOLS[step % TOOLS.len()];
    let args = format!(
        r#"{{"path":"/home/dev/projects/service-{session}/src/module_{step}/handler.rs","command":"cargo test -p service-{session} --lib module_{step}::tests -- --nocapture","cwd":"/home/dev/projects/service-{session}","timeout_ms":120000,"env":{{"RUST_LOG":"debug","CI":"false"}},"step":{step}}}"#
    );
    let result = format!(
        r#"{{"content":[{{"type":"text","text":"running 12 tests\ntest module_{step}::tests::parses ... ok\ntest module_{step}::tests::rejects_empty ... ok\ntest module_{step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_{step}::tests::round_trips stdout ----\nassertion failed: left == right (session {session})\n\ntest result: FAILED. 11 passed; 1 failed"}}],"exitCode":101,"durationMs":{}}}"#,
        1_000 + step * 7
    );
    (format!("agent:main:session-{session}"), tool, args, result)
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let events: Vec<_> = (0..30).flat_map(|step| (0..1000).map(move |s| event(s, step))).collect();
    let mut gw = Gateway::new(Config::parse(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).expect("config"));
    let start = Instant::now();
    for _ in 0..rounds {
        for (session, tool, args, result) in &events {
            let a = json::parse(args).expect("args");
            let call = ToolCall { session, tool, args: &a, run: Some("run-1"), agent: None, call_id: None };
            black_box(gw.check_tool_call_text(&call, Some(args)));
            let meta = call.meta();
            let facts = match gw.recall_call(&meta, args) {
                Some(f) => f,
                None => gw.call_facts(tool, &json::parse(args).expect("args"), Some("run-1")),
            };
            let r = json::parse(result).expect("result");
            black_box(gw.record_tool_outcome_facts(&meta, &facts, Outcome::Result(&r)));
        }
    }
    let n = rounds * events.len();
    eprintln!("{:.0} ns per decision", start.elapsed().as_nanos() as f64 / n as f64);
}
