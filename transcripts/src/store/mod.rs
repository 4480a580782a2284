//! OpenClaw 2026.x agent stores: `agents/<agentId>/agent/openclaw-agent.sqlite`.
//!
//! Why read-only, and why two passes: the operator runs this against the live gateway's
//! database, so it must never take a write lock or need write access (the connection is
//! `SQLITE_OPEN_READ_ONLY` with `mode=ro`, `query_only` on, both passes in one read
//! transaction so they see one snapshot while the gateway appends), and a store can be far
//! larger than memory, so a session is read as a stream twice: first only the tree facts of
//! each row (`navigation_json` for compressed rows, so they are not decompressed), to find the
//! active branch; then the rows on that branch, decoded one at a time.
//!
//! This file opens the store and lists its sessions; [`archives`] reads the archive tables,
//! [`read`] streams a session in the two passes, and [`decode`] decompresses one row.

mod archives;
mod decode;
mod read;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::error::{Error, ErrorKind};
use crate::session::{agent_from_key, KeySource, SessionInfo, SourceFormat};

use archives::cold_archive_path;

fn sqlite_err(path: &Path, e: rusqlite::Error) -> Error {
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

/// A cold archive the store lists but whose file is gone: (session id, reason).
pub(crate) type MissingArchive = (String, String);

/// An open agent store.
pub(crate) struct Store {
    pub path: PathBuf,
    conn: Connection,
    tables: HashSet<String>,
}

impl Store {
    /// Opens `path` read-only. A WAL database whose `-shm` file does not exist in a directory we
    /// cannot write cannot be opened with `mode=ro` (SQLite must create the shared-memory file);
    /// no gateway can be writing such a database, so it is then opened `immutable=1`.
    pub(crate) fn open(path: &Path) -> Result<Store, Error> {
        if let Err(e) = std::fs::metadata(path) {
            return Err(Error::new(ErrorKind::Io(e), path));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let first = Connection::open_with_flags(file_uri(path, "mode=ro"), flags)
            .and_then(|c| Self::tables(&c).map(|t| (c, t)));
        let (conn, tables) = match first {
            Ok(ok) => ok,
            Err(e) if is_cantopen(&e) => Connection::open_with_flags(file_uri(path, "mode=ro&immutable=1"), flags)
                .and_then(|c| Self::tables(&c).map(|t| (c, t)))
                .map_err(|e| sqlite_err(path, e))?,
            Err(e) => return Err(sqlite_err(path, e)),
        };
        conn.execute_batch("PRAGMA query_only = 1;").map_err(|e| sqlite_err(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| sqlite_err(path, e))?;
        if !tables.contains("transcript_events") {
            return Err(Error::new(ErrorKind::MissingTable("transcript_events"), path));
        }
        Ok(Store { path: path.to_path_buf(), conn, tables })
    }

    fn tables(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
        names.collect()
    }

    /// The agent id: `schema_meta.agent_id`, else `<agentId>` of `agents/<agentId>/agent/…`.
    fn agent_id(&self) -> Option<String> {
        if self.tables.contains("schema_meta") {
            let meta = self
                .conn
                .query_row(
                    "SELECT agent_id FROM schema_meta WHERE agent_id IS NOT NULL AND agent_id != '' LIMIT 1",
                    [],
                    |r| r.get::<_, String>(0),
                )
                .optional();
            if let Ok(Some(id)) = meta {
                return Some(id);
            }
        }
        agent_from_store_path(&self.path)
    }

    /// The sessions in the store, with their keys: those with rows in `transcript_events`, then
    /// those only in a cold archive; and the cold archives that are missing (with the reason).
    pub(crate) fn sessions(&self) -> Result<(Vec<SessionInfo>, Vec<MissingArchive>), Error> {
        let err = |e| sqlite_err(&self.path, e);
        let agent = self.agent_id();
        // A skip scan over the primary key: one index seek per session, not a pass over all rows.
        let mut next = self
            .conn
            .prepare("SELECT session_id FROM transcript_events WHERE session_id > ?1 ORDER BY session_id LIMIT 1")
            .map_err(err)?;
        let mut windows =
            self.optional_stmt("session_windows", "SELECT session_key FROM session_windows WHERE session_id = ?1")?;
        let mut nodes = self.optional_stmt(
            "session_nodes",
            "SELECT session_key FROM session_nodes WHERE current_session_id = ?1 ORDER BY updated_at DESC LIMIT 1",
        )?;
        let mut info = |id: String, file: PathBuf, format: SourceFormat| -> Result<SessionInfo, Error> {
            let lookup = |stmt: &mut Option<rusqlite::Statement<'_>>| -> Result<Option<String>, Error> {
                match stmt {
                    Some(s) => s.query_row([&id], |r| r.get::<_, String>(0)).optional().map_err(err),
                    None => Ok(None),
                }
            };
            let (key, source) = if let Some(k) = lookup(&mut windows)? {
                (k, KeySource::SessionWindows)
            } else if let Some(k) = lookup(&mut nodes)? {
                (k, KeySource::SessionNodes)
            } else {
                (id.clone(), KeySource::SessionId)
            };
            let agent_id = agent.clone().or_else(|| agent_from_key(&key));
            Ok(SessionInfo { file, format, agent_id, session_key: key, key_source: source, session_id: id })
        };
        let mut out = Vec::new();
        let mut last = String::new();
        while let Some(id) = next.query_row([&last], |r| r.get::<_, String>(0)).optional().map_err(err)? {
            out.push(info(id.clone(), self.path.clone(), SourceFormat::AgentStore)?);
            last = id;
        }
        let mut missing = Vec::new();
        let hot: HashSet<String> = out.iter().map(|s| s.session_id.clone()).collect();
        for (id, storage, name) in self.cold_archives()? {
            if hot.contains(&id) {
                continue;
            }
            let file = if storage == "sqlite" { self.path.clone() } else { cold_archive_path(&self.path, &name) };
            if storage != "sqlite" && !file.is_file() {
                missing.push((id, format!("cold archive {} is missing", file.display())));
                continue;
            }
            out.push(info(id, file, SourceFormat::ColdArchive)?);
        }
        let listed: HashSet<String> = out.iter().map(|s| s.session_id.clone()).collect();
        for (id, key) in self.archived_keys() {
            if listed.contains(&id) {
                continue;
            }
            let mut s = info(id, self.path.clone(), SourceFormat::StoreArchive)?;
            if s.key_source == KeySource::SessionId {
                s.agent_id = s.agent_id.or_else(|| agent_from_key(&key));
                s.session_key = key;
                s.key_source = KeySource::TranscriptArchives;
            }
            out.push(s);
        }
        Ok((out, missing))
    }

    fn optional_stmt(&self, table: &str, sql: &str) -> Result<Option<rusqlite::Statement<'_>>, Error> {
        if !self.tables.contains(table) {
            return Ok(None);
        }
        self.conn.prepare(sql).map(Some).map_err(|e| sqlite_err(&self.path, e))
    }
}

fn is_cantopen(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen)
}

/// `<agentId>` of `…/agents/<agentId>/agent/<file>`.
pub(crate) fn agent_from_store_path(path: &Path) -> Option<String> {
    let agent_dir = path.parent()?;
    let id_dir = agent_dir.parent()?;
    let agents_dir = id_dir.parent()?;
    (agent_dir.file_name()? == "agent" && agents_dir.file_name()? == "agents")
        .then(|| id_dir.file_name()?.to_str().map(str::to_string))
        .flatten()
}
