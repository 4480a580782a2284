//! How the guard keeps a pair in memory: the whole [`PairEntry`] packed into one block of words.
//!
//! Why: a gateway may track a million bot pairs in at most 256 bytes of guest memory each, even
//! when a pair holds a full default window (20 events). The plain form
//! spends 16 bytes per event (an `i64` timestamp and a 64-bit id digest), a `Vec` and three
//! `i64`s in the map bucket: about 440 bytes for a full window. A [`PackedPair`] is a single
//! `Box<[u64]>` (8 bytes on wasm32, so a map bucket is 32 bytes) whose block reads
//!
//! | word | compact layout (nearly every pair) |
//! |---|---|
//! | 0 | `base`: the timestamp the event offsets count from |
//! | 1 | `cooldown_started_at` |
//! | 2 | `window_ms` (high half, never 0) and `cooldown_until − cooldown_started_at` (low half) |
//! | 3.. | one event per word: ms after `base` (high half) and the event id's tag (low half); free slots hold `u64::MAX` |
//!
//! so a full default window is 23 words, one 192-byte allocator chunk.
//!
//! **Exact for every input.** Each stored value decodes to exactly the `i64` the plain rules would
//! hold. An event older than `base` (events arrive out of order) rebases the offsets in place.
//! What the compact layout cannot hold (events more than 2^32 − 2 ms ≈ 49.7 days apart, e.g. a
//! timestamp years ahead next to current ones; a window or a cooldown longer than that; odd values
//! from a snapshot) switches the pair to the **wide** layout, `[window_ms, cooldown_started_at, 0,
//! cooldown_until]` and two words per event `(ts, tag)`. The wide layout is rare, so it is served by
//! unpacking to a [`PairEntry`], running its rules and packing again (back to compact when the
//! values allow it), and the compact fast paths are tested against those same rules.
//!
//! **Event ids are 32-bit tags** ([`super::key::event_tag`]): two *different* ids with the same
//! tag in one pair's window make the second look like a replay (odds below 20 in 2^32 per event
//! at the default budget; docs/SPEC-CHOICES.md). Snapshots written before pairs were packed hold
//! 64-bit digests, which load as [`tag_of`] the digest.
//!
//! Growth: slots grow 1 → 2 → 4 → … but never past the pair's budget unless future-dated events
//! need more (the event that would exceed the budget trips the pair instead of being stored).
//! The prune and a trip give unused slots back ([`PackedPair::shrink`]); the hot path does not, so
//! a pair whose last event expired reuses its slot for the next one without reallocating.

use super::pair::{Event, PairEntry};

/// A free event slot in the compact layout (its offset, `u32::MAX`, is never used).
const EMPTY: u64 = u64::MAX;
/// Header words of the compact layout.
const HEADER: usize = 3;
/// Header words of the wide layout.
const WIDE_HEADER: usize = 4;
/// The largest offset from `base` a compact event may have.
const MAX_OFFSET: u64 = u32::MAX as u64 - 1;
/// The low half of a word.
const LOW: u64 = u32::MAX as u64;

/// The tag a pair keeps for a snapshot's event id: its low 32 bits, 0 only for "no id". A tag is
/// its own tag, so snapshots written with tags and older ones written with whole digests both
/// load.
pub fn tag_of(id: u64) -> u32 {
    if id == 0 {
        0
    } else {
        (id as u32).max(1)
    }
}

/// `t − base` as an unsigned offset, or `None` when `t` is before `base`. Exact for any two `i64`s:
/// their difference, when not negative, always fits a `u64`.
fn offset_of(t: i64, base: i64) -> Option<u64> {
    (t >= base).then(|| t.wrapping_sub(base) as u64)
}

/// One pair's state, packed (see the module docs for the layouts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedPair {
    words: Box<[u64]>,
}

impl PackedPair {
    /// A fresh pair (spec §2.4 step 7) with one free slot: a new pair always records the event
    /// that created it.
    pub fn new(window_ms: i64) -> Self {
        match u32::try_from(window_ms) {
            Ok(w) if w != 0 => Self { words: Box::new([0, 0, u64::from(w) << 32, EMPTY]) },
            _ => Self::pack(&PairEntry::new(window_ms)),
        }
    }

