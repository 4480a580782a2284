//! Bounded keyed state.
//!
//! Every map that grows with traffic (agent sessions, bot pairs, group threads) is a
//! [`BoundedMap`]: it has a capacity, and when an insert takes it past that capacity it evicts the
//! least recently used entries. "Recently" is a logical tick that every touch advances, not a wall
//! clock: the guest has no clock, and a tick keeps eviction deterministic for a given trace.
//!
//! Eviction is batched: when the map overflows it drops the oldest entries down to 63/64 of the
//! capacity in one O(n) pass, so the amortized cost per insert stays O(1) even at 100,000+ keys,
//! and the order is still strictly least-recently-used first.
//!
//! ```
//! use loopguard_policy::store::BoundedMap;
//! let mut m = BoundedMap::new(2);
//! *m.entry_or_insert_with("a", || 0) += 1;
//! *m.entry_or_insert_with("b", || 0) += 1;
//! *m.entry_or_insert_with("c", || 0) += 1; // evicts "a", the least recently used
//! assert_eq!(m.len(), 2);
//! assert!(m.get("a").is_none());
//! ```
//!
//! [`CompactMap`] is the same map for 128-bit digest keys, laid out for a million entries (the
//! bot pairs): dense pages of entries behind an index of entry numbers.

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;
use serde::{Deserialize, Serialize};

use crate::bytes::same_bytes;

// Explicit paths: the hostile-policy test fixture includes this file with `#[path]`, where a
// plain `mod compact;` would be looked for beside it.
#[path = "store/compact.rs"]
mod compact;
#[cfg(test)]
#[path = "store/compact_tests.rs"]
mod compact_tests;
pub use compact::{CompactMap, Ordered};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Slot<K, V> {
    key: K,
    value: V,
    tick: u64,
}

/// Key equality as the map compares keys. Why not plain `==`: in the component, `==` on strings
/// is a call to a byte-at-a-time `memcmp`, and a session key is compared on every decision;
/// [`same_bytes`] compares sixteen bytes per step.
pub trait SameKey: Hash + Eq {
    /// `self == other`.
    fn same(&self, other: &Self) -> bool;
}

impl SameKey for str {
    #[inline]
    fn same(&self, other: &Self) -> bool {
        same_bytes(self.as_bytes(), other.as_bytes())
    }
}

macro_rules! same_key_by_eq {
    ($($t:ty),*) => {$(
        impl SameKey for $t {
            #[inline]
            fn same(&self, other: &Self) -> bool {
                self == other
            }
        }
    )*};
}
same_key_by_eq!(u32, u64, u128);

/// A hash map with a capacity and least-recently-used eviction.
///
/// Keys are hashed with foldhash, seeded per map from std's random seed like std's `RandomState`:
/// session keys are looked up twice per tool-call decision, and SipHash on them was ~4% of it.
///
/// A lookup hashes its key once (a `HashTable` with the hash computed here, where a `HashMap`
/// entry-or-insert hashed it twice), and the entry touched last is remembered by its bucket:
/// a gateway's outcome follows its own check in the same session, so the second lookup of a
/// decision compares one key and hashes nothing. Any insert or removal forgets that bucket (a
/// resize moves entries), so it is never stale.
#[derive(Debug, Clone)]
pub struct BoundedMap<K, V> {
    table: HashTable<Slot<K, V>>,
    hasher: foldhash::fast::RandomState,
    /// Bucket of the entry touched last, if no insert or removal came since.
    last: Option<usize>,
    capacity: usize,
    tick: u64,
    evicted: u64,
}

