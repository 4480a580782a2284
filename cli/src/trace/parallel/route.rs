//! Which worker a trace line goes to.
//!
//! Tool events (`tool_call`, `tool_result`, `compaction`) touch only the state of their session,
//! so they are sharded by session. Bot and group events go to one worker, the *global lane*:
//! the bot guard's prune clock is process-wide (one conversation's late timestamps change what a
//! prune left of another's), so no finer key is safe for every trace. A line that reads but
//! is no tool event of a session (an unknown kind, no session) also goes to the global lane.
//!
//! A line is read with `serde_json`, only its `kind` and `session` kept. The policy reads JSON
//! with JavaScript's semantics, which `serde_json` does not share everywhere: a duplicate key
//! (the later one wins in the policy), a lone UTF-16 surrogate, and whatever else `serde_json`
//! refuses, it refuses. Such a line is [`Route::Unreadable`], and the replay goes on with one
//! gateway from its chunk on (`super`), where the policy reads it, or names its own error for it,
//! exactly as with `--jobs 1`. Two lines `serde_json` reads alike name one session for the
//! policy too (escapes decoded the same way), so a session never spans two workers.

use std::borrow::Cow;

use serde::Deserialize;

/// Where one trace line goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// Spaces, tabs and carriage returns only: no decision, no state.
    Blank,
    /// A tool event of this session.
    Session(Cow<'a, str>),
    /// Bot and group events, and other lines that read as JSON but name no tool session.
    Global,
    /// A line `serde_json` does not read (see the module doc): the replay goes on with one
    /// gateway from here on.
    Unreadable,
}

/// The members routing needs; `serde_json` skips the others.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session: Option<Cow<'a, str>>,
}

/// Routes one line (without its `\n`; valid UTF-8).
pub(crate) fn route(line: &str) -> Route<'_> {
    if line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return Route::Blank;
    }
    match serde_json::from_str::<Head<'_>>(line) {
        Ok(Head { kind: Some(kind), session: Some(session) })
            if matches!(&*kind, "tool_call" | "tool_result" | "compaction") =>
        {
            Route::Session(session)
        }
        Ok(_) => Route::Global,
        Err(_) => Route::Unreadable,
    }
}

/// The worker of a session among `workers`: a fixed hash, so that every run routes alike.
pub(crate) fn worker_of(session: &str, workers: usize) -> usize {
    // FNV-1a, then a splitmix64 finish so that keys differing in one digit spread evenly.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in session.as_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h % workers.max(1) as u64) as usize
}

#[cfg(test)]
mod tests;
