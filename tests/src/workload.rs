//! The tool-call workload of the decision benchmark, shared by the benchmark
//! (`host/benches/decision.rs`) and the profiling aid (`host/examples/wasm_profile.rs`), so that
//! a profile explains exactly what the benchmark measures.
//!
//! 1,000 sessions with 30-entry histories, ~300-byte arguments, results of a few hundred bytes
//! (a failing test run), sessions taken round-robin.

/// Sessions in the workload.
pub const SESSIONS: usize = 1_000;
/// Calls per session (the default history size).
pub const HISTORY: usize = 30;
/// The config: the tool-loop guard enabled, defaults otherwise.
pub const CONFIG: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;
const TOOLS: [&str; 6] = ["read", "exec", "grep", "edit", "web_fetch", "process"];

/// One realistic call and its result.
pub struct Event {
    /// The session key.
    pub session: String,
    /// The tool name.
    pub tool: &'static str,
    /// The arguments, as JSON text.
    pub args: String,
    /// The result, as JSON text.
    pub result: String,
}

fn event(session: usize, step: usize) -> Event {
    let tool = TOOLS[step % TOOLS.len()];
    let args = format!(
        r#"{{"path":"/home/dev/projects/service-{session}/src/module_{step}/handler.rs","command":"cargo test -p service-{session} --lib module_{step}::tests -- --nocapture","cwd":"/home/dev/projects/service-{session}","timeout_ms":120000,"env":{{"RUST_LOG":"debug","CI":"false"}},"step":{step}}}"#
    );
    let result = format!(
        r#"{{"content":[{{"type":"text","text":"running 12 tests\ntest module_{step}::tests::parses ... ok\ntest module_{step}::tests::rejects_empty ... ok\ntest module_{step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_{step}::tests::round_trips stdout ----\nassertion failed: left == right (session {session})\n\ntest result: FAILED. 11 passed; 1 failed"}}],"exitCode":101,"durationMs":{}}}"#,
        1_000 + step * 7
    );
    Event { session: format!("agent:main:session-{session}"), tool, args, result }
}

/// The events the benchmark cycles through: per session, the 30 that filled its history
/// (repeating them is what a working agent does: re-read, re-run, re-edit).
pub fn events() -> Vec<Event> {
    (0..HISTORY).flat_map(|step| (0..SESSIONS).map(move |s| event(s, step))).collect()
}
