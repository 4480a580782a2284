//! Guest memory per tracked bot pair at up to a million pairs, each holding a full default
//! window (the floor: ≤ 256 bytes per pair, 1 million pairs in ≤ 256 MiB).
//!
//! Why an example and not a test: filling a million pairs with 20 events each is 20 million
//! decisions through wasmtime (about a minute), far too slow for `cargo test`; and the figure
//! depends on how full the pair map's table happens to be at each count, so it is reported at
//! several counts rather than asserted at one. The bot benchmark (`--bench bot`) reports the same
//! figure at its 100,000 pairs.
//!
//! How: a fresh gateway per count, the default config (`maxPairs` 1,000,000), and the pairs filled
//! in rounds, one event per pair per round, all inside one 60 s window so that nothing expires or
//! trips: every pair ends with 20 events. Guest memory is what the guest reports in
//! `bot-stats.memory-bytes` (its linear memory: everything the allocator took from the sandbox,
//! map table, allocator headers and free space included), minus the empty gateway's. The sandbox's
//! memory cap is raised to 1 GiB so that a layout over budget is measured rather than refused; the
//! call deadline stays the default 100 ms, and the slowest decision that created a pair (the one
//! that grows the map's table, usually) is reported in thread CPU time (Linux), so that a busy
//! machine's waits do not count.
//!
//! Run: `cargo run --profile bench -p loopguard-host --example bot_memory [--events N] [PAIRS ...]`
//! (default: 20 events, 100000 500000 1000000 pairs).

use std::fmt::Write;
use std::time::{Duration, Instant};

use loopguard_host::{BotMessage, BotVerdict, Limits, Policy};

#[path = "../benches/common/bot_workload.rs"]
mod bot_workload;

/// Events per pair unless `--events` says otherwise: the default budget (`maxEventsPerWindow`
/// 20), so a full window.
const FULL: usize = 20;

/// This thread's CPU time (Linux: `/proc/thread-self/schedstat`), so that a busy machine's waits
/// do not count; `None` elsewhere.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok().map(Duration::from_nanos)
}

/// Fills `pairs` pairs with `events` events each; returns (guest bytes per pair, total guest MiB,
/// the slowest decision that created a pair, in CPU time, and the pair count it made).
fn measure(policy: &Policy, pairs: usize, events: usize) -> (f64, f64, Duration, usize) {
    let mut gw = policy.gateway("{}").expect("gateway");
    let before = gw.stats().expect("stats").memory_bytes;
    // The benchmark's pairs; each event rewrites the timestamp and event id in place.
    let mut messages: Vec<BotMessage> = (0..pairs).map(|p| bot_workload::message(p, 0)).collect();
    let (mut slowest, mut slowest_at) = (Duration::ZERO, 0);
    for e in 0..events {
        for (p, m) in messages.iter_mut().enumerate() {
            // Inside one window (1.000 s to 1.020 s), distinct per pair and round.
            m.ts_ms = 1_000_000 + (e * 1_000 + p % 1_000) as i64;
            let id = m.event_id.get_or_insert_with(String::new);
            id.clear();
            let _ = write!(id, "evt-{p}-{e}");
            // The first round creates the pairs, so it holds the decisions that grow the map.
            let start = if e == 0 { cpu_time() } else { None };
            let verdict = gw.check_bot_message(m).expect("decision");
            if let Some(took) = start.zip(cpu_time()).map(|(a, b)| b.saturating_sub(a)) {
                if took > slowest {
                    (slowest, slowest_at) = (took, p + 1);
                }
            }
            assert!(
                matches!(verdict, BotVerdict::Allow),
                "pair {p} tripped at event {e}: the fill must stay under the budget"
            );
        }
    }
    let stats = gw.stats().expect("stats");
    assert_eq!(stats.bot_pairs as usize, pairs, "every pair is tracked (none evicted or pruned)");
    let per_pair = (stats.memory_bytes - before) as f64 / pairs as f64;
    (per_pair, stats.memory_bytes as f64 / f64::from(1 << 20), slowest, slowest_at)
}

fn main() {
    let (mut events, mut counts) = (FULL, Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--events" {
            events = args.next().and_then(|n| n.parse().ok()).filter(|n| (1..=FULL).contains(n)).unwrap_or(FULL);
        } else if let Ok(pairs) = arg.parse::<usize>() {
            counts.push(pairs);
        }
    }
    let counts = if counts.is_empty() { vec![100_000, 500_000, 1_000_000] } else { counts };
    // The default call deadline (100 ms) stays: a decision that grows the map must fit it.
    let limits =
        Limits { memory_bytes: std::num::NonZeroUsize::new(1 << 30).expect("1 GiB is not zero"), ..Limits::default() };
    let policy = Policy::embedded().expect("embedded policy").with_limits(limits);
    // Which guest was measured (a shared target directory can embed another checkout's build).
    println!("policy blake3 {}", policy.digest().to_hex());
    for pairs in counts {
        let start = Instant::now();
        let (per_pair, total_mib, slowest, at) = measure(&policy, pairs, events);
        println!(
            "bot/memory: {pairs:>9} pairs x {events} events: {per_pair:.1} bytes of guest memory per pair \
             ({total_mib:.1} MiB in all; filled in {:.1} s; slowest new pair {:.1} ms of CPU, the {at}th)",
            start.elapsed().as_secs_f64(),
            slowest.as_secs_f64() * 1e3,
        );
    }
}
