//! Channel bot-to-bot loop protection (docs/spec/bot-loop.md §2, stage D).
//!
//! Why: with `allowBots` on, two bots that @-mention each other reply forever (OpenClaw #58789:
//! 42+ exchanges until a provider rate limit stopped them), and four agents in one thread can
//! stay under every per-pair limit for hours (PR #117734). Two budgets stop that:
//!
//! - the **pair budget** ([`pair`]): a sliding window per unordered bot pair; the event past
//!   `maxEventsPerWindow` trips a cooldown that suppresses both directions;
//! - the opt-in **burst budget** ([`burst`]): `maxConversationBotEvents` per conversation and
//!   receiving bot over 10 minutes, tripping only when at least two peer senders are active.
//!
//! When both are in cooldown the later deadline is reported (stage D). Suppression is a value,
//! not an error; the host passes the clock (usually the platform's event timestamp, so events
//! may arrive out of order). State is bounded: pairs and burst buckets live in
//! [`CompactMap`]s of `max_pairs` entries each, keyed by 128-bit digests ([`key`]); a pair keeps
//! its events in one block, 8 bytes per event ([`pair::block`]). A pair holding a full default
//! window costs about 247 bytes of guest memory at a million pairs (a 200-byte chunk, 28 + ~10
//! bytes in the map, and the free chunks its growth left behind).
//!
//! ```
//! use loopguard_policy::bot_loop::{BotDecision, BotFacts, BotGuard, Budget, PairSettings};
//! use loopguard_policy::time::Millis;
//! use std::num::NonZeroU64;
//! let settings = PairSettings { enabled: true, max_events_per_window: NonZeroU64::new(2).unwrap(),
//!                               window: Millis(60_000), cooldown: Millis(30_000),
//!                               max_conversation_bot_events: None };
//! let mut guard = BotGuard::new(std::num::NonZeroUsize::new(1_000).unwrap());
//! let facts = |now, sender, receiver| BotFacts { scope: "acct", conversation: "c1", sender,
//!                                                receiver, now: Millis(now), event_id: None };
//! assert_eq!(guard.record_and_check(&facts(0, "a", "b"), &settings), BotDecision::Allow);
//! assert_eq!(guard.record_and_check(&facts(1, "b", "a"), &settings), BotDecision::Allow);
//! assert_eq!(guard.record_and_check(&facts(2, "a", "b"), &settings),
//!            BotDecision::Suppress { cooldown_until_ms: 30_002, budget: Budget::Pair });
//! ```

pub mod burst;
pub mod key;
pub mod pair;
pub mod snapshot;

#[cfg(test)]
mod tests;

pub use snapshot::{BotGuardSnapshot, BotGuardSnapshotRef, Event as SnapshotEvent, PairEntry};
use snapshot::{BurstsView, PairsView};

use crate::config::profile::{BotRules, DOCUMENTED};
use crate::store::CompactMap;
use std::num::NonZeroUsize;

use crate::time::Millis;
use burst::{BurstEntry, BurstEvent};
use pair::Pair;

/// The opportunistic prune runs at most once per this much event time.
pub const PRUNE_INTERVAL: Millis = Millis(60_000);

/// One accepted inbound bot-authored message (spec §2.2).
#[derive(Debug, Clone, Copy)]
pub struct BotFacts<'a> {
    /// The account (OpenClaw's `scopeId`).
    pub scope: &'a str,
    /// The conversation (channel, thread, room, space, chat).
    pub conversation: &'a str,
    /// The bot that sent the message.
    pub sender: &'a str,
    /// This bot, which received it.
    pub receiver: &'a str,
    /// The event time, usually the platform's timestamp.
    pub now: Millis,
    /// The provider event id; trimmed, and empty means none.
    pub event_id: Option<&'a str>,
}

pub use crate::config::bot::PairSettings;

/// Which budget set the reported deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// The pair budget (also when both deadlines are equal).
    Pair,
    /// The conversation burst budget.
    Burst,
}

/// The guard's answer for one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotDecision {
    /// Dispatch the message.
    Allow,
    /// Drop the message; the loop is cooling down until `cooldown_until_ms` (exclusive).
    Suppress {
        /// When the suppression ends (ms; the boundary's plain number).
        cooldown_until_ms: i64,
        /// Which budget set that deadline.
        budget: Budget,
    },
}

/// The process-wide guard: every channel and account shares it, kept apart by the key.
#[derive(Debug, Clone)]
pub struct BotGuard {
    pairs: CompactMap<Pair>,
    bursts: CompactMap<BurstEntry>,
    next_prune_at: Millis,
    /// Evictions counted before the last [`BotGuard::restore`].
    evicted_before: u64,
    /// The profile's rules.
    rules: BotRules,
}

impl BotGuard {
    /// An empty guard tracking at most `max_pairs` pairs (and as many burst buckets).
    pub fn new(max_pairs: NonZeroUsize) -> Self {
        Self {
            pairs: CompactMap::new(max_pairs),
            bursts: CompactMap::new(max_pairs),
            next_prune_at: Millis::ZERO,
            evicted_before: 0,
            rules: DOCUMENTED.bot,
        }
    }

