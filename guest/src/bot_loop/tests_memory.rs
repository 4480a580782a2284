//! State stays bounded, and what a pair costs.

use std::mem::size_of;

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

/// Estimated bytes of guest memory for the pair map, per pair.
///
/// How: the map is a `HashMap<KeyDigest, Slot<PairEntry>>` (hashbrown). Each bucket holds the
/// 16-byte key, the entry and the 8-byte LRU tick, plus one control byte; hashbrown keeps
/// `len ≤ 7/8 · buckets` with a power-of-two bucket count, so the table costs between 8/7 and
/// 16/7 buckets per entry (we take the power of two a table of this length needs). Each
/// non-empty event log is one heap block of `capacity × 16` bytes plus an 8-byte allocator
/// header. Run natively this over-counts the wasm32 guest (a `Vec` header is 24 bytes instead
/// of 12, so a bucket is 80 instead of 64 bytes).
fn bytes_per_pair(guard: &BotGuard) -> usize {
    let len = guard.pairs.len().max(1);
    let bucket = size_of::<(KeyDigest, (PairEntry, u64))>() + 1;
    let buckets = (len * 8).div_ceil(7).next_power_of_two();
    let heap: usize = guard
        .pairs
        .iter()
        .map(|(_, p)| match p.events.capacity() {
            0 => 0,
            cap => cap * size_of::<pair::Event>() + 8,
        })
        .sum();
    (buckets * bucket + heap) / len
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
    eprintln!("bytes per pair (native layout): 1 event {one}, 4 {four}, 8 {eight}, 20 {full}");
    // 7000 pairs fill 8192 buckets to 85%, the table's good case (just after a resize the
    // table cost doubles). Fixed cost: one bucket (81 B native, 65 B on wasm32) over the load
    // factor ≈ 95 B; each retained event adds 16 B (the log grows 1 → 2 → 4 → 8 → 16 → 21 at the
    // default budget) plus one 8 B allocator header. So the 256 B target holds for pairs with
    // up to ~9 retained events; a pair holding a full default window (20) costs ~440 B.
    assert!(one <= 128, "{one}");
    assert!(four <= 176, "{four}");
    assert!(eight <= 256, "{eight}");
    assert!(full <= 96 + 21 * 16 + 8, "{full}");
}
