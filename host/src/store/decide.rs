//! One decision on a stored key: read, let the policy decide, compare-and-set, retry on conflict;
//! and what a replica does when the store fails.
//!
//! | step | a typed call ([`StoredGateway::decide_call`]) | a trace line ([`StoredGateway::decide`]) |
//! |---|---|---|
//! | which key | [`Gateway::key_of`] | [`Gateway::state_key`] |
//! | read | what this replica last saw of the key (none: the key is taken as absent) | the same |
//! | decide | [`Gateway::decide_call`] on that blob | [`Gateway::decide_keyed`] |
//! | write back | [`StateStore::cas`] at that version; on a conflict, decide again on the value it returned | the same |
//!
//! One round trip in the common case: a replica does not read before it writes. It remembers the
//! last value and version it saw of each key (at most [`SEEN_CAPACITY`] keys, each for the TTL)
//! and writes at that version; when another replica wrote meanwhile (or the key is new to this
//! replica but not to the store), the compare-and-set fails and returns the current value, on
//! which it decides again: two round trips, as a read and a write would have been. A remembered
//! version can never win on a state it does not hold because a key's versions never repeat
//! ([`super::kv::next_version`]); a version counted by loopguard 1.0 ([`COUNTED_BELOW`]) may, so
//! it is never remembered.
//!
//! Failure (the store down, slow, full, or a blob this policy cannot read): with
//! [`StoreFailure::Open`] (the default, as Envoy's and Kong's rate limiters) the decision is made
//! on this replica's local state ([`MemoryStore`]), the same path; with [`StoreFailure::Closed`]
//! it is refused ([`Via::Refused`]) and the gateway drops the event. A failure starts an episode,
//! reported once; the store is tried again at the next decision, then after 5, 20, 80 ms, … up
//! to [`StoreOptions::retry_after`] while it keeps failing; when it answers the episode ends
//! (reported once) and the local state is dropped, the store's being the truth. While an episode
//! lasts, each replica's budget is its own again (at most N times the budget for N replicas).
//! Every decision is made exactly once, whatever fails. Time is read from a [`Clock`].
//!
//! Reports go through the `log` facade, target [`LOG_TARGET`]: `warn` when an episode begins and
//! for each value this policy cannot read, `info` when the store answers again. A library must
//! not write to its process's stderr (a server embedding it, or the Python wheel, owns that and
//! routes its own logs); with `log` the program decides where the lines go, and with no logger
//! installed they go nowhere. The `loopguard` CLI installs one that prints them on stderr.

use std::time::{Duration, Instant};

use super::clock::{Clock, SystemClock};
use super::kv::{Cas, StateStore, StoreError, StoreErrorKind, Versioned, COUNTED_BELOW};
use super::memory::MemoryStore;
use super::options::{Decided, StoreFailure, StoreOptions, StoreStats, Via, LOG_TARGET, SEEN_CAPACITY};
use crate::error::{Error, ErrorKind, Result};
use crate::gateway::Gateway;
use crate::Call;
use crate::Verdict;

/// An episode of store failure.
#[derive(Debug)]
struct Episode {
    since: Instant,
    next_try: Instant,
    /// Failed tries in a row.
    failures: u32,
    local_decisions: u64,
}

/// A gateway whose state lives in a [`StateStore`].
pub struct StoredGateway {
    gateway: Gateway,
    store: Box<dyn StateStore>,
    local: MemoryStore,
    /// The last value and version seen of each shared key (see the module's doc).
    seen: MemoryStore,
    options: StoreOptions,
    stats: StoreStats,
    episode: Option<Episode>,
    clock: Box<dyn Clock>,
}

/// Why a decision did not go through the store.
enum Miss {
    Store(StoreError),
    Policy(Error),
}

impl From<StoreError> for Miss {
    fn from(e: StoreError) -> Self {
        Miss::Store(e)
    }
}

impl StoredGateway {
    /// A gateway deciding on `store`'s state, on the machine's clock.
    pub fn new(gateway: Gateway, store: Box<dyn StateStore>, options: StoreOptions) -> Self {
        let (local, stats, clock) = (MemoryStore::default(), StoreStats::default(), Box::new(SystemClock));
        let seen = MemoryStore::new(SEEN_CAPACITY);
        Self { gateway, store, local, seen, options, stats, episode: None, clock }
    }

    /// The same gateway reading the time from `clock` (a test's clock, moved by hand).
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// The gateway inside (for `stats`, versions).
    pub fn gateway(&mut self) -> &mut Gateway {
        &mut self.gateway
    }

