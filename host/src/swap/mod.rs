//! A gateway that survives its policy: hot swap to a new version, and recovery from a broken
//! instance.
//!
//! Why: a gateway runs for weeks, and its loop guard must be upgraded without a restart and
//! without forgetting the loops it is counting; and a policy bug (a trap, an endless loop, a
//! memory bomb) must cost one answer, never the gateway. So a [`SwappableGateway`] serves every
//! call from the active instance behind a mutex, and:
//!
//! - [`SwappableGateway::swap`] prepares the new instance and its gateway *without* the lock
//!   (instantiate + `create`), then, under the lock, exports the old state, imports it into the
//!   new gateway and switches. Calls in flight hold the lock, so they finish on the old instance;
//!   if anything fails the old instance stays active and the error is returned.
//! - A call that traps, times out or runs out of memory drops the broken instance, instantiates
//!   the same policy again (cheap: the `InstancePre` is kept), imports the last good snapshot and
//!   answers with the configured [`FailureMode`]. Snapshots are taken after every
//!   [`Supervision::snapshot_every`] successful calls, after each swap and after each recovery;
//!   what changed since the last snapshot is lost in a recovery (by design: the state that
//!   crashed the policy may be the cause).
//!
//! ```no_run
//! use loopguard_host::{Policy, Supervision, SwappableGateway};
//! let gw = SwappableGateway::new(Policy::embedded()?, "{}", Supervision::default())?;
//! // … serve calls from any thread …
//! let report = gw.swap(Policy::from_file("policy-v2.wasm")?)?;
//! println!("swapped to {} in {:?}", report.to_version, report.paused);
//! # Ok::<(), loopguard_host::Error>(())
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::gateway::Gateway;
use crate::policy::Policy;
use crate::{
    BotMessage, BotStats, BotVerdict, Budget, CompactionVerdict, GatewayStats, GroupReply, GroupStart, GroupStep,
    GroupThread, OutcomeVerdict, Suppression, ToolAction, ToolCall, ToolOutcome, ToolVerdict,
};

/// What a decision is when the policy failed to give one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureMode {
    /// Allow the tool call / dispatch the message: a broken guard must not stop the agents.
    #[default]
    Open,
    /// Block the tool call / suppress the message: a broken guard must not let a loop run.
    Closed,
}

/// How a [`SwappableGateway`] supervises its instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supervision {
    /// The answer to a decision whose call failed.
    pub failure_mode: FailureMode,
    /// Take a snapshot after this many successful calls (default 1 000; 1 = after every call,
    /// which loses nothing in a recovery but exports the whole state each time).
    pub snapshot_every: u32,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision { failure_mode: FailureMode::Open, snapshot_every: 1_000 }
    }
}

/// Counters of what the supervisor had to do, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Health {
    /// Broken instances replaced by a fresh one.
    pub recoveries: u64,
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
    /// Size of the state carried over.
    pub snapshot_bytes: usize,
    /// Instantiating and creating the new gateway (no lock held).
    pub prepare: Duration,
    /// Export + import + switch, with the lock held: how long calls waited.
    pub paused: Duration,
}

struct Active {
    policy: Policy,
    gateway: Gateway,
    version: String,
    /// The state to restore after a failure (`None`: empty state).
    last_good: Option<Vec<u8>>,
    calls_since_snapshot: u32,
}

/// A gateway whose policy can be swapped at run time and which recovers from a broken instance.
/// Every method takes `&self`: share it between threads (`Arc<SwappableGateway>`).
pub struct SwappableGateway {
    config: String,
    supervision: Supervision,
    active: Mutex<Active>,
    last_failure: Mutex<Option<String>>,
    counters: [AtomicU64; 7],
}

const RECOVERIES: usize = 0;
const TIMEOUTS: usize = 1;
const TRAPS: usize = 2;
const OOM: usize = 3;
const SWAPS: usize = 4;
const FAILED_SWAPS: usize = 5;
const SNAPSHOTS: usize = 6;

