//! Profiling aid: the bot benchmark's decision (`host/benches/bot.rs`: 100 000 active pairs,
//! scattered order, fresh event ids) through the wasmtime host, DECISIONS times after the fill.
//! Under `perf stat -e instructions:u` or callgrind, two decision counts give instructions per
//! decision (the fill cancels out).
//!
//! Run: `cargo run --profile bench -p loopguard-host --example bot_profile [DECISIONS]`.
use std::hint::black_box;

use loopguard_host::Policy;

#[path = "../benches/common/bot_workload.rs"]
mod bot_workload;
use bot_workload::{message, Stream, PAIRS};

fn main() {
    let decisions: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let policy = Policy::embedded().expect("the embedded policy loads");
    let mut gw = policy.gateway("{}").expect("config");
    for p in 0..PAIRS {
        gw.check_bot_message(&message(p, 1_000_000 + p as i64 % 1_000)).expect("fill");
    }
    let mut stream = Stream::new();
    let start = std::time::Instant::now();
    for _ in 0..decisions {
        black_box(gw.check_bot_message(stream.next()).expect("decision"));
    }
    if decisions > 0 {
        eprintln!("{:.3} µs per decision", start.elapsed().as_secs_f64() * 1e6 / decisions as f64);
    }
}
