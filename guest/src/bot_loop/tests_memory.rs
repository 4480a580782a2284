//! State stays bounded, and what a pair costs.

use std::mem::size_of;

use packed::PackedPair;

use super::tests::settings;
use super::*;

fn facts<'a>(conversation: &'a str, sender: &'a str, now_ms: i64) -> BotFacts<'a> {
    BotFacts { scope: "acct", conversation, sender, receiver: "me", now_ms, event_id: None }
}

#[test]
fn many_distinct_pairs_stay_under_the_cap() {
    let s = settings(20, 60_000, 60_000, Some(10));
    let mut guard = BotGuard::new(10_000);
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
    let mut guard = BotGuard::new(10);
    for i in 0..100 {
        guard.record_and_check(&facts("c", &format!("b{i}"), 0), &s);
    }
    let evicted = guard.evicted();
    assert!(evicted >= 90);
    let restored = BotGuard::restore(guard.snapshot(), 10);
    assert_eq!(restored.evicted(), evicted);
    assert_eq!(restored.pair_count(), guard.pair_count());
}

/// Estimated bytes of guest memory for the pair map, per pair, laid out as on wasm32.
///
/// How: the map is a `HashMap<KeyDigest, Slot<PackedPair>>` (hashbrown). On wasm32 a bucket holds
/// the 16-byte key, the 8-byte `Box<[u64]>` (pointer + length) and the 8-byte LRU tick, plus one
/// control byte; hashbrown keeps `len ≤ 7/8 · buckets` with a power-of-two bucket count, so the
/// table costs between 8/7 and 16/7 buckets per entry (we take the power of two a table of this
/// length needs). Each pair's block is one allocation: the component's small-block cache rounds
/// it up to a 16-byte class, and wasi-libc's dlmalloc adds a 4-byte header and rounds up to 16
/// again. The benchmark measures the real thing (the guest's linear memory,
/// `cargo bench -p loopguard-host --bench bot`); this keeps the layout honest in `cargo test`.
fn bytes_per_pair(guard: &BotGuard) -> usize {
    const WASM32_BUCKET: usize = size_of::<KeyDigest>() + 2 * size_of::<u32>() + size_of::<u64>() + 1;
    let chunk = |bytes: usize| (bytes.div_ceil(16) * 16 + 4).div_ceil(16) * 16;
    let len = guard.pairs.len().max(1);
    let buckets = (len * 8).div_ceil(7).next_power_of_two();
    let heap: usize = guard.pairs.iter().map(|(_, p)| chunk(p.block_bytes())).sum();
    (buckets * WASM32_BUCKET + heap) / len
}

#[test]
fn a_pair_is_one_word_pointer_and_its_block_is_three_words_plus_one_per_event() {
    // Natively a `Box<[u64]>` is two 8-byte words; on wasm32 two 4-byte ones.
    assert_eq!(size_of::<PackedPair>(), 2 * size_of::<usize>());
    let s = settings(20, 60_000, 60_000, None);
    let mut guard = BotGuard::new(10);
    for t in 0..20 {
        guard.record_and_check(&facts("c", "bot", t), &s);
    }
    let (_, pair) = guard.pairs.iter().next().unwrap();
    assert_eq!((pair.len(), pair.capacity(), pair.block_bytes()), (20, 20, (3 + 20) * 8));
}

#[test]
fn estimated_bytes_per_pair_at_the_default_budget() {
    // Default budget: 20 events per 60 s; cap as the default `loopguard.maxPairs`.
    let s = settings(20, 60_000, 60_000, None);
    let estimate = |events_per_pair: i64| {
        let mut guard = BotGuard::new(1_000_000);
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
    // 7000 pairs fill 8192 buckets to 85%, the table's good case: 33 B / 0.85 ≈ 39 B (just
    // after a resize the table is 7/16 full and costs 75 B a pair; 100,000 pairs, the benchmark,
    // fill it to 76%: 43 B). A block is 24 B of header and 8 B per slot, taking a 16-byte class
    // plus a 16-byte allocator chunk header; slots grow 1 → 2 → 4 → 8 → 16 → 20 at the default
    // budget. So a full window is 39 + 208 B here, 43 + 208 B at 100,000 pairs.
    let table = 39;
    assert!(one <= table + 48, "{one}");
    assert!(four <= table + 80, "{four}");
    assert!(eight <= table + 112, "{eight}");
    assert!(full <= table + 208, "{full}");
}
