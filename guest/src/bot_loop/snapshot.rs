//! Saving and restoring the guard's state.
//!
//! OpenClaw's guard lives in process memory and is lost on restart; a policy component may be
//! re-instantiated at any time, so the host can carry the state across with a snapshot. The
//! snapshot is plain data (serde), in least-recently-used-first order so that a restored guard
//! evicts in the same order the original would have.

use serde::{Deserialize, Serialize};

use super::burst::BurstEntry;
use super::key::KeyDigest;
use super::pair::PairEntry;
use super::BotGuard;
use crate::store::BoundedMap;

/// The whole state of a [`BotGuard`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotGuardSnapshot {
    /// Pair entries by key digest, least recently used first.
    pub pairs: Vec<(KeyDigest, PairEntry)>,
    /// Burst buckets by key digest, least recently used first.
    pub bursts: Vec<(KeyDigest, BurstEntry)>,
    /// When the next opportunistic prune may run (event time, ms).
    pub next_prune_at: i64,
    /// Pair evictions so far.
    pub evicted: u64,
}

/// [`BotGuardSnapshot`] by reference: the same encoding, written without copying the state.
#[derive(Debug, Serialize)]
pub struct BotGuardSnapshotRef<'a> {
    /// Pair entries by key digest, least recently used first.
    pub pairs: Vec<(&'a KeyDigest, &'a PairEntry)>,
    /// Burst buckets by key digest, least recently used first.
    pub bursts: Vec<(&'a KeyDigest, &'a BurstEntry)>,
    /// When the next opportunistic prune may run (event time, ms).
    pub next_prune_at: i64,
    /// Pair evictions so far.
    pub evicted: u64,
}

impl BotGuard {
    /// The state by reference, for writing a snapshot.
    pub fn snapshot_ref(&self) -> BotGuardSnapshotRef<'_> {
        BotGuardSnapshotRef {
            pairs: self.pairs.ordered_refs(),
            bursts: self.bursts.ordered_refs(),
            next_prune_at: self.next_prune_at,
            evicted: self.evicted(),
        }
    }

    /// Copies the state out.
    pub fn snapshot(&self) -> BotGuardSnapshot {
        BotGuardSnapshot {
            pairs: self.pairs.to_ordered(),
            bursts: self.bursts.to_ordered(),
            next_prune_at: self.next_prune_at,
            evicted: self.evicted(),
        }
    }

    /// Rebuilds a guard from a snapshot, with a (possibly new) cap; entries beyond it are
    /// evicted least recently used first (and counted in [`BotGuard::evicted`]).
    pub fn restore(snapshot: BotGuardSnapshot, max_pairs: usize) -> Self {
        let pairs = BoundedMap::from_ordered(max_pairs, snapshot.pairs);
        let bursts = BoundedMap::from_ordered(max_pairs, snapshot.bursts);
        Self { pairs, bursts, next_prune_at: snapshot.next_prune_at, evicted_before: snapshot.evicted }
    }
}
