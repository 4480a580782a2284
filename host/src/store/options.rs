//! What a [`StoredGateway`](super::StoredGateway) is told (its options) and what it tells (a
//! decision, its counters): its own file so that the decision loop (`decide.rs`) reads as the
//! loop alone.

use std::time::Duration;

/// Keys whose last seen value a replica remembers (about 300 bytes each at the default budgets;
/// past the cap the soonest-expiring half is forgotten, and those keys cost one round trip more).
pub const SEEN_CAPACITY: usize = 10_000;

/// What to do when the store fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreFailure {
    /// Decide on this replica's local state (the default).
    #[default]
    Open,
    /// Make no decision ([`Via::Refused`]): the gateway drops the event.
    Closed,
}

/// How a [`StoredGateway`](super::StoredGateway) uses its store.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// Time to live of every write: longer than the longest window plus cooldown of the config
    /// (the burst budget's 10 minutes plus its cooldown, by default). Default 1 hour.
    pub ttl: Duration,
    /// How long one decision may wait for the store (each command's timeout, and the time after
    /// which conflicts stop being retried). Default 20 ms.
    pub deadline: Duration,
    /// Open (local state) or closed when the store fails.
    pub failure: StoreFailure,
    /// While the store keeps failing, the longest time decisions stay local before it is tried
    /// again (the wait grows from none to this). Default 250 ms.
    pub retry_after: Duration,
    /// Conflicts retried per decision before it counts as a store failure (the deadline usually
    /// ends the retries first). Default 1,000.
    pub max_retries: u32,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(3600),
            deadline: Duration::from_millis(20),
            failure: StoreFailure::Open,
            retry_after: Duration::from_millis(250),
            max_retries: 1_000,
        }
    }
}

/// Where a decision was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// On the shared store's state, committed at [`Decided::version`].
    Store,
    /// On this replica's local state (the store failed; fail-open).
    Local,
    /// Not made: the store failed and the gateway fails closed.
    Refused,
}

/// One decision: `T` is what the policy answered, a decision line
/// ([`StoredGateway::decide`](super::StoredGateway::decide)) or the typed verdict
/// ([`StoredGateway::decide_call`](super::StoredGateway::decide_call)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided<T = String> {
    /// The state key it was made on.
    pub key: String,
    /// The decision line (as `apply-events` writes it) or the verdict; `None` when
    /// [`Via::Refused`].
    pub decision: Option<T>,
    /// The key's version after the write (the commit order of the key's decisions).
    pub version: u64,
    /// Where it was made.
    pub via: Via,
    /// Compare-and-set conflicts it retried.
    pub retries: u32,
}

/// The `log` target of the store loop's reports: stable whatever the module path, so that a
/// program can route or filter them by name.
pub const LOG_TARGET: &str = "loopguard::store";

/// Counters for health checks and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Decisions made on the store's state.
    pub on_store: u64,
    /// Decisions made on local state because the store failed.
    pub on_local: u64,
    /// Decisions refused because the store failed (fail-closed).
    pub refused: u64,
    /// Compare-and-set conflicts met: each was retried, but for the one that ended a decision's
    /// retries (counted in `store_errors` too).
    pub cas_retries: u64,
    /// Store failures (errors, timeouts, retries exhausted).
    pub store_errors: u64,
    /// Blobs this policy could not read.
    pub unreadable: u64,
    /// Failure episodes begun.
    pub episodes: u64,
    /// True while an episode lasts.
    pub degraded: bool,
    /// Keys in the local fallback state.
    pub local_keys: u64,
}
