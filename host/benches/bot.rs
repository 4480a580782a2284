//! What a bot-message decision costs, and how much guest memory a tracked bot pair takes.
//!
//! Why: a busy multi-bot gateway sees many bot pairs at once, and the pair guard keeps a small
//! event log for each one inside the sandbox. This measures `check-bot-message` through the
//! wasmtime host with 100 000 active pairs, and the same decision natively (the guest crate as a
//! library) so that the boundary's share is visible. It also measures the guest's linear memory
//! per pair (reported by the guest itself in `bot-stats.memory-bytes`: everything the allocator
//! took from the sandbox, map table and allocator overhead included), both with a few events per
//! pair (typical traffic) and with full windows (every pair holding its whole default budget of
//! 20 events).
//!
//! The timed loops reuse their message values and only rewrite the timestamp and the event id in
//! place, so they time the decision and not the building of the test input.
//!
//! Run: `cargo bench -p loopguard-host --bench bot`.

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use loopguard_host::Policy;
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway as Native;

#[path = "common/bot_workload.rs"]
mod bot_workload;
use bot_workload::{message, native, Stream, PAIRS};

/// Fills `PAIRS` pairs with `events` events each (inside one window) and returns guest bytes
/// per pair over the empty gateway's memory.
fn bytes_per_pair(events: usize) -> f64 {
    let policy = Policy::embedded().expect("embedded policy");
    let mut gw = policy.gateway("{}").expect("gateway");
    let before = gw.stats().expect("stats").memory_bytes;
    for e in 0..events {
        for p in 0..PAIRS {
            gw.check_bot_message(&message(p, 1_000_000 + (e * 1_000 + p % 1_000) as i64)).expect("decision");
        }
    }
    let stats = gw.stats().expect("stats");
    assert_eq!(stats.bot_pairs as usize, PAIRS);
    (stats.memory_bytes - before) as f64 / PAIRS as f64
}

fn main() {
    for events in [1, 4, 20] {
        println!(
            "bot/memory: {events:>2} events per pair, {PAIRS} pairs: {:.0} bytes of guest memory per pair",
            bytes_per_pair(events)
        );
    }

    let policy = Policy::embedded().expect("embedded policy");
    let mut gw = policy.gateway("{}").expect("gateway");
    let mut core = Native::new(Config::parse("{}").expect("config"));
    for p in 0..PAIRS {
        let m = message(p, 1_000_000 + p as i64 % 1_000);
        gw.check_bot_message(&m).expect("fill");
        let _ = core.check_bot_message(&native(&m));
    }
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let mut group = c.benchmark_group("bot/check-bot-message, 100k active pairs");
    let mut stream = Stream::new();
    group.bench_function("wasmtime host", |b| {
        b.iter(|| black_box(gw.check_bot_message(stream.next()).expect("decision")))
    });
    let mut stream = Stream::new();
    group
        .bench_function("native guest crate", |b| b.iter(|| black_box(core.check_bot_message(&native(stream.next())))));
    group.finish();
    c.final_summary();
}
