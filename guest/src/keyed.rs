//! Deciding on one key's state, for gateways that keep their state outside the process.
//!
//! Why: a gateway that runs several replicas behind a load balancer (Slack's HTTP mode, Telegram
//! webhooks) spreads one conversation over processes. If each replica counted on its own, a pair
//! budget of 20 would let 20 through per replica. The host keeps each key's state in a shared
//! store (Valkey/Redis, or a map in the process) and asks the policy to decide on it; the store
//! only compares a version and sets a value, so no rule is written twice.
//!
//! How: an event's state lives under one key ([`Gateway::state_key`]): a bot message under its
//! account and conversation (every pair and burst bucket of that conversation), a tool event
//! under its session, a group event under its thread. [`Gateway::decide_keyed`] sets the
//! gateway's state aside, imports the key's blob (a snapshot of [`crate::snapshot`], holding only
//! that key's entries), applies the event with the batch path ([`Gateway::apply_events`]), exports
//! the state back, and puts the gateway's own state back as it was. The rules that decide are the
//! ones every other path runs; the blob is the hot-swap snapshot format, so a newer policy reads
//! an older replica's blobs.
//!
//! What differs from one process holding every key: the opportunistic prune (docs/spec/bot-loop.md
//! §2.4 step 6) and the `maxPairs`/`maxSessions` caps act on one key's entries, never across keys
//! (the store's TTL bounds memory instead). Events of one key in the same order give the same
//! decisions on any replica: the store's commit order is the order.
//!
//! ```
//! use loopguard_policy::gateway::Gateway;
//! let mut gw = Gateway::from_config("{}").unwrap();
//! let line = r#"{"kind":"bot_message","channel":"slack","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1}"#;
//! assert_eq!(gw.state_key(line).unwrap(), r#"bot["a","c"]"#);
//! let (decision, state) = gw.decide_keyed(line, 7, None).unwrap();
//! assert_eq!(decision, "{\"line\":7,\"kind\":\"bot_message\",\"action\":\"allow\"}\n");
//! let (_, again) = gw.decide_keyed(line, 8, state.as_deref()).unwrap();
//! assert!(again.is_some());
//! ```

use std::mem;

use crate::bot_loop::BotGuard;
use crate::canonical::write_string;
use crate::error::PolicyError;
use crate::gateway::Gateway;
use crate::group::GroupCoordinator;
use crate::store::BoundedMap;
use crate::trace::{self, Event, Lines};

/// The three parts of a gateway's state, set aside while one key is decided.
type Parts = (BoundedMap<String, crate::tool_loop::Session>, BotGuard, GroupCoordinator);

/// What an event's state is keyed by.
#[derive(Debug, Clone, Copy)]
pub enum KeyOf<'a> {
    /// A tool event or a compaction: its session.
    Session(&'a str),
    /// A bot message: its account and conversation.
    Bot {
        /// The account id.
        account: &'a str,
        /// The conversation.
        conversation: &'a str,
    },
    /// A group event: its thread.
    Group(&'a trace::GroupThread<'a>),
}

impl KeyOf<'_> {
    /// The key as text: `session["s"]`, `bot["a","c"]` or
    /// `group["<channel>","<account>","<conversation>",<thread|null>,"<root>"]`.
    pub fn text(&self) -> String {
        let (kind, parts): (&str, Vec<Option<&str>>) = match self {
            KeyOf::Session(s) => ("session", vec![Some(s)]),
            KeyOf::Bot { account, conversation } => ("bot", vec![Some(account), Some(conversation)]),
            KeyOf::Group(t) => {
                ("group", vec![Some(t.channel), Some(t.account), Some(t.conversation), t.thread, Some(t.root)])
            }
        };
        let mut out = String::with_capacity(64);
        out.push_str(kind);
        out.push('[');
        for (i, part) in parts.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match part {
                Some(s) => write_string(s, &mut out),
                None => out.push_str("null"),
            }
        }
        out.push(']');
        out
    }
}