impl<K: Hash + Eq + Clone, V> BoundedMap<K, V> {
    /// An empty map that holds at most `capacity` entries (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            table: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            last: None,
            capacity: capacity.max(1),
            tick: 0,
            evicted: 0,
        }
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Changes the capacity; evicts at once if the map is now over it.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        if self.table.len() > self.capacity {
            self.evict();
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// How many entries were evicted for lack of room since the map was made.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// `Ok(bucket)` of `key` (the remembered one when it holds `key`, else found by hash), or
    /// `Err(hash)` when it is absent: the hash an insert that follows needs.
    #[inline]
    fn bucket<Q>(&self, key: &Q) -> Result<usize, u64>
    where
        K: Borrow<Q>,
        Q: SameKey + ?Sized,
    {
        if let Some(i) = self.last {
            if self.table.get_bucket(i).is_some_and(|s| s.key.borrow().same(key)) {
                return Ok(i);
            }
        }
        let hash = self.hasher.hash_one(key);
        self.table.find_bucket_index(hash, |s| s.key.borrow().same(key)).ok_or(hash)
    }

    /// Looks an entry up without touching it.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: SameKey + ?Sized,
    {
        let i = self.bucket(key).ok()?;
        self.table.get_bucket(i).map(|s| &s.value)
    }

    /// Looks an entry up and marks it as used.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: SameKey + ?Sized,
    {
        let tick = self.next_tick();
        let i = self.bucket(key).ok()?;
        self.last = Some(i);
        let slot = self.table.get_bucket_mut(i)?;
        slot.tick = tick;
        Some(&mut slot.value)
    }

    /// The entry for `key`, created with `make` if missing, marked as used. Creating an entry
    /// past the capacity evicts the least recently used ones first.
    pub fn entry_or_insert_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> V) -> &mut V
    where
        K: Borrow<Q>,
        Q: SameKey + ToOwned<Owned = K> + ?Sized,
    {
        let tick = self.next_tick();
        let i = match self.bucket(key) {
            Ok(i) => i,
            Err(hash) => self.insert_new(hash, Slot { key: key.to_owned(), value: make(), tick }),
        };
        self.last = Some(i);
        let slot = self.table.get_bucket_mut(i).expect("the bucket was just found or filled");
        slot.tick = tick;
        &mut slot.value
    }

    /// Inserts a key known to be absent, evicting first when the map is full; its bucket.
    fn insert_new(&mut self, hash: u64, slot: Slot<K, V>) -> usize {
        if self.table.len() >= self.capacity {
            self.evict();
        }
        let hasher = &self.hasher;
        self.table.insert_unique(hash, slot, |s| hasher.hash_one(&s.key)).bucket_index()
    }

    /// Removes an entry.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: SameKey + ?Sized,
    {
        let i = self.bucket(key).ok()?;
        self.last = None;
        let entry = self.table.get_bucket_entry(i).ok()?;
        Some(entry.remove().0.value)
    }

    /// Keeps only the entries for which `keep` is true (pruning idle state).
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.last = None;
        self.table.retain(|s| keep(&s.key, &mut s.value));
    }

    /// Iterates over all entries in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.table.iter().map(|s| (&s.key, &s.value))
    }

    /// Drops the least recently used entries so that one more insert leaves the map at or below
    /// 63/64 of its capacity (at least one entry goes).
    fn evict(&mut self) {
        let target = (self.capacity - self.capacity / 64).saturating_sub(1);
        let excess = self.table.len().saturating_sub(target).max(1).min(self.table.len());
        if excess == 0 {
            return;
        }
        let mut ticks: Vec<u64> = self.table.iter().map(|s| s.tick).collect();
        let (_, cutoff, _) = ticks.select_nth_unstable(excess - 1);
        let cutoff = *cutoff;
        let before = self.table.len();
        self.last = None;
        self.table.retain(|s| s.tick > cutoff);
        self.evicted += (before - self.table.len()) as u64;
    }
}

impl<K: Hash + Eq + Clone, V> BoundedMap<K, V> {
    /// All entries by reference, least recently used first: what a snapshot serializes, without
    /// copying the state.
    pub fn ordered_refs(&self) -> Vec<(&K, &V)> {
        let mut all: Vec<&Slot<K, V>> = self.table.iter().collect();
        all.sort_unstable_by_key(|s| s.tick);
        all.into_iter().map(|s| (&s.key, &s.value)).collect()
    }
}