    /// Packs a plain entry: compact when its values fit, wide otherwise. Exactly sized.
    pub fn pack(entry: &PairEntry) -> Self {
        Self::pack_compact(entry).unwrap_or_else(|| Self::pack_wide(entry))
    }

    fn pack_compact(entry: &PairEntry) -> Option<Self> {
        let window = u32::try_from(entry.window_ms).ok().filter(|&w| w != 0)?;
        let cooldown = entry.cooldown_until.checked_sub(entry.cooldown_started_at)?;
        let cooldown = u32::try_from(cooldown).ok()?;
        let base = entry.events.iter().map(|e| e.ts).min().unwrap_or(0);
        let mut words = Vec::with_capacity(HEADER + entry.events.len());
        words.extend([base as u64, entry.cooldown_started_at as u64, (u64::from(window) << 32) | u64::from(cooldown)]);
        for e in &entry.events {
            let offset = offset_of(e.ts, base).filter(|&o| o <= MAX_OFFSET)?;
            words.push((offset << 32) | u64::from(tag_of(e.id)));
        }
        Some(Self { words: words.into_boxed_slice() })
    }

    fn pack_wide(entry: &PairEntry) -> Self {
        let mut words = Vec::with_capacity(WIDE_HEADER + 2 * entry.events.len());
        words.extend([entry.window_ms as u64, entry.cooldown_started_at as u64, 0, entry.cooldown_until as u64]);
        for e in &entry.events {
            words.extend([e.ts as u64, u64::from(tag_of(e.id))]);
        }
        Self { words: words.into_boxed_slice() }
    }

    /// The plain form (ids are tags).
    pub fn unpack(&self) -> PairEntry {
        PairEntry {
            events: (0..self.len()).map(|i| self.event(i)).collect(),
            window_ms: self.window_ms(),
            cooldown_started_at: self.cooldown_started_at(),
            cooldown_until: self.cooldown_until(),
        }
    }

    /// Runs a plain rule on the unpacked pair and packs the result: the path for the wide layout
    /// and for the rare changes the compact layout cannot take in place. Out of line, so that the
    /// compact fast paths that fall back to it stay small.
    #[cold]
    #[inline(never)]
    fn via_plain<R>(&mut self, rule: impl FnOnce(&mut PairEntry) -> R) -> R {
        let mut plain = self.unpack();
        let out = rule(&mut plain);
        *self = Self::pack(&plain);
        out
    }

    /// True for the compact layout (word 2 holds a non-zero window there, 0 in the wide layout).
    fn is_compact(&self) -> bool {
        self.words[2] != 0
    }

    /// True for the wide layout (tests check that they reach it).
    #[cfg(test)]
    pub(super) fn is_wide(&self) -> bool {
        !self.is_compact()
    }

    fn base(&self) -> i64 {
        self.words[0] as i64
    }

    /// The window the last event used.
    pub fn window_ms(&self) -> i64 {
        if self.is_compact() {
            (self.words[2] >> 32) as i64
        } else {
            self.words[0] as i64
        }
    }

    /// When the current cooldown began (0 = never).
    pub fn cooldown_started_at(&self) -> i64 {
        self.words[1] as i64
    }

    /// When the current cooldown ends, exclusive (0 = never).
    pub fn cooldown_until(&self) -> i64 {
        if self.is_compact() {
            // Exact: packing checked that the difference fits the low half.
            self.cooldown_started_at().wrapping_add((self.words[2] & LOW) as i64)
        } else {
            self.words[3] as i64
        }
    }

    /// The compact event words in use (free slots excluded); empty in the wide layout.
    fn compact_events(&self) -> &[u64] {
        if !self.is_compact() {
            return &[];
        }
        let slots = &self.words[HEADER..];
        &slots[..slots.iter().position(|&w| w == EMPTY).unwrap_or(slots.len())]
    }

