//! The conversation burst budget (docs/spec/bot-loop.md §2.5, stage C).
//!
//! Why a second budget: four agents in one thread make six pairs, and each pair can stay under
//! 20 events a minute while the thread as a whole never stops (PR #117734). The burst budget
//! counts every bot event a receiving bot sees in a conversation over a fixed 10-minute window,
//! but only trips when at least two peer senders are "active" (2+ events each), so ordinary
//! two-bot traffic and one-off stray posts never trip it. Unlike the pair budget it keeps its
//! events through the cooldown, so a storm that keeps going re-trips as soon as it ends.

use std::collections::VecDeque;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use crate::time::Millis;

/// The fixed burst window.
pub const BURST_WINDOW: Millis = Millis(600_000);
/// Events kept per burst key (500 + 1), dropped oldest-recorded first.
pub const BURST_RETENTION: usize = 501;
/// Senders that must be active for the budget to trip.
const MIN_ACTIVE_SENDERS: usize = 2;
/// Events a sender needs inside the window to count as active.
const ACTIVE_SENDER_EVENTS: usize = 2;

/// One event in a burst bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurstEvent {
    /// The event's `now`.
    pub ts: Millis,
    /// [`super::key::sender_digest`] of the sender.
    pub sender: u64,
    /// [`super::key::event_id_digest`] of its id, 0 when it had none.
    pub id: u64,
}

/// The state of one (scope, conversation, receiver) bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurstEntry {
    /// Retained events in arrival order (the retention cap drops from the front).
    pub events: VecDeque<BurstEvent>,
    /// When the current cooldown began (0 = never).
    pub cooldown_started_at: Millis,
    /// When the current cooldown ends, exclusive (0 = never).
    pub cooldown_until: Millis,
}

impl BurstEntry {
    /// Drops events with `ts <= now − 10 min`.
    pub fn drop_expired(&mut self, now: Millis) {
        let horizon = now - BURST_WINDOW;
        self.events.retain(|e| e.ts > horizon);
        if self.events.is_empty() && self.events.capacity() > 0 {
            self.events = VecDeque::new();
        }
    }

    /// True when nothing is retained and no cooldown reaches past `now`.
    pub fn is_idle(&self, now: Millis) -> bool {
        self.events.is_empty() && self.cooldown_until <= now
    }

    fn cooldown_at(&self, now: Millis) -> Option<Millis> {
        (self.cooldown_started_at <= now && now < self.cooldown_until).then_some(self.cooldown_until)
    }

    /// Spec §2.5 steps 3–9 for an event at `event.ts`: records it (unless its id is already in
    /// the bucket) and returns the burst cooldown deadline when the event is suppressed.
    pub fn record(&mut self, event: BurstEvent, limit: NonZeroU32, cooldown: Millis) -> Option<Millis> {
        let now = event.ts;
        self.drop_expired(now);
        if event.id != 0 && self.events.iter().any(|e| e.id == event.id) {
            return self.cooldown_at(now);
        }
        self.events.push_back(event);
        while self.events.len() > BURST_RETENTION {
            self.events.pop_front();
        }
        if let Some(until) = self.cooldown_at(now) {
            return Some(until);
        }
        let in_window = self.events.iter().filter(|e| e.ts <= now);
        if in_window.clone().count() <= limit.get() as usize {
            return None;
        }
        if active_senders(in_window.map(|e| e.sender)) < MIN_ACTIVE_SENDERS {
            return None;
        }
        self.cooldown_started_at = now;
        self.cooldown_until = now + cooldown;
        Some(self.cooldown_until)
    }
}

/// How many senders have at least [`ACTIVE_SENDER_EVENTS`] events (counting stops at the
/// minimum that matters). Sorting a scratch copy keeps this O(n log n) for a full bucket.
fn active_senders(senders: impl Iterator<Item = u64>) -> usize {
    let mut all: Vec<u64> = senders.collect();
    all.sort_unstable();
    let mut active = 0;
    for run in all.chunk_by(|a, b| a == b) {
        if run.len() >= ACTIVE_SENDER_EVENTS {
            active += 1;
            if active >= MIN_ACTIVE_SENDERS {
                break;
            }
        }
    }
    active
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    fn ev(ts: i64, sender: u64) -> BurstEvent {
        BurstEvent { ts: Millis(ts), sender, id: 0 }
    }

    #[test]
    fn active_senders_need_two_events_each() {
        assert_eq!(active_senders([1, 2, 3, 4].into_iter()), 0);
        assert_eq!(active_senders([1, 1, 2, 3].into_iter()), 1);
        assert_eq!(active_senders([1, 2, 1, 2].into_iter()), 2);
    }

    #[test]
    fn retention_drops_by_arrival_order_not_by_timestamp() {
        let mut b = BurstEntry::default();
        b.record(ev(5_000, 9), limit(500), Millis(1_000)); // recorded first, but the newest timestamp
        for t in 0..BURST_RETENTION as i64 {
            b.record(ev(t, t as u64 + 100), limit(500), Millis(1_000));
        }
        assert_eq!(b.events.len(), BURST_RETENTION);
        assert!(b.events.iter().all(|e| e.ts != Millis(5_000)), "the earliest-recorded event went first");
    }

    #[test]
    fn window_edge_is_exclusive() {
        let mut b = BurstEntry::default();
        b.record(ev(0, 1), limit(10), Millis(1_000));
        b.drop_expired(BURST_WINDOW - Millis(1));
        assert_eq!(b.events.len(), 1);
        b.drop_expired(BURST_WINDOW);
        assert!(b.events.is_empty());
    }
}
