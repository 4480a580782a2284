//! Saving and restoring the guard's state.
//!
//! OpenClaw's guard lives in process memory and is lost on restart; a policy component may be
//! re-instantiated at any time, so the host can carry the state across with a snapshot. The
//! snapshot is plain data (serde), in least-recently-used-first order so that a restored guard
//! evicts in the same order the original would have.
//!
//! Pairs are written as plain [`PairEntry`] records, whatever the guard keeps in memory
//! ([`Pair`]'s block): the snapshot encoding does not depend on the in-memory layout. A hot swap
//! moves 100,000 pairs, so export serializes the pairs as entries without building them
//! ([`PairView`]), and import builds each pair's block exactly sized and fills a map sized once.

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};

use super::burst::BurstEntry;
use super::key::KeyDigest;
use super::pair::{tag_of, Pair};
use crate::store::Ordered;
use crate::time::Millis;

/// One recorded event of a pair, as a snapshot holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The event's `now` (ms).
    pub ts: i64,
    /// The event id's tag ([`super::key::event_tag`]), 0 when it had none. Snapshots written
    /// before pairs kept tags hold the id's 64-bit blake3 digest here; they load as
    /// [`tag_of`] that digest.
    pub id: u64,
}

/// The state of one pair, as a snapshot holds it (the encoding of every snapshot so far).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairEntry {
    /// Retained events, in arrival order.
    pub events: Vec<Event>,
    /// The window the last event used; the opportunistic prune uses it.
    pub window_ms: i64,
    /// When the current cooldown began (0 = never).
    pub cooldown_started_at: i64,
    /// When the current cooldown ends, exclusive (0 = never).
    pub cooldown_until: i64,
}

impl From<&PairEntry> for Pair {
    fn from(e: &PairEntry) -> Self {
        let events: Vec<_> =
            e.events.iter().map(|ev| super::pair::Event { ts: Millis(ev.ts), tag: tag_of(ev.id) }).collect();
        let cooldown = (Millis(e.cooldown_started_at), Millis(e.cooldown_until));
        Pair::from_parts(Millis(e.window_ms), cooldown, &events)
    }
}

impl From<&Pair> for PairEntry {
    fn from(p: &Pair) -> Self {
        let (started, until) = p.cooldown();
        PairEntry {
            events: p.events().map(|e| Event { ts: e.ts.ms(), id: e.tag.into() }).collect(),
            window_ms: p.window().ms(),
            cooldown_started_at: started.ms(),
            cooldown_until: until.ms(),
        }
    }
}

/// The whole state of a [`super::BotGuard`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotGuardSnapshot {
    /// Pair entries by key digest, least recently used first.
    pub pairs: Vec<(KeyDigest, PairEntry)>,
    /// Burst buckets by key digest, least recently used first.
    pub bursts: Vec<(KeyDigest, BurstEntry)>,
    /// When the next opportunistic prune may run (event time).
    pub next_prune_at: Millis,
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
    /// When the next opportunistic prune may run (event time).
    pub next_prune_at: Millis,
    /// Pair evictions so far.
    pub evicted: u64,
}

/// The pairs in snapshot order, serialized exactly as `BotGuardSnapshot::pairs` (a sequence of
/// `(key, entry)` tuples); it holds 8 bytes per pair, not a copy of the pairs.
#[derive(Debug)]
pub struct PairsView<'a>(pub(super) Ordered<'a, Pair>);

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
pub struct BurstsView<'a>(pub(super) Ordered<'a, BurstEntry>);

impl Serialize for BurstsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bursts = serializer.serialize_seq(Some(self.0.len()))?;
        for entry in self.0.iter() {
            bursts.serialize_element(&entry)?;
        }
        bursts.end()
    }
}

/// A pair, serialized exactly as its [`PairEntry`] would be.
#[derive(Debug, Clone, Copy)]
pub struct PairView<'a>(&'a Pair);

impl Serialize for PairView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Field for field what `#[derive(Serialize)]` writes for `PairEntry`.
        let mut entry = serializer.serialize_struct("PairEntry", 4)?;
        entry.serialize_field("events", &EventsView(self.0))?;
        let (started, until) = self.0.cooldown();
        entry.serialize_field("window_ms", &self.0.window())?;
        entry.serialize_field("cooldown_started_at", &started)?;
        entry.serialize_field("cooldown_until", &until)?;
        entry.end()
    }
}

/// A pair's events, serialized as `PairEntry::events` (a `Vec<Event>`).
struct EventsView<'a>(&'a Pair);

impl Serialize for EventsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let all = self.0.events();
        let mut events = serializer.serialize_seq(Some(all.len()))?;
        for e in all {
            events.serialize_element(&Event { ts: e.ts.ms(), id: e.tag.into() })?;
        }
        events.end()
    }
}
