//! The whole loop-guard state of one gateway, and one entry per decision.
//!
//! A gateway process keeps one [`Gateway`]: every agent session's tool-loop state (bounded by
//! `loopguard.maxSessions`, least recently used evicted), the process-wide bot-pair guard and the
//! group-thread coordinator. Every path that decides goes through the methods here: the WIT
//! resource (`component.rs`, built for wasm32 only), the batch path ([`Gateway::apply_events`]) and `replay`.
//! Inputs arrive already read ([`crate::trace`] for trace lines) or as the JSON text of the typed
//! calls, read by [`crate::input`]'s rules.

use crate::bot_loop::{BotDecision, BotFacts, BotGuard};
use crate::config::Config;
use crate::error::PolicyError;
use crate::group::{GroupCoordinator, GroupStart, GroupStep, Reply};
use crate::store::BoundedMap;
use crate::tool_loop::beyond;
use crate::tool_loop::{CallFacts, CompactionVerdict, Outcome, OutcomeVerdict, Session, ToolCall, ToolVerdict};
use crate::trace::{BotMessage, GroupMessage, GroupThread};

/// One gateway's guard state and config.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub(crate) config: Config,
    pub(crate) sessions: BoundedMap<String, Session>,
    pub(crate) bots: BotGuard,
    pub(crate) groups: GroupCoordinator,
}

/// Counters for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Sessions with state.
    pub sessions: u32,
    /// Sessions evicted by the cap.
    pub evicted_sessions: u64,
    /// Bot pairs tracked.
    pub bot_pairs: u32,
    /// Bot pairs evicted by the cap.
    pub evicted_pairs: u64,
    /// Group threads in progress.
    pub group_threads: u32,
}

impl Gateway {
    /// A gateway with empty state.
    pub fn new(config: Config) -> Self {
        let l = &config.limits;
        Self {
            sessions: BoundedMap::new(l.max_sessions),
            bots: BotGuard::new(l.max_pairs).with_rules(config.profile.bot),
            groups: GroupCoordinator::new(l.max_group_threads),
            config,
        }
    }

    /// A gateway built from a config document (JSON or JSON5; `{}` = defaults).
    pub fn from_config(config: &str) -> Result<Self, PolicyError> {
        Ok(Self::new(Config::parse(config)?))
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The state of one session, if it has any.
    pub fn session(&self, key: &str) -> Option<&Session> {
        self.sessions.get(key)
    }

    /// Checks a tool call before it runs (and records it unless it is blocked or the guard is
    /// explicitly disabled). Fails only on argument text that is not JSON or is too large.
    pub fn check_tool_call(&mut self, call: &ToolCall<'_>) -> Result<ToolVerdict, PolicyError> {
        let settings = self.config.tools.for_agent(call.agent);
        let facts = CallFacts::of(call, settings.rules)?;
        let session = self.sessions.entry_or_insert_with(call.session, Session::default);
        let verdict = session.check(call, &facts, settings);
        Ok(beyond::check(&self.config.detection, session.trail_mut(), call, &facts, verdict))
    }

    /// Records how a tool call ended; may return the post-compaction abort. Fails only on
    /// argument text that is not JSON or is too large.
    pub fn record_tool_outcome(
        &mut self,
        call: &ToolCall<'_>,
        outcome: Outcome<'_>,
    ) -> Result<OutcomeVerdict, PolicyError> {
        let settings = self.config.tools.for_agent(call.agent);
        let facts = CallFacts::of(call, settings.rules)?;
        let send_tools = &self.config.limits.send_tools;
        let session = self.sessions.entry_or_insert_with(call.session, Session::default);
        let verdict = session.outcome(call, &facts, outcome, settings, send_tools);
        Ok(beyond::outcome(&self.config.detection, session.trail_mut(), call, &facts, outcome, verdict))
    }

    /// A compaction succeeded; arms the session+run's post-compaction guard.
    pub fn compaction_retried(&mut self, session: &str, run: Option<&str>, agent: Option<&str>) -> CompactionVerdict {
        let settings = self.config.tools.for_agent(agent);
        self.sessions.entry_or_insert_with(session, Session::default).compaction(run, settings)
    }

    /// Forgets a session.
    pub fn end_session(&mut self, session: &str) {
        self.sessions.remove(session);
    }

    /// Checks a bot-authored inbound message against the pair and burst budgets and records it.
    /// Fails only on a negative timestamp.
    pub fn check_bot_message(&mut self, m: &BotMessage<'_>) -> Result<BotDecision, PolicyError> {
        if m.ts_ms < 0 {
            return Err(PolicyError::input(
                "message.ts-ms",
                format!("must be a non-negative timestamp in milliseconds, not {}", m.ts_ms),
            ));
        }
        let settings = self.config.bot.resolve(m.channel, m.account, m.room);
        let facts = BotFacts {
            scope: m.account,
            conversation: m.conversation,
            sender: m.sender,
            receiver: m.receiver,
            now: crate::time::Millis(m.ts_ms),
            event_id: m.event_id,
        };
        Ok(self.bots.record_and_check(&facts, &settings))
    }

    /// A message to a conversation that may have a broadcast entry: round 1.
    pub fn start_group_thread(&mut self, m: &GroupMessage<'_>) -> GroupStart {
        self.groups.start(&self.config.group, &m.thread, m.peer, m.text)
    }

    /// The finals of the round just run: the next round or stop.
    pub fn finish_group_round(&mut self, t: &GroupThread<'_>, replies: &[Reply]) -> GroupStep {
        self.groups.replies(&self.config.group, t, replies)
    }

    /// The thread was cancelled.
    pub fn cancel_group_thread(&mut self, t: &GroupThread<'_>) -> GroupStep {
        self.groups.cancel(t)
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats {
            sessions: self.sessions.len() as u32,
            evicted_sessions: self.sessions.evicted(),
            bot_pairs: self.bots.pair_count() as u32,
            evicted_pairs: self.bots.evicted(),
            group_threads: self.groups.thread_count() as u32,
        }
    }
}
