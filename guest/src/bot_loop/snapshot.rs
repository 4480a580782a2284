//! Saving and restoring the guard's state.
//!
//! OpenClaw's guard lives in process memory and is lost on restart; a policy component may be
//! re-instantiated at any time, so the host can carry the state across with a snapshot. The
//! snapshot is plain data (serde), in least-recently-used-first order so that a restored guard
//! evicts in the same order the original would have.
//!
//! Pairs are written in their plain form ([`PairEntry`]), whatever the guard keeps in memory
//! ([`PackedPair`]): the snapshot encoding does not depend on the in-memory layout. A hot swap
//! moves 100,000 pairs, so export serializes the packed pairs as plain entries without building
//! them ([`PairView`]), and import packs each entry into one exactly sized block and fills a map
//! sized once.

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};

use super::burst::BurstEntry;
use super::key::KeyDigest;
use super::packed::PackedPair;
use super::pair::PairEntry;
use super::BotGuard;
use crate::config::profile::DOCUMENTED;
use crate::store::{CompactMap, Ordered};

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
    pub pairs: PairsView<'a>,
    /// Burst buckets by key digest, least recently used first.
    pub bursts: BurstsView<'a>,
    /// When the next opportunistic prune may run (event time, ms).
    pub next_prune_at: i64,
    /// Pair evictions so far.
    pub evicted: u64,
}

/// The pairs in snapshot order, serialized exactly as `BotGuardSnapshot::pairs` (a sequence of
/// `(key, entry)` tuples); it holds 8 bytes per pair, not a copy of the pairs.
#[derive(Debug)]
pub struct PairsView<'a>(Ordered<'a, PackedPair>);

impl Serialize for PairsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut pairs = serializer.serialize_seq(Some(self.0.len()))?;
        for (key, pair) in self.0.iter() {
            pairs.serialize_element(&(key, PairView(pair)))?;
        }
        pairs.end()
    }
}

/// The burst buckets in snapshot order, serialized exactly as `BotGuardSnapshot::bursts`.
#[derive(Debug)]
pub struct BurstsView<'a>(Ordered<'a, BurstEntry>);

impl Serialize for BurstsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bursts = serializer.serialize_seq(Some(self.0.len()))?;
        for entry in self.0.iter() {
            bursts.serialize_element(&entry)?;
        }
        bursts.end()
    }
}

/// A packed pair, serialized exactly as its [`PairEntry`] would be.
#[derive(Debug, Clone, Copy)]
pub struct PairView<'a>(&'a PackedPair);

impl Serialize for PairView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Field for field what `#[derive(Serialize)]` writes for `PairEntry`.
        let mut entry = serializer.serialize_struct("PairEntry", 4)?;
        entry.serialize_field("events", &EventsView(self.0))?;
        entry.serialize_field("window_ms", &self.0.window_ms())?;
        entry.serialize_field("cooldown_started_at", &self.0.cooldown_started_at())?;
        entry.serialize_field("cooldown_until", &self.0.cooldown_until())?;
        entry.end()
    }
}

/// A packed pair's events, serialized as `PairEntry::events` (a `Vec<Event>`).
struct EventsView<'a>(&'a PackedPair);

impl Serialize for EventsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = self.0.len();
        let mut events = serializer.serialize_seq(Some(len))?;
        for i in 0..len {
            events.serialize_element(&self.0.event(i))?;
        }
        events.end()
    }
}

impl BotGuard {
    /// The state by reference, for writing a snapshot.
    pub fn snapshot_ref(&self) -> BotGuardSnapshotRef<'_> {
        BotGuardSnapshotRef {
            pairs: PairsView(self.pairs.ordered()),
            bursts: BurstsView(self.bursts.ordered()),
            next_prune_at: self.next_prune_at,
            evicted: self.evicted(),
        }
    }

    /// Copies the state out.
    pub fn snapshot(&self) -> BotGuardSnapshot {
        BotGuardSnapshot {
            pairs: self.pairs.ordered().iter().map(|(k, p)| (k, p.unpack())).collect(),
            bursts: self.bursts.to_ordered(),
            next_prune_at: self.next_prune_at,
            evicted: self.evicted(),
        }
    }

    /// Rebuilds a guard from a snapshot, with a (possibly new) cap; entries beyond it are
    /// evicted least recently used first (and counted in [`BotGuard::evicted`]).
    pub fn restore(snapshot: BotGuardSnapshot, max_pairs: usize) -> Self {
        // Entries the cap drops are skipped before they are packed.
        let skip = snapshot.pairs.len().saturating_sub(max_pairs.max(1));
        let packed = snapshot.pairs.into_iter().skip(skip).map(|(k, e)| (k, PackedPair::pack(&e))).collect();
        let pairs = CompactMap::from_ordered(max_pairs, packed);
        let bursts = CompactMap::from_ordered(max_pairs, snapshot.bursts);
        Self {
            pairs,
            bursts,
            next_prune_at: snapshot.next_prune_at,
            evicted_before: snapshot.evicted,
            rules: DOCUMENTED.bot,
        }
    }
}
