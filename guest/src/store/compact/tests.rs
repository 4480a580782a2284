//! [`CompactMap`] behaves exactly like [`BoundedMap`] (the memory floor changed the pair map's layout,
//! not what it keeps or evicts).

use super::CompactMap;
use crate::store::BoundedMap;

/// A small deterministic generator (xorshift64*), so that failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Keys spread over all 128 bits, as digests are.
fn key(i: u64) -> u128 {
    u128::from(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) << 64 | u128::from(i)
}

/// Drives both maps with the same random operations and compares everything observable.
fn differential(seed: u64, capacity: usize, keys: u64, steps: usize, start_tick: Option<u32>) {
    let mut rng = Rng(seed);
    let cap = std::num::NonZeroUsize::new(capacity).unwrap();
    let mut a: BoundedMap<u128, u64> = BoundedMap::new(cap);
    let mut b: CompactMap<u64> = CompactMap::new(cap);
    if let Some(t) = start_tick {
        b.set_tick(t);
    }
    for step in 0..steps {
        let k = key(rng.below(keys));
        match rng.below(100) {
            0..=59 => {
                *a.entry_or_insert_with(&k, || step as u64) += 1;
                *b.entry_or_insert_with(k, || step as u64) += 1;
            }
            60..=74 => {
                let (x, y) = (a.get_mut(&k).map(|v| *v), b.get_mut(k).map(|v| *v));
                assert_eq!(x, y, "get_mut at step {step}");
            }
            75..=84 => assert_eq!(a.remove(&k), b.remove(k), "remove at step {step}"),
            85..=89 => assert_eq!(a.get(&k), b.get(k), "get at step {step}"),
            90..=93 => {
                let m = rng.below(7) + 2;
                a.retain(|_, v| *v % m != 0);
                b.retain(|_, v| *v % m != 0);
            }
            94..=95 => {
                let c = std::num::NonZeroUsize::new((rng.below(capacity as u64 * 2) + 1) as usize).unwrap();
                a.set_capacity(c);
                b.set_capacity(c);
            }
            96 => {
                // A snapshot round trip, possibly into a smaller map.
                let c = std::num::NonZeroUsize::new((rng.below(capacity as u64) + 1) as usize).unwrap();
                a = BoundedMap::from_ordered(c, a.to_ordered());
                b = CompactMap::from_ordered(c, b.to_ordered());
            }
            _ => assert_eq!(b.iter().count(), b.len(), "iter at step {step}"),
        }
        assert_eq!(a.len(), b.len(), "len at step {step}");
        assert_eq!(a.evicted(), b.evicted(), "evicted at step {step}");
        if step % 97 == 0 {
            assert_eq!(a.to_ordered(), b.to_ordered(), "order at step {step}");
        }
    }
    assert_eq!(a.to_ordered(), b.to_ordered());
    let mut all: Vec<_> = b.iter().map(|(k, v)| (k, *v)).collect();
    all.sort_unstable();
    let mut want = a.to_ordered();
    want.sort_unstable();
    assert_eq!(all, want);
}

#[test]
fn behaves_like_the_bounded_map_under_random_operations() {
    // Small capacities evict often; 3,000 spans several pages.
    for (seed, capacity, keys) in [(1, 1, 4), (2, 3, 10), (3, 64, 200), (4, 100, 150), (5, 3_000, 5_000)] {
        differential(seed, capacity, keys, 20_000, None);
    }
}

#[test]
fn keeps_the_order_when_the_tick_runs_out() {
    // The 32-bit tick wraps after ~4 billion touches; the ranks replace it, the order stays.
    for seed in [7, 8] {
        differential(seed, 500, 800, 10_000, Some(u32::MAX - 3_000));
    }
    let mut m = CompactMap::new(std::num::NonZeroUsize::new(10).unwrap());
    m.set_tick(u32::MAX - 1);
    for k in [1u128, 2, 3] {
        m.entry_or_insert_with(k, || 0); // 1 takes the last tick; 2 renumbers (1 → 1), takes 2
    }
    m.get_mut(1);
    assert_eq!(m.to_ordered(), vec![(2, 0), (3, 0), (1, 0)]);
}

#[test]
fn evicts_least_recently_used_first_across_pages() {
    let cap = 5_000;
    let mut m = CompactMap::new(std::num::NonZeroUsize::new(cap).unwrap());
    for k in 0..cap as u128 {
        m.entry_or_insert_with(key(k as u64), || k);
    }
    // Touch the first 100 again: they are now the most recent.
    for k in 0..100u64 {
        m.get_mut(key(k));
    }
    m.entry_or_insert_with(key(1_000_000), || 0);
    // 5000 - 5000/64 - 1 = 4921 kept before the insert: the 79 least recent (100..179) went.
    assert_eq!(m.len(), 4_922);
    assert_eq!(m.evicted(), 79);
    assert!((0..100).all(|k| m.get(key(k)).is_some()));
    assert!((100..179).all(|k| m.get(key(k)).is_none()));
    assert!((179..cap as u64).all(|k| m.get(key(k)) == Some(&u128::from(k))));
}

#[test]
fn a_duplicate_key_in_a_snapshot_keeps_the_later_value_and_place() {
    let m = CompactMap::from_ordered(std::num::NonZeroUsize::new(10).unwrap(), vec![(1, 'a'), (2, 'b'), (1, 'c')]);
    assert_eq!(m.len(), 2);
    assert_eq!(m.to_ordered(), vec![(2, 'b'), (1, 'c')]);
    let b = BoundedMap::from_ordered(std::num::NonZeroUsize::new(10).unwrap(), vec![(1u128, 'a'), (2, 'b'), (1, 'c')]);
    assert_eq!(b.to_ordered(), m.to_ordered());
}

#[test]
fn pruning_everything_frees_the_pages() {
    let mut m = CompactMap::new(std::num::NonZeroUsize::new(10_000).unwrap());
    for k in 0..3_000u64 {
        m.entry_or_insert_with(key(k), || k);
    }
    m.retain(|_, v| *v % 3 == 0);
    assert_eq!(m.len(), 1_000);
    assert!((0..3_000).all(|k| (m.get(key(k)) == Some(&k)) == (k % 3 == 0)));
    m.retain(|_, _| false);
    assert!(m.is_empty());
    assert_eq!(m.iter().count(), 0);
    m.entry_or_insert_with(key(5), || 5);
    assert_eq!(m.to_ordered(), vec![(key(5), 5)]);
}
