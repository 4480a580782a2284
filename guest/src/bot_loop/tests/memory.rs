//! State stays bounded, and what a pair costs.

use std::mem::size_of;

use crate::bot_loop::pair::Pair;

use super::settings;
use crate::bot_loop::*;

fn facts<'a>(conversation: &'a str, sender: &'a str, now_ms: i64) -> BotFacts<'a> {
    BotFacts { scope: "acct", conversation, sender, receiver: "me", now: crate::time::Millis(now_ms), event_id: None }
}

#[test]
fn many_distinct_pairs_stay_under_the_cap() {
    let s = settings(20, 60_000, 60_000, Some(10));
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(10_000).unwrap());
    for i in 0..200_000u32 {
        let (conversation, sender) = (format!("c{}", i % 1_000), format!("bot{i}"));
        // All at the same instant: no prune helps, only the cap bounds the maps.
        guard.record_and_check(&facts(&conversation, &sender, 0), &s);
        assert!(guard.pair_count() <= 10_000, "pairs {} at {i}", guard.pair_count());
        assert!(guard.burst_count() <= 10_000, "bursts {} at {i}", guard.burst_count());
    }
    assert!(guard.evicted() >= 190_000, "evicted {}", guard.evicted());
    // The most recent pair survived eviction: its next event is still counted against it.
    let snap = guard.snapshot();
    let newest = key::pair_key("acct", "c999", "bot199999", "me");
    assert!(snap.pairs.iter().any(|(k, p)| *k == newest && p.events.len() == 1));
}

#[test]
fn eviction_count_survives_a_snapshot() {
    let s = settings(20, 60_000, 60_000, None);
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(10).unwrap());
    for i in 0..100 {
        guard.record_and_check(&facts("c", &format!("b{i}"), 0), &s);
    }
    let evicted = guard.evicted();
    assert!(evicted >= 90);
    let restored = BotGuard::restore(guard.snapshot(), std::num::NonZeroUsize::new(10).unwrap());
    assert_eq!(restored.evicted(), evicted);
    assert_eq!(restored.pair_count(), guard.pair_count());
}

/// Estimated bytes of guest memory for the pair map's own structures with `len` pairs, laid out
/// as on wasm32 (the blocks not included).
///
/// How: the map is a [`crate::store::CompactMap`]. Its entries sit in pages of 1,024, 28 bytes
/// each on wasm32 (the 16-byte key as four `u32`s, the 4-byte tick and the 8-byte `Box<[u64]>`);
/// its index is a hashbrown table of 4-byte entry numbers plus one control byte per bucket, with
/// a power-of-two bucket count at most 7/8 full (8/7 to 16/7 buckets per entry), and 8 more
/// control bytes (hashbrown's group width on wasm32). Each page and the index are one
/// allocation; their few bytes of allocator header are left out.
fn map_bytes(len: usize) -> usize {
    const WASM32_ENTRY: usize = 4 * size_of::<u32>() + size_of::<u32>() + 2 * size_of::<u32>();
    let pages = len.div_ceil(1024) * 1024 * WASM32_ENTRY;
    let buckets = (len * 8).div_ceil(7).next_power_of_two();
    pages + buckets * (size_of::<u32>() + 1) + 8
}

/// What wasi-libc's dlmalloc (the component's allocator) takes for a block of `bytes`: its 4-byte
/// header added, rounded up to 8, at least 16.
fn chunk(bytes: usize) -> usize {
    ((bytes + 4).div_ceil(8) * 8).max(16)
}

/// Estimated bytes of guest memory for the pair map, per pair, laid out as on wasm32. The bot
/// benchmark and the `bot_memory` example measure the real thing through the component (the
/// guest's linear memory); this keeps the layout honest in `cargo test`.
fn bytes_per_pair(guard: &BotGuard) -> usize {
    let len = guard.pairs.len().max(1);
    let heap: usize = guard.pairs.iter().map(|(_, p)| chunk(p.block().block_bytes())).sum();
    (map_bytes(len) + heap) / len
}

#[test]
fn a_pair_is_one_word_pointer_and_its_block_is_four_words_plus_one_per_event() {
    // Natively a `Box<[u64]>` is two 8-byte words; on wasm32 two 4-byte ones.
    assert_eq!(size_of::<Pair>(), 2 * size_of::<usize>());
    let s = settings(20, 60_000, 60_000, None);
    let mut guard = BotGuard::new(std::num::NonZeroUsize::new(10).unwrap());
    for t in 0..20 {
        guard.record_and_check(&facts("c", "bot", t), &s);
    }
    let (_, pair) = guard.pairs.iter().next().unwrap();
    let block = pair.block();
    assert_eq!((block.len(), block.capacity(), block.block_bytes()), (20, 20, (4 + 20) * 8));
}

