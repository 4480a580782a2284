//! A hot standby: a fresh instance of the active policy with the last snapshot already imported,
//! so that a recovery switches to it instead of importing while every call waits.
//!
//! Why: restoring a large state takes tens of milliseconds (10,000 sessions and 100,000 bot pairs,
//! a 4.6 MB snapshot, import in about 50 ms), and a recovery holds the calls meanwhile. But the
//! import needs only the snapshot, not the broken instance, so it can be done ahead of time on a
//! background thread; the recovery itself then takes microseconds.
//!
//! Bounds: one background thread per gateway, started by the first request; at most one standby
//! exists at a time (a stale one is dropped before the next is built), so the memory cost is one
//! more instance holding the state; each new snapshot, recovery or swap costs one import on that
//! thread, and requests made while one is being prepared are coalesced to the newest.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::gateway::Gateway;
use crate::policy::Policy;

/// Which state a standby holds: a policy (by swap generation) and a snapshot (by generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    pub policy: u64,
    pub base: u64,
}

/// What to prepare.
pub(super) struct Job {
    pub key: Key,
    pub policy: Policy,
    pub config: Arc<str>,
    pub base: Arc<Vec<u8>>,
}

#[derive(Default)]
struct Slot {
    /// The newest request not yet started.
    job: Option<Job>,
    /// The key being prepared right now.
    building: Option<Key>,
    ready: Option<(Key, Gateway)>,
    /// Instances to drop on the background thread.
    trash: Vec<Gateway>,
    worker: bool,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    slot: Mutex<Slot>,
    changed: Condvar,
    prepared: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        // Every field is replaced whole, so a poisoned lock is still consistent.
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The standby of one gateway (disabled: requests are ignored and nothing is ever ready).
pub(super) struct Standby {
    shared: Arc<Shared>,
    enabled: bool,
}

impl Standby {
    pub fn new(enabled: bool) -> Self {
        Standby { shared: Arc::default(), enabled }
    }

    /// Asks for a standby holding `job.key`; replaces any older request.
    pub fn request(&self, job: Job) {
        if !self.enabled {
            return;
        }
        let mut slot = self.shared.lock();
        let have = slot.ready.as_ref().is_some_and(|(k, _)| *k == job.key) || slot.building == Some(job.key);
        slot.job = if have { None } else { Some(job) };
        if slot.job.is_some() && !slot.worker {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new().name("loopguard-standby".into()).spawn(move || work(&shared));
            // Without the thread there is no standby, and a recovery imports the snapshot itself.
            slot.worker = spawned.is_ok();
        }
        self.shared.changed.notify_all();
    }

    /// Takes the standby holding `key`, waiting up to `wait` if it is being prepared.
    pub fn take(&self, key: Key, wait: Duration) -> Option<Gateway> {
        let mut slot = self.wait_for(key, wait)?;
        slot.ready.take().map(|(_, gateway)| gateway)
    }

    /// Whether the standby holding `key` is ready, after waiting up to `wait` for it.
    pub fn ready(&self, key: Key, wait: Duration) -> bool {
        self.wait_for(key, wait).is_some()
    }

    /// Drops `gateway` on the background thread (at once if there is none): freeing a large
    /// instance takes milliseconds that a recovery should not spend holding the calls.
    pub fn discard(&self, gateway: Gateway) {
        let mut slot = self.shared.lock();
        if slot.worker && !slot.closed {
            slot.trash.push(gateway);
            self.shared.changed.notify_all();
        } else {
            drop(slot);
            drop(gateway);
        }
    }

    /// Standbys prepared so far.
    pub fn prepared(&self) -> u64 {
        self.shared.prepared.load(Ordering::Relaxed)
    }

    /// The slot, locked, once it holds `key`; `None` if it does not within `wait` or none with
    /// that key is being prepared.
    fn wait_for(&self, key: Key, wait: Duration) -> Option<MutexGuard<'_, Slot>> {
        let deadline = Instant::now() + wait;
        let mut slot = self.shared.lock();
        loop {
            if slot.ready.as_ref().is_some_and(|(k, _)| *k == key) {
                return Some(slot);
            }
            let coming = slot.building == Some(key) || slot.job.as_ref().is_some_and(|j| j.key == key);
            let left = deadline.saturating_duration_since(Instant::now());
            if !coming || left.is_zero() {
                return None;
            }
            slot = self.shared.changed.wait_timeout(slot, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let stale = {
            let mut slot = self.shared.lock();
            slot.closed = true;
            slot.job = None;
            slot.ready.take()
        };
        self.shared.changed.notify_all();
        drop(stale);
    }
}

/// The background thread: prepares the newest request, until the gateway is dropped.
fn work(shared: &Shared) {
    loop {
        let (job, stale, trash) = {
            let mut slot = shared.lock();
            while !slot.closed && slot.job.is_none() && slot.trash.is_empty() {
                slot = shared.changed.wait(slot).unwrap_or_else(|p| p.into_inner());
            }
            if slot.closed {
                return;
            }
            let trash = std::mem::take(&mut slot.trash);
            let job = slot.job.take();
            // The old standby goes before the next is built: one at most.
            let stale = if job.is_some() { slot.ready.take() } else { None };
            slot.building = job.as_ref().map(|j| j.key);
            (job, stale, trash)
        };
        drop((stale, trash));
        let Some(job) = job else { continue };
        let built = job.policy.gateway(&job.config).and_then(|mut gateway| {
            gateway.import_state(&job.base)?;
            Ok(gateway)
        });
        let unused = {
            let mut slot = shared.lock();
            slot.building = None;
            let newer = slot.job.as_ref().is_some_and(|j| j.key != job.key);
            let unused = match built {
                Ok(gateway) if !newer && !slot.closed => {
                    slot.job = None;
                    slot.ready = Some((job.key, gateway));
                    shared.prepared.fetch_add(1, Ordering::Relaxed);
                    None
                }
                // A failed standby is not retried until the next request; a recovery then
                // imports the snapshot itself and reports why that fails.
                other => other.ok(),
            };
            shared.changed.notify_all();
            unused
        };
        drop(unused);
    }
}
