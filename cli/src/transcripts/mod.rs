//! `loopguard transcripts`: where would the guard have fired on the agents' real history?
//!
//! The sessions OpenClaw wrote (agent stores, JSONL transcripts, trajectory exports; see the
//! `loopguard-transcripts` crate) are read as trace events and replayed, session after session
//! in the order discovery lists them, on one gateway per config; the report has one row per
//! session. With a second config (what-if) the same events are replayed on both and the sessions
//! whose verdicts change are listed.
//!
//! On several cores: a session's events touch only the state of its session key, so sessions
//! are sharded by key (all sessions of a key, e.g. before and after a `/reset`, go to one worker,
//! in order). Each worker reads its own sessions (its own store connections) and replays them on
//! its own gateways; the results are taken back in discovery order, so the output is the same
//! for any number of workers. The one thing that spans keys, the session cap, is checked first:
//! if one gateway could not keep every key at once, one worker replays everything.
//!
//! Anything unreadable is an error line naming the file, the session and the row or line; the
//! other sessions are read all the same, and [`Finished::errors`] counts the lines.

pub mod command;
mod session;
mod spool;

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;

use loopguard_transcripts::{
    discover, what_if, Importer, NoProgress, Progress, Report, ReportBuilder, SessionInfo, TerminalProgress,
};

use crate::report::model::SessionView;
use crate::trace::parallel::{keeps_sessions, worker_of};
use loopguard_host::Policy;
use loopguard_host::{Error, Result};
use loopguard_host::{Supervision, SwappableGateway};
use session::{Body, SessionDone};
pub use spool::Spooled;

/// What `run` writes to its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The report as an aligned table (and the what-if table).
    Table,
    /// The report as JSON Lines (and the what-if changes).
    Json,
    /// The derived trace events (docs/spec/trace-format.md), no replay.
    Trace,
    /// Nothing written by [`Transcripts::run`]: [`Transcripts::replay`] also keeps each
    /// session's calls and verdicts for `loopguard report`.
    Report,
}

/// One `loopguard transcripts` run.
pub struct Transcripts<'a> {
    /// State directories, agent stores, JSONL transcripts (or directories of them), trajectory exports.
    pub paths: &'a [PathBuf],
    /// The policy to replay on (not needed for [`Output::Trace`]).
    pub policy: Option<&'a Policy>,
    /// The config (JSON or JSON5).
    pub config: &'a str,
    /// A second config for a what-if comparison.
    pub other: Option<&'a str>,
    /// What to write.
    pub output: Output,
    /// Worker threads (at most one per session).
    pub jobs: usize,
    /// How each gateway is supervised.
    pub supervision: Supervision,
}

/// How a run went (the output is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// Sessions read.
    pub sessions: usize,
    /// Error lines written (unreadable files, sessions, rows, refused events).
    pub errors: u64,
    /// Workers used.
    pub workers: usize,
}

/// What a replay produced, before it is written.
pub struct Replayed {
    /// One report per config (none for [`Output::Trace`]).
    pub reports: Vec<Report>,
    /// Per session, in the order of the reports' rows: its calls and verdicts (only for
    /// [`Output::Report`]; `None` elsewhere).
    pub views: Vec<SessionView>,
    /// How the run went.
    pub finished: Finished,
}

/// Sessions from which a progress bar is worth drawing (on a terminal).
const LARGE_SESSIONS: usize = 200;
/// Bytes of source files from which a progress bar is worth drawing.
const LARGE_BYTES: u64 = 32 << 20;
/// Sessions a worker may read ahead of the one being written.
const AHEAD: usize = 8;

