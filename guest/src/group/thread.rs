//! One group thread's budget: its identity and what it has spent.
//!
//! The budget belongs to one root inbound message in one place, so its key is (channel, account,
//! conversation, thread, root) — docs/spec/bot-loop.md §5.2. The parts are free-form platform ids
//! that may contain any character, so they are joined with length prefixes: two different
//! tuples can never produce the same key (a separator alone could be forged by an id that
//! contains it).

use serde::{Deserialize, Serialize};

/// Where a group thread lives and which inbound message started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadKey<'a> {
    /// Channel name, e.g. `discord`.
    pub channel: &'a str,
    /// Account id on that channel.
    pub account: &'a str,
    /// Conversation (group, room, channel) id.
    pub conversation: &'a str,
    /// Platform thread id, when the conversation is threaded.
    pub thread: Option<&'a str>,
    /// Id of the root inbound message.
    pub root: &'a str,
}

impl ThreadKey<'_> {
    /// The collision-free map key: each part as `<byte length>:<bytes>`, an absent thread as `~`.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(
            self.channel.len()
                + self.account.len()
                + self.conversation.len()
                + self.thread.map_or(0, str::len)
                + self.root.len()
                + 32,
        );
        for part in [Some(self.channel), Some(self.account), Some(self.conversation), self.thread]
            .into_iter()
            .chain([Some(self.root)])
        {
            match part {
                Some(s) => {
                    out.push_str(&s.len().to_string());
                    out.push(':');
                    out.push_str(s);
                }
                None => out.push('~'),
            }
        }
        out
    }
}

/// The budget state of one active thread. Plain data, so a snapshot can carry it.
///
/// The entry's participants and limits are copied in at the start, so a config reload in the
/// middle of a thread cannot change the budget it already runs under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadState {
    /// The entry's participants in configured order.
    pub agents: Vec<String>,
    /// The entry's `maxRounds`.
    pub max_rounds: u32,
    /// The entry's `maxTurns`.
    pub max_turns: u32,
    /// The round that was launched last (1 = the initial round).
    pub round: u32,
    /// Agent runs reserved so far, across all rounds.
    pub turns_used: u32,
    /// The participants launched in the current round, in launch order.
    pub launched: Vec<String>,
}

impl ThreadState {
    /// Turns still available.
    pub fn remaining_turns(&self) -> u32 {
        self.max_turns.saturating_sub(self.turns_used)
    }

    /// Reserves turns for up to `eligible.len()` participants, in the given (configured) order,
    /// and records them as this round's launch. Returns the participants that got a turn.
    pub fn reserve(&mut self, eligible: Vec<String>) -> Vec<String> {
        let take = eligible.len().min(self.remaining_turns() as usize);
        let mut launched = eligible;
        launched.truncate(take);
        self.turns_used = self.turns_used.saturating_add(take as u32);
        self.launched = launched.clone();
        launched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(parts: [&'a str; 4], thread: Option<&'a str>) -> ThreadKey<'a> {
        ThreadKey { channel: parts[0], account: parts[1], conversation: parts[2], thread, root: parts[3] }
    }

    #[test]
    fn keys_that_a_plain_separator_would_confuse_stay_distinct() {
        let keys = [
            key(["a", "b", "c", "r"], None),
            key(["a", "b", "c", "r"], Some("")),
            key(["a", "b", "c", "r"], Some("~")),
            key(["a:b", "", "c", "r"], None),
            key(["a", "b:", "c", "r"], None),
            key(["a", "1:b", "c", "r"], None),
            key(["a", "b", "c~", "r"], None),
            key(["a", "b", "c", "~r"], None),
            key(["", "", "", ""], None),
            key(["", "", "", ""], Some("")),
        ];
        let encoded: Vec<String> = keys.iter().map(ThreadKey::encode).collect();
        for i in 0..encoded.len() {
            for j in i + 1..encoded.len() {
                assert_ne!(encoded[i], encoded[j], "{:?} vs {:?}", keys[i], keys[j]);
            }
        }
    }

    #[test]
    fn reserve_takes_configured_order_up_to_the_remaining_turns() {
        let mut s = ThreadState {
            agents: vec!["a".into(), "b".into(), "c".into()],
            max_rounds: 2,
            max_turns: 4,
            round: 1,
            turns_used: 2,
            launched: vec![],
        };
        let got = s.reserve(vec!["a".into(), "b".into(), "c".into()]);
        assert_eq!(got, ["a", "b"]);
        assert_eq!((s.turns_used, s.remaining_turns()), (4, 0));
        assert_eq!(s.launched, ["a", "b"]);
    }
}