    /// The store itself and the time to live of its keys, for records a host keeps beside the
    /// policy's keys on the same connection, prefix and deadline (the LiteLLM guardrail's
    /// conversation cursors, docs/SCALING.md). What the host writes there is its own: the
    /// decision loop never reads it.
    pub fn store(&mut self) -> (&mut dyn StateStore, Duration) {
        (self.store.as_mut(), self.options.ttl)
    }

    /// The counters.
    pub fn stats(&self) -> StoreStats {
        StoreStats { degraded: self.episode.is_some(), local_keys: self.local.len() as u64, ..self.stats }
    }

    /// Decides `event` (one trace line, numbered `line` in the decision). Fails only as the policy
    /// does (a malformed event, a broken instance), never because of the store.
    pub fn decide(&mut self, event: &str, line: u32) -> Result<Decided> {
        self.decide_input(&Line(event, line))
    }

    /// Makes the typed `call` on its key's state and returns what the call's own method returns.
    /// Fails only as that method does (malformed arguments, a broken instance), never because of
    /// the store.
    pub fn decide_call(&mut self, call: &Call) -> Result<Decided<Verdict>> {
        self.decide_input(call)
    }

    fn decide_input<I: Input + ?Sized>(&mut self, input: &I) -> Result<Decided<I::Answer>> {
        let key = input.key(&mut self.gateway)?;
        let now = self.clock.now();
        if self.episode.as_ref().is_some_and(|e| now < e.next_try) {
            return self.fallback(key, input);
        }
        match self.on_store(&key, input, now) {
            Ok(d) => {
                self.recovered();
                self.stats.on_store += 1;
                Ok(d)
            }
            Err(Miss::Policy(e)) => Err(e),
            Err(Miss::Store(e)) if e.kind == StoreErrorKind::Unreadable => {
                self.stats.unreadable += 1;
                let store = self.store.describe();
                log::warn!(target: LOG_TARGET, "{store} key {key}: {e}; this decision is made on local state");
                self.fallback(key, input)
            }
            Err(Miss::Store(e)) => {
                self.failed(&e, now);
                self.fallback(key, input)
            }
        }
    }

    fn on_store<I: Input + ?Sized>(
        &mut self,
        key: &str,
        input: &I,
        start: Instant,
    ) -> std::result::Result<Decided<I::Answer>, Miss> {
        // Never fails: a map in this process.
        let mut current = self.seen.get(key).unwrap_or_default();
        let mut retries = 0;
        loop {
            let decided = decide_on(&mut self.gateway, input, &current);
            if decided.is_err() {
                self.seen.forget(key);
            }
            let (answer, blob) = decided?;
            // A write that failed may still land later: the remembered version is then stale,
            // which costs one conflict, never a wrong decision.
            match self.store.cas(key, current.version, &blob, self.options.ttl)? {
                Cas::Written(version) => {
                    self.remember(key, Versioned { version, blob });
                    let decision = Some(answer);
                    return Ok(Decided { key: key.to_string(), decision, version, via: Via::Store, retries });
                }
                Cas::Conflict(fresh) => {
                    self.remember(key, fresh.clone());
                    retries += 1;
                    self.stats.cas_retries += 1;
                    let spent = self.clock.now().saturating_duration_since(start);
                    if retries > self.options.max_retries || spent > self.options.deadline {
                        let why = format!("{retries} conflicting writes in {spent:?}");
                        return Err(Miss::Store(StoreError::new(StoreErrorKind::Timeout, why)));
                    }
                    current = fresh;
                    jitter(retries, &*self.clock);
                }
            }
        }
    }

    /// Keeps `value` as what this replica last saw of `key`, unless its version was counted.
    fn remember(&mut self, key: &str, value: Versioned) {
        if value.version >= COUNTED_BELOW {
            self.seen.remember(key, value, self.options.ttl);
        } else {
            self.seen.forget(key);
        }
    }

    /// The decision on local state (or none, failing closed).
    fn fallback<I: Input + ?Sized>(&mut self, key: String, input: &I) -> Result<Decided<I::Answer>> {
        if let Some(e) = self.episode.as_mut() {
            e.local_decisions += 1;
        }
        if self.options.failure == StoreFailure::Closed {
            self.stats.refused += 1;
            return Ok(Decided { key, decision: None, version: 0, via: Via::Refused, retries: 0 });
        }
        let current = self.local.get(&key).unwrap_or_default();
        let (decision, blob) = match decide_on(&mut self.gateway, input, &current) {
            Ok(d) => d,
            Err(Miss::Policy(e)) => return Err(e),
            Err(Miss::Store(e)) => return Err(Error::invalid(ErrorKind::Snapshot, key, e.reason)),
        };
        let version = match self.local.cas(&key, current.version, &blob, self.options.ttl) {
            Ok(Cas::Written(v)) => v,
            _ => current.version,
        };
        self.stats.on_local += 1;
        Ok(Decided { key, decision: Some(decision), version, via: Via::Local, retries: 0 })
    }

