//! The bot workload shared by the bot benchmark (`benches/bot.rs`) and the profiling and memory
//! examples (`examples/bot_profile.rs`, `examples/bot_memory.rs`), so that a profile or a memory
//! figure is about exactly the messages the benchmark decides.

use loopguard_host::BotMessage;

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
