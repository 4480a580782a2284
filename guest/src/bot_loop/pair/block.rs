//! Where a pair's events live: one block of 64-bit words per pair.
//!
//! Why: the memory floor (docs/PERFORMANCE.md) is ≤ 512 bytes of guest memory per active bot pair and a million
//! pairs inside the sandbox's default 256 MiB, so a pair holding a full default window (20
//! events) may cost about 256 bytes with its share of the map. A `Vec` of `(i64, u64)` events and
//! three `i64`s measured about 440 bytes; with this block a full pair measures 247 bytes at a
//! million pairs, 237 MiB in all, and 87 bytes with one event (`examples/bot_memory.rs` through
//! the component; the guest test `linear_memory_per_pair_on_wasm32`). A pair is one `Box<[u64]>`
//! (8 bytes on wasm32) whose block reads
//!
//! | word | |
//! |---|---|
//! | 0 | the window the last event used |
//! | 1, 2 | when the cooldown began, when it ends |
//! | 3 | `base`: the timestamp event offsets count from |
//! | 4.. | one event per word: ms after `base` (high half), the tag (low half); free slots hold `EMPTY` |
//!
//! so a full default window is 24 words, 192 bytes. Events arrive out of order: an event before
//! `base` moves `base` down (a rebase). Events more than 2^32 − 2 ms (≈ 49.7 days) apart, which a
//! timestamp years ahead next to current ones can cause, cannot share a base: then the block is
//! *far*, word 4 holds `FAR` and each event takes two words `(ts, tag)`, exactly sized, until
//! its events fit one base again. The block only stores; the rules in [`super`] decide.
//!
//! Growth: slots grow 1 → 2 → 4 → … but never past the pair's budget unless future-dated events
//! need more (the event that would exceed the budget trips the pair instead of being stored).
//! [`Block::shrink`] gives unused slots back (the prune and a trip call it); recording does not,
//! so a pair whose last event expired reuses its slot without reallocating.

use crate::time::Millis;

/// One recorded event, as the rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The event's `now`.
    pub ts: Millis,
    /// The event id's tag ([`crate::bot_loop::key::event_tag`]), 0 when it had none.
    pub tag: u32,
}

/// Header words.
const HEADER: usize = 4;
const WINDOW: usize = 0;
const STARTED: usize = 1;
const UNTIL: usize = 2;
const BASE: usize = 3;
/// A free event slot (its offset, `u32::MAX`, is never used by an event).
const EMPTY: u64 = u64::MAX;
/// Word 4 of a far block (offset `u32::MAX` too, so no event word equals it).
const FAR: u64 = u64::MAX - 1;
/// The largest offset from `base` an event word holds.
const MAX_OFFSET: u64 = u32::MAX as u64 - 1;
/// The low half of a word.
const LOW: u64 = u32::MAX as u64;

/// `t − base` as an unsigned offset if it fits an event word. Exact for any two `i64`s: their
/// difference, when not negative, always fits a `u64`.
fn offset_of(t: Millis, base: Millis) -> Option<u64> {
    (t >= base).then(|| t.ms().wrapping_sub(base.ms()) as u64).filter(|&o| o <= MAX_OFFSET)
}

fn word(ms: Millis) -> u64 {
    ms.ms() as u64
}

/// One pair's events and header (see the module docs for the layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    words: Box<[u64]>,
}

impl Block {
    /// An empty block with one free slot: a new pair always records the event that created it.
    pub fn new(window: Millis) -> Self {
        Self { words: Box::new([word(window), 0, 0, 0, EMPTY]) }
    }

    /// A block holding exactly these values, exactly sized: near when the events fit one base.
    pub fn from_parts(window: Millis, (started, until): (Millis, Millis), events: &[Event]) -> Self {
        let header = [word(window), word(started), word(until)];
        let base = events.iter().map(|e| e.ts).min().unwrap_or(Millis::ZERO);
        let mut words = Vec::with_capacity(HEADER + 2 * events.len());
        words.extend(header);
        if events.iter().all(|e| offset_of(e.ts, base).is_some()) {
            words.push(word(base));
            words.extend(events.iter().map(|e| offset_of(e.ts, base).unwrap_or(0) << 32 | u64::from(e.tag)));
        } else {
            words.extend([0, FAR]);
            words.extend(events.iter().flat_map(|e| [word(e.ts), u64::from(e.tag)]));
        }
        Self { words: words.into_boxed_slice() }
    }

    /// True for the far layout (tests check that they reach it).
    pub fn is_far(&self) -> bool {
        self.words.get(HEADER) == Some(&FAR)
    }

    /// The window the last event used.
    pub fn window(&self) -> Millis {
        Millis(self.words[WINDOW] as i64)
    }

    /// Remembers the window of the current event.
    pub fn set_window(&mut self, window: Millis) {
        self.words[WINDOW] = word(window);
    }

    /// When the current cooldown began and when it ends, exclusive.
    pub fn cooldown(&self) -> (Millis, Millis) {
        (Millis(self.words[STARTED] as i64), Millis(self.words[UNTIL] as i64))
    }

