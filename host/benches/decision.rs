//! What one tool-call decision costs a gateway: `check-tool-call` + `record-tool-outcome` through
//! the wasmtime host, against the same logic called natively from the guest crate.
//!
//! Why measure both: the component boundary (copying strings in and out, the sandbox) is the
//! price of a swappable, sandboxed policy; the ratio says what that price is on a realistic mix:
//! 1 000 sessions with 30-entry histories already filled, ~300-byte arguments, results of a few
//! hundred bytes, sessions taken round-robin. Both sides parse the same JSON texts.
//!
//! Run: `cargo bench -p loopguard-host --bench decision`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use loopguard_host::Policy;
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway as Native;

use loopguard_tests::workload::{events, CONFIG};

#[path = "common/decision_workload.rs"]
mod decision_workload;
use decision_workload::{native_decide, wasm_call};

fn main() {
    let events = events();
    let wasm_events: Vec<_> = events.iter().map(wasm_call).collect();

    let policy = Policy::embedded().expect("the embedded policy loads");
    let mut wasm = policy.gateway(CONFIG).expect("config");
    let mut native = Native::new(Config::parse(CONFIG).expect("config"));
    for ((call, outcome), e) in wasm_events.iter().zip(&events) {
        wasm.check_tool_call(call).expect("call");
        wasm.record_tool_outcome(call, outcome).expect("outcome");
        native_decide(&mut native, e);
    }

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut group = c.benchmark_group("tool-call decision (check + outcome)");
    let mut i = 0;
    group.bench_function("wasmtime host, typed calls", |b| {
        b.iter(|| {
            let (call, outcome) = &wasm_events[i % wasm_events.len()];
            i += 1;
            black_box(wasm.check_tool_call(call).expect("call"));
            black_box(wasm.record_tool_outcome(call, outcome).expect("outcome"));
        })
    });
    let mut j = 0;
    group.bench_function("native guest crate", |b| {
        b.iter(|| {
            native_decide(&mut native, &events[j % events.len()]);
            j += 1;
        })
    });
    group.finish();
    c.final_summary();

    // The ratio, from one plain timed pass over every event on each side.
    let start = Instant::now();
    for (call, outcome) in &wasm_events {
        black_box(wasm.check_tool_call(call).expect("call"));
        black_box(wasm.record_tool_outcome(call, outcome).expect("outcome"));
    }
    let wasm_ns = start.elapsed().as_nanos() as f64 / wasm_events.len() as f64;
    let start = Instant::now();
    for e in &events {
        native_decide(&mut native, e);
    }
    let native_ns = start.elapsed().as_nanos() as f64 / events.len() as f64;
    println!(
        "one decision: wasmtime {:.2} µs, native {:.2} µs, ratio wasm/native = {:.2}x",
        wasm_ns / 1e3,
        native_ns / 1e3,
        wasm_ns / native_ns
    );
}
