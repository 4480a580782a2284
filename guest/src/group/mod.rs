//! The agent-group (broadcast) coordination budget — docs/spec/bot-loop.md §5.
//!
//! # Why a budget
//!
//! A broadcast entry lets several agents answer one group message. If every agent may answer
//! every sibling's answer, a group of agents talks to itself until the money runs out. The
//! coordinator bounds one inbound root message's thread twice: by **rounds** (`maxRounds`,
//! counting the initial one) and by **turns** (`maxTurns`, agent runs started across all rounds,
//! passes and failures included). Turns are reserved before a round launches, so participants
//! that run in parallel can never overspend.
//!
//! # How
//!
//! The host calls [`GroupCoordinator::start`] for an inbound message, runs the returned
//! participants, then calls [`GroupCoordinator::replies`] with their finals; that answers with the
//! next round or a stop, until the thread stops or is cancelled
//! ([`GroupCoordinator::cancel`]). Building the sibling digest (≤ 4,000 characters per
//! participant, 16,000 in total) and the "reply only if you add something" prompt is the
//! host's job; the policy decides who runs.
//!
//! ```
//! use loopguard_policy::config::group::GroupConfig;
//! use loopguard_policy::group::{GroupCoordinator, GroupStart, GroupStep, Reply, StopReason, ThreadKey};
//! let cfg = GroupConfig::parse(&serde_json::json!({
//!     "agents": {"list": [{"id": "alpha"}, {"id": "beta"}]},
//!     "broadcast": {"discord:123": {"agents": ["alpha", "beta"], "maxRounds": 2}}})).unwrap();
//! let key = ThreadKey { channel: "discord", account: "default", conversation: "123", thread: None, root: "m1" };
//! let mut groups = GroupCoordinator::new(std::num::NonZeroUsize::new(1000).unwrap());
//! let start = groups.start(&cfg, &key, "123", "@beta what do you think?");
//! assert_eq!(start, GroupStart::Round { round: 1, participants: vec!["beta".into()] });
//! let step = groups.replies(&cfg, &key, &[Reply { agent: "beta".into(), reply: Some("ask @alpha".into()) }]);
//! // beta replied and named alpha, but beta used 1 of 2 turns: only one more turn is left.
//! assert_eq!(step, GroupStep::Round { round: 2, participants: vec!["alpha".into()] });
//! let step = groups.replies(&cfg, &key, &[Reply { agent: "alpha".into(), reply: None }]);
//! assert_eq!(step, GroupStep::Stop(StopReason::AllPassed));
//! assert_eq!(groups.thread_count(), 0);
//! ```
//!
//! # Rules
//!
//! - **Round 1** ([`GroupCoordinator::start`]): with `mentionGating` (the default) the
//!   participants whose mention patterns match the inbound text ([`crate::config::mention`]); all of them when
//!   none matches or gating is off. Turns are reserved in configured order: if `maxTurns` is
//!   smaller than the selection, the first ones in the entry's `agents` order run.
//! - **Later rounds** ([`GroupCoordinator::replies`]): eligible are the participants that replied
//!   (non-null, non-blank) in the round just run, plus those named (by the same patterns) in a
//!   *sibling's* reply; naming yourself does not count, and a named participant need not have run
//!   before. Eligible participants run in configured order, as many as turns remain.
//! - **Stop**, checked in this order: nobody replied → `all_passed`; the round just run was
//!   round `maxRounds` → `max_rounds`; no turn is left → `max_turns`; nobody eligible →
//!   `no_eligible`. A stopped thread is dropped at once.
//! - **Strategy**: `sequential` only changes how the host launches a round (one after another);
//!   the policy returns participants in configured order for both strategies.
//! - **Legacy** unqualified WhatsApp arrays: [`GroupStart::Legacy`] with every listed agent,
//!   no selection, no cap, and no thread kept (their replies are those of an unknown thread).
//!
//! Choices where the spec is silent:
//! - `replies` for an unknown thread (never started, already stopped, cancelled, evicted, or
//!   legacy) → `Stop(NoEligible)`; nothing is created.
//! - A reply from an agent that was not launched in the current round is ignored: it is neither
//!   a reply nor a source of names. A launched agent missing from the list counts as passed;
//!   for an agent listed twice the first entry counts. An empty `replies` list therefore means
//!   everybody passed → `Stop(AllPassed)`. A reply that is empty or only whitespace is a pass.
//! - `start` for a thread that is still active starts it over with a fresh budget (the root id
//!   names one inbound message; dropping its replays is inbound dedup's job, spec §5.2).
//! - An entry with no agents behaves like no entry ([`GroupStart::None`]).
//! - `cancel` always answers `Stop(Cancelled)`, known thread or not.
//! - Active threads live in a [`BoundedMap`] of capacity `max_threads`; the least recently
//!   active thread is evicted beyond it, and its later replies are those of an unknown thread.
//!
//! The profile's [`GroupRules`](crate::config::profile::GroupRules) change a few of these
//! (openclaw 2026.9, tests/oracle/NOTES.md §5): mentions must be `@` addresses, `NO_REPLY` is a
//! pass and display names address participants ([`reply`]); a duplicate root while its thread
//! runs launches nobody; a legacy entry is a one-round thread; participants are reported by
//! their normalized ids.

