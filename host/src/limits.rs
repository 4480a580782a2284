//! Sandbox limits: how long a call into the guest may run and how much memory it may take.
//!
//! Why: the policy sits on the hot path of every tool call. A policy bug (an endless loop, a
//! runaway allocation) must cost one bounded call, never a hung or killed gateway. Time is bounded
//! with wasmtime's epoch interruption: one background thread advances the engine's epoch every
//! millisecond, and every call sets its deadline in epochs before it enters the guest, so the
//! check costs a load and a compare in the guest's loops. Memory is bounded per instance by a
//! store limiter that also remembers that it refused a growth, so that the resulting abort is
//! reported as out-of-memory and not as an anonymous trap.

use std::num::{NonZeroU64, NonZeroUsize};
use std::sync::Once;
use std::time::Duration;

use wasmtime::{Engine, ResourceLimiter, StoreLimits, StoreLimitsBuilder};

/// How often the epoch advances: the resolution of every deadline.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Per-instance limits. `Default` suits a gateway: generous for legitimate input, tight enough
/// that a runaway call is stopped long before a user notices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deadline of one typed call (`check-tool-call`, `check-bot-message`, `stats`, …). A
    /// decision normally takes microseconds, but one that grows a map of 100 000+ entries
    /// (rehash, fresh memory pages) was measured above 10 ms; the default (100 ms) leaves room
    /// for that and still stops an endless loop long before a user notices.
    pub call_deadline: Deadline,
    /// Base deadline of calls whose work grows with their input: `apply-events`, `replay`,
    /// `create`, `export-state`, `import-state`, and instantiation (default 1 s).
    pub batch_deadline: Deadline,
    /// Added to `batch_deadline` per MiB of input (default 1 s/MiB, ~100x the measured cost).
    pub batch_deadline_per_mib: Duration,
    /// Cap on the guest's linear memory per instance (default 256 MiB).
    pub memory_bytes: NonZeroUsize,
}

/// How long a call may run: never zero, since a zero deadline would stop every call before it
/// starts. Checked once, where a deadline is made (`--deadline-ms 0` is refused by the CLI), so
/// nothing downstream clamps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Deadline(Duration);

impl Deadline {
    /// A deadline of `ms` milliseconds.
    pub const fn from_millis(ms: NonZeroU64) -> Self {
        Deadline(Duration::from_millis(ms.get()))
    }

    /// A deadline of `duration`, or `None` for a zero duration.
    pub fn new(duration: Duration) -> Option<Self> {
        (!duration.is_zero()).then_some(Deadline(duration))
    }

    /// The deadline as a duration (never zero).
    pub const fn get(self) -> Duration {
        self.0
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_deadline: Deadline(Duration::from_millis(100)),
            batch_deadline: Deadline(Duration::from_secs(1)),
            batch_deadline_per_mib: Duration::from_secs(1),
            memory_bytes: NonZeroUsize::new(256 << 20).expect("256 MiB is not zero"),
        }
    }
}

impl Limits {
    /// The deadline of a batch call with `input_bytes` of input.
    pub fn batch(&self, input_bytes: usize) -> Deadline {
        let per_mib = self.batch_deadline_per_mib.as_secs_f64() * input_bytes as f64 / (1 << 20) as f64;
        Deadline(self.batch_deadline.get() + Duration::from_secs_f64(per_mib))
    }
}

/// A deadline in epoch ticks: rounded up, plus one because the current tick may end at once.
pub(crate) fn ticks(deadline: Deadline) -> u64 {
    u64::try_from(deadline.get().as_nanos().div_ceil(EPOCH_TICK.as_nanos())).unwrap_or(u64::MAX / 2).saturating_add(1)
}

/// Starts the thread that advances `engine`'s epoch (once per process; the engine is global).
pub(crate) fn start_ticker(engine: &Engine) {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let engine = engine.weak();
        let spawned = std::thread::Builder::new().name("loopguard-epoch".into()).spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            match engine.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => return,
            }
        });
        // Without the thread no deadline ever passes: calls still work, they are just unbounded.
        drop(spawned);
    });
}

/// The store's resource limiter: [`StoreLimits`] plus a flag set when a memory growth is refused.
pub(crate) struct Limiter {
    inner: StoreLimits,
    /// Set when the guest asked for more memory than the cap; cleared before each call.
    pub(crate) refused: bool,
    /// The calling thread's CPU time when the current deadline window began (see [`on_deadline`]);
    /// cleared before each call.
    pub(crate) window_cpu: Option<Duration>,
    /// The current call's deadline in ticks, to extend by.
    pub(crate) window_ticks: u64,
    /// `Limits::memory_bytes`, for the error when the policy cannot even start under it.
    memory_cap: NonZeroUsize,
}

/// What to do when a call reaches its deadline. Epochs measure wall time, so a thread that was
/// merely preempted on a busy machine would be stopped like an endless loop, and a recovery
/// loses the decisions since the last snapshot. So where the thread's CPU time is readable
/// (Linux), the first expiry opens a second window, and a later expiry stops the call only if
/// the guest used at least half of that window on the CPU: an endless loop is stopped after
/// about two deadlines, a preempted call goes on. Elsewhere the first expiry stops the call.
pub(crate) fn on_deadline(limiter: &mut Limiter) -> wasmtime::Result<wasmtime::UpdateDeadline> {
    let ticks = limiter.window_ticks;
    let window = EPOCH_TICK * u32::try_from(ticks).unwrap_or(u32::MAX);
    match (thread_cpu_time(), limiter.window_cpu) {
        (Some(now), None) => {
            limiter.window_cpu = Some(now);
            Ok(wasmtime::UpdateDeadline::Continue(ticks))
        }
        (Some(now), Some(start)) if now.saturating_sub(start) < window / 2 => {
            limiter.window_cpu = Some(now);
            Ok(wasmtime::UpdateDeadline::Continue(ticks))
        }
        _ => Err(wasmtime::Trap::Interrupt.into()),
    }
}

/// The calling thread's time on the CPU (Linux: `/proc/thread-self/schedstat`, first field, ns).
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

impl Limiter {
    pub(crate) fn new(limits: &Limits) -> Self {
        Limiter {
            inner: StoreLimitsBuilder::new().memory_size(limits.memory_bytes.get()).instances(4).build(),
            refused: false,
            window_cpu: None,
            window_ticks: ticks(limits.batch_deadline),
            memory_cap: limits.memory_bytes,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let ok = self.inner.memory_growing(current, desired, maximum)?;
        if !ok && current == 0 {
            // The memory's initial size, at instantiation: wasmtime's own error ("memory minimum
            // size of 19 pages exceeds memory limits") names neither the cap nor how to raise it.
            wasmtime::bail!(
                "the policy needs {desired} bytes of memory to start, more than the memory cap of \
                 {} bytes (`Limits::memory_bytes`; the CLI's --memory-mib)",
                self.memory_cap
            );
        }
        self.refused |= !ok;
        Ok(ok)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}
