//! A gateway that survives its policy: hot swap to a new version, and recovery from a broken
//! instance.
//!
//! Why: a gateway runs for weeks, and its loop guard must be upgraded without a restart and
//! without forgetting the loops it is counting; and a policy bug (a trap, an endless loop, a
//! memory bomb) must cost one answer, never the gateway. Both must also be quick with a large
//! state: exporting or importing 10,000 sessions and 100,000 bot pairs takes tens of
//! milliseconds, and every call waits while the lock is held. So a [`SwappableGateway`] serves
//! every call from the active instance behind a mutex, and keeps, besides it:
//!
//! - a *journal*: the last good snapshot and a copy of every call applied since (calls that
//!   fail are not logged: the guest checks its input before it changes anything). The policy is
//!   deterministic (time is an argument; no clock, no randomness), so the two describe the active
//!   state exactly. A snapshot is taken after [`Supervision::snapshot_every`] successful calls,
//!   spaced by its cost ([`Supervision::snapshot_spacing`]), or as soon as the logged calls pass
//!   16 MiB; it is the active instance's export, so the calls wait for it, except for one that
//!   falls due during a swap: that one is exported from the new instance before the switch.
//!   Without [`Supervision::log_calls`] (a caller that swaps rarely and sends large batches)
//!   calls are logged only while a swap copies, and the swap first takes a snapshot.
//! - a *standby*: a fresh instance of the same policy with the last snapshot already imported,
//!   prepared on a background thread after each new snapshot, recovery and swap
//!   ([`Supervision::standby`]). At most one exists; it costs one more instance's memory and one
//!   import per snapshot on that thread.
//!
//! Then:
//!
//! - [`SwappableGateway::swap`] prepares the new instance *without* the lock: instantiate,
//!   `create`, import the last snapshot, apply the logged calls, then those that arrived
//!   meanwhile (live migration). Under the lock it applies the last few calls and switches, so
//!   calls wait for microseconds to a few milliseconds, whatever the size of the state. If the
//!   calls come faster than they can be applied, the swap slows them down in short slices
//!   instead (see `migrate.rs`). Calls in flight finish on the old instance; if anything fails,
//!   the old instance stays active and the error is returned. With the same module the new state
//!   is exactly the old one; with another version it is the snapshot imported plus what the new
//!   version makes of the same calls.
//! - A call that traps, times out or runs out of memory drops the broken instance and switches
//!   to the standby (or, when none is ready, waits for the one being prepared, or instantiates
//!   the same policy again and imports the last snapshot itself), and answers with the
//!   configured [`FailureMode`]. What changed since the last snapshot is lost in a recovery (by
//!   design: the state that crashed the policy may be the cause), and so is the failing call.
//!
//! ```no_run
//! use loopguard_host::{Policy, Supervision, SwappableGateway};
//! let gw = SwappableGateway::new(Policy::embedded()?, "{}", Supervision::default())?;
//! // … serve calls from any thread …
//! let report = gw.swap(Policy::from_file("policy-v2.wasm")?)?;
//! println!("swapped to {} in {:?}", report.to_version, report.paused);
//! # Ok::<(), loopguard_host::Error>(())
//! ```

mod batch;
mod calls;
mod journal;
mod log;
mod migrate;
mod standby;
mod supervision;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::gateway::Gateway;
use crate::policy::Policy;
use journal::Journal;
use standby::{Job, Key, Standby};
pub use supervision::{FailureMode, Health, Supervision, SwapReport};

struct Active {
    policy: Policy,
    gateway: Gateway,
    version: String,
    /// Bumped by every swap: which policy a standby must be made of.
    policy_gen: u64,
    journal: Journal,
}

impl Active {
    fn standby_key(&self) -> Key {
        Key { policy: self.policy_gen, base: self.journal.base_gen }
    }
}

