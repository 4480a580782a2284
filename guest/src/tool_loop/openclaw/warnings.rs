//! Bucketed warning de-duplication (docs/spec/tool-loop.md §4).
//!
//! A loop that keeps going would otherwise log a warning on every call. OpenClaw emits a warning
//! once per bucket of ten (`floor(count / 10)`), per warning key, and keeps at most 256 keys per
//! session, dropping the earliest-inserted.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::digest::{key_digest, tag, Digest};

/// `LOOP_WARNING_BUCKET_SIZE`.
pub const BUCKET_SIZE: u32 = 10;
/// `MAX_LOOP_WARNING_KEYS`.
pub const MAX_KEYS: usize = 256;

/// A session's last emitted bucket per warning key, in insertion order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningBuckets {
    keys: VecDeque<(Digest, u32)>,
}

impl WarningBuckets {
    /// Whether a warning with `count` under `key` is newly emitted; records it if so.
    /// `raw_run` is the run id exactly as passed (a non-empty one prefixes the key).
    pub fn should_emit(&mut self, key: &Digest, raw_run: Option<&str>, count: u32) -> bool {
        let key = match raw_run.filter(|r| !r.is_empty()) {
            Some(run) => key_digest(tag::WARN_KEY, &[b"run", run.as_bytes(), key]),
            None => *key,
        };
        let bucket = count / BUCKET_SIZE;
        match self.keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, last)) => {
                if bucket <= *last {
                    return false;
                }
                *last = bucket;
                true
            }
            None => {
                if bucket == 0 {
                    return false; // bucket 0 is never above the starting value
                }
                self.keys.push_back((key, bucket));
                if self.keys.len() > MAX_KEYS {
                    self.keys.pop_front();
                }
                true
            }
        }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_once_per_bucket_of_ten_and_never_below_ten() {
        let mut w = WarningBuckets::default();
        let k = [1; 16];
        let emitted: Vec<u32> = (1..=45).filter(|&n| w.should_emit(&k, None, n)).collect();
        assert_eq!(emitted, vec![10, 20, 30, 40]);
    }

    #[test]
    fn bucket_only_moves_forward() {
        let mut w = WarningBuckets::default();
        let k = [1; 16];
        assert!(w.should_emit(&k, None, 25));
        assert!(!w.should_emit(&k, None, 12), "a lower bucket after a higher one stays silent");
        assert!(!w.should_emit(&k, None, 29));
        assert!(w.should_emit(&k, None, 30));
    }

    #[test]
    fn run_prefix_uses_the_raw_run_id() {
        let mut w = WarningBuckets::default();
        let k = [1; 16];
        assert!(w.should_emit(&k, Some("r1"), 10));
        assert!(w.should_emit(&k, Some(" r1"), 10), "not trimmed: another key");
        assert!(w.should_emit(&k, None, 10));
        assert!(!w.should_emit(&k, Some(""), 10), "empty run means no prefix");
    }

    #[test]
    fn keeps_at_most_256_keys_dropping_the_earliest_inserted() {
        let mut w = WarningBuckets::default();
        for i in 0..=256u32 {
            let mut k = [0u8; 16];
            k[..4].copy_from_slice(&i.to_le_bytes());
            assert!(w.should_emit(&k, None, 10));
        }
        assert_eq!(w.len(), 256);
        let mut first = [0u8; 16];
        first[..4].copy_from_slice(&0u32.to_le_bytes());
        assert!(w.should_emit(&first, None, 10), "the first key was dropped, so it emits again");
        let mut second = [0u8; 16];
        second[..4].copy_from_slice(&2u32.to_le_bytes());
        assert!(!w.should_emit(&second, None, 10), "key 2 is still held");
    }
}
