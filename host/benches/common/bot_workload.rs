//! The bot workload shared by the bot benchmark (`benches/bot.rs`) and the profiling and memory
//! examples (`examples/bot_profile.rs`, `examples/bot_memory.rs`), so that a profile or a memory
//! figure is about exactly the messages the benchmark decides.

use loopguard_host::BotMessage;
use loopguard_policy::trace::BotMessage as NativeMessage;

/// Active pairs in the benchmark (the memory example chooses its own counts).
#[allow(dead_code)]
pub const PAIRS: usize = 100_000;

/// Pair `pair`'s message at `ts_ms`: pairs spread over 1 000 conversations of 10 accounts, each
/// pair two bot ids, the direction alternating with the timestamp, a fresh event id.
pub fn message(pair: usize, ts_ms: i64) -> BotMessage {
    let (a, b) = if ts_ms % 2 == 0 { ("bot-a", "bot-b") } else { ("bot-b", "bot-a") };
    BotMessage {
        channel: "discord".into(),
        account: format!("acct-{}", pair % 10),
        conversation: format!("chan-{}", pair / 10 % 10_000),
        room: None,
        sender: format!("{a}-{pair}"),
        receiver: format!("{b}-{pair}"),
        ts_ms,
        event_id: Some(format!("evt-{pair}-{ts_ms}")),
    }
}

/// The timed loops' messages: pairs in a scattered order, time moving on by 1 ms per message so
/// that pairs stay active and rarely trip, and a fresh event id each time. The messages are built
/// once and rewritten in place, so a loop times the decision, not the building of its input.
#[allow(dead_code)]
pub struct Stream {
    messages: Vec<BotMessage>,
    next: usize,
    ts: i64,
    /// The current event id: `e` and a decimal counter.
    id: Vec<u8>,
}

#[allow(dead_code)]
impl Stream {
    /// Starts after the fill's events (which are at 1 000 000 – 1 000 999 ms).
    pub fn new() -> Self {
        Stream { messages: (0..PAIRS).map(|p| message(p, 0)).collect(), next: 0, ts: 1_002_000, id: b"e".to_vec() }
    }

    /// The next message.
    pub fn next(&mut self) -> &BotMessage {
        let m = &mut self.messages[self.next % PAIRS];
        self.next += 7919;
        self.ts += 1;
        m.ts_ms = self.ts;
        // The id counts up in place: formatting a number with `write!` costs more than a tenth
        // of what the decision being timed does, and that is the harness, not the policy.
        let mut carry = true;
        for d in self.id[1..].iter_mut().rev() {
            if *d == b'9' {
                *d = b'0';
            } else {
                *d += 1;
                carry = false;
                break;
            }
        }
        if carry {
            self.id.insert(1, b'1');
        }
        let id = m.event_id.get_or_insert_with(String::new);
        id.clear();
        id.push_str(std::str::from_utf8(&self.id).expect("the id is ASCII"));
        m
    }
}

/// The same message for the guest crate called natively (the benchmark's native side).
#[allow(dead_code)]
pub fn native(m: &BotMessage) -> NativeMessage<'_> {
    NativeMessage {
        channel: &m.channel,
        account: &m.account,
        conversation: &m.conversation,
        room: m.room.as_deref().unwrap_or(&m.conversation),
        sender: &m.sender,
        receiver: &m.receiver,
        ts_ms: m.ts_ms,
        event_id: m.event_id.as_deref(),
    }
}
