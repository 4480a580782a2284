//! Progress while importing: a callback trait, and a terminal bar that draws only on a terminal.
//!
//! Why only on a terminal: the report goes to stdout and is often piped (`--json | jq`); a bar
//! written to a piped or redirected stderr would be garbage in a log file.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::mapping::SessionStats;
use crate::session::SessionInfo;

/// Receives progress. All methods have empty defaults.
pub trait Progress {
    /// Reading starts; `sessions` will be read.
    fn begin(&mut self, sessions: u64) {
        let _ = sessions;
    }
    /// One session was read.
    fn session(&mut self, info: &SessionInfo, stats: &SessionStats) {
        let _ = (info, stats);
    }
    /// Reading ended.
    fn end(&mut self) {}
}

/// No progress at all.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A progress callback `f(sessions_done, sessions_total, tool_calls_so_far)`, called once at the
/// start and once per session.
pub struct ProgressFn<F> {
    f: F,
    done: u64,
    total: u64,
    calls: u64,
}

/// Wraps a closure as [`Progress`].
pub fn progress_fn<F: FnMut(u64, u64, u64)>(f: F) -> ProgressFn<F> {
    ProgressFn { f, done: 0, total: 0, calls: 0 }
}

impl<F: FnMut(u64, u64, u64)> Progress for ProgressFn<F> {
    fn begin(&mut self, sessions: u64) {
        self.total = sessions;
        (self.f)(0, sessions, 0);
    }
    fn session(&mut self, _info: &SessionInfo, stats: &SessionStats) {
        self.done += 1;
        self.calls += stats.tool_calls;
        (self.f)(self.done, self.total, self.calls);
    }
}

/// An `indicatif` bar on stderr, drawn only when stderr is a terminal.
pub struct TerminalProgress {
    bar: ProgressBar,
    calls: u64,
}

impl Default for TerminalProgress {
    fn default() -> Self {
        TerminalProgress::new()
    }
}

impl TerminalProgress {
    /// A bar on stderr if stderr is a terminal, else a hidden one.
    pub fn new() -> Self {
        let target =
            if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(None, target);
        let style = ProgressStyle::with_template("{spinner} {pos}/{len} sessions, {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        TerminalProgress { bar, calls: 0 }
    }

    /// Whether the bar draws (stderr is a terminal).
    pub fn is_visible(&self) -> bool {
        !self.bar.is_hidden()
    }
}

impl Progress for TerminalProgress {
    fn begin(&mut self, sessions: u64) {
        self.bar.set_length(sessions);
        self.bar.set_message("0 tool calls");
    }
    fn session(&mut self, _info: &SessionInfo, stats: &SessionStats) {
        self.calls += stats.tool_calls;
        self.bar.inc(1);
        self.bar.set_message(format!("{} tool calls", self.calls));
    }
    fn end(&mut self) {
        self.bar.finish_and_clear();
    }
}
