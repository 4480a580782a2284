//! Bounded keyed state.
//!
//! Every map that grows with traffic (agent sessions, bot pairs, group threads) has a capacity,
//! and when an insert takes it past that capacity it evicts the least recently used entries.
//! "Recently" is a logical tick that every touch advances, not a wall clock: the guest has no
//! clock, and a tick keeps eviction deterministic for a given trace.
//!
//! Eviction is batched: when the map overflows it drops the oldest entries down to 63/64 of the
//! capacity in one O(n) pass, so the amortized cost per insert stays O(1) even at 100,000+ keys,
//! and the order is still strictly least-recently-used first.
//!
//! ```
//! use loopguard_policy::store::BoundedMap;
//! let mut m = BoundedMap::new(std::num::NonZeroUsize::new(2).unwrap());
//! *m.entry_or_insert_with("a", || 0) += 1;
//! *m.entry_or_insert_with("b", || 0) += 1;
//! *m.entry_or_insert_with("c", || 0) += 1; // evicts "a", the least recently used
//! assert_eq!(m.len(), 2);
//! assert!(m.get("a").is_none());
//! ```
//!
//! [`BoundedMap`] holds the sessions and group threads. [`CompactMap`] is the same map for
//! 128-bit digest keys, laid out for a million entries (the bot pairs): dense pages of entries
//! behind an index of entry numbers, because a `HashMap` of a million pairs would not fit the
//! sandbox's memory cap.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::num::NonZeroUsize;

mod compact;
pub use compact::ordered::Ordered;
pub use compact::CompactMap;

#[derive(Debug, Clone)]
struct Slot<V> {
    value: V,
    tick: u64,
}

/// A hash map with a capacity and least-recently-used eviction.
#[derive(Debug, Clone)]
pub struct BoundedMap<K, V> {
    map: HashMap<K, Slot<V>>,
    capacity: usize,
    tick: u64,
    evicted: u64,
}

impl<K: Hash + Eq + Clone, V> BoundedMap<K, V> {
    /// An empty map that holds at most `capacity` entries.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self { map: HashMap::new(), capacity: capacity.get(), tick: 0, evicted: 0 }
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Changes the capacity; evicts at once if the map is now over it.
    pub fn set_capacity(&mut self, capacity: NonZeroUsize) {
        self.capacity = capacity.get();
        if self.map.len() > self.capacity {
            self.evict();
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// How many entries were evicted for lack of room since the map was made.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// Looks an entry up without touching it.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).map(|s| &s.value)
    }

    /// Looks an entry up and marks it as used.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let tick = self.next_tick();
        let slot = self.map.get_mut(key)?;
        slot.tick = tick;
        Some(&mut slot.value)
    }

    /// The entry for `key`, created with `make` if missing, marked as used. Creating an entry
    /// past the capacity evicts the least recently used ones first.
    pub fn entry_or_insert_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> V) -> &mut V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let tick = self.next_tick();
        if self.map.len() >= self.capacity && !self.map.contains_key(key) {
            self.evict();
        }
        let slot = self.map.entry(key.to_owned()).or_insert_with(|| Slot { value: make(), tick });
        slot.tick = tick;
        &mut slot.value
    }

    /// Removes an entry.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.remove(key).map(|s| s.value)
    }

    /// Keeps only the entries for which `keep` is true (pruning idle state).
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.map.retain(|k, s| keep(k, &mut s.value));
    }

    /// Iterates over all entries in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter().map(|(k, s)| (k, &s.value))
    }

    /// Drops the least recently used entries so that one more insert leaves the map at or below
    /// 63/64 of its capacity (at least one entry goes).
    fn evict(&mut self) {
        let target = (self.capacity - self.capacity / 64).saturating_sub(1);
        let excess = self.map.len().saturating_sub(target).max(1).min(self.map.len());
        if excess == 0 {
            return;
        }
        let mut ticks: Vec<u64> = self.map.values().map(|s| s.tick).collect();
        let (_, cutoff, _) = ticks.select_nth_unstable(excess - 1);
        let cutoff = *cutoff;
        let before = self.map.len();
        self.map.retain(|_, s| s.tick > cutoff);
        self.evicted += (before - self.map.len()) as u64;
    }

    /// All entries by reference, least recently used first: what a snapshot serializes, without
    /// copying the state.
    pub fn ordered_refs(&self) -> Vec<(&K, &V)> {
        let mut all: Vec<(&K, &Slot<V>)> = self.map.iter().collect();
        all.sort_unstable_by_key(|(_, s)| s.tick);
        all.into_iter().map(|(k, s)| (k, &s.value)).collect()
    }
}

impl<K: Hash + Eq + Clone, V: Clone> BoundedMap<K, V> {
    /// All entries, least recently used first, for a snapshot.
    pub fn to_ordered(&self) -> Vec<(K, V)> {
        self.ordered_refs().into_iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Rebuilds a map from [`BoundedMap::to_ordered`] output (least recently used first).
    /// Beyond the capacity, the least recently used entries are dropped; a key given twice
    /// keeps its later (more recent) value.
    pub fn from_ordered(capacity: NonZeroUsize, entries: Vec<(K, V)>) -> Self {
        let mut m = Self::new(capacity);
        let skip = entries.len().saturating_sub(m.capacity);
        for (key, value) in entries.into_iter().skip(skip) {
            let tick = m.next_tick();
            m.map.insert(key, Slot { value, tick });
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_first() {
        let mut m = BoundedMap::new(std::num::NonZeroUsize::new(3).unwrap());
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
        let mut m = BoundedMap::new(std::num::NonZeroUsize::new(1000).unwrap());
        for i in 0..100_000u32 {
            m.entry_or_insert_with(&i, || i);
            assert!(m.len() <= 1000);
        }
        assert!(m.len() >= 1000 - 1000 / 64 - 1);
        // The newest keys survive.
        assert!(m.get(&99_999).is_some());
        assert!(m.get(&0).is_none());
    }

    /// Against a plain model (a list, least recently used first): every lookup, removal and
    /// eviction answers as the model does.
    #[test]
    fn behaves_like_a_least_recently_used_list() {
        let mut m: BoundedMap<String, u64> = BoundedMap::new(std::num::NonZeroUsize::new(40).unwrap());
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
        let mut m = BoundedMap::new(std::num::NonZeroUsize::new(10).unwrap());
        for k in [1u32, 2, 3] {
            m.entry_or_insert_with(&k, || k * 10);
        }
        m.get_mut(&1);
        let ordered = m.to_ordered();
        assert_eq!(ordered, vec![(2, 20), (3, 30), (1, 10)]);
        let mut back = BoundedMap::from_ordered(std::num::NonZeroUsize::new(3).unwrap(), ordered);
        back.entry_or_insert_with(&4, || 40);
        assert!(back.get(&2).is_none(), "2 is still the least recently used after a round trip");
    }
}
