//! What the store loop's tests drive: a clock that moves by hand, a store that fails as told
//! (down, slow, losing writes to another replica), a logger that keeps each test's reports, and
//! one gateway on them.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

use log::Level;

use super::super::*;
use crate::policy::Policy;

/// A clock that moves only by hand (or by the loop's own pauses between conflicts).
#[derive(Clone)]
pub(super) struct FakeClock {
    start: Instant,
    spent: Arc<Mutex<Duration>>,
}

impl FakeClock {
    fn new() -> Self {
        Self { start: Instant::now(), spent: Arc::default() }
    }

    pub(super) fn advance(&self, d: Duration) {
        *self.spent.lock().unwrap() += d;
    }

    pub(super) fn elapsed(&self) -> Duration {
        *self.spent.lock().unwrap()
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

/// How the scripted store fails.
#[derive(Clone, Copy)]
pub(super) enum Fault {
    /// Every call fails at once (connection refused).
    Down,
    /// Every call takes the whole deadline, then times out.
    Slow,
}

/// What the scripted store does, changed by the test while the gateway owns the store.
#[derive(Default)]
pub(super) struct Script {
    pub(super) values: MemoryStore,
    pub(super) fault: Option<Fault>,
    /// Time each call takes.
    pub(super) latency: Duration,
    /// The next this many writes find that another replica wrote first.
    pub(super) conflicts: u32,
    /// When each call reached the store (time since the clock's start), and whether it wrote.
    pub(super) calls: Vec<(Duration, &'static str)>,
}

struct ScriptedStore {
    script: Arc<Mutex<Script>>,
    clock: FakeClock,
    deadline: Duration,
}

impl ScriptedStore {
    /// Records the call, spends its time, and fails as scripted.
    fn call(&self, what: &'static str) -> std::result::Result<(), StoreError> {
        let mut s = self.script.lock().unwrap();
        s.calls.push((self.clock.elapsed(), what));
        self.clock.advance(s.latency);
        match s.fault {
            None => Ok(()),
            Some(Fault::Down) => Err(StoreError::new(StoreErrorKind::Unreachable, "connection refused")),
            Some(Fault::Slow) => {
                self.clock.advance(self.deadline);
                Err(StoreError::new(StoreErrorKind::Timeout, "no answer"))
            }
        }
    }
}

impl StateStore for ScriptedStore {
    fn get(&mut self, key: &str) -> std::result::Result<Versioned, StoreError> {
        self.call("get")?;
        self.script.lock().unwrap().values.get(key)
    }

    fn cas(&mut self, key: &str, expected: u64, blob: &[u8], ttl: Duration) -> std::result::Result<Cas, StoreError> {
        self.call("cas")?;
        let mut s = self.script.lock().unwrap();
        if s.conflicts > 0 {
            // Another replica writes first (the same blob will do: only the version matters here).
            s.conflicts -= 1;
            let theirs = s.values.get(key)?.version;
            s.values.cas(key, theirs, blob, ttl)?;
        }
        s.values.cas(key, expected, blob, ttl)
    }

    fn describe(&self) -> String {
        "scripted".into()
    }
}

thread_local! {
    /// The reports of the test running on this thread (tests run in parallel, one per thread).
    static REPORTS: RefCell<Vec<(Level, String)>> = const { RefCell::new(Vec::new()) };
}

/// Keeps every store report on the thread that made it.
struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target() == LOG_TARGET
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            REPORTS.with(|v| v.borrow_mut().push((r.level(), r.args().to_string())));
        }
    }

    fn flush(&self) {}
}

/// The store reports made on this thread since the last call.
pub(super) fn reports() -> Vec<(Level, String)> {
    REPORTS.with(|v| v.take())
}

/// One gateway on a scripted store and a fake clock, with a pair budget of 20 bot messages.
pub(super) struct Fixture {
    pub(super) gateway: StoredGateway,
    pub(super) clock: FakeClock,
    pub(super) script: Arc<Mutex<Script>>,
    sent: u64,
}

pub(super) const DEADLINE: Duration = Duration::from_millis(20);

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub(super) fn fixture(options: StoreOptions) -> Fixture {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    static LOGGER: OnceLock<()> = OnceLock::new();
    LOGGER.get_or_init(|| {
        log::set_logger(&Capture).expect("no other logger in these tests");
        log::set_max_level(log::LevelFilter::Trace);
    });
    reports();
    let policy = POLICY.get_or_init(|| {
        // Compiled once per machine, as the other tests do: compiling the policy takes half a
        // minute in a debug build.
        let _ = crate::use_compile_cache(&loopguard_tests::workspace_root().join("target/wasmtime-cache"));
        Policy::embedded().expect("the embedded policy")
    });
    let gateway = policy.gateway("{}").expect("the default config");
    let (clock, script) = (FakeClock::new(), Arc::new(Mutex::new(Script::default())));
    let store = ScriptedStore { script: script.clone(), clock: clock.clone(), deadline: options.deadline };
    let gateway = StoredGateway::new(gateway, Box::new(store), options).with_clock(clock.clone());
    Fixture { gateway, clock, script, sent: 0 }
}

pub(super) fn with(failure: StoreFailure) -> StoreOptions {
    StoreOptions { deadline: DEADLINE, failure, ..StoreOptions::default() }
}

impl Fixture {
    /// The next bot message of one pair in one conversation.
    pub(super) fn event(&self, conversation: &str) -> String {
        format!(
            r#"{{"kind":"bot_message","channel":"slack","account":"T1","conversation":"{conversation}","sender":"a","receiver":"b","ts_ms":{}}}"#,
            1000 + self.sent
        )
    }

    pub(super) fn decide_in(&mut self, conversation: &str) -> Decided {
        let event = self.event(conversation);
        self.sent += 1;
        self.gateway.decide(&event, u32::try_from(self.sent).unwrap()).expect("a decision")
    }

    pub(super) fn decide(&mut self) -> Decided {
        self.decide_in("c")
    }

    pub(super) fn script(&self, f: impl FnOnce(&mut Script)) {
        f(&mut self.script.lock().unwrap());
    }

    /// When the store was called, since the clock's start.
    pub(super) fn tries(&self) -> Vec<Duration> {
        self.script.lock().unwrap().calls.iter().map(|c| c.0).collect()
    }
}
