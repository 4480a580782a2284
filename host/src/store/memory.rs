//! The in-process backend: one map in this process, with the same versions, compare-and-set and
//! time to live as the shared store, so that one replica and many decide the same way. The same
//! bounded map keeps what a [`super::StoredGateway`] last saw of each shared key
//! ([`MemoryStore::remember`]).
//!
//! Memory is bounded: at most `capacity` keys; a write that would pass the cap first drops the
//! expired keys and, if that is not enough, the half of the keys that expire soonest (counted in
//! [`MemoryStore::evicted`]), so that a storm of new keys costs O(log n) per write amortised.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::kv::{next_version, Cas, StateStore, StoreError, Versioned};

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

    /// Keeps `value` as `key`'s for `ttl`, whatever was there: what a replica saw of a shared key.
    pub fn remember(&mut self, key: &str, value: Versioned, ttl: Duration) {
        let now = Instant::now();
        if !self.entries.contains_key(key) && self.entries.len() >= self.capacity {
            self.make_room(now);
        }
        let Versioned { version, blob } = value;
        self.entries.insert(key.to_string(), Entry { version, blob, expires: now + ttl });
    }

    /// Forgets `key`.
    pub fn forget(&mut self, key: &str) {
        self.entries.remove(key);
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
        let version = next_version(expected, micros_since_epoch());
        self.entries.insert(key.to_string(), Entry { version, blob: blob.to_vec(), expires: now + ttl });
        Ok(Cas::Written(version))
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

/// The machine's clock in microseconds since the Unix epoch (0 before it).
fn micros_since_epoch() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn a_write_at_a_stale_version_gets_the_current_value() {
        let mut s = MemoryStore::default();
        let before = micros_since_epoch();
        let Ok(Cas::Written(v1)) = s.cas("k", 0, b"a", TTL) else { panic!("a new key is written") };
        assert!(v1 >= before && v1 <= micros_since_epoch(), "a new key's version is the clock: {v1}");
        assert_eq!(s.cas("k", 0, b"b", TTL).unwrap(), Cas::Conflict(Versioned { version: v1, blob: b"a".to_vec() }));
        let Ok(Cas::Written(v2)) = s.cas("k", v1, b"c", TTL) else { panic!("written at the current version") };
        assert!(v2 > v1);
        assert_eq!(s.get("k").unwrap(), Versioned { version: v2, blob: b"c".to_vec() });
    }

    #[test]
    fn a_key_written_again_after_it_expired_never_repeats_a_version() {
        let mut s = MemoryStore::default();
        let Ok(Cas::Written(old)) = s.cas("k", 0, b"a", Duration::ZERO) else { panic!() };
        assert_eq!(s.get("k").unwrap(), Versioned::default(), "expired");
        let Ok(Cas::Written(new)) = s.cas("k", 0, b"b", TTL) else { panic!() };
        assert!(new > old, "{new} after {old}");
    }

    #[test]
    fn an_expired_key_reads_as_absent() {
        let mut s = MemoryStore::default();
        s.cas("k", 0, b"a", Duration::ZERO).unwrap();
        assert_eq!(s.get("k").unwrap(), Versioned::default());
        assert!(matches!(s.cas("k", 0, b"b", TTL).unwrap(), Cas::Written(_)));
    }

    #[test]
    fn many_keys_stay_under_the_capacity() {
        let mut s = MemoryStore::new(1_000);
        for i in 0..100_000 {
            s.cas(&format!("k{i}"), 0, b"x", TTL).unwrap();
            assert!(s.len() <= 1_000);
        }
        assert!(s.evicted() >= 99_000, "{}", s.evicted());
        assert!(s.get("k99999").unwrap().version > 0, "the newest key survives");
    }
}