/// A gateway whose policy can be swapped at run time and which recovers from a broken instance.
/// Every method takes `&self`: share it between threads (`Arc<SwappableGateway>`).
pub struct SwappableGateway {
    config: Arc<str>,
    supervision: Supervision,
    active: Mutex<Active>,
    /// Held for a whole swap: one at a time.
    swap_lock: Mutex<()>,
    /// Set while a swap copies the state: snapshots wait, so that the log it reads stays whole.
    copying: AtomicBool,
    /// Set while a swap waits for the lock: calls let it go first (see [`SwappableGateway::lock_first`]).
    wanted: AtomicBool,
    /// Calls that may still take the lock while a swap slows them down (`i64::MAX`: no limit).
    tokens: AtomicI64,
    standby: Standby,
    last_failure: Mutex<Option<String>>,
    counters: [AtomicU64; 8],
}

const RECOVERIES: usize = 0;
const TIMEOUTS: usize = 1;
const TRAPS: usize = 2;
const OOM: usize = 3;
const SWAPS: usize = 4;
const FAILED_SWAPS: usize = 5;
const SNAPSHOTS: usize = 6;
const STANDBY_RECOVERIES: usize = 7;

/// How long a recovery waits for a standby that is being prepared. Its import has its own
/// deadline, so this is only a bound in case the background thread is gone.
const STANDBY_WAIT: Duration = Duration::from_secs(10);

impl SwappableGateway {
    /// A gateway built from `config` on an instance of `policy`.
    pub fn new(policy: Policy, config: &str, supervision: Supervision) -> Result<Self> {
        let mut gateway = policy.gateway(config)?;
        let version = gateway.instance().version()?;
        let journal = Journal::new(gateway.export_state()?);
        let gw = SwappableGateway {
            config: config.into(),
            supervision,
            active: Mutex::new(Active { policy, gateway, version, policy_gen: 0, journal }),
            swap_lock: Mutex::new(()),
            copying: AtomicBool::new(false),
            wanted: AtomicBool::new(false),
            tokens: AtomicI64::new(i64::MAX),
            standby: Standby::new(supervision.standby),
            last_failure: Mutex::new(None),
            counters: Default::default(),
        };
        gw.request_standby(&gw.lock());
        Ok(gw)
    }

