//! What every store backend speaks: a versioned value, compare-and-set, and the store's errors.
//! Its own file so that the backends and the decision loop share it without importing each
//! other through `store/mod.rs`.

use std::fmt;
use std::time::Duration;

/// One key's state as the store holds it: a version that grows with every write (see
/// [`next_version`]), and the policy's blob (empty: the key has no state; a deleted state is kept
/// as an empty blob so that versions never go back).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Versioned {
    /// 0 for a key never written (or expired).
    pub version: u64,
    /// The policy's state blob for this key.
    pub blob: Vec<u8>,
}

/// What a compare-and-set did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cas {
    /// Written; the key now has this version.
    Written(u64),
    /// Another writer came first; this is what the key holds now.
    Conflict(Versioned),
}

/// A store that keeps one versioned blob per key.
pub trait StateStore: Send {
    /// Reads a key (`Versioned::default()` when absent).
    fn get(&mut self, key: &str) -> Result<Versioned, StoreError>;
    /// Writes `blob` at a new version ([`next_version`] of `expected`, on the store's clock) if the
    /// key is still at version `expected`, with a time to live; otherwise returns what the key
    /// holds.
    fn cas(&mut self, key: &str, expected: u64, blob: &[u8], ttl: Duration) -> Result<Cas, StoreError>;
    /// What the store is, for logs (`memory`, `redis://127.0.0.1:6379`, never a password).
    fn describe(&self) -> String;
}

/// Why the store did not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// What kind of failure.
    pub kind: StoreErrorKind,
    /// The store's own words.
    pub reason: String,
}

/// The kinds of store failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// No connection, or it broke.
    Unreachable,
    /// No answer within the deadline.
    Timeout,
    /// The store answered with an error (out of memory, read-only replica, …).
    Refused,
    /// The key holds a value this host cannot read (not written by loopguard, or a newer format).
    Unreadable,
}

impl StoreError {
    /// A store error.
    pub fn new(kind: StoreErrorKind, reason: impl Into<String>) -> Self {
        Self { kind, reason: reason.into() }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            StoreErrorKind::Unreachable => "unreachable",
            StoreErrorKind::Timeout => "timed out",
            StoreErrorKind::Refused => "refused the command",
            StoreErrorKind::Unreadable => "holds an unreadable value",
        };
        write!(f, "store {kind}: {}", self.reason)
    }
}

impl std::error::Error for StoreError {}

/// The version a write after `current` gets: the store's clock in microseconds since the Unix
/// epoch, or one more than `current`, whichever is larger.
///
/// Why not `current + 1`: a replica remembers the last value and version it saw of each key and
/// writes at that version without reading first (one round trip). Counting from 1, a key that
/// expired, was evicted, or lost its last writes in a failover would count 1, 2, 3, … again, and a
/// replica still remembering the old version 3 would win its compare-and-set on a state it never
/// read. With the clock, a key's versions never repeat, across expiry and eviction too, as long as
/// the store's clock does not go back by more than the time between the lost write and the next.
pub fn next_version(current: u64, now_micros: u64) -> u64 {
    current.saturating_add(1).max(now_micros)
}

/// Versions below this were counted from 1 (loopguard 1.0's rule, still written by a replica not
/// yet upgraded): they may repeat, so a replica never writes at one it remembers; it reads first.
/// 2^40 µs is 1970-01-13: no clock-made version is below it, no counted one reaches it.
pub const COUNTED_BELOW: u64 = 1 << 40;

/// The value layout of the shared store: a 16-digit hex version, then the blob. A fixed-width
/// text header lets the store's script compare versions as plain strings; the script writes it
/// (`redis::CAS_SCRIPT`), so this is the tests' writer.
#[cfg(test)]
pub(crate) fn encode(version: u64, blob: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + blob.len());
    out.extend_from_slice(format!("{version:016x}").as_bytes());
    out.extend_from_slice(blob);
    out
}

/// Reads a stored value: its 16-digit hex version header, then the blob.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn decode(value: &[u8]) -> Result<Versioned, StoreError> {
    let header = value.get(..16).and_then(|h| std::str::from_utf8(h).ok());
    let version = header.and_then(|h| u64::from_str_radix(h, 16).ok()).ok_or_else(|| {
        StoreError::new(StoreErrorKind::Unreadable, "the value does not start with a 16-digit hex version")
    })?;
    Ok(Versioned { version, blob: value[16..].to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_back_as_written() {
        let v = encode(0x2a, b"LGSNAP..");
        assert_eq!(&v[..16], b"000000000000002a");
        assert_eq!(decode(&v).unwrap(), Versioned { version: 42, blob: b"LGSNAP..".to_vec() });
    }

    #[test]
    fn versions_follow_the_clock_and_never_go_back() {
        assert_eq!(next_version(0, 1_765_000_000_000_000), 1_765_000_000_000_000, "a new key: the clock");
        assert_eq!(next_version(7, 1_765_000_000_000_000), 1_765_000_000_000_000, "a counted version: the clock");
        let v = 1_765_000_000_000_000;
        assert_eq!(next_version(v, v), v + 1, "two writes in one microsecond");
        assert_eq!(next_version(v, v - 5_000_000), v + 1, "a clock 5 s behind: still forward");
        assert!(next_version(0, v) >= COUNTED_BELOW, "a clock-made version is never taken for a counted one");
    }

    #[test]
    fn a_foreign_value_is_unreadable() {
        assert_eq!(decode(b"hello").unwrap_err().kind, StoreErrorKind::Unreadable);
        assert_eq!(decode(b"zzzzzzzzzzzzzzzzLGSNAP").unwrap_err().kind, StoreErrorKind::Unreadable);
    }
}
