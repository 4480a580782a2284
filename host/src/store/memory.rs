//! The in-process backend: one map in this process, with the same versions, compare-and-set and
//! time to live as the shared store, so that one replica and many decide the same way.
//!
//! Memory is bounded: at most `capacity` keys; a write that would pass the cap first drops the
//! expired keys and, if that is not enough, the half of the keys that expire soonest (counted in
//! [`MemoryStore::evicted`]), so that a storm of new keys costs O(log n) per write amortised.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::kv::{Cas, StateStore, StoreError, Versioned};

/// Keys kept by default (about 300 bytes each at the default budgets).
pub const DEFAULT_CAPACITY: usize = 100_000;

/// One key: its version, blob and expiry.
#[derive(Debug)]
struct Entry {
    version: u64,
    blob: Vec<u8>,
    expires: Instant,
}

/// A map of versioned blobs in this process.
#[derive(Debug)]
pub struct MemoryStore {
    entries: HashMap<String, Entry>,
    capacity: usize,
    evicted: u64,
}

impl MemoryStore {
    /// An empty store of at most `capacity` keys (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self { entries: HashMap::new(), capacity: capacity.max(1), evicted: 0 }
    }

    /// Keys held now (expired ones included until a write drops them).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Live keys dropped by the capacity cap.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Forgets every key (a replica drops its local state when the shared store answers again).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Drops expired keys, then the soonest-expiring half if still full.
    fn make_room(&mut self, now: Instant) {
        self.entries.retain(|_, e| e.expires > now);
        if self.entries.len() < self.capacity {
            return;
        }
        let mut expiries: Vec<Instant> = self.entries.values().map(|e| e.expires).collect();
        let cut = expiries.len() / 2;
        let (_, &mut median, _) = expiries.select_nth_unstable(cut);
        let before = self.entries.len();
        self.entries.retain(|_, e| e.expires > median);
        self.evicted += (before - self.entries.len()) as u64;
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl StateStore for MemoryStore {
    fn get(&mut self, key: &str) -> Result<Versioned, StoreError> {
        let now = Instant::now();
        Ok(match self.entries.get(key) {
            Some(e) if e.expires > now => Versioned { version: e.version, blob: e.blob.clone() },
            _ => Versioned::default(),
        })
    }

    fn cas(&mut self, key: &str, expected: u64, blob: &[u8], ttl: Duration) -> Result<Cas, StoreError> {
        let now = Instant::now();
        let current = self.get(key)?;
        if current.version != expected {
            return Ok(Cas::Conflict(current));
        }
        if !self.entries.contains_key(key) && self.entries.len() >= self.capacity {
            self.make_room(now);
        }
        let version = expected + 1;
        self.entries.insert(key.to_string(), Entry { version, blob: blob.to_vec(), expires: now + ttl });
        Ok(Cas::Written(version))
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn a_write_at_a_stale_version_gets_the_current_value() {
        let mut s = MemoryStore::default();
        assert_eq!(s.cas("k", 0, b"a", TTL).unwrap(), Cas::Written(1));
        assert_eq!(s.cas("k", 0, b"b", TTL).unwrap(), Cas::Conflict(Versioned { version: 1, blob: b"a".to_vec() }));
        assert_eq!(s.cas("k", 1, b"c", TTL).unwrap(), Cas::Written(2));
        assert_eq!(s.get("k").unwrap(), Versioned { version: 2, blob: b"c".to_vec() });
    }

    #[test]
    fn an_expired_key_reads_as_absent() {
        let mut s = MemoryStore::default();
        s.cas("k", 0, b"a", Duration::ZERO).unwrap();
        assert_eq!(s.get("k").unwrap(), Versioned::default());
        assert_eq!(s.cas("k", 0, b"b", TTL).unwrap(), Cas::Written(1));
    }

    #[test]
    fn many_keys_stay_under_the_capacity() {
        let mut s = MemoryStore::new(1_000);
        for i in 0..100_000 {
            s.cas(&format!("k{i}"), 0, b"x", TTL).unwrap();
            assert!(s.len() <= 1_000);
        }
        assert!(s.evicted() >= 99_000, "{}", s.evicted());
        assert_eq!(s.get("k99999").unwrap().version, 1, "the newest key survives");
    }
}