pub mod reply;
pub mod thread;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::config::group::{normalize_agent_id, EntryRef, GroupConfig};
use crate::store::BoundedMap;
pub use thread::{ThreadKey, ThreadState};

/// One participant's final for the round just run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The agent id.
    pub agent: String,
    /// The final reply text; `None` = passed with `NO_REPLY`, or failed.
    pub reply: Option<String>,
}

/// The answer to an inbound group message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupStart {
    /// A qualified entry: run these participants (launch order) as round `round` (always 1).
    Round {
        /// The round number (1).
        round: u32,
        /// Agent ids in launch order.
        participants: Vec<String>,
    },
    /// A legacy unqualified WhatsApp entry: run every listed agent once; no follow-up rounds.
    Legacy {
        /// Agent ids in configured order.
        participants: Vec<String>,
    },
    /// No broadcast entry matches (or it lists no agents): not a group thread.
    None,
}

/// The answer to a round's finals, or to a cancellation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupStep {
    /// Run these participants (launch order) as round `round`.
    Round {
        /// The round number (2..=4).
        round: u32,
        /// Agent ids in launch order.
        participants: Vec<String>,
    },
    /// The thread is over; its state was dropped.
    Stop(StopReason),
}

/// Why a group thread stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Every participant of the last round passed (or failed).
    AllPassed,
    /// The last round was round `maxRounds`.
    MaxRounds,
    /// Every turn of `maxTurns` was used.
    MaxTurns,
    /// Nobody is eligible for another round (also: the thread is unknown).
    NoEligible,
    /// The host cancelled the thread.
    Cancelled,
}

impl StopReason {
    /// The trace spelling: `all_passed`, `max_rounds`, `max_turns`, `no_eligible`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::AllPassed => "all_passed",
            StopReason::MaxRounds => "max_rounds",
            StopReason::MaxTurns => "max_turns",
            StopReason::NoEligible => "no_eligible",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// The active threads as plain data, least recently active first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSnapshot {
    /// (encoded [`ThreadKey`], state) pairs.
    pub threads: Vec<(String, ThreadState)>,
}

/// The group-thread budgets of one gateway process.
#[derive(Debug, Clone)]
pub struct GroupCoordinator {
    threads: BoundedMap<String, ThreadState>,
}

impl GroupCoordinator {
    /// A coordinator that keeps at most `max_threads` active threads.
    pub fn new(max_threads: std::num::NonZeroUsize) -> Self {
        Self { threads: BoundedMap::new(max_threads) }
    }

    /// `group_message`: finds the broadcast entry for `"<channel>:<peer>"` (for WhatsApp a
    /// qualified entry beats a legacy unqualified one), selects round 1, reserves its turns in
    /// configured order and remembers the thread.
    pub fn start(&mut self, cfg: &GroupConfig, key: &ThreadKey, peer: &str, text: &str) -> GroupStart {
        let rules = cfg.rules;
        let (entry, legacy) = match cfg.entry(key.channel, peer) {
            None => return GroupStart::None,
            Some(EntryRef::Legacy([])) => return GroupStart::None,
            Some(EntryRef::Legacy(agents)) if !rules.legacy_is_one_round_thread => {
                return GroupStart::Legacy { participants: agents.to_vec() }
            }
            Some(EntryRef::Legacy(agents)) => {
                (Entry { agents, mention_gating: false, max_rounds: 1, max_turns: None }, true)
            }
            Some(EntryRef::Qualified(e)) if e.agents.is_empty() => return GroupStart::None,
            Some(EntryRef::Qualified(e)) => {
                let max_turns = Some(e.max_turns);
                (
                    Entry { agents: &e.agents, mention_gating: e.mention_gating, max_rounds: e.max_rounds, max_turns },
                    false,
                )
            }
        };
        let encoded = key.encode();
        if rules.duplicate_root_launches_nobody && self.threads.get(encoded.as_str()).is_some() {
            // openclaw 2026.9: the running thread goes on; this message launches nobody.
            return if legacy {
                GroupStart::Legacy { participants: Vec::new() }
            } else {
                GroupStart::Round { round: 1, participants: Vec::new() }
            };
        }
        let agents = participant_ids(cfg, entry.agents);
        let mut selected = Vec::new();
        if entry.mention_gating {
            let hay = cfg.haystack(text);
            selected = agents.iter().filter(|a| cfg.mentions(a, &hay)).cloned().collect();
        }
        if selected.is_empty() {
            selected = agents.clone();
        }
        let mut state = ThreadState {
            max_turns: entry.max_turns.unwrap_or(agents.len() as u32),
            agents,
            max_rounds: entry.max_rounds,
            round: 1,
            turns_used: 0,
            launched: Vec::new(),
        };
        let participants = state.reserve(selected);
        self.threads.remove(encoded.as_str());
        self.threads.entry_or_insert_with(encoded.as_str(), move || state);
        if legacy {
            GroupStart::Legacy { participants }
        } else {
            GroupStart::Round { round: 1, participants }
        }
    }

