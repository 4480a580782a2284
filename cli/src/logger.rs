//! Where the library's reports go in the CLI: one `loopguard: …` line each on stderr.
//!
//! The library reports through the `log` facade (a store episode begins or ends: see
//! `loopguard_host::store::LOG_TARGET`) so that each program embedding it decides where those
//! reports go. The CLI's users read them on stderr, as before the facade. Written by hand
//! rather than with env_logger: these few lines print exactly the old line, and no environment
//! variable can hide an episode an operator needs to see.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct Stderr;

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata) -> bool {
        // Only the library's own reports: a dependency's log lines are not the CLI's output.
        metadata.level() <= Level::Info && metadata.target() == loopguard_host::store::LOG_TARGET
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            eprintln!("loopguard: {}", record.args());
        }
    }

    fn flush(&self) {}
}

static STDERR: Stderr = Stderr;

/// Sends the library's reports to stderr (once per process; a second call changes nothing).
pub fn init() {
    if log::set_logger(&STDERR).is_ok() {
        log::set_max_level(LevelFilter::Info);
    }
}
