//! Profiling aid: the bot benchmark's decision (`host/benches/bot.rs`: 100 000 active pairs,
//! scattered order, fresh event ids) through the wasmtime host, DECISIONS times after the fill.
//! Under `perf stat -e instructions:u` or callgrind, two decision counts give instructions per
//! decision (the fill cancels out).
//!
//! Run: `cargo run --profile bench -p loopguard-host --example bot_profile [DECISIONS]`.
use std::fmt::Write;
use std::hint::black_box;

use loopguard_host::{BotMessage, Policy};

#[path = "../benches/common/bot_workload.rs"]
mod bot_workload;
use bot_workload::{message, PAIRS};

fn main() {
    let decisions: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let policy = Policy::embedded().expect("the embedded policy loads");
    let mut gw = policy.gateway("{}").expect("config");
    for p in 0..PAIRS {
        gw.check_bot_message(&message(p, 1_000_000 + p as i64 % 1_000)).expect("fill");
    }
    let mut messages: Vec<BotMessage> = (0..PAIRS).map(|p| message(p, 0)).collect();
    let (mut i, mut ts) = (0usize, 1_002_000i64);
    let start = std::time::Instant::now();
    for _ in 0..decisions {
        let m = &mut messages[i % PAIRS];
        i += 7919;
        ts += 1;
        m.ts_ms = ts;
        let id = m.event_id.get_or_insert_with(String::new);
        id.clear();
        let _ = write!(id, "e{ts}");
        black_box(gw.check_bot_message(m).expect("decision"));
    }
    if decisions > 0 {
        eprintln!("{:.3} µs per decision", start.elapsed().as_secs_f64() * 1e6 / decisions as f64);
    }
}
