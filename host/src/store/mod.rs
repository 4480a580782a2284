//! Where a gateway's loop-guard state lives between decisions: in the process, or in Valkey/Redis
//! shared by several replicas.
//!
//! Why: a gateway behind a load balancer (Slack's HTTP mode, Telegram webhooks, several LLM-proxy
//! workers) spreads one conversation over replicas. Each replica counting on its own lets a pair
//! budget of 20 through 20 times per replica, a Slack retry landing on another replica takes a
//! second slot, and a tool loop spread over workers is never seen whole. With a shared store
//! every replica decides on the same state.
//!
//! How: the policy decides, the store keeps. Each decision ([`StoredGateway::decide`]) asks the
//! policy for its event's key ([`crate::Gateway::state_key`]), reads that key's versioned blob,
//! lets the policy decide on it ([`crate::Gateway::decide_keyed`]) and writes the new blob back
//! with compare-and-set and a TTL; when another replica wrote first, it decides again on the
//! fresh blob. The store compares a version and sets a value, nothing else: no rule is written
//! twice. The in-process backend ([`MemoryStore`]) runs the same path.
//!
//! | backend | file | when |
//! |---|---|---|
//! | in process | [`memory`] | one replica, tests, and every replica's local fallback |
//! | Valkey / Redis ≥ 7.0 | `redis` (cargo feature `redis`) | several replicas sharing budgets |
//!
//! When the store fails (down, slow, full, a blob this policy cannot read) the decision is made
//! on the replica's local state within [`StoreOptions::deadline`] (or refused, with
//! [`StoreFailure::Closed`]), counted in [`StoreStats`], reported once per episode (through
//! the `log` facade, target [`LOG_TARGET`]); the replica returns to the store when it answers
//! again. docs/SCALING.md has the keys, sizes and figures.

pub mod clock;
pub mod decide;
pub mod kv;
pub mod memory;
pub mod options;
#[cfg(feature = "redis")]
pub mod redis;

pub use clock::{Clock, SystemClock};
pub use decide::StoredGateway;
pub use kv::{next_version, Cas, StateStore, StoreError, StoreErrorKind, Versioned, COUNTED_BELOW};
pub use memory::MemoryStore;
pub use options::{Decided, StoreFailure, StoreOptions, StoreStats, Via, LOG_TARGET, SEEN_CAPACITY};
#[cfg(feature = "redis")]
pub use redis::{redacted, RedisStore, StoreTls};