    fn lock(&self) -> MutexGuard<'_, Active> {
        while self.wanted.load(Ordering::Acquire) || self.tokens.load(Ordering::Acquire) <= 0 {
            // Sleep rather than spin: on a busy machine the swap needs this core.
            std::thread::sleep(Duration::from_micros(50));
        }
        let active = self.locked();
        self.tokens.fetch_sub(1, Ordering::AcqRel);
        active
    }

    fn locked(&self) -> MutexGuard<'_, Active> {
        // A panic while holding the lock leaves a consistent `Active` (every field is replaced
        // whole), so a poisoned lock is still usable.
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lock, ahead of the calls waiting for it. The mutex is not fair: a thread that makes
    /// calls back to back takes it again before a woken waiter runs, so a swap could wait for as
    /// long as the calls keep coming. Calls yield while a swap wants the lock.
    fn lock_first(&self) -> MutexGuard<'_, Active> {
        self.wanted.store(true, Ordering::Release);
        let active = self.locked();
        self.wanted.store(false, Ordering::Release);
        active
    }

    fn count(&self, which: usize) {
        self.counters[which].fetch_add(1, Ordering::Relaxed);
    }

    fn request_standby(&self, active: &Active) {
        self.standby.request(Job {
            key: active.standby_key(),
            policy: active.policy.clone(),
            config: self.config.clone(),
            base: active.journal.base.clone(),
        });
    }

    /// Runs `f` on the active gateway and, if it succeeds, logs the call (`log` writes it into
    /// the journal) and may take a snapshot. A failure that breaks the instance triggers a
    /// recovery and is returned.
    fn with<T>(&self, f: impl FnOnce(&mut Gateway) -> Result<T>, log: impl FnOnce(&mut Journal)) -> Result<T> {
        let mut active = self.lock();
        let result = f(&mut active.gateway);
        match &result {
            Err(e) if e.breaks_instance() => self.recover(&mut active, e),
            Err(_) => {}
            Ok(_) => {
                let copying = self.copying.load(Ordering::SeqCst);
                if self.supervision.log_calls || copying {
                    log(&mut active.journal);
                }
                active.journal.count();
                if active.journal.due(&self.supervision, copying) {
                    self.snapshot(&mut active);
                }
            }
        }
        result
    }

    /// [`SwappableGateway::with`] for a call that changes nothing (not logged).
    fn read<T>(&self, f: impl FnOnce(&mut Gateway) -> Result<T>) -> Result<T> {
        self.with(f, |_| {})
    }

    fn snapshot(&self, active: &mut Active) {
        let started = Instant::now();
        match active.gateway.export_state() {
            Ok(s) => {
                active.journal.rebase(s, Some(started.elapsed()));
                self.count(SNAPSHOTS);
                self.request_standby(active);
            }
            Err(e) if e.breaks_instance() => self.recover(active, &e),
            // `export-state` has no error of its own; only a broken instance fails it.
            Err(_) => {}
        }
    }

    /// Replaces a broken instance: same policy, same config, last good snapshot; the standby if
    /// it is ready (or being prepared). If even that fails, the broken instance stays and the
    /// next call tries again.
    fn recover(&self, active: &mut Active, cause: &Error) {
        self.count(match cause {
            Error::Timeout { .. } => TIMEOUTS,
            Error::OutOfMemory { .. } => OOM,
            _ => TRAPS,
        });
        let mut report = format!("{cause}");
        if let Some(standby) = self.standby.take(active.standby_key(), STANDBY_WAIT) {
            // The broken instance is dropped on the standby's thread: freeing its memory takes
            // milliseconds with a large state.
            self.standby.discard(std::mem::replace(&mut active.gateway, standby));
            self.count(STANDBY_RECOVERIES);
            report.push_str("; recovered on a fresh instance (the standby, holding the last snapshot)");
        } else {
            match active.policy.gateway(&self.config) {
                Ok(mut fresh) => {
                    if let Err(e) = fresh.import_state(&active.journal.base) {
                        report.push_str(&format!("; the last snapshot could not be restored ({e}), state is empty"));
                        // The empty state becomes the base, so that a swap does not bring the
                        // unrestorable one back.
                        if let Ok(empty) = fresh.export_state() {
                            active.journal.rebase(empty, None);
                        }
                    }
                    active.gateway = fresh;
                    report.push_str("; recovered on a fresh instance");
                }
                Err(e) => {
                    report.push_str(&format!("; a fresh instance could not be made ({e})"));
                    *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
                    return;
                }
            }
        }
        active.journal.reset();
        self.count(RECOVERIES);
        self.request_standby(active);
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
    }

    /// What the supervisor did so far.
    pub fn health(&self) -> Health {
        let c = |i: usize| self.counters[i].load(Ordering::Relaxed);
        Health {
            recoveries: c(RECOVERIES),
            standby_recoveries: c(STANDBY_RECOVERIES),
            timeouts: c(TIMEOUTS),
            traps: c(TRAPS),
            oom: c(OOM),
            swaps: c(SWAPS),
            failed_swaps: c(FAILED_SWAPS),
            snapshots: c(SNAPSHOTS),
            standbys: self.standby.prepared(),
        }
    }

    /// Waits until the standby for the active policy and the last snapshot is ready, so that a
    /// recovery takes microseconds. False if it is not within `timeout`, or if none is being
    /// prepared (standby off, or its preparation failed). For tests, benchmarks and readiness
    /// checks; calls are not held meanwhile.
    pub fn wait_for_standby(&self, timeout: Duration) -> bool {
        let key = self.lock().standby_key();
        self.standby.ready(key, timeout)
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