    /// The same guard under a profile's rules (the documented ones by default).
    pub fn with_rules(mut self, rules: BotRules) -> Self {
        self.rules = rules;
        self
    }

    /// Records one bot message and decides (spec §2.4 `recordAndCheck`, with §2.5 and stage D).
    pub fn record_and_check(&mut self, facts: &BotFacts, settings: &PairSettings) -> BotDecision {
        let ids_missing = [facts.scope, facts.conversation, facts.sender, facts.receiver].iter().any(|s| s.is_empty());
        let bypass = !settings.enabled || ids_missing;
        // The pair's ids in key order, `None` for a self pair.
        let Some(ids) = key::ordered_pair(facts.sender, facts.receiver).filter(|_| !bypass) else {
            return BotDecision::Allow;
        };
        let now = facts.now;
        if now >= self.next_prune_at {
            self.prune(now);
        }
        let tag = key::event_tag(facts.event_id);
        let pair_key = key::ordered_pair_key(facts.scope, facts.conversation, ids);
        let window = settings.window;
        let pair = self.pairs.entry_or_insert_with(pair_key, || Pair::new(window));
        pair.set_window(window);
        pair.drop_expired(now, window);
        let replay = pair.holds_tag(tag);

        // The burst budget records before the pair cooldown check (stage C). It lives in another
        // map, so recording it cannot evict this pair.
        let burst = record_burst(&mut self.bursts, facts, settings);
        // openclaw 2026.9 lets a redelivered id through even during a cooldown (NOTES §4.1).
        if replay && self.rules.replay_before_cooldown {
            return later_of(None, burst);
        }
        if let Some(until) = pair.cooldown_at(now) {
            return later_of(Some(until), burst);
        }
        if replay {
            return later_of(None, burst);
        }
        let tripped = pair.record(now, tag, settings.max_events_per_window, settings.cooldown);
        later_of(tripped, burst)
    }

    /// Spec §2.4 step 6: drop expired events everywhere and delete idle entries (at most once
    /// per [`PRUNE_INTERVAL`] of event time).
    fn prune(&mut self, now: Millis) {
        self.next_prune_at = now + PRUNE_INTERVAL;
        self.pairs.retain(|_, pair| pair.prune(now));
        self.bursts.retain(|_, entry| {
            entry.drop_expired(now);
            !entry.is_idle(now)
        });
    }

    /// Pair entries tracked now.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Burst buckets tracked now.
    pub fn burst_count(&self) -> usize {
        self.bursts.len()
    }

    /// Pair entries evicted by the `max_pairs` cap (burst-bucket evictions are not counted).
    pub fn evicted(&self) -> u64 {
        self.evicted_before.saturating_add(self.pairs.evicted())
    }
}

/// Spec §2.5: the burst deadline if the burst budget suppresses this event.
fn record_burst(bursts: &mut CompactMap<BurstEntry>, facts: &BotFacts, settings: &PairSettings) -> Option<Millis> {
    let limit = settings.max_conversation_bot_events?;
    let key = key::burst_key(facts.scope, facts.conversation, facts.receiver);
    let id = key::event_id_digest(facts.event_id);
    let event = BurstEvent { ts: facts.now, sender: key::sender_digest(facts.sender), id };
    bursts.entry_or_insert_with(key, BurstEntry::default).record(event, limit, settings.cooldown)
}

/// Stage D: the later of the two deadlines; the burst budget is reported only when its deadline
/// is strictly later.
fn later_of(pair: Option<Millis>, burst: Option<Millis>) -> BotDecision {
    let (until, budget) = match (pair, burst) {
        (None, None) => return BotDecision::Allow,
        (Some(p), Some(b)) if b > p => (b, Budget::Burst),
        (Some(p), _) => (p, Budget::Pair),
        (None, Some(b)) => (b, Budget::Burst),
    };
    BotDecision::Suppress { cooldown_until_ms: until.ms(), budget }
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
            pairs: self.pairs.ordered().iter().map(|(k, p)| (k, PairEntry::from(p))).collect(),
            bursts: self.bursts.to_ordered(),
            next_prune_at: self.next_prune_at,
            evicted: self.evicted(),
        }
    }

    /// Rebuilds a guard from a snapshot, with a (possibly new) cap; entries beyond it are
    /// evicted least recently used first (and counted in [`BotGuard::evicted`]).
    pub fn restore(snapshot: BotGuardSnapshot, max_pairs: std::num::NonZeroUsize) -> Self {
        // Entries the cap drops are skipped before their blocks are built.
        let skip = snapshot.pairs.len().saturating_sub(max_pairs.get());
        let built = snapshot.pairs.into_iter().skip(skip).map(|(k, e)| (k, Pair::from(&e))).collect();
        let pairs = CompactMap::from_ordered(max_pairs, built);
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
