//! What one tool-call decision costs a gateway: `check-tool-call` + `record-tool-outcome` through
//! the wasmtime host, against the same logic called natively from the guest crate.
//!
//! Why measure both: the component boundary (copying strings in and out, the sandbox) is the
//! price of a swappable, sandboxed policy; the ratio says what that price is on a realistic mix:
//! 1 000 sessions with 30-entry histories already filled, ~300-byte arguments, results of a few
//! hundred bytes, sessions taken round-robin. Both sides parse the same JSON texts.
//!
//! Also the batched path (`apply-events`, 1 000 trace events per call, the lines Node's and
//! Python's benchmarks send), and a closing `summary` line that `scripts/bench-hosts.sh` prints
//! side by side with theirs.
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

    // Batched: the same decisions as trace lines, 1 000 events per `apply-events` call.
    const BATCH: usize = 1_000;
    let lines: Vec<String> = events.iter().flat_map(trace_lines).collect();
    let batches: Vec<String> = lines.chunks(BATCH).map(|b| b.join("\n")).collect();
    for b in &batches {
        black_box(wasm.apply_events(b, 1).expect("batch"));
    }
    let start = Instant::now();
    for b in &batches {
        black_box(wasm.apply_events(b, 1).expect("batch"));
    }
    let batched_ns = start.elapsed().as_nanos() as f64 / lines.len() as f64;
    println!("apply-events, {BATCH} events per batch: {:.2} µs per event", batched_ns / 1e3);

    // The ratio, from paired blocks: each round times 1 000 decisions through wasmtime and then
    // the same 1 000 natively, so both sides of a pair see the same machine load (criterion's
    // two runs above are seconds apart, and this machine's load swings by tens of percent).
    // The median of the per-pair ratios is the figure; the spread says how much to trust it.
    const BLOCK: usize = 1_000;
    const ROUNDS: usize = 31;
    let mut pairs = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let at = (round * BLOCK) % (events.len() - BLOCK);
        let start = Instant::now();
        for (call, outcome) in &wasm_events[at..at + BLOCK] {
            black_box(wasm.check_tool_call(call).expect("call"));
            black_box(wasm.record_tool_outcome(call, outcome).expect("outcome"));
        }
        let wasm_ns = start.elapsed().as_nanos() as f64 / BLOCK as f64;
        let start = Instant::now();
        for e in &events[at..at + BLOCK] {
            native_decide(&mut native, e);
        }
        let native_ns = start.elapsed().as_nanos() as f64 / BLOCK as f64;
        pairs.push((wasm_ns, native_ns, wasm_ns / native_ns));
    }
    let median = |f: fn(&(f64, f64, f64)) -> f64| {
        let mut v: Vec<f64> = pairs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() / 4], v[v.len() * 3 / 4])
    };
    let (wasm_med, ..) = median(|p| p.0);
    let (native_med, ..) = median(|p| p.1);
    let (ratio, q1, q3) = median(|p| p.2);
    println!(
        "one decision, {ROUNDS} paired blocks of {BLOCK}: wasmtime {:.2} µs, native {:.2} µs (medians); \
         ratio wasm/native = {ratio:.2}x (median of the pairs; quartiles {q1:.2}-{q3:.2}x)",
        wasm_med / 1e3,
        native_med / 1e3,
    );
    println!(
        "summary rust single={:.2} batched={:.2} native={:.2} ratio={ratio:.2}",
        wasm_med / 1e3,
        batched_ns / 1e3,
        native_med / 1e3
    );
}

/// An event as the two trace lines Node's and Python's benchmarks send (`tool_call`, then
/// `tool_result`), so that all three batch the same bytes.
fn trace_lines(e: &loopguard_tests::workload::Event) -> [String; 2] {
    let session = serde_json::to_string(&e.session).expect("a string");
    let base = format!(r#""session":{session},"run":"run-1","tool":"{}","args":{}"#, e.tool, e.args);
    [format!(r#"{{"kind":"tool_call",{base}}}"#), format!(r#"{{"kind":"tool_result",{base},"result":{}}}"#, e.result)]
}
