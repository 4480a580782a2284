//! Hot swap by live migration.
//!
//! Why: carrying a large state over by export and import takes tens of milliseconds (10,000
//! sessions and 100,000 bot pairs: export ~35 ms + import ~50 ms), and calls wait for all of it
//! if it is done under the lock. The journal (the last snapshot and the calls since) lets the new
//! instance be brought up to date while calls go on: import the snapshot, apply the logged calls,
//! then the calls that arrived meanwhile, in rounds that get shorter as long as the copy is
//! faster than the traffic. Under the lock only the last few calls are left.
//!
//! If the calls arrive faster than they can be applied (a machine whose cores are all busy), the
//! rounds stop shrinking. The copy then slows the calls down instead of stopping them: it applies
//! the calls left in slices of about 5 ms with the lock held, and between two slices lets through
//! half as many calls as a slice applied (at most for 1 ms), until the rest fits in one slice
//! (live migration's "auto-converge"): every call waits at most about one slice. Should
//! even that not catch up within 5 s, the lock takes whichever is quicker, the calls left or
//! a copy of the whole state (stop and copy, the old way), so a swap never holds the calls much
//! longer than an export and an import.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use super::{batch, Active, SwapReport, SwappableGateway, FAILED_SWAPS, SNAPSHOTS, SWAPS};
use crate::error::Result;
use crate::gateway::Gateway;
use crate::policy::Policy;

/// Most rounds of copying the calls that arrived during the previous round.
const PRECOPY_ROUNDS: usize = 8;
/// Stop copying without the lock once this few calls are left.
const PRECOPY_TAIL: usize = 16;
/// How long one slice of a slowed-down copy holds the calls.
const SLICE_HOLD: Duration = Duration::from_millis(5);
/// How long calls go through between two slices at most (less once they used their tokens).
const SLICE_GAP: Duration = Duration::from_millis(1);
/// How long calls may be slowed down before the lock is taken for good.
const MAX_SLOWDOWN: Duration = Duration::from_secs(5);

/// Clears the `copying` flag however a swap ends.
struct Copying<'a>(&'a AtomicBool);

impl Drop for Copying<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Lets calls through without counting them again however a slowed-down copy ends.
struct Throttle<'a>(&'a AtomicI64);

impl<'a> Throttle<'a> {
    fn start(tokens: &'a AtomicI64) -> Self {
        tokens.store(0, Ordering::Release);
        Throttle(tokens)
    }
}

impl Drop for Throttle<'_> {
    fn drop(&mut self) {
        self.0.store(i64::MAX, Ordering::Release);
    }
}

/// What the copy made without the lock.
struct Copy {
    /// The journal's lineage it copied from.
    lineage: u64,
    /// Logged calls applied.
    done: usize,
    /// Size of the snapshot it started from.
    base_bytes: usize,
    /// How long the snapshot's import took: about what a copy under the lock would cost.
    import: Duration,
    /// Time per logged call applied, when some were.
    per_call: Option<Duration>,
}

/// The lock held by a slowed-down copy.
#[derive(Default)]
struct Slices {
    /// In all.
    held: Duration,
    /// The longest hold.
    longest: Duration,
}

impl SwappableGateway {
    /// Replaces the active policy with `new`, carrying the whole state over. The new instance is
    /// prepared and brought up to date before the lock is taken; on any error the old policy
    /// stays active.
    pub fn swap(&self, new: Policy) -> Result<SwapReport> {
        let _one_at_a_time = self.swap_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.swap_to(new).inspect_err(|_| self.count(FAILED_SWAPS))
    }

