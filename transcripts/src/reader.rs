//! Reading discovered sessions: one at a time, errors kept per session.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Error;
use crate::event::ImportedEvent;
use crate::mapping::SessionStats;
use crate::progress::Progress;
use crate::session::{SessionInfo, SourceFormat};
use crate::store::Store;

/// Knobs for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportOptions {
    /// Most errors kept per session; more are counted in [`SessionRead::errors_dropped`] (a store
    /// with a million damaged rows must not build a million error values).
    pub max_errors_per_session: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { max_errors_per_session: 100 }
    }
}

/// What reading one session gave besides its events.
#[derive(Debug, Default)]
pub struct SessionRead {
    /// Counts.
    pub stats: SessionStats,
    /// Errors, each naming the file, the session and the row or line (at most
    /// [`ImportOptions::max_errors_per_session`]).
    pub errors: Vec<Error>,
    /// Errors beyond the cap.
    pub errors_dropped: u64,
}

impl SessionRead {
    /// No errors at all.
    pub fn is_clean(&self) -> bool {
        self.errors.is_empty() && self.errors_dropped == 0
    }
}

/// Collects a session's errors up to the cap, and its stats.
pub(crate) struct Collector {
    cap: usize,
    pub errors: Vec<Error>,
    pub dropped: u64,
    pub stats: SessionStats,
}

impl Collector {
    pub(crate) fn new(cap: usize) -> Self {
        Collector { cap, errors: Vec::new(), dropped: 0, stats: SessionStats::default() }
    }

    pub(crate) fn push(&mut self, e: Error) {
        if self.errors.len() < self.cap {
            self.errors.push(e);
        } else {
            self.dropped += 1;
        }
    }

    fn finish(self) -> SessionRead {
        SessionRead { stats: self.stats, errors: self.errors, errors_dropped: self.dropped }
    }
}

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
        let mut out = Collector::new(self.options.max_errors_per_session);
        match info.format {
            SourceFormat::AgentStore => match self.store_for(&info.file) {
                Ok(store) => store.read_session(info, sink, &mut out),
                Err(e) => out.push(e.in_session(&info.session_id)),
            },
            SourceFormat::Jsonl => crate::jsonl::read_session(info, sink, &mut out),
            SourceFormat::ColdArchive => self.read_cold(info, sink, &mut out),
            SourceFormat::StoreArchive => match self.store_for(&info.file) {
                Ok(store) => {
                    let open = || store.archive_blob(&info.session_id);
                    crate::jsonl::read_stream(info, &open, crate::jsonl::Lines::Records, sink, &mut out);
                }
                Err(e) => out.push(e.in_session(&info.session_id)),
            },
            SourceFormat::Trajectory if info.file.ends_with(crate::trajectory::EVENTS_FILE) => {
                crate::trajectory::read_events(info, sink, &mut out)
            }
            SourceFormat::Trajectory => crate::trajectory::read_session(info, sink, &mut out),
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

    /// A cold archive: a `.jsonl.zst` file, or a blob in the store.
    fn read_cold(&mut self, info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut Collector) {
        use crate::jsonl::{read_stream, Lines};
        use std::io::BufRead;
        if crate::discover::is_sqlite(&info.file) {
            let store = match self.store_for(&info.file) {
                Ok(s) => s,
                Err(e) => return out.push(e.in_session(&info.session_id)),
            };
            let open = || store.cold_blob(&info.session_id);
            read_stream(info, &open, Lines::ColdEnvelopes, sink, out);
        } else {
            let path = info.file.clone();
            let open = || -> Result<Box<dyn BufRead>, Error> {
                let io = |e| Error::new(crate::error::ErrorKind::Io(e), &path);
                let file = std::fs::File::open(&path).map_err(io)?;
                let decoder = zstd::stream::read::Decoder::new(file).map_err(io)?;
                Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, decoder)))
            };
            read_stream(info, &open, Lines::ColdEnvelopes, sink, out);
        }
    }

    fn store_for(&mut self, path: &PathBuf) -> Result<&Store, Error> {
        if self.store.as_ref().is_none_or(|s| &s.path != path) {
            self.store = None;
            self.store = Some(Store::open(path)?);
        }
        match &self.store {
            Some(s) => Ok(s),
            None => Err(Error::new(crate::error::ErrorKind::UnknownSource, path)),
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