impl Transcripts<'_> {
    /// Discovers, reads and replays everything, writing the output to `out` and one
    /// `loopguard: …` line per error to `err`. Fails only if a config is refused or the output
    /// cannot be written.
    pub fn run(&self, out: &mut dyn Write, err: &mut dyn Write) -> Result<Finished> {
        let io = |source| Error::io("writing the output", source);
        let replayed = self.replay(out, err)?;
        let mut reports = replayed.reports.into_iter();
        if let Some(a) = reports.next() {
            let b = reports.next();
            let compared = b.as_ref().map(|b| what_if(&a, b));
            match self.output {
                Output::Json => {
                    a.write_jsonl(out).map_err(io)?;
                    if let Some(w) = &compared {
                        w.write_jsonl(out).map_err(io)?;
                    }
                }
                Output::Table => {
                    out.write_all(a.to_table().as_bytes()).map_err(io)?;
                    if let Some(w) = &compared {
                        write!(out, "\nWhat if (A = the config, B = the changed config):\n{}", w.to_table())
                            .map_err(io)?;
                    }
                }
                Output::Trace | Output::Report => {}
            }
        }
        out.flush().map_err(io)?;
        Ok(replayed.finished)
    }

    /// Discovers, reads and replays everything: the trace (for [`Output::Trace`]) and one
    /// `loopguard: …` line per error are written as they come, the reports returned.
    pub fn replay(&self, out: &mut dyn Write, err: &mut dyn Write) -> Result<Replayed> {
        let io = |source| Error::io("writing the output", source);
        let found = discover(self.paths);
        let mut errors = 0u64;
        for e in &found.errors {
            writeln!(err, "loopguard: {e}").map_err(io)?;
            errors += 1;
        }
        for s in &found.skipped {
            let session = s.session_id.as_ref().map(|id| format!(": session {id}")).unwrap_or_default();
            writeln!(err, "loopguard: skipped {}{session}: {}", s.file.display(), s.reason).map_err(io)?;
        }
        let sessions = &found.sessions;
        let configs: Vec<&str> = match self.output {
            Output::Trace => Vec::new(),
            _ => std::iter::once(self.config).chain(self.other).collect(),
        };
        let workers = self.workers(sessions, &configs);
        let mut gateways: Vec<Vec<SwappableGateway>> = Vec::new();
        for _ in 0..workers {
            let mut mine = Vec::new();
            for config in &configs {
                let policy = self
                    .policy
                    .ok_or_else(|| Error::load("<none>", "a report replays the transcripts: it needs a policy"))?;
                mine.push(SwappableGateway::new(policy.clone(), config, self.supervision)?);
            }
            gateways.push(mine);
        }
        let owner: Vec<usize> = sessions.iter().map(|s| worker_of(&s.session_key, workers)).collect();
        let mut progress: Box<dyn Progress> =
            if large(sessions) { Box::new(TerminalProgress::new()) } else { Box::new(NoProgress) };
        let mut reports: Vec<ReportBuilder> = configs.iter().map(|_| ReportBuilder::new()).collect();
        let trace_only = self.output == Output::Trace;
        let keep_views = self.output == Output::Report;
        let mut views = Vec::new();
        std::thread::scope(|scope| -> Result<()> {
            let mut results = Vec::new();
            for (w, mine) in gateways.iter().enumerate() {
                let (tx, rx) = sync_channel::<SessionDone>(AHEAD);
                let list: Vec<&Arc<SessionInfo>> =
                    sessions.iter().zip(&owner).filter(|(_, o)| **o == w).map(|(s, _)| s).collect();
                scope.spawn(move || {
                    let mut importer = Importer::default();
                    for info in list {
                        if tx.send(session::run(&mut importer, info, mine, trace_only, keep_views)).is_err() {
                            return;
                        }
                    }
                });
                results.push(rx);
            }
            progress.begin(sessions.len() as u64);
            for (info, w) in sessions.iter().zip(&owner) {
                let done = results[*w]
                    .recv()
                    .map_err(|_| Error::io(format!("transcript worker {w}"), std::io::Error::other("stopped")))?;
                for e in &done.errors {
                    writeln!(err, "loopguard: {e}").map_err(io)?;
                    errors += 1;
                }
                match done.body {
                    Body::Trace(text) => out.write_all(&text).map_err(io)?,
                    Body::Rows(rows, view) => {
                        reports.iter_mut().zip(rows).for_each(|(r, row)| r.add_row(row));
                        views.extend(view);
                    }
                }
                progress.session(info, &done.stats);
            }
            progress.end();
            Ok(())
        })?;
        let reports = reports.into_iter().map(ReportBuilder::finish).collect();
        Ok(Replayed { reports, views, finished: Finished { sessions: sessions.len(), errors, workers } })
    }

    /// Workers: `jobs`, at most one per session, and one if a gateway could not keep every key.
    fn workers(&self, sessions: &[Arc<SessionInfo>], configs: &[&str]) -> usize {
        let workers = self.jobs.clamp(1, sessions.len().max(1));
        if workers == 1 {
            return 1;
        }
        let keys: HashSet<&str> = sessions.iter().map(|s| s.session_key.as_str()).collect();
        if configs.iter().all(|c| self.policy.is_some_and(|p| keeps_sessions(p, c, keys.len()))) {
            workers
        } else {
            1
        }
    }
}

fn large(sessions: &[Arc<SessionInfo>]) -> bool {
    let files: HashSet<&PathBuf> = sessions.iter().map(|s| &s.file).collect();
    let bytes: u64 = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    sessions.len() >= LARGE_SESSIONS || bytes >= LARGE_BYTES
}