#[test]
fn estimated_bytes_per_pair_at_the_default_budget() {
    // Default budget: 20 events per 60 s; cap as the default `loopguard.maxPairs`.
    let s = settings(20, 60_000, 60_000, None);
    let estimate = |events_per_pair: i64| {
        let mut guard = BotGuard::new(std::num::NonZeroUsize::new(1_000_000).unwrap());
        for i in 0..7_000 {
            let sender = format!("bot{i}");
            for t in 0..events_per_pair {
                guard.record_and_check(&facts("c", &sender, t), &s);
            }
        }
        bytes_per_pair(&guard)
    };
    let (one, four, eight, full) = (estimate(1), estimate(4), estimate(8), estimate(20));
    eprintln!("bytes per pair (wasm32 layout): 1 event {one}, 4 {four}, 8 {eight}, 20 {full}");
    // 7000 pairs: 7 pages of 28-byte entries (28.7 B a pair) and an index of 8192 buckets of
    // 5 bytes (5.9 B a pair). A block is 32 B of header and 8 B per slot plus dlmalloc's 4-byte
    // header, rounded to 8; slots grow 1 → 2 → 4 → 8 → 16 → 20 at the default budget. So a full
    // window is 35 + 200 B, well under the floor of 512 B per active pair (docs/PERFORMANCE.md).
    let map = 35;
    assert!(one <= map + 48, "{one}");
    assert!(four <= map + 72, "{four}");
    assert!(eight <= map + 104, "{eight}");
    assert!(full <= map + 200, "{full}");
}

#[test]
fn a_full_window_fits_256_bytes_at_every_pair_count() {
    // The memory floor: 1,000,000 pairs fit the sandbox's 256 MiB (268 B a pair, less the component's
    // own few MiB); with a full default window each, ≤ 256 B a pair, up to 1,000,000 and beyond. The map's share is highest just after its index doubles (16/7 buckets
    // per pair) and while a fresh page is nearly empty; a hashbrown map of 32-byte buckets cost
    // 38–75 B a pair across counts, 69 B at a million, for a total of 277 B there.
    let full_block = chunk((4 + 20) * 8);
    assert_eq!(full_block, 200);
    let worst = (1_000..=2_000_000).step_by(331).map(|n| (map_bytes(n) as f64 / n as f64, n));
    let (worst, at) = worst.fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
    assert!(worst + 200.0 <= 256.0, "{worst:.1} B of map per pair at {at} pairs");
    let at_million = map_bytes(1_000_000) as f64 / 1e6;
    assert!((38.0..39.0).contains(&at_million), "{at_million:.1} B of map per pair at 1,000,000 pairs");
}

/// The real figure on wasm32 (the guest's linear memory, as dlmalloc takes it): bytes per pair
/// with `EVENTS` events each (default 20, a full default window), `PAIRS` pairs (default
/// 200,000). Ignored by default (4 million decisions); run with
/// `CARGO_TARGET_WASM32_WASIP2_RUNNER="wasmtime run --env EVENTS=20 --env PAIRS=1000000" cargo test --release -p loopguard-policy --target wasm32-wasip2 --lib
/// linear_memory -- --ignored --nocapture`.
#[cfg(target_arch = "wasm32")]
#[test]
#[ignore]
fn linear_memory_per_pair_on_wasm32() {
    let var = |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let (pairs, events) = (var("PAIRS", 200_000), var("EVENTS", 20) as i64);
    let s = settings(20, 60_000, 60_000, None);
    let measure = |events: i64| {
        // The senders' names are the test's, not the guard's: allocated before the measurement.
        let senders: Vec<String> = (0..pairs).map(|i| format!("bot{i}")).collect();
        let before = core::arch::wasm32::memory_size(0) * 65_536;
        let mut guard = BotGuard::new(std::num::NonZeroUsize::new(1_000_000).unwrap());
        for t in 0..events {
            for sender in &senders {
                guard.record_and_check(&facts("c", sender, t), &s);
            }
        }
        let grown = core::arch::wasm32::memory_size(0) * 65_536 - before;
        assert_eq!(guard.pair_count(), pairs);
        drop(guard);
        (grown as f64 / pairs as f64, grown as f64 / f64::from(1 << 20))
    };
    // One measurement per process: linear memory never shrinks, so a second run would reuse it.
    let (per_pair, mib) = measure(events);
    eprintln!("wasm32 linear memory: {events} events per pair, {pairs} pairs: {per_pair:.1} B per pair, {mib:.1} MiB");
    assert!(per_pair <= 256.0, "{per_pair:.1} B per pair");
}
