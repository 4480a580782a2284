//! The collector: finds the sessions under a path and reads each as trace events.
//!
//! Why one collector over several readers: OpenClaw wrote the same kind of history in three
//! shapes over its releases (an agent's SQLite store, pi-format JSONL files, trajectory exports),
//! and an operator points at a state directory without knowing which. [`discover`] lists the
//! sessions of every source under the paths, each with its [`SourceFormat`]; [`Importer`] hands
//! each session to its reader and collects the events, the counts and the errors. The readers
//! stand side by side and have one shape: `read_session(info, sink, out)` (for `sqlite`, a method
//! of the open store, which the importer keeps for the next session of the same file) streams
//! the session's active branch to `sink` and fills `out` ([`ReadBuilder`]); no reader imports
//! another, the discovery or this file.
//!
//! - [`sqlite`]: agent stores (`transcript_events`, zstd rows) and their archive tables;
//! - [`jsonl`]: pi JSONL transcripts, and any stream of their lines (cold and store archives);
//! - [`trajectory`]: trajectory export directories;
//! - [`tree`]: which records are on a session's active branch (for `sqlite` and `jsonl`);
//! - [`lines`]: bounded line reading, shared by `jsonl` and `trajectory`;
//! - [`sniff`]: what a file whose name says nothing is, by its first line;
//! - [`claude`], [`codex`], [`gemini`], [`copilot`], [`qwen`]: the coding CLIs' JSON Lines
//!   transcripts (Claude Code sessions, Codex rollouts, Gemini CLI chats, Copilot CLI session
//!   logs, Qwen Code chats), with what they share in [`cli`];
//! - [`opencode`] (OpenCode's SQLite database) and [`cline`] (Cline's task files): the coding
//!   CLIs that run loopguard in-process, read as their plugins see the calls.

mod claude;
mod cli;
mod cline;
mod codex;
mod copilot;
mod discover;
mod gemini;
mod jsonl;
mod lines;
mod opencode;
mod qwen;
mod session_read;
mod sniff;
mod sqlite;
mod trajectory;
mod tree;

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use crate::event::ImportedEvent;
use crate::progress::Progress;
use crate::session::{SessionInfo, SourceFormat};
use jsonl::Lines;
use sqlite::Store;

pub use discover::{discover, Discovery, Skipped};
pub(crate) use session_read::ReadBuilder;
pub use session_read::{ImportOptions, SessionRead};

/// One session's events, read whole (one session in memory at a time).
#[derive(Debug)]
pub struct SessionTrace {
    /// The session.
    pub info: Arc<SessionInfo>,
    /// Its events, in trace order, each with its reference.
    pub events: Vec<ImportedEvent>,
    /// Counts and errors.
    pub read: SessionRead,
}