    /// Sets the cooldown.
    pub fn set_cooldown(&mut self, (started, until): (Millis, Millis)) {
        self.words[STARTED] = word(started);
        self.words[UNTIL] = word(until);
    }

    fn base(&self) -> Millis {
        Millis(self.words[BASE] as i64)
    }

    /// The near event words in use; empty for a far block.
    fn near(&self) -> &[u64] {
        if self.is_far() {
            return &[];
        }
        let slots = &self.words[HEADER..];
        &slots[..slots.iter().position(|&w| w == EMPTY).unwrap_or(slots.len())]
    }

    /// Retained events.
    pub fn len(&self) -> usize {
        if self.is_far() {
            (self.words.len() - HEADER - 1) / 2
        } else {
            self.near().len()
        }
    }

    /// True when no event is retained.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Event slots the block has room for (in use or free).
    pub fn capacity(&self) -> usize {
        if self.is_far() {
            self.len()
        } else {
            self.words.len() - HEADER
        }
    }

    /// The size of the block, in bytes.
    pub fn block_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// The `i`-th retained event in arrival order; `i < len()`.
    fn event(&self, i: usize) -> Event {
        if self.is_far() {
            let at = HEADER + 1 + 2 * i;
            Event { ts: Millis(self.words[at] as i64), tag: self.words[at + 1] as u32 }
        } else {
            let w = self.words[HEADER + i];
            // Exact: the offset was taken from this base.
            Event { ts: Millis(self.base().ms().wrapping_add((w >> 32) as i64)), tag: (w & LOW) as u32 }
        }
    }

    /// The retained events, in arrival order.
    pub fn events(&self) -> impl ExactSizeIterator<Item = Event> + '_ {
        (0..self.len()).map(|i| self.event(i))
    }

    /// Keeps the events that pass `keep`, in order.
    pub fn retain(&mut self, keep: impl Fn(Event) -> bool) {
        if self.is_far() {
            let kept: Vec<Event> = self.events().filter(|&e| keep(e)).collect();
            return *self = Self::from_parts(self.window(), self.cooldown(), &kept);
        }
        let len = self.near().len();
        let mut kept = 0;
        for i in 0..len {
            if keep(self.event(i)) {
                self.words[HEADER + kept] = self.words[HEADER + i];
                kept += 1;
            }
        }
        self.words[HEADER + kept..HEADER + len].fill(EMPTY);
    }

    /// Appends an event, rebasing or going far when its offset does not fit. `budget` (≥ 1) is
    /// where growth stops while the log is under it.
    pub fn push(&mut self, event: Event, budget: usize) {
        let len = self.near().len();
        let offset = match offset_of(event.ts, self.base()) {
            _ if self.is_far() => None,
            _ if len == 0 => {
                self.words[BASE] = word(event.ts);
                Some(0)
            }
            Some(offset) => Some(offset),
            None if self.rebase_for(event.ts, len) => offset_of(event.ts, self.base()),
            None => None,
        };
        let Some(offset) = offset else {
            let mut events: Vec<Event> = self.events().collect();
            events.push(event);
            return *self = Self::from_parts(self.window(), self.cooldown(), &events);
        };
        if HEADER + len == self.words.len() {
            self.grow(len, budget);
        }
        self.words[HEADER + len] = offset << 32 | u64::from(event.tag);
    }

    /// Moves `base` to the earliest of the retained events and `ts` if every offset then fits;
    /// false (nothing changed) otherwise.
    fn rebase_for(&mut self, ts: Millis, len: usize) -> bool {
        let lo = self.events().map(|e| e.ts).fold(ts, Millis::min);
        if !self.events().all(|e| offset_of(e.ts, lo).is_some()) || offset_of(ts, lo).is_none() {
            return false;
        }
        for i in 0..len {
            let e = self.event(i);
            self.words[HEADER + i] = offset_of(e.ts, lo).unwrap_or(0) << 32 | u64::from(e.tag);
        }
        self.words[BASE] = word(lo);
        true
    }

    /// Room for more events: doubles, but stops at the budget while the log is under it.
    fn grow(&mut self, len: usize, budget: usize) {
        let doubled = len.saturating_mul(2).max(1);
        let capacity = if len < budget { doubled.min(budget) } else { doubled };
        let mut words = std::mem::take(&mut self.words).into_vec();
        words.reserve_exact(capacity - len);
        words.resize(HEADER + capacity, EMPTY);
        self.words = words.into_boxed_slice();
    }

    /// Gives unused slots back: all of them when the log is empty, else down to the events held
    /// once at most half the slots are in use. A far block is always exactly sized.
    pub fn shrink(&mut self) {
        let len = self.len();
        let capacity = self.capacity();
        if self.is_far() || len == capacity || (len > 0 && len * 2 > capacity) {
            return;
        }
        let mut words = std::mem::take(&mut self.words).into_vec();
        words.truncate(HEADER + len);
        words.shrink_to_fit();
        self.words = words.into_boxed_slice();
    }
}
