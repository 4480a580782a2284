//! The guard's calls on a [`SwappableGateway`]: each runs on the active instance and, unless it
//! only reads, is logged in the journal so that a swap can apply it to the new instance.

use super::log::Call as Logged;
use super::{FailureMode, SwappableGateway};
use crate::error::Result;
use crate::{
    BotMessage, BotVerdict, Budget, Call as Typed, CompactionVerdict, GroupReply, GroupStart, GroupStep, GroupThread,
    OutcomeVerdict, PolicyError, Stats, Suppression, ToolAction, ToolCall, ToolOutcome, ToolVerdict, Verdict,
};

/// Decisions (`check_tool_call`, `check_bot_message`) answer a broken call with the failure mode;
/// every other call returns the error after recovering.
impl SwappableGateway {
    /// Checks a tool call. If the policy breaks, the verdict is the failure mode's: `allow` or
    /// `block`, with the failure in `message` (also for `allow`, so that it gets logged).
    pub fn check_tool_call(&self, call: &ToolCall) -> Result<ToolVerdict> {
        match self.with(|g| g.check_tool_call(call), |j| j.extend_tool(call, None)) {
            Err(e) if e.breaks_instance() => Ok(ToolVerdict {
                action: match self.supervision.failure_mode {
                    FailureMode::Open => ToolAction::Allow,
                    FailureMode::Closed => ToolAction::Block,
                },
                detector: None,
                count: 0,
                message: Some(self.failure_message(&e)),
                notify: true,
            }),
            other => other,
        }
    }

    /// Checks a bot message. If the policy breaks: fail-open dispatches it, fail-closed
    /// suppresses this message only (cooldown until its own timestamp + 1 ms).
    pub fn check_bot_message(&self, message: &BotMessage) -> Result<BotVerdict> {
        match self.with(|g| g.check_bot_message(message), |j| j.extend(Logged::Bot(message.clone()))) {
            Err(e) if e.breaks_instance() => Ok(match self.supervision.failure_mode {
                FailureMode::Open => BotVerdict::Allow,
                FailureMode::Closed => BotVerdict::Suppress(Suppression {
                    cooldown_until_ms: message.ts_ms.saturating_add(1),
                    budget: Budget::Pair,
                }),
            }),
            other => other,
        }
    }

    /// Records how a tool call ended.
    pub fn record_tool_outcome(&self, call: &ToolCall, outcome: &ToolOutcome) -> Result<OutcomeVerdict> {
        self.with(|g| g.record_tool_outcome(call, outcome), |j| j.extend_tool(call, Some(outcome)))
    }

    /// Arms the post-compaction guard.
    pub fn compaction_retried(
        &self,
        session: &str,
        run: Option<&str>,
        agent: Option<&str>,
    ) -> Result<CompactionVerdict> {
        self.with(
            |g| g.compaction_retried(session, run, agent),
            |j| {
                j.extend(Logged::Compaction {
                    session: session.into(),
                    run: run.map(Into::into),
                    agent: agent.map(Into::into),
                })
            },
        )
    }

    /// Forgets a session.
    pub fn end_session(&self, session: &str) -> Result<()> {
        self.with(|g| g.end_session(session), |j| j.extend(Logged::EndSession(session.into())))
    }

    /// Applies trace events (JSON Lines); see [`crate::Gateway::apply_events`].
    pub fn apply_events(&self, events: &str, first_line: u32) -> Result<String> {
        self.with(
            |g| g.apply_events(events, first_line),
            |j| j.extend(Logged::Events { events: events.into(), first_line }),
        )
    }

    /// Makes typed calls in one batch; see [`crate::Gateway::apply_calls`]. The calls made are
    /// logged (the one that failed changed nothing).
    pub fn apply_calls(&self, calls: &[Typed]) -> Result<Vec<std::result::Result<Verdict, PolicyError>>> {
        let made = std::cell::Cell::new(0);
        self.with(
            |g| {
                let results = g.apply_calls(calls)?;
                made.set(results.iter().filter(|r| r.is_ok()).count());
                Ok(results)
            },
            |j| j.extend(Logged::Calls(calls[..made.get()].to_vec())),
        )
    }

    /// Exports the whole state.
    pub fn export_state(&self) -> Result<Vec<u8>> {
        self.read(|g| g.export_state())
    }

    /// Replaces the state with a snapshot (and keeps it as the last good one).
    pub fn import_state(&self, snapshot: &[u8]) -> Result<()> {
        let mut active = self.lock();
        match active.gateway.import_state(snapshot) {
            Ok(()) => {
                active.journal.rebase(snapshot.to_vec(), None);
                self.request_standby(&active);
                Ok(())
            }
            Err(e) => {
                if e.breaks_instance() {
                    self.recover(&mut active, &e);
                }
                Err(e)
            }
        }
    }

    /// Counters for metrics.
    pub fn stats(&self) -> Result<Stats> {
        self.read(|g| g.stats())
    }

    /// See [`crate::Gateway::start_group_thread`].
    pub fn start_group_thread(&self, thread: &GroupThread, peer: &str, text: &str) -> Result<GroupStart> {
        self.with(
            |g| g.start_group_thread(thread, peer, text),
            |j| j.extend(Logged::GroupStart { thread: thread.clone(), peer: peer.into(), text: text.into() }),
        )
    }

    /// See [`crate::Gateway::finish_group_round`].
    pub fn finish_group_round(&self, thread: &GroupThread, replies: &[GroupReply]) -> Result<GroupStep> {
        self.with(
            |g| g.finish_group_round(thread, replies),
            |j| j.extend(Logged::GroupFinish { thread: thread.clone(), replies: replies.to_vec() }),
        )
    }

    /// See [`crate::Gateway::cancel_group_thread`].
    pub fn cancel_group_thread(&self, thread: &GroupThread) -> Result<GroupStep> {
        self.with(|g| g.cancel_group_thread(thread), |j| j.extend(Logged::GroupCancel(thread.clone())))
    }
}
