//! Opening an agent store read-only, even one a gateway is writing.
//!
//! Separate from what is read out of it ([`super::list`], [`super::archives`], [`super::read`],
//! each an `impl Store` of its own), so those files depend on this one and not on each other.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, ErrorKind};

pub(crate) fn sqlite_err(path: &Path, e: rusqlite::Error) -> Error {
    Error::new(ErrorKind::Sqlite(e), path)
}

/// `file:` URI for `path` with `query` (SQLite URIs escape `%`, `?` and `#`).
fn file_uri(path: &Path, query: &str) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push('?');
    uri.push_str(query);
    uri
}

/// An open agent store.
pub(crate) struct Store {
    pub path: PathBuf,
    pub(super) conn: Connection,
    pub(super) tables: HashSet<String>,
}

impl Store {
    /// Opens `path` read-only. A WAL database whose `-shm` file does not exist in a directory we
    /// cannot write cannot be opened with `mode=ro` (SQLite must create the shared-memory file);
    /// no gateway can be writing such a database, so it is then opened `immutable=1`.
    pub(crate) fn open(path: &Path) -> Result<Store, Error> {
        if let Err(e) = std::fs::metadata(path) {
            return Err(Error::new(ErrorKind::Io(e), path));
        }
        let (conn, tables) = open_read_only(path)?;
        if !tables.contains("transcript_events") {
            return Err(Error::new(ErrorKind::MissingTable("transcript_events"), path));
        }
        Ok(Store { path: path.to_path_buf(), conn, tables })
    }

    pub(super) fn optional_stmt(&self, table: &str, sql: &str) -> Result<Option<rusqlite::Statement<'_>>, Error> {
        if !self.tables.contains(table) {
            return Ok(None);
        }
        self.conn.prepare(sql).map(Some).map_err(|e| sqlite_err(&self.path, e))
    }
}

/// Opens any SQLite file read-only (as [`Store::open`] says why), with its table names: shared
/// with the other SQLite history this crate reads (OpenCode's).
pub(crate) fn open_read_only(path: &Path) -> Result<(Connection, HashSet<String>), Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let tables = |conn: &Connection| -> rusqlite::Result<HashSet<String>> {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
        names.collect()
    };
    let first = Connection::open_with_flags(file_uri(path, "mode=ro"), flags).and_then(|c| tables(&c).map(|t| (c, t)));
    let (conn, tables) = match first {
        Ok(ok) => ok,
        Err(e) if is_cantopen(&e) => Connection::open_with_flags(file_uri(path, "mode=ro&immutable=1"), flags)
            .and_then(|c| tables(&c).map(|t| (c, t)))
            .map_err(|e| sqlite_err(path, e))?,
        Err(e) => return Err(sqlite_err(path, e)),
    };
    conn.execute_batch("PRAGMA query_only = 1;").map_err(|e| sqlite_err(path, e))?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| sqlite_err(path, e))?;
    Ok((conn, tables))
}

fn is_cantopen(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen)
}

/// Whether `path` starts with SQLite's magic header.
pub(crate) fn is_sqlite(path: &Path) -> bool {
    let mut magic = [0u8; 16];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"SQLite format 3\0"
}