    fn swap_to(&self, new: Policy) -> Result<SwapReport> {
        let started = Instant::now();
        let mut gateway = new.gateway(&self.config)?;
        let to_version = gateway.instance().version()?;
        self.copying.store(true, Ordering::SeqCst);
        let copying = Copying(&self.copying);
        if !self.supervision.log_calls {
            // The log holds only what came since `copying` was set: start the copy from a
            // snapshot that has everything before it.
            self.snapshot(&mut self.lock_first());
        }
        let mut copy = self.precopy(&mut gateway)?;
        // Snapshots wait while the state is copied; one that fell due is taken now, from the
        // new instance and without the lock.
        let mut rebase = None;
        if self.lock_first().journal.due(&self.supervision, false) {
            let t = Instant::now();
            rebase = Some((gateway.export_state()?, t.elapsed(), copy.done));
        }
        let prepare = started.elapsed();
        let (mut active, slices) = self.converge(&mut gateway, &mut copy)?;
        let locked = Instant::now();
        let tail = active.journal.calls_from(copy.done);
        let tail_cost = copy.per_call.unwrap_or_default().saturating_mul(u32::try_from(tail.len()).unwrap_or(u32::MAX));
        let (replayed, replayed_paused, snapshot_bytes);
        if active.journal.lineage == copy.lineage && tail_cost <= copy.import {
            batch::apply_all(&tail, &mut gateway)?;
            if let Some((snapshot, took, at)) = rebase {
                active.journal.rebase_at(at, snapshot, took);
                self.count(SNAPSHOTS);
            }
            (replayed, replayed_paused, snapshot_bytes) = (copy.done + tail.len(), tail.len(), copy.base_bytes);
        } else {
            // Stop and copy: the state went back to a snapshot while it was copied (a recovery,
            // an import), or the calls left would take longer to apply than the whole state.
            let t = Instant::now();
            let snapshot = match active.gateway.export_state() {
                Ok(s) => s,
                Err(e) => {
                    if e.breaks_instance() {
                        self.recover(&mut active, &e);
                    }
                    return Err(e);
                }
            };
            let took = t.elapsed();
            gateway.import_state(&snapshot)?;
            snapshot_bytes = snapshot.len();
            active.journal.rebase(snapshot, Some(took));
            self.count(SNAPSHOTS);
            (replayed, replayed_paused) = (0, 0);
        }
        drop(copying);
        let from_digest = active.policy.digest().to_hex().to_string();
        let old_policy = std::mem::replace(&mut active.policy, new);
        let old_gateway = std::mem::replace(&mut active.gateway, gateway);
        let from_version = std::mem::replace(&mut active.version, to_version.clone());
        active.policy_gen += 1;
        self.request_standby(&active);
        let to_digest = active.policy.digest().to_hex().to_string();
        let last = locked.elapsed();
        drop(active);
        // The old instance (and its memory) goes after the calls have resumed.
        drop((old_gateway, old_policy));
        self.count(SWAPS);
        Ok(SwapReport {
            from_version,
            to_version,
            from_digest,
            to_digest,
            snapshot_bytes,
            replayed,
            replayed_paused,
            prepare,
            paused: last.max(slices.longest),
            held: last + slices.held,
        })
    }

    /// Takes the lock for good once the calls left fit in one slice, or after [`MAX_SLOWDOWN`].
    /// Until then, applies them in slices with the lock held and lets calls through between.
    fn converge(&self, gateway: &mut Gateway, copy: &mut Copy) -> Result<(MutexGuard<'_, Active>, Slices)> {
        let mut slices = Slices::default();
        let until = Instant::now() + MAX_SLOWDOWN;
        let _throttle = Throttle::start(&self.tokens);
        loop {
            let active = self.lock_first();
            let t = Instant::now();
            let per_call = copy.per_call.unwrap_or_default().as_nanos().max(1);
            let slice = usize::try_from(SLICE_HOLD.as_nanos() / per_call).unwrap_or(usize::MAX).max(PRECOPY_TAIL);
            let left = active.journal.len().saturating_sub(copy.done);
            if active.journal.lineage != copy.lineage || left <= slice || t >= until {
                return Ok((active, slices));
            }
            batch::apply_all(&active.journal.calls_between(copy.done, slice), gateway)?;
            copy.done += slice;
            let hold = t.elapsed();
            // With the calls held, the copy has the machine to itself: size the next slice by
            // this one's pace.
            copy.per_call = Some(hold / u32::try_from(slice).unwrap_or(u32::MAX));
            (slices.held, slices.longest) = (slices.held + hold, slices.longest.max(hold));
            // Half a slice of calls may go through before the next slice, so each one gains.
            self.tokens.store(i64::try_from(slice / 2).unwrap_or(i64::MAX), Ordering::Release);
            drop(active);
            let gap = Instant::now();
            while self.tokens.load(Ordering::Acquire) > 0 && gap.elapsed() < SLICE_GAP {
                std::thread::yield_now();
            }
        }
    }

    /// Brings `gateway` to the active state, but for the last calls, without holding the lock:
    /// imports the last snapshot, then applies the logged calls, in rounds, while each round is
    /// shorter than the one before.
    fn precopy(&self, gateway: &mut Gateway) -> Result<Copy> {
        let (base, lineage) = {
            let active = self.lock_first();
            (active.journal.base.clone(), active.journal.lineage)
        };
        let t = Instant::now();
        gateway.import_state(&base)?;
        let import = t.elapsed();
        let (mut done, mut applying, mut previous) = (0, Duration::ZERO, usize::MAX);
        for _ in 0..PRECOPY_ROUNDS {
            let calls = {
                let active = self.lock_first();
                if active.journal.lineage != lineage {
                    break;
                }
                active.journal.calls_from(done)
            };
            if calls.len() <= PRECOPY_TAIL || calls.len() >= previous {
                break;
            }
            let t = Instant::now();
            batch::apply_all(&calls, gateway)?;
            applying += t.elapsed();
            (done, previous) = (done + calls.len(), calls.len());
        }
        let per_call = u32::try_from(done).ok().filter(|&n| n > 0).map(|n| applying / n);
        Ok(Copy { lineage, done, base_bytes: base.len(), import, per_call })
    }
}
