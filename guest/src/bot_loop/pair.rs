//! The pair budget: a sliding-window log per unordered bot pair (docs/spec/bot-loop.md §2.4).
//!
//! Why a log and not a counter: events arrive with the platform's timestamps, out of order, and
//! the spec counts only events at or before "now" while keeping future-dated ones. A log of
//! `(ts, id)` items answers all of that exactly; at the default budget it holds at most 20 items,
//! because the item that would be the 21st trips the pair and wipes the window.
//!
//! The rules below are the only implementation of the budget. Where the events live is
//! [`block::Block`]'s business (one compact allocation per pair, so that a million pairs fit the
//! sandbox); the rules see each event as a plain [`Event`].
//!
//! **Event ids are 32-bit tags** ([`super::key::event_tag`]): two *different* ids with the same
//! tag in one pair's window make the second look like a replay (odds below 20 in 2^32 per event
//! at the default budget; docs/SPEC-CHOICES.md). Snapshots written with 64-bit digests load as
//! [`tag_of`] the digest.

pub mod block;

use std::num::NonZeroU64;

use crate::time::Millis;
use block::Block;
pub use block::Event;

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

/// The state of one pair: its retained events in arrival order, the window its last event used
/// (the opportunistic prune uses it) and the current cooldown (`0..0` = never).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    block: Block,
}

impl Pair {
    /// A fresh pair (spec §2.4 step 7).
    pub fn new(window: Millis) -> Self {
        Self { block: Block::new(window) }
    }

    /// A pair holding exactly these values (a snapshot's entry).
    pub fn from_parts(window: Millis, cooldown: (Millis, Millis), events: &[Event]) -> Self {
        Self { block: Block::from_parts(window, cooldown, events) }
    }

    /// The window the last event used.
    pub fn window(&self) -> Millis {
        self.block.window()
    }

    /// When the current cooldown began and when it ends, exclusive (`0` = never).
    pub fn cooldown(&self) -> (Millis, Millis) {
        self.block.cooldown()
    }

    /// The retained events, in arrival order.
    pub fn events(&self) -> impl ExactSizeIterator<Item = Event> + '_ {
        self.block.events()
    }

    /// Where the events live (tests measure it).
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// Spec §2.4 step 7: remembers the window of the current event.
    pub fn set_window(&mut self, window: Millis) {
        self.block.set_window(window);
    }

    /// Drops events that left the window: an event stays while `ts > now − window`.
    pub fn drop_expired(&mut self, now: Millis, window: Millis) {
        let horizon = now - window;
        self.block.retain(|e| e.ts > horizon);
    }

    /// The prune's work on one pair (spec §2.4 step 6): drops the events that left the window,
    /// gives unused room back, and returns false if the pair is idle (to be deleted).
    pub fn prune(&mut self, now: Millis) -> bool {
        self.drop_expired(now, self.window());
        self.block.shrink();
        !self.is_idle(now)
    }

    /// True when nothing is retained and no cooldown reaches past `now` (prunable, §2.4 step 6).
    pub fn is_idle(&self, now: Millis) -> bool {
        self.block.is_empty() && self.cooldown().1 <= now
    }

    /// True when an event with this tag is retained (future-dated ones included).
    pub fn holds_tag(&self, tag: u32) -> bool {
        tag != 0 && self.events().any(|e| e.tag == tag)
    }

    /// The cooldown deadline if `now` is inside it: `started <= now < until`. An event older than
    /// the cooldown start (a late arrival) does not inherit it.
    pub fn cooldown_at(&self, now: Millis) -> Option<Millis> {
        let (started, until) = self.cooldown();
        (started <= now && now < until).then_some(until)
    }

    /// Records an event at `now` and applies the budget (spec §2.4 step 12). Returns the new
    /// cooldown deadline when this event trips the pair; the tripping event is itself suppressed.
    pub fn record(&mut self, now: Millis, tag: u32, max_events: NonZeroU64, cooldown: Millis) -> Option<Millis> {
        // With this event, the events at or before `now` number `counted + 1`.
        let counted = self.events().filter(|e| e.ts <= now).count();
        if (counted as u64) < max_events.get() {
            self.block.push(Event { ts: now, tag }, usize::try_from(max_events.get()).unwrap_or(usize::MAX));
            return None;
        }
        let until = now + cooldown;
        self.block.set_cooldown((now, until));
        // The window restarts: only future-dated events (from reordering) survive the trip, and
        // the tripping event is not kept.
        self.block.retain(|e| e.ts > now);
        self.block.shrink();
        Some(until)
    }
}