/// The gateway's own state, set aside while one key is decided ([`Gateway::set_aside`]).
#[derive(Debug)]
pub struct SetAside(Parts);

impl Gateway {
    /// The key of the state `event` (one trace line) decides on (see [`KeyOf::text`]).
    /// Fails on a line that is not one valid event (errors name line 1 and the field).
    pub fn state_key(&self, event: &str) -> Result<String, PolicyError> {
        let mut lines = Lines::default();
        lines.read(event, 1, self.config.lone_keys())?;
        let Some((n, line)) = lines.iter().next() else {
            return Err(PolicyError::input("line 1", "an event must be a JSON object"));
        };
        Ok(match trace::event(line, n)? {
            Event::ToolCall(c) | Event::ToolResult(c, _) => KeyOf::Session(c.session).text(),
            Event::Compaction { session, .. } => KeyOf::Session(session).text(),
            Event::BotMessage(m) => KeyOf::Bot { account: m.account, conversation: m.conversation }.text(),
            Event::GroupMessage(m) => KeyOf::Group(&m.thread).text(),
            Event::GroupReplies(t, _) | Event::GroupCancel(t) => KeyOf::Group(&t).text(),
        })
    }

    /// Decides `event` (one trace line, numbered `line` in the decision) on `state`, the blob a
    /// previous call returned for the event's key (`None`: the key has no state yet), and returns
    /// the decision line and the key's new state (`None`: nothing left to keep, delete the key).
    /// The gateway's own state is left as it was. A blob this policy cannot read fails with a
    /// snapshot error, a malformed event with an input error naming the line.
    pub fn decide_keyed(
        &mut self,
        event: &str,
        line: u32,
        state: Option<&[u8]>,
    ) -> Result<(String, Option<Vec<u8>>), PolicyError> {
        let own = self.set_aside();
        let result = self.on_key_state(state, |gw| gw.apply_events(event, line));
        self.restore(own);
        result
    }

    /// Imports `state` (a key's blob; `None`: empty), runs `decide` and returns its result with
    /// the key's new state (`None` when nothing is left to keep). Call between
    /// [`Gateway::set_aside`] and [`Gateway::restore`], so that the gateway's own state is kept.
    pub fn on_key_state<T>(
        &mut self,
        state: Option<&[u8]>,
        decide: impl FnOnce(&mut Self) -> Result<T, PolicyError>,
    ) -> Result<(T, Option<Vec<u8>>), PolicyError> {
        if let Some(blob) = state {
            self.import_state(blob)?;
        }
        let decided = decide(self)?;
        Ok((decided, self.key_state()))
    }

    /// The state as a key's blob: `None` when nothing is left to keep (delete the key).
    pub fn key_state(&self) -> Option<Vec<u8>> {
        let empty = self.sessions.is_empty()
            && self.bots.pair_count() == 0
            && self.bots.burst_count() == 0
            && self.groups.thread_count() == 0;
        (!empty).then(|| self.export_state())
    }

    /// Replaces the state with an empty one and returns what was there.
    pub fn set_aside(&mut self) -> SetAside {
        let l = &self.config.limits;
        let empty = (
            BoundedMap::new(l.max_sessions),
            BotGuard::new(l.max_pairs).with_rules(self.config.profile.bot),
            GroupCoordinator::new(l.max_group_threads),
        );
        let (s, b, g) = empty;
        SetAside((
            mem::replace(&mut self.sessions, s),
            mem::replace(&mut self.bots, b),
            mem::replace(&mut self.groups, g),
        ))
    }

    /// Puts back the state [`Gateway::set_aside`] returned.
    pub fn restore(&mut self, SetAside((s, b, g)): SetAside) {
        self.sessions = s;
        self.bots = b;
        self.groups = g;
    }
}

#[cfg(test)]
mod tests;
