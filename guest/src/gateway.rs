//! The whole loop-guard state of one gateway.
//!
//! A gateway process keeps one [`Gateway`]: every agent session's tool-loop state (bounded by
//! `loopguard.maxSessions`, least recently used evicted), the process-wide bot-pair guard and the
//! group-thread coordinator. It is what the WIT `gateway` resource wraps, and what `replay` runs
//! a trace through.

use crate::bot_loop::{BotDecision, BotFacts, BotGuard};
use crate::canonical_text::CanonicalText;
use crate::config::Config;
use crate::group::{GroupCoordinator, GroupStart, GroupStep, Reply};
use crate::json::Json;
use crate::store::BoundedMap;
use crate::tool_loop::memo::CallMemo;
use crate::tool_loop::outcome;
use crate::tool_loop::{
    CallFacts, CallRef, CompactionVerdict, Outcome, OutcomeVerdict, Session, ToolCall, ToolVerdict,
};
use crate::trace::{BotMessage, GroupMessage, GroupThread};

/// One gateway's guard state and config.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub(crate) config: Config,
    pub(crate) sessions: BoundedMap<String, Session>,
    pub(crate) bots: BotGuard,
    pub(crate) groups: GroupCoordinator,
    /// Facts of the last few checked calls, reused by their outcomes (not part of snapshots).
    memo: CallMemo,
    /// Scratch for hashing results straight from their text ([`Gateway::record_tool_result_text`]).
    result_text: CanonicalText,
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
            bots: BotGuard::new(l.max_pairs),
            groups: GroupCoordinator::new(l.max_group_threads),
            memo: CallMemo::default(),
            result_text: CanonicalText::default(),
            config,
        }
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Checks a tool call before it runs.
    pub fn check_tool_call(&mut self, call: &ToolCall<'_>) -> ToolVerdict {
        self.check_tool_call_text(call, None)
    }

    /// [`Gateway::check_tool_call`] when the args arrived as JSON text (`args_text`): the call's
    /// facts are remembered, so that the outcome that follows with the same text skips parsing
    /// and hashing the arguments again ([`Gateway::recall_call`]).
    pub fn check_tool_call_text(&mut self, call: &ToolCall<'_>, args_text: Option<&str>) -> ToolVerdict {
        let facts = self.memo.facts(call.tool, call.args, call.run);
        if let Some(text) = args_text {
            self.memo.remember(call.session, call.tool, call.run, text, &facts);
        }
        let settings = self.config.tools.for_agent(call.agent);
        let session = self.sessions.entry_or_insert_with(call.session, Session::default);
        session.check_facts(&call.meta(), &facts, settings)
    }

    /// [`Gateway::check_tool_call_text`] straight from the arguments text, without parsing it
    /// into a tree; `None` (nothing checked, nothing recorded) when the text is outside the
    /// common case of [`crate::canonical_text`] and the caller must parse it and take the tree
    /// path, which also reports malformed JSON.
    pub fn check_tool_call_fast(&mut self, call: &CallRef<'_>, args_text: &str) -> Option<ToolVerdict> {
        let facts = self.memo.text_facts(call.tool, args_text, call.run)?;
        self.memo.remember(call.session, call.tool, call.run, args_text, &facts);
        let settings = self.config.tools.for_agent(call.agent);
        let session = self.sessions.entry_or_insert_with(call.session, Session::default);
        Some(session.check_facts(call, &facts, settings))
    }

    /// The facts of a call from its arguments text without a tree, when the text allows it
    /// (see [`Gateway::check_tool_call_fast`]).
    pub fn text_call_facts(&mut self, tool: &str, args_text: &str, run: Option<&str>) -> Option<CallFacts> {
        self.memo.text_facts(tool, args_text, run)
    }

    /// Records how a tool call ended.
    pub fn record_tool_outcome(&mut self, call: &ToolCall<'_>, outcome: Outcome<'_>) -> OutcomeVerdict {
        self.record_tool_outcome_text(call, None, outcome)
    }

    /// [`Gateway::record_tool_outcome`] when the args arrived as JSON text.
    pub fn record_tool_outcome_text(
        &mut self,
        call: &ToolCall<'_>,
        args_text: Option<&str>,
        outcome: Outcome<'_>,
    ) -> OutcomeVerdict {
        let meta = call.meta();
        let facts = match args_text.and_then(|t| self.recall_call(&meta, t)) {
            Some(f) => f,
            None => self.call_facts(call.tool, call.args, call.run),
        };
        self.record_tool_outcome_facts(&meta, &facts, outcome)
    }

    /// The facts of a call checked lately with exactly this arguments text, if remembered.
    pub fn recall_call(&self, call: &CallRef<'_>, args_text: &str) -> Option<CallFacts> {
        self.memo.recall(call.session, call.tool, call.run, args_text).cloned()
    }

    /// The facts of a call from its parsed arguments.
    pub fn call_facts(&mut self, tool: &str, args: &Json<'_>, run: Option<&str>) -> CallFacts {
        self.memo.facts(tool, args, run)
    }

    /// Records how a tool call ended, given the call's facts.
    pub fn record_tool_outcome_facts(
        &mut self,
        call: &CallRef<'_>,
        facts: &CallFacts,
        outcome: Outcome<'_>,
    ) -> OutcomeVerdict {
        let settings = self.config.tools.for_agent(call.agent);
        let session = self.sessions.entry_or_insert_with(call.session, Session::default);
        session.outcome_facts(call, facts, outcome, settings, &self.config.limits.send_tools)
    }

    /// [`Gateway::record_tool_outcome_facts`] of a result given as JSON text, hashed without
    /// reading it into a tree; `None` (nothing recorded) when the text is outside that path's
    /// common case (see [`outcome::hash_result_text`]) and the caller must parse it and take the
    /// tree path, which also reports malformed JSON.
    pub fn record_tool_result_text(
        &mut self,
        call: &CallRef<'_>,
        facts: &CallFacts,
        text: &str,
    ) -> Option<OutcomeVerdict> {
        let send_tools = &self.config.limits.send_tools;
        let action = facts.action.as_deref();
        let hashed = outcome::hash_result_text(call.tool, action, text, send_tools, &mut self.result_text)?;
        let settings = self.config.tools.for_agent(call.agent);
        let session = self.sessions.entry_or_insert_with(call.session, Session::default);
        Some(session.record_hashed(call, facts, Some(hashed), settings))
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

    /// Checks a bot-authored inbound message against the pair and burst budgets.
    pub fn bot_message(&mut self, m: &BotMessage<'_>) -> BotDecision {
        let settings = self.config.bot.resolve(m.channel, m.account, m.room);
        let facts = BotFacts {
            scope: m.account,
            conversation: m.conversation,
            sender: m.sender,
            receiver: m.receiver,
            now_ms: m.ts_ms,
            event_id: m.event_id,
        };
        self.bots.record_and_check(&facts, &settings)
    }

    /// A message to a conversation that may have a broadcast entry: round 1.
    pub fn group_message(&mut self, m: &GroupMessage<'_>) -> GroupStart {
        self.groups.start(&self.config.group, &m.thread, m.peer, m.text)
    }

    /// The finals of the round just run.
    pub fn group_replies(&mut self, t: &GroupThread<'_>, replies: &[Reply]) -> GroupStep {
        self.groups.replies(&self.config.group, t, replies)
    }

    /// The thread was cancelled.
    pub fn group_cancel(&mut self, t: &GroupThread<'_>) -> GroupStep {
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
