//! What a [`SwappableGateway`](super::SwappableGateway) is told and what it reports: the failure
//! mode and supervision settings its owner chooses, the health counters it keeps, and the report
//! of a swap: plain data, kept apart from the supervisor that uses it so that a caller finds the
//! knobs in one place.

use std::time::Duration;

/// What a decision is when the policy failed to give one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureMode {
    /// Allow the tool call / dispatch the message: a broken guard must not stop the agents.
    #[default]
    Open,
    /// Block the tool call / suppress the message: a broken guard must not let a loop run.
    Closed,
}

/// How a [`SwappableGateway`](super::SwappableGateway) supervises its instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supervision {
    /// The answer to a decision whose call failed.
    pub failure_mode: FailureMode,
    /// Take a snapshot after this many successful calls (default 1 000). With 1 and
    /// `snapshot_spacing: 0` a snapshot follows every call, which loses nothing in a recovery but
    /// exports the whole state each time.
    pub snapshot_every: u32,
    /// Spaces snapshots by what they cost: after an export that held the calls for `d`, the next
    /// snapshot waits at least `snapshot_spacing` × `d` (default 50, so exports hold the calls at
    /// most 2 % of the time, and the standby's import costs the background thread about 3 %).
    /// With a small state `d` is microseconds and `snapshot_every` decides; with 10,000 sessions
    /// and 100,000 pairs (`d` ≈ 30 ms) a snapshot is taken at most every 1.5 s. 0 = count only.
    pub snapshot_spacing: u32,
    /// Keep a hot standby for recoveries (default true): one more instance holding the state,
    /// and one background import per snapshot. Without it a recovery imports the snapshot itself.
    pub standby: bool,
    /// Log every call since the last snapshot (default true), so that a swap can bring the new
    /// instance up to date while calls go on (live migration). Without it calls are logged only
    /// while a swap copies the state, which then starts from a snapshot taken under the lock
    /// (one export more per swap). For a caller that swaps rarely if ever and sends large
    /// batches (`replay`): copying every batch into the log made a 200,000-event bot trace's
    /// replay 10.8 % slower (the copies' ~7,500 page faults; docs/PERFORMANCE.md).
    pub log_calls: bool,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision {
            failure_mode: FailureMode::Open,
            snapshot_every: 1_000,
            snapshot_spacing: 50,
            standby: true,
            log_calls: true,
        }
    }
}

/// Counters of what the supervisor had to do, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Health {
    /// Broken instances replaced by a fresh one.
    pub recoveries: u64,
    /// Of those, how many by switching to the standby.
    pub standby_recoveries: u64,
    /// Calls stopped at their deadline.
    pub timeouts: u64,
    /// Calls that trapped (panics, bugs).
    pub traps: u64,
    /// Calls that ran out of memory.
    pub oom: u64,
    /// Successful swaps.
    pub swaps: u64,
    /// Swaps refused (the old version stayed active).
    pub failed_swaps: u64,
    /// Snapshots taken.
    pub snapshots: u64,
    /// Standbys prepared (in the background).
    pub standbys: u64,
}

/// What a swap did and how long it took.
#[derive(Debug, Clone)]
pub struct SwapReport {
    /// The version that was active.
    pub from_version: String,
    /// The version now active.
    pub to_version: String,
    /// Digest of the old component.
    pub from_digest: String,
    /// Digest of the new component.
    pub to_digest: String,
    /// Size of the snapshot the new instance started from.
    pub snapshot_bytes: usize,
    /// Calls logged since that snapshot and applied to the new instance.
    pub replayed: usize,
    /// Of those, how many with the lock held.
    pub replayed_paused: usize,
    /// Preparing the new instance (no lock held): instantiate, `create`, import, replay.
    pub prepare: Duration,
    /// The longest time calls waited for the swap in one go (the last calls and the switch, or
    /// a slice of a slowed-down copy).
    pub paused: Duration,
    /// All the time the swap held the calls (more than `paused` only if the copy was slowed
    /// down in slices, under a load it could not catch up with).
    pub held: Duration,
}
