//! Errors that name the file, the session and the row or line, and say what to do.
//!
//! Why a value and not an early return: one corrupt row in one session of one agent must not
//! hide the other ten thousand sessions. Readers collect these, carry on where that is sound,
//! and hand them to the caller, who prints them and exits non-zero at the end.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in a source an error (or an event) sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Location {
    /// A `transcript_events` row of an agent store, by its `seq`.
    Row(i64),
    /// A line of a JSONL file, 1-based.
    Line(u64),
    /// An element of `entries` in a trajectory export's `session-branch.json`, 1-based.
    Entry(u64),
    /// A row of another SQLite history (OpenCode's `part` table), by its `rowid`.
    Rowid(i64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Row(seq) => write!(f, "row seq {seq}"),
            Location::Line(n) => write!(f, "line {n}"),
            Location::Entry(n) => write!(f, "entry {n}"),
            Location::Rowid(n) => write!(f, "rowid {n}"),
        }
    }
}

/// What went wrong. Each variant says which input it blames.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file or directory could not be read (missing, permissions, I/O error).
    Io(std::io::Error),
    /// SQLite refused to open the file or to run a query (not a database, locked, corrupt page).
    Sqlite(rusqlite::Error),
    /// A table the importer needs is missing: the file is not an OpenClaw agent store, or comes
    /// from a release with another schema.
    MissingTable(&'static str),
    /// A compressed row (`event_zstd`) could not be decompressed, or decompressed to another size
    /// than its `event_utf8_bytes`.
    Zstd(String),
    /// A row or line is not valid JSON (or not UTF-8).
    Json(serde_json::Error),
    /// The last line of a JSONL file is cut off (no newline and not valid JSON): the writer was
    /// interrupted mid-line. The lines before it were read.
    TruncatedLine(serde_json::Error),
    /// A line longer than this many bytes: skipped without being held in memory (the lines
    /// after it were read).
    LineTooLong(usize),
    /// Valid JSON, but not of the shape OpenClaw writes (e.g. a `message` that is not an object).
    BadRecord(String),
    /// The path is neither an agent store, a JSONL transcript, a trajectory export nor a
    /// directory holding any of them.
    UnknownSource,
    /// The file's first line shows another format than a transcript (a loopguard trace, a
    /// trajectory export's `events.jsonl` away from its directory): what it is and what to do.
    OtherFormat {
        /// What the file is.
        what: &'static str,
        /// What to do with it instead.
        fix: &'static str,
    },
}

/// One error, with the file, the session (when known) and the row or line (when known).
/// (Boxed: errors are rare and results of every record carry the type.)
#[derive(Debug)]
pub struct Error(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    file: PathBuf,
    session: Option<String>,
    location: Option<Location>,
}

impl Error {
    /// An error about `file` as a whole.
    pub fn new(kind: ErrorKind, file: impl Into<PathBuf>) -> Self {
        Error(Box::new(Inner { kind, file: file.into(), session: None, location: None }))
    }

    /// The same error, naming the session (its id) it was found in.
    pub fn in_session(mut self, session: impl Into<String>) -> Self {
        self.0.session = Some(session.into());
        self
    }

    /// The same error, naming the row or line.
    pub fn at(mut self, location: Location) -> Self {
        self.0.location = Some(location);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The file (or directory) the error is about.
    pub fn file(&self) -> &Path {
        &self.0.file
    }

    /// The session id, when the error is inside one session.
    pub fn session(&self) -> Option<&str> {
        self.0.session.as_deref()
    }

    /// The row or line, when the error is about one record.
    pub fn location(&self) -> Option<Location> {
        self.0.location
    }

    fn hint(&self) -> &'static str {
        match &self.0.kind {
            ErrorKind::Io(_) => "check that the path exists and is readable by this user",
            ErrorKind::Sqlite(_) => {
                "check that this is an OpenClaw agent database (agents/<id>/agent/openclaw-agent.sqlite); \
                 `sqlite3 FILE 'PRAGMA integrity_check'` tells whether it is damaged"
            }
            ErrorKind::MissingTable(_) => {
                "this is not an OpenClaw 2026.x agent store; pass the state directory or the agent's \
                 openclaw-agent.sqlite, or export the session with `openclaw sessions export-trajectory`"
            }
            ErrorKind::Zstd(_) => "the row's compressed payload is damaged; the other rows were read",
            ErrorKind::Json(_) | ErrorKind::BadRecord(_) | ErrorKind::LineTooLong(_) => {
                "this record was skipped; the others were read"
            }
            ErrorKind::TruncatedLine(_) => {
                "the file ends in the middle of a line (an interrupted write); the lines before it were read"
            }
            ErrorKind::UnknownSource => {
                "pass an OpenClaw state directory, an agent .sqlite file, a pi-format .jsonl transcript, \
                 a trajectory export directory (with session-branch.json), or a Claude Code, Codex or \
                 Gemini CLI transcript (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp)"
            }
            ErrorKind::OtherFormat { fix, .. } => fix,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.file.display())?;
        if let Some(session) = &self.0.session {
            write!(f, ": session {session}")?;
        }
        if let Some(location) = &self.0.location {
            write!(f, ": {location}")?;
        }
        match &self.0.kind {
            ErrorKind::Io(e) => write!(f, ": cannot read: {e}")?,
            ErrorKind::Sqlite(e) => write!(f, ": SQLite: {e}")?,
            ErrorKind::MissingTable(t) => write!(f, ": no table `{t}`")?,
            ErrorKind::Zstd(e) => write!(f, ": corrupt compressed row: {e}")?,
            ErrorKind::Json(e) => write!(f, ": malformed JSON: {e}")?,
            ErrorKind::TruncatedLine(e) => write!(f, ": truncated last line: {e}")?,
            ErrorKind::LineTooLong(max) => write!(f, ": longer than {max} bytes, more than a transcript line may be")?,
            ErrorKind::BadRecord(e) => write!(f, ": unexpected record: {e}")?,
            ErrorKind::UnknownSource => write!(f, ": not a transcript source")?,
            ErrorKind::OtherFormat { what, .. } => write!(f, ": {what}, not a transcript")?,
        }
        write!(f, " ({})", self.hint())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            ErrorKind::Sqlite(e) => Some(e),
            ErrorKind::Json(e) | ErrorKind::TruncatedLine(e) => Some(e),
            _ => None,
        }
    }
}