    /// Retained events.
    pub fn len(&self) -> usize {
        if self.is_compact() {
            self.compact_events().len()
        } else {
            (self.words.len() - WIDE_HEADER) / 2
        }
    }

    /// True when no event is retained.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Event slots the block has room for (in use or free).
    pub fn capacity(&self) -> usize {
        if self.is_compact() {
            self.words.len() - HEADER
        } else {
            self.len()
        }
    }

    /// The size of the block, in bytes.
    pub fn block_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// The `i`-th retained event in arrival order (its id is the tag); `i < len()`.
    pub fn event(&self, i: usize) -> Event {
        if self.is_compact() {
            let w = self.words[HEADER + i];
            Event { ts: self.base().wrapping_add((w >> 32) as i64), id: w & LOW }
        } else {
            let at = WIDE_HEADER + 2 * i;
            Event { ts: self.words[at] as i64, id: self.words[at + 1] }
        }
    }

    /// Spec §2.4 step 7: remembers the window of the current event.
    pub fn set_window(&mut self, window_ms: i64) {
        match u32::try_from(window_ms) {
            Ok(w) if w != 0 && self.is_compact() => self.words[2] = (u64::from(w) << 32) | (self.words[2] & LOW),
            _ => self.via_plain(|p| p.window_ms = window_ms),
        }
    }

    /// Drops events that left the window: an event stays while `ts > now − window`.
    pub fn drop_expired(&mut self, now: i64, window_ms: i64) {
        if !self.is_compact() {
            return self.via_plain(|p| p.drop_expired(now, window_ms));
        }
        // ts > horizon ⇔ offset > horizon − base; a horizon before `base` keeps everything.
        if let Some(h) = offset_of(now.saturating_sub(window_ms), self.base()) {
            self.retain_offsets(|offset| offset > h);
        }
    }

    /// The prune's work on one pair (spec §2.4 step 6): drops the events that left the window,
    /// then returns false if the pair is idle (to be deleted), else gives unused slots back and
    /// returns true.
    pub fn prune(&mut self, now: i64) -> bool {
        self.drop_expired(now, self.window_ms());
        if self.is_idle(now) {
            return false;
        }
        self.shrink();
        true
    }

    /// True when nothing is retained and no cooldown reaches past `now` (prunable, §2.4 step 6).
    pub fn is_idle(&self, now: i64) -> bool {
        self.is_empty() && self.cooldown_until() <= now
    }

    /// True when an event with this tag is retained (future-dated ones included).
    pub fn holds_tag(&self, tag: u32) -> bool {
        if tag == 0 {
            return false;
        }
        if self.is_compact() {
            self.compact_events().iter().any(|&w| (w & LOW) as u32 == tag)
        } else {
            (0..self.len()).any(|i| self.event(i).id == u64::from(tag))
        }
    }

    /// The cooldown deadline if `now` is inside it: `started <= now < until`.
    pub fn cooldown_at(&self, now: i64) -> Option<i64> {
        let until = self.cooldown_until();
        (self.cooldown_started_at() <= now && now < until).then_some(until)
    }

    /// Records an event at `now` and applies the budget (spec §2.4 step 12), exactly as
    /// [`PairEntry::record`] does: returns the new cooldown deadline when the event trips the pair.
    pub fn record(&mut self, now: i64, tag: u32, max_events: i64, cooldown_ms: i64) -> Option<i64> {
        if !self.is_compact() {
            return self.via_plain(|p| p.record(Event { ts: now, id: tag.into() }, max_events, cooldown_ms));
        }
        // Events at or before `now` are those with offset <= now − base.
        let counted = match offset_of(now, self.base()) {
            Some(t) => self.compact_events().iter().filter(|&&w| w >> 32 <= t).count(),
            None => 0,
        };
        // With this event the count is `counted + 1`; up to `max_events` are allowed.
        if i64::try_from(counted).unwrap_or(i64::MAX) < max_events {
            self.push(now, tag, max_events);
            return None;
        }
        let until = now.saturating_add(cooldown_ms);
        let Some(cooldown) = until.checked_sub(now).and_then(|d| u32::try_from(d).ok()) else {
            return self.via_plain(|p| p.record(Event { ts: now, id: tag.into() }, max_events, cooldown_ms));
        };
        self.words[1] = now as u64;
        self.words[2] = (self.words[2] & !LOW) | u64::from(cooldown);
        // The window restarts: only future-dated events (ts > now) survive the trip. The event
        // that tripped is not stored (the plain rules push it and wipe it at once).
        // (With `now` before `base`, every event is after `now`.)
        if let Some(t) = offset_of(now, self.base()) {
            self.retain_offsets(|offset| offset > t);
        }
        self.shrink();
        Some(until)
    }

