//! The pair budget: a sliding-window log per unordered bot pair (spec/bot-loop.md §2.4).
//!
//! Why a log and not a counter: events arrive with the platform's timestamps, out of order, and
//! the spec counts only events at or before "now" while keeping future-dated ones. A log of
//! `(ts, id)` items answers all of that exactly; at the default budget it holds at most 20 items,
//! because the item that would be the 21st trips the pair and wipes the window.
//!
//! [`PairEntry`] is the plain form of a pair: what a snapshot holds, and the rules written the way
//! the spec states them. The guard keeps its pairs packed ([`super::packed::PackedPair`], 8 bytes
//! per event instead of 16); the packed form runs the common cases itself and hands everything
//! unusual to these rules, which also serve as the reference its tests compare against.

use serde::{Deserialize, Serialize};

/// One recorded event: its timestamp and the digest of its trimmed event id (0 = no id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The event's `now` (ms).
    pub ts: i64,
    /// The event id's tag ([`super::key::event_tag`]), 0 when it had none. Snapshots written
    /// before pairs were packed hold the id's 64-bit blake3 digest here; they load as
    /// [`super::packed::tag_of`] that digest.
    pub id: u64,
}

/// The state of one pair.
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

impl PairEntry {
    /// A fresh entry for a window (spec §2.4 step 7).
    pub fn new(window_ms: i64) -> Self {
        Self { events: Vec::new(), window_ms, cooldown_started_at: 0, cooldown_until: 0 }
    }

    /// Drops events that left the window: an event stays while `ts > now − window`.
    pub fn drop_expired(&mut self, now: i64, window_ms: i64) {
        let horizon = now.saturating_sub(window_ms);
        self.events.retain(|e| e.ts > horizon);
    }

    /// True when nothing is retained and no cooldown reaches past `now` (prunable, §2.4 step 6).
    pub fn is_idle(&self, now: i64) -> bool {
        self.events.is_empty() && self.cooldown_until <= now
    }

    /// True when an event with this id is retained (future-dated ones included).
    pub fn holds_id(&self, id: u64) -> bool {
        id != 0 && self.events.iter().any(|e| e.id == id)
    }

    /// The cooldown deadline if `now` is inside it: `started <= now < until`. An event older than
    /// the cooldown start (a late arrival) does not inherit it.
    pub fn cooldown_at(&self, now: i64) -> Option<i64> {
        (self.cooldown_started_at <= now && now < self.cooldown_until).then_some(self.cooldown_until)
    }

    /// Records the event and applies the budget (spec §2.4 step 12). Returns the new cooldown
    /// deadline when this event trips the pair; the tripping event is itself suppressed.
    pub fn record(&mut self, event: Event, max_events: i64, cooldown_ms: i64) -> Option<i64> {
        self.events.push(event);
        let now = event.ts;
        let count = self.events.iter().filter(|e| e.ts <= now).count();
        if i64::try_from(count).unwrap_or(i64::MAX) <= max_events {
            return None;
        }
        self.cooldown_started_at = now;
        self.cooldown_until = now.saturating_add(cooldown_ms);
        // The window restarts: only future-dated events (from reordering) survive the trip.
        self.events.retain(|e| e.ts > now);
        Some(self.cooldown_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: i64) -> Event {
        Event { ts, id: 0 }
    }

    #[test]
    fn trip_wipes_the_window_but_keeps_future_dated_events() {
        let mut p = PairEntry::new(60_000);
        assert_eq!(p.record(ev(5_000), 1, 60_000), None); // future relative to the trip below
        assert_eq!(p.record(ev(1_000), 1, 60_000), None); // only ts <= 1000 counts: 1
        assert_eq!(p.record(ev(1_001), 1, 60_000), Some(61_001));
        assert_eq!(p.events, vec![ev(5_000)]);
        assert_eq!((p.cooldown_started_at, p.cooldown_until), (1_001, 61_001));
    }

    #[test]
    fn an_emptied_log_is_idle_once_the_cooldown_is_over() {
        let mut p = PairEntry::new(10);
        p.record(ev(0), 5, 10);
        p.drop_expired(10, 10);
        assert!(p.events.is_empty());
        assert!(p.is_idle(10));
    }
}