    fn failed(&mut self, e: &StoreError, now: Instant) {
        self.stats.store_errors += 1;
        match self.episode.as_mut() {
            Some(episode) => {
                episode.failures += 1;
                episode.next_try = now + backoff(episode.failures, self.options.retry_after);
            }
            None => {
                self.stats.episodes += 1;
                let mode = match self.options.failure {
                    StoreFailure::Open => "deciding on local state",
                    StoreFailure::Closed => "refusing decisions (fail closed)",
                };
                log::warn!(target: LOG_TARGET, "{} failed ({e}); {mode} until it answers", self.store.describe());
                let next_try = now + backoff(1, self.options.retry_after);
                self.episode = Some(Episode { since: now, next_try, failures: 1, local_decisions: 0 });
            }
        }
    }

    fn recovered(&mut self) {
        if let Some(e) = self.episode.take() {
            log::info!(
                target: LOG_TARGET,
                "{} answers again after {:.1} s; {} decisions were made without it",
                self.store.describe(),
                self.clock.now().saturating_duration_since(e.since).as_secs_f64(),
                e.local_decisions
            );
            self.local.clear();
        }
    }
}

/// After the second conflict in a row, waits a random few microseconds (up to 20 µs per
/// conflict so far, at most 1 ms): replicas hammering one key otherwise fall into step, and one
/// of them can lose every race (33 conflicts in a row in 2.4 ms were seen on loopback).
fn jitter(retries: u32, clock: &dyn Clock) {
    use std::hash::{BuildHasher, Hasher};
    if retries < 2 {
        return;
    }
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(retries);
    let span = u64::from(retries).saturating_mul(20).min(1_000);
    clock.sleep(Duration::from_micros(h.finish() % span));
}

/// How long decisions stay local after `failures` failed tries in a row: none after the first
/// (a lone slow answer on a loaded machine must not send a replica's next thousand decisions to
/// local state), then 5, 20, 80 ms, … up to `cap`, so that a store that is stopped costs a
/// timeout now and then, not on every decision.
fn backoff(failures: u32, cap: Duration) -> Duration {
    match failures {
        0 | 1 => Duration::ZERO,
        n => Duration::from_millis(5u64.saturating_mul(4u64.saturating_pow(n - 2))).min(cap),
    }
}

/// What a stored decision decides: a trace line or a typed call.
trait Input {
    /// What the policy answers.
    type Answer;
    /// The key of its state.
    fn key(&self, gateway: &mut Gateway) -> Result<String>;
    /// The answer on `state` and the key's new state.
    fn decide(&self, gateway: &mut Gateway, state: Option<&[u8]>) -> Result<(Self::Answer, Option<Vec<u8>>)>;
}

/// A trace line and its number.
struct Line<'a>(&'a str, u32);

impl Input for Line<'_> {
    type Answer = String;
    fn key(&self, gateway: &mut Gateway) -> Result<String> {
        gateway.state_key(self.0)
    }
    fn decide(&self, gateway: &mut Gateway, state: Option<&[u8]>) -> Result<(String, Option<Vec<u8>>)> {
        gateway.decide_keyed(self.0, self.1, state).map(|d| (d.decision, d.state))
    }
}

impl Input for Call {
    type Answer = Verdict;
    fn key(&self, gateway: &mut Gateway) -> Result<String> {
        gateway.key_of(self)
    }
    fn decide(&self, gateway: &mut Gateway, state: Option<&[u8]>) -> Result<(Verdict, Option<Vec<u8>>)> {
        gateway.decide_call(self, state).map(|d| (d.verdict, d.state))
    }
}

/// The policy's answer on `current` and the blob to write (empty: nothing to keep).
fn decide_on<I: Input + ?Sized>(
    gateway: &mut Gateway,
    input: &I,
    current: &Versioned,
) -> std::result::Result<(I::Answer, Vec<u8>), Miss> {
    let state = (!current.blob.is_empty()).then_some(current.blob.as_slice());
    match input.decide(gateway, state) {
        Ok((answer, blob)) => Ok((answer, blob.unwrap_or_default())),
        Err(Error::Policy { kind: ErrorKind::Snapshot, reason, .. }) => {
            Err(Miss::Store(StoreError::new(StoreErrorKind::Unreadable, reason)))
        }
        Err(e) => Err(Miss::Policy(e)),
    }
}

#[cfg(test)]
mod tests;