impl SwappableGateway {
    /// A gateway built from `config` on an instance of `policy`.
    pub fn new(policy: Policy, config: &str, supervision: Supervision) -> Result<Self> {
        let mut gateway = policy.gateway(config)?;
        let version = gateway.instance().version()?;
        Ok(SwappableGateway {
            config: config.to_string(),
            supervision,
            active: Mutex::new(Active { policy, gateway, version, last_good: None, calls_since_snapshot: 0 }),
            last_failure: Mutex::new(None),
            counters: Default::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Active> {
        // A panic while holding the lock leaves a consistent `Active` (every field is replaced
        // whole), so a poisoned lock is still usable.
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, which: usize) {
        self.counters[which].fetch_add(1, Ordering::Relaxed);
    }

    /// Replaces the active policy with `new`, carrying the whole state over. The new instance and
    /// gateway are prepared before the lock is taken; on any error the old policy stays active.
    pub fn swap(&self, new: Policy) -> Result<SwapReport> {
        let started = Instant::now();
        let prepared = new.gateway(&self.config).and_then(|mut gw| gw.instance().version().map(|v| (gw, v)));
        let (mut gateway, to_version) = prepared.inspect_err(|_| self.count(FAILED_SWAPS))?;
        let prepare = started.elapsed();
        let mut active = self.lock();
        let locked = Instant::now();
        let snapshot = match active.gateway.export_state() {
            Ok(s) => s,
            Err(e) => {
                self.count(FAILED_SWAPS);
                if e.breaks_instance() {
                    self.recover(&mut active, &e);
                }
                return Err(e);
            }
        };
        if let Err(e) = gateway.import_state(&snapshot) {
            self.count(FAILED_SWAPS);
            return Err(e);
        }
        let from_digest = active.policy.digest().to_hex().to_string();
        let old = std::mem::replace(
            &mut *active,
            Active { policy: new, gateway, version: to_version.clone(), last_good: None, calls_since_snapshot: 0 },
        );
        let snapshot_bytes = snapshot.len();
        active.last_good = Some(snapshot);
        let to_digest = active.policy.digest().to_hex().to_string();
        let paused = locked.elapsed();
        drop(active);
        self.count(SWAPS);
        self.count(SNAPSHOTS);
        Ok(SwapReport {
            from_version: old.version.clone(),
            to_version,
            from_digest,
            to_digest,
            snapshot_bytes,
            prepare,
            paused,
        })
    }

    /// Runs `f` on the active gateway. A failure that breaks the instance triggers a recovery
    /// and is returned; success may trigger a snapshot.
    fn with<T>(&self, f: impl FnOnce(&mut Gateway) -> Result<T>) -> Result<T> {
        let mut active = self.lock();
        match f(&mut active.gateway) {
            Ok(v) => {
                active.calls_since_snapshot += 1;
                if active.calls_since_snapshot >= self.supervision.snapshot_every {
                    self.snapshot(&mut active);
                }
                Ok(v)
            }
            Err(e) => {
                if e.breaks_instance() {
                    self.recover(&mut active, &e);
                }
                Err(e)
            }
        }
    }

    fn snapshot(&self, active: &mut Active) {
        active.calls_since_snapshot = 0;
        match active.gateway.export_state() {
            Ok(s) => {
                active.last_good = Some(s);
                self.count(SNAPSHOTS);
            }
            Err(e) if e.breaks_instance() => self.recover(active, &e),
            Err(_) => {}
        }
    }

    /// Replaces a broken instance: same policy, same config, last good snapshot. If even that
    /// fails, the broken instance stays and the next call tries again.
    fn recover(&self, active: &mut Active, cause: &Error) {
        self.count(match cause {
            Error::Timeout { .. } => TIMEOUTS,
            Error::OutOfMemory { .. } => OOM,
            _ => TRAPS,
        });
        let mut report = format!("{cause}");
        match active.policy.gateway(&self.config) {
            Ok(mut fresh) => {
                if let Some(snapshot) = &active.last_good {
                    if let Err(e) = fresh.import_state(snapshot) {
                        report.push_str(&format!("; the last snapshot could not be restored ({e}), state is empty"));
                    }
                }
                active.gateway = fresh;
                active.calls_since_snapshot = 0;
                self.count(RECOVERIES);
                report.push_str("; recovered on a fresh instance");
            }
            Err(e) => report.push_str(&format!("; a fresh instance could not be made ({e})")),
        }
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
    }

    /// What the supervisor did so far.
    pub fn health(&self) -> Health {
        let c = |i: usize| self.counters[i].load(Ordering::Relaxed);
        Health {
            recoveries: c(RECOVERIES),
            timeouts: c(TIMEOUTS),
            traps: c(TRAPS),
            oom: c(OOM),
            swaps: c(SWAPS),
            failed_swaps: c(FAILED_SWAPS),
            snapshots: c(SNAPSHOTS),
        }
    }

    /// The last failure and what the supervisor did about it, in one line.
    pub fn last_failure(&self) -> Option<String> {
        self.last_failure.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The active policy (its digest says which file runs).
    pub fn policy(&self) -> Policy {
        self.lock().policy.clone()
    }

    /// The active policy's `version()`.
    pub fn version(&self) -> String {
        self.lock().version.clone()
    }

    /// The supervision settings.
    pub fn supervision(&self) -> Supervision {
        self.supervision
    }

    fn failure_message(&self, e: &Error) -> String {
        match self.supervision.failure_mode {
            FailureMode::Open => format!("loopguard failed open: {e}"),
            FailureMode::Closed => format!("loopguard failed closed, the call is blocked: {e}"),
        }
    }
}

/// The guard's calls. Decisions (`check_tool_call`, `check_bot_message`) answer a broken call
/// with the failure mode; every other call returns the error after recovering.
impl SwappableGateway {
    /// Checks a tool call. If the policy breaks, the verdict is the failure mode's: `allow` or
    /// `block`, with the failure in `message` (also for `allow`, so that it gets logged).
    pub fn check_tool_call(&self, call: &ToolCall) -> Result<ToolVerdict> {
        match self.with(|g| g.check_tool_call(call)) {
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
        match self.with(|g| g.check_bot_message(message)) {
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
        self.with(|g| g.record_tool_outcome(call, outcome))
    }

    /// Arms the post-compaction guard.
    pub fn compaction_retried(
        &self,
        session: &str,
        run: Option<&str>,
        agent: Option<&str>,
    ) -> Result<CompactionVerdict> {
        self.with(|g| g.compaction_retried(session, run, agent))
    }

    /// Forgets a session.
    pub fn end_session(&self, session: &str) -> Result<()> {
        self.with(|g| g.end_session(session))
    }

    /// Applies trace events (JSON Lines); see [`Gateway::apply_events`].
    pub fn apply_events(&self, events: &str, first_line: u32) -> Result<String> {
        self.with(|g| g.apply_events(events, first_line))
    }

    /// Exports the whole state.
    pub fn export_state(&self) -> Result<Vec<u8>> {
        self.with(|g| g.export_state())
    }

    /// Replaces the state with a snapshot (and keeps it as the last good one).
    pub fn import_state(&self, snapshot: &[u8]) -> Result<()> {
        let mut active = self.lock();
        match active.gateway.import_state(snapshot) {
            Ok(()) => {
                active.last_good = Some(snapshot.to_vec());
                active.calls_since_snapshot = 0;
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
    pub fn stats(&self) -> Result<GatewayStats> {
        self.with(|g| g.stats())
    }

    /// Counters of the bot and group guards.
    pub fn bot_stats(&self) -> Result<BotStats> {
        self.with(|g| g.bot_stats())
    }

    /// See [`Gateway::start_group_thread`].
    pub fn start_group_thread(&self, thread: &GroupThread, peer: &str, text: &str) -> Result<GroupStart> {
        self.with(|g| g.start_group_thread(thread, peer, text))
    }

    /// See [`Gateway::finish_group_round`].
    pub fn finish_group_round(&self, thread: &GroupThread, replies: &[GroupReply]) -> Result<GroupStep> {
        self.with(|g| g.finish_group_round(thread, replies))
    }

    /// See [`Gateway::cancel_group_thread`].
    pub fn cancel_group_thread(&self, thread: &GroupThread) -> Result<GroupStep> {
        self.with(|g| g.cancel_group_thread(thread))
    }
}