    /// Appends an event (compact layout), rebasing or going wide when its offset does not fit.
    fn push(&mut self, ts: i64, tag: u32, max_events: i64) {
        let len = self.compact_events().len();
        let offset = if len == 0 {
            self.words[0] = ts as u64;
            0
        } else {
            match offset_of(ts, self.base()).filter(|&o| o <= MAX_OFFSET) {
                Some(offset) => offset,
                None if self.rebase_for(ts, len) => offset_of(ts, self.base()).unwrap_or(0),
                None => return self.via_plain(|p| p.events.push(Event { ts, id: tag.into() })),
            }
        };
        if HEADER + len == self.words.len() {
            self.grow(len, max_events);
        }
        self.words[HEADER + len] = (offset << 32) | u64::from(tag);
    }

    /// Moves `base` to the earliest of the retained events and `ts` if every offset then fits;
    /// false (nothing changed) otherwise.
    fn rebase_for(&mut self, ts: i64, len: usize) -> bool {
        let base = self.base();
        let stamps = || self.words[HEADER..HEADER + len].iter().map(|&w| base.wrapping_add((w >> 32) as i64));
        let lo = stamps().min().unwrap_or(ts).min(ts);
        let hi = stamps().max().unwrap_or(ts).max(ts);
        if offset_of(hi, lo).is_none_or(|span| span > MAX_OFFSET) {
            return false;
        }
        for w in &mut self.words[HEADER..HEADER + len] {
            let ts = base.wrapping_add((*w >> 32) as i64);
            *w = (ts.wrapping_sub(lo) as u64) << 32 | (*w & LOW);
        }
        self.words[0] = lo as u64;
        true
    }

    /// Keeps the compact events whose offset passes `keep`, in order.
    fn retain_offsets(&mut self, keep: impl Fn(u64) -> bool) {
        let len = self.compact_events().len();
        let events = &mut self.words[HEADER..HEADER + len];
        let mut kept = 0;
        for i in 0..len {
            let w = events[i];
            if keep(w >> 32) {
                events[kept] = w;
                kept += 1;
            }
        }
        events[kept..].fill(EMPTY);
    }

    /// Room for more events: doubles, but stops at the budget while the log is under it.
    fn grow(&mut self, len: usize, max_events: i64) {
        let budget = usize::try_from(max_events).unwrap_or(usize::MAX).max(1);
        let doubled = len.saturating_mul(2).max(1);
        let capacity = if len < budget { doubled.min(budget) } else { doubled };
        let mut words = std::mem::take(&mut self.words).into_vec();
        words.reserve_exact(capacity - len);
        words.resize(HEADER + capacity, EMPTY);
        self.words = words.into_boxed_slice();
    }

    /// Gives unused slots back: all of them when the log is empty, else down to the events held
    /// once at most half the slots are in use.
    pub fn shrink(&mut self) {
        if !self.is_compact() {
            return; // the wide layout is always exactly sized
        }
        let len = self.compact_events().len();
        let capacity = self.words.len() - HEADER;
        if len == capacity || (len > 0 && len * 2 > capacity) {
            return;
        }
        let mut words = std::mem::take(&mut self.words).into_vec();
        words.truncate(HEADER + len);
        words.shrink_to_fit();
        self.words = words.into_boxed_slice();
    }
}
