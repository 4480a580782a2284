//! What a bot-message decision costs, and how much guest memory a tracked bot pair takes.
//!
//! Why: a busy multi-bot gateway sees many bot pairs at once, and the pair guard keeps a small
//! event log for each one inside the sandbox. This measures `check-bot-message` through the
//! wasmtime host with 100 000 active pairs, and the guest's linear memory per pair (reported by
//! the guest itself in `bot-stats.memory-bytes`), both with a few events per pair (typical
//! traffic) and with full windows (every pair holding its whole default budget of 20 events).
//!
//! Run: `cargo bench -p loopguard-host --bench bot`.

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use loopguard_host::{BotMessage, Policy};

const PAIRS: usize = 100_000;

fn message(pair: usize, ts_ms: i64) -> BotMessage {
    // Pairs spread over 1 000 conversations of 10 accounts; each pair is two bot ids.
    let (a, b) = if ts_ms % 2 == 0 { ("bot-a", "bot-b") } else { ("bot-b", "bot-a") };
    BotMessage {
        channel: "discord".into(),
        account: format!("acct-{}", pair % 10),
        conversation: format!("chan-{}", pair / 10 % 10_000),
        room: None,
        sender: format!("{a}-{pair}"),
        receiver: format!("{b}-{pair}"),
        ts_ms,
        event_id: Some(format!("evt-{pair}-{ts_ms}")),
    }
}

/// Fills `PAIRS` pairs with `events` events each (inside one window) and returns guest bytes
/// per pair over the empty gateway's memory.
fn bytes_per_pair(events: usize) -> f64 {
    let policy = Policy::embedded().expect("embedded policy");
    let mut gw = policy.gateway("{}").expect("gateway");
    let before = gw.bot_stats().expect("stats").memory_bytes;
    for e in 0..events {
        for p in 0..PAIRS {
            gw.check_bot_message(&message(p, 1_000_000 + (e * 1_000 + p % 1_000) as i64)).expect("decision");
        }
    }
    let stats = gw.bot_stats().expect("stats");
    assert_eq!(stats.pairs as usize, PAIRS);
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
    for p in 0..PAIRS {
        gw.check_bot_message(&message(p, 1_000_000 + p as i64 % 1_000)).expect("fill");
    }
    let messages: Vec<BotMessage> = (0..PAIRS).map(|p| message(p, 0)).collect();
    let mut c = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    let (mut i, mut ts) = (0usize, 1_002_000i64);
    c.bench_function("bot/check-bot-message (wasmtime, 100k active pairs)", |b| {
        b.iter(|| {
            let mut m = messages[i % PAIRS].clone();
            // Time moves on slowly, so pairs stay active and rarely trip.
            i += 7919;
            ts += 1;
            m.ts_ms = ts;
            m.event_id = Some(format!("e{ts}"));
            black_box(gw.check_bot_message(&m).expect("decision"))
        })
    });
    c.final_summary();
}