impl SessionTrace {
    /// The events as a trace (JSON Lines, one event per line), for `loopguard replay` or
    /// `Gateway::apply_events`.
    pub fn trace_text(&self) -> String {
        let mut out = Vec::new();
        for e in &self.events {
            e.event.write_line(&mut out);
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Reads sessions. Keeps the last agent store open, so that the sessions of one store (which
/// discovery lists together) share one connection.
pub struct Importer {
    options: ImportOptions,
    store: Option<Store>,
}

impl Default for Importer {
    fn default() -> Self {
        Importer::new(ImportOptions::default())
    }
}

impl Importer {
    /// An importer with `options`.
    pub fn new(options: ImportOptions) -> Self {
        Importer { options, store: None }
    }

    /// Streams one session's events to `sink`, in trace order, without holding them: memory
    /// stays bounded by the session's tree (ids only) and one record.
    pub fn read_session(&mut self, info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent)) -> SessionRead {
        let mut out = ReadBuilder::new(self.options.max_errors_per_session);
        match info.format {
            SourceFormat::AgentStore => match self.store_for(&info.file) {
                Ok(store) => store.read_session(info, sink, &mut out),
                Err(e) => out.push(e.in_session(&info.session_id)),
            },
            SourceFormat::Jsonl => jsonl::read_session(info, sink, &mut out),
            SourceFormat::ColdArchive => self.read_cold(info, sink, &mut out),
            SourceFormat::StoreArchive => match self.store_for(&info.file) {
                Ok(store) => {
                    let open = || store.archive_blob(&info.session_id);
                    jsonl::read_stream(info, &open, Lines::Records, sink, &mut out);
                }
                Err(e) => out.push(e.in_session(&info.session_id)),
            },
            SourceFormat::Trajectory => trajectory::read_session(info, sink, &mut out),
            SourceFormat::ClaudeCode => claude::read_session(info, sink, &mut out),
            SourceFormat::Codex => codex::read_session(info, sink, &mut out),
            SourceFormat::GeminiCli => gemini::read_session(info, sink, &mut out),
            SourceFormat::OpenCode => opencode::read_session(info, sink, &mut out),
            SourceFormat::CopilotCli => copilot::read_session(info, sink, &mut out),
            SourceFormat::Cline => cline::read_session(info, sink, &mut out),
            SourceFormat::QwenCode => qwen::read_session(info, sink, &mut out),
        }
        out.finish()
    }

    /// Reads one session whole.
    pub fn read_trace(&mut self, info: &Arc<SessionInfo>) -> SessionTrace {
        let mut events = Vec::new();
        let read = self.read_session(info, &mut |e| events.push(e));
        SessionTrace { info: info.clone(), events, read }
    }

    /// The sessions, read one at a time (an iterator: only the current one is in memory).
    pub fn traces<'a>(&'a mut self, sessions: &'a [Arc<SessionInfo>]) -> Traces<'a> {
        Traces { importer: self, sessions, next: 0, progress: None }
    }

    /// A cold archive: a `.jsonl.zst` file, or a blob in the store; its lines are envelopes
    /// that the JSONL reader unpacks.
    fn read_cold(&mut self, info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
        if sqlite::is_sqlite(&info.file) {
            let store = match self.store_for(&info.file) {
                Ok(s) => s,
                Err(e) => return out.push(e.in_session(&info.session_id)),
            };
            let open = || store.cold_blob(&info.session_id);
            jsonl::read_stream(info, &open, Lines::ColdEnvelopes, sink, out);
        } else {
            let path = info.file.clone();
            let open = || -> Result<Box<dyn BufRead>, Error> { lines::open_zstd(&path) };
            jsonl::read_stream(info, &open, Lines::ColdEnvelopes, sink, out);
        }
    }

    fn store_for(&mut self, path: &PathBuf) -> Result<&Store, Error> {
        if self.store.as_ref().is_none_or(|s| &s.path != path) {
            self.store = None;
            self.store = Some(Store::open(path)?);
        }
        match &self.store {
            Some(s) => Ok(s),
            None => Err(Error::new(ErrorKind::UnknownSource, path)),
        }
    }
}

/// Iterator over [`SessionTrace`]s; see [`Importer::traces`].
pub struct Traces<'a> {
    importer: &'a mut Importer,
    sessions: &'a [Arc<SessionInfo>],
    next: usize,
    progress: Option<Box<dyn Progress + 'a>>,
}

impl<'a> Traces<'a> {
    /// Reports progress to `progress` (e.g. [`crate::TerminalProgress`]).
    pub fn with_progress(mut self, mut progress: impl Progress + 'a) -> Self {
        progress.begin(self.sessions.len() as u64);
        self.progress = Some(Box::new(progress));
        self
    }
}

impl Iterator for Traces<'_> {
    type Item = SessionTrace;
    fn next(&mut self) -> Option<SessionTrace> {
        let Some(info) = self.sessions.get(self.next) else {
            if let Some(p) = self.progress.as_mut() {
                p.end();
            }
            self.progress = None;
            return None;
        };
        self.next += 1;
        let trace = self.importer.read_trace(info);
        if let Some(p) = self.progress.as_mut() {
            p.session(&trace.info, &trace.read.stats);
        }
        Some(trace)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.sessions.len() - self.next;
        (left, Some(left))
    }
}
