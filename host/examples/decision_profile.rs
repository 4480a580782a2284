//! Profiling aid: the decision benchmark's workload (`loopguard_tests::workload`) through the
//! wasmtime host ROUNDS times, or natively with `--native` (the benchmark's native side). Under
//! `perf stat -e instructions:u` or callgrind, two round counts give instructions per decision,
//! a figure this machine's load does not move; `LOOPGUARD_PERFMAP=1 perf record` names the
//! compiled guest functions.
//!
//! Run: `cargo run --profile bench -p loopguard-host --example decision_profile [ROUNDS [POLICY.wasm | --native]]`
use std::hint::black_box;

use loopguard_host::Policy;
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway as Native;
use loopguard_tests::workload::{events, CONFIG};

#[path = "../benches/common/decision_workload.rs"]
mod decision_workload;
use decision_workload::{native_decide, wasm_call};

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let target = std::env::args().nth(2);
    let events = events();
    let start = std::time::Instant::now();
    if target.as_deref() == Some("--native") {
        let mut gw = Native::new(Config::parse(CONFIG).expect("config"));
        for _ in 0..rounds {
            for e in &events {
                native_decide(&mut gw, e);
            }
        }
    } else {
        let calls: Vec<_> = events.iter().map(wasm_call).collect();
        let policy = match target {
            Some(path) => Policy::from_file(&path).expect("the policy file loads"),
            None => Policy::embedded().expect("the embedded policy loads"),
        };
        let mut gw = policy.gateway(CONFIG).expect("config");
        for _ in 0..rounds {
            for (call, outcome) in &calls {
                black_box(gw.check_tool_call(call).expect("call"));
                black_box(gw.record_tool_outcome(call, outcome).expect("outcome"));
            }
        }
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / (rounds * events.len()).max(1) as f64;
    eprintln!("{per:.2} µs per decision");
}