    /// `group_replies`: the finals of the round just run → the next round, or a stop (the thread
    /// is dropped on stop).
    pub fn replies(&mut self, cfg: &GroupConfig, key: &ThreadKey, replies: &[Reply]) -> GroupStep {
        let encoded = key.encode();
        let Some(state) = self.threads.get_mut(encoded.as_str()) else {
            return GroupStep::Stop(StopReason::NoEligible);
        };
        let step = next_step(cfg, state, replies);
        if matches!(step, GroupStep::Stop(_)) {
            self.threads.remove(encoded.as_str());
        }
        step
    }

    /// `group_cancel`: stops the thread and drops it.
    pub fn cancel(&mut self, key: &ThreadKey) -> GroupStep {
        self.threads.remove(key.encode().as_str());
        GroupStep::Stop(StopReason::Cancelled)
    }

    /// Active threads.
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// Threads evicted for lack of room since this coordinator was made (or restored).
    pub fn evicted(&self) -> u64 {
        self.threads.evicted()
    }

    /// The active threads as plain data.
    pub fn snapshot(&self) -> GroupSnapshot {
        GroupSnapshot { threads: self.threads.to_ordered() }
    }

    /// Rebuilds a coordinator from [`GroupCoordinator::snapshot`] output; beyond `max_threads`
    /// the least recently active threads are dropped.
    pub fn restore(snapshot: GroupSnapshot, max_threads: std::num::NonZeroUsize) -> Self {
        Self { threads: BoundedMap::from_ordered(max_threads, snapshot.threads) }
    }
}

/// What `start` needs of an entry, qualified or legacy.
struct Entry<'a> {
    agents: &'a [String],
    mention_gating: bool,
    max_rounds: u32,
    /// `None`: one turn per participant.
    max_turns: Option<u32>,
}

/// The entry's participants as the profile reports them: as spelled, or normalized
/// (`normalizeAgentId`, duplicates dropped).
fn participant_ids(cfg: &GroupConfig, agents: &[String]) -> Vec<String> {
    if !cfg.rules.normalized_participant_ids {
        return agents.to_vec();
    }
    let mut out: Vec<String> = Vec::with_capacity(agents.len());
    for a in agents {
        let id = crate::config::tool::normalize_agent_id(a);
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// True when a final counts as a reply: not blank, and not the silent token when the profile
/// has one.
fn is_reply(cfg: &GroupConfig, text: &str) -> bool {
    !text.trim().is_empty() && cfg.rules.silent_reply_token.is_none_or(|t| !reply::is_silent_reply(text, t))
}

/// Decides what follows the round recorded in `state`, updating `state` for a new round.
fn next_step(cfg: &GroupConfig, state: &mut ThreadState, replies: &[Reply]) -> GroupStep {
    // The first entry per launched agent counts; everything else is ignored.
    let mut finals: Vec<Option<&str>> = vec![None; state.launched.len()];
    let mut seen = vec![false; state.launched.len()];
    for r in replies {
        let norm = normalize_agent_id(&r.agent);
        let Some(i) = state.launched.iter().position(|a| normalize_agent_id(a) == norm) else {
            continue;
        };
        if !seen[i] {
            seen[i] = true;
            finals[i] = r.reply.as_deref().filter(|t| is_reply(cfg, t));
        }
    }
    let repliers: Vec<(&str, &str)> =
        state.launched.iter().zip(&finals).filter_map(|(a, f)| f.map(|text| (a.as_str(), text))).collect();
    if repliers.is_empty() {
        return GroupStep::Stop(StopReason::AllPassed);
    }
    if state.round >= state.max_rounds {
        return GroupStep::Stop(StopReason::MaxRounds);
    }
    if state.remaining_turns() == 0 {
        return GroupStep::Stop(StopReason::MaxTurns);
    }
    // openclaw 2026.9 matches the recorded (trimmed) text.
    let finals_text = |t: &str| if cfg.rules.mentions_need_at { t.trim().to_string() } else { t.to_string() };
    let texts: Vec<(&str, String)> = repliers.iter().map(|(a, t)| (*a, finals_text(t))).collect();
    let hays: Vec<(&str, &str, _)> = texts.iter().map(|(a, t)| (*a, t.as_str(), cfg.haystack(t))).collect();
    let by_name = cfg.rules.address_by_display_name;
    let eligible: Vec<String> = state
        .agents
        .iter()
        .filter(|p| {
            let norm = normalize_agent_id(p);
            let replied = repliers.iter().any(|(a, _)| normalize_agent_id(a) == norm);
            let addressed = |text: &str, hay: &_| {
                cfg.mentions(p, hay) || (by_name && reply::addresses_by_name(text, cfg.display_name(p)))
            };
            replied || hays.iter().any(|(author, text, hay)| normalize_agent_id(author) != norm && addressed(text, hay))
        })
        .cloned()
        .collect();
    if eligible.is_empty() {
        return GroupStep::Stop(StopReason::NoEligible);
    }
    state.round = state.round.saturating_add(1);
    let participants = state.reserve(eligible);
    GroupStep::Round { round: state.round, participants }
}