impl<K: Hash + Eq + Clone + Ord, V: Clone> BoundedMap<K, V> {
    /// All entries, least recently used first, for a snapshot.
    pub fn to_ordered(&self) -> Vec<(K, V)> {
        self.ordered_refs().into_iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Rebuilds a map from [`BoundedMap::to_ordered`] output (least recently used first).
    /// Beyond the capacity, the least recently used entries are dropped; a key given twice
    /// keeps its later (more recent) value.
    pub fn from_ordered(capacity: usize, entries: Vec<(K, V)>) -> Self {
        let mut m = Self::new(capacity);
        let skip = entries.len().saturating_sub(m.capacity);
        let hasher = m.hasher.clone();
        m.table.reserve(entries.len() - skip, |s| hasher.hash_one(&s.key));
        for (key, value) in entries.into_iter().skip(skip) {
            let tick = m.next_tick();
            let hash = m.hasher.hash_one(&key);
            match m.table.find_mut(hash, |s| s.key == key) {
                Some(s) => *s = Slot { key, value, tick },
                None => {
                    let hasher = &m.hasher;
                    m.table.insert_unique(hash, Slot { key, value, tick }, |s| hasher.hash_one(&s.key));
                }
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_first() {
        let mut m = BoundedMap::new(3);
        for k in ["a", "b", "c"] {
            m.entry_or_insert_with(k, || 0);
        }
        m.get_mut("a"); // a is now the most recent
        m.entry_or_insert_with("d", || 0);
        assert!(m.get("b").is_none(), "b was least recently used");
        assert!(m.get("a").is_some() && m.get("c").is_some() && m.get("d").is_some());
        assert_eq!(m.evicted(), 1);
    }

    #[test]
    fn stays_bounded_under_many_keys() {
        let mut m = BoundedMap::new(1000);
        for i in 0..100_000u32 {
            m.entry_or_insert_with(&i, || i);
            assert!(m.len() <= 1000);
        }
        assert!(m.len() >= 1000 - 1000 / 64 - 1);
        // The newest keys survive.
        assert!(m.get(&99_999).is_some());
        assert!(m.get(&0).is_none());
    }

    /// The bucket of the entry touched last is only a shortcut: after removals, resizes,
    /// evictions and clones, every lookup still answers for its own key, as a plain model does.
    #[test]
    fn the_last_entry_shortcut_never_answers_for_another_key() {
        let mut m: BoundedMap<String, u64> = BoundedMap::new(40);
        let mut model: Vec<(String, u64)> = Vec::new(); // least recently used first
        let mut seed = 0x9e37_79b9_u64;
        for step in 0..20_000u64 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = format!("agent:main:session-{}", (seed >> 33) % 60);
            let pos = model.iter().position(|(k, _)| *k == key);
            match (seed >> 20) % 5 {
                0 => {
                    assert_eq!(m.remove(key.as_str()), pos.map(|i| model.remove(i).1), "remove at {step}");
                }
                1 => {
                    let got = m.get_mut(key.as_str()).map(|v| *v);
                    assert_eq!(got, pos.map(|i| model[i].1), "get_mut at {step}");
                    if let Some(i) = pos {
                        let e = model.remove(i);
                        model.push(e);
                    }
                }
                2 if step % 997 == 0 => m = m.clone(),
                _ => {
                    let v = m.entry_or_insert_with(key.as_str(), || step);
                    *v += 1;
                    match pos {
                        Some(i) => {
                            let (k, old) = model.remove(i);
                            model.push((k, old + 1));
                        }
                        None => {
                            if model.len() >= 40 {
                                let target = 39; // the map evicts down to 63/64 of 40, less one
                                let excess = (model.len() - target).max(1);
                                model.drain(..excess);
                            }
                            model.push((key.clone(), step + 1));
                        }
                    }
                }
            }
            assert_eq!(m.get(key.as_str()).copied(), model.iter().find(|(k, _)| *k == key).map(|e| e.1));
        }
        assert_eq!(m.to_ordered(), model);
    }

    #[test]
    fn ordered_round_trip_keeps_lru_order() {
        let mut m = BoundedMap::new(10);
        for k in [1u32, 2, 3] {
            m.entry_or_insert_with(&k, || k * 10);
        }
        m.get_mut(&1);
        let ordered = m.to_ordered();
        assert_eq!(ordered, vec![(2, 20), (3, 30), (1, 10)]);
        let mut back = BoundedMap::from_ordered(3, ordered);
        back.entry_or_insert_with(&4, || 40);
        assert!(back.get(&2).is_none(), "2 is still the least recently used after a round trip");
    }
}
