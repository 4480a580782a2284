//! OpenClaw 2026.x agent stores: `agents/<agentId>/agent/openclaw-agent.sqlite`.
//!
//! Why read-only, and why two passes: the operator runs this against the live gateway's
//! database, so it must never take a write lock or need write access (the connection is
//! `SQLITE_OPEN_READ_ONLY` with `mode=ro`, `query_only` on, both passes in one read
//! transaction so they see one snapshot while the gateway appends), and a store can be far
//! larger than memory, so a session is read as a stream twice: first only the tree facts of
//! each row (`navigation_json` for compressed rows, so they are not decompressed), to find the
//! active branch; then the rows on that branch, decoded one at a time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::Mapper;
use crate::reader::Collector;
use crate::record::Nav;
use crate::session::{agent_from_key, KeySource, SessionInfo, SourceFormat};
use crate::tree::TreeScan;

/// The largest payload OpenClaw writes compressed (`MAX_COMPRESSED_EVENT_BYTES`).
const MAX_EVENT_BYTES: usize = 4 << 20;

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

    /// Session id → key of the deleted and reset transcripts (`session_transcript_archives`).
    pub(crate) fn archived_keys(&self) -> std::collections::BTreeMap<String, String> {
        if !self.tables.contains("session_transcript_archives") {
            return Default::default();
        }
        let sql = "SELECT session_id, session_key FROM session_transcript_archives ORDER BY session_id, created_at";
        let rows = self.conn.prepare(sql).and_then(|mut s| {
            s.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        });
        rows.map(|v| v.into_iter().collect()).unwrap_or_default()
    }

    /// `(session_id, storage, archive_name)` of the cold archives.
    fn cold_archives(&self) -> Result<Vec<(String, String, String)>, Error> {
        if !self.tables.contains("session_transcript_cold_archives") {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT session_id, storage, archive_name FROM session_transcript_cold_archives ORDER BY session_id",
            )
            .map_err(|e| sqlite_err(&self.path, e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| sqlite_err(&self.path, e))?;
        Ok(rows)
    }

    /// A cold archive embedded in the store (`storage = 'sqlite'`), as a decompressing stream
    /// over the blob (read incrementally, never loaded whole).
    pub(crate) fn cold_blob(&self, session_id: &str) -> Result<Box<dyn std::io::BufRead + '_>, Error> {
        self.blob_stream(
            session_id,
            "SELECT rowid, 'zstd' FROM session_transcript_cold_archives WHERE session_id = ?1",
            "session_transcript_cold_archives",
        )
    }

    /// The newest deleted/reset archive of `session_id` in `session_transcript_archives`
    /// (`encoding` `zstd` or `identity`), as a stream of JSONL records.
    pub(crate) fn archive_blob(&self, session_id: &str) -> Result<Box<dyn std::io::BufRead + '_>, Error> {
        self.blob_stream(
            session_id,
            "SELECT rowid, encoding FROM session_transcript_archives WHERE session_id = ?1 ORDER BY created_at DESC LIMIT 1",
            "session_transcript_archives",
        )
    }

    fn blob_stream(&self, session_id: &str, sql: &str, table: &str) -> Result<Box<dyn std::io::BufRead + '_>, Error> {
        let err = |e| sqlite_err(&self.path, e).in_session(session_id);
        let (rowid, encoding): (i64, String) =
            self.conn.query_row(sql, [session_id], |r| Ok((r.get(0)?, r.get(1)?))).map_err(err)?;
        let blob = self.conn.blob_open(rusqlite::MAIN_DB, table, "archive_blob", rowid, true).map_err(err)?;
        if encoding != "zstd" {
            return Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, blob)));
        }
        let decoder = zstd::stream::read::Decoder::new(blob)
            .map_err(|e| Error::new(ErrorKind::Io(e), &self.path).in_session(session_id))?;
        Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, decoder)))
    }

    fn optional_stmt(&self, table: &str, sql: &str) -> Result<Option<rusqlite::Statement<'_>>, Error> {
        if !self.tables.contains(table) {
            return Ok(None);
        }
        self.conn.prepare(sql).map(Some).map_err(|e| sqlite_err(&self.path, e))
    }

    /// Streams one session's active branch to `sink`.
    pub(crate) fn read_session(
        &self,
        info: &Arc<SessionInfo>,
        sink: &mut dyn FnMut(ImportedEvent),
        out: &mut Collector,
    ) {
        // One read transaction: both passes see the same snapshot while the gateway appends.
        if let Err(e) = self.conn.execute_batch("BEGIN") {
            out.push(sqlite_err(&self.path, e).in_session(&info.session_id));
            return;
        }
        let result = self.read_in_snapshot(info, sink, out);
        let _ = self.conn.execute_batch("COMMIT");
        if let Err(e) = result {
            out.push(sqlite_err(&self.path, e).in_session(&info.session_id));
        }
    }

    fn read_in_snapshot(
        &self,
        info: &Arc<SessionInfo>,
        sink: &mut dyn FnMut(ImportedEvent),
        out: &mut Collector,
    ) -> rusqlite::Result<()> {
        let at = |seq: i64, kind: ErrorKind| {
            Error::new(kind, &self.path).in_session(&info.session_id).at(Location::Row(seq))
        };
        let mut decoder = Decoder::new();
        // Pass 1: tree facts.
        let mut p1 = Pass1::default();
        {
            let mut stmt = self.conn.prepare_cached(
                "SELECT seq, event_json, CASE WHEN event_json IS NULL THEN navigation_json END \
                 FROM transcript_events WHERE session_id = ?1 ORDER BY seq",
            )?;
            let mut rows = stmt.query([&info.session_id])?;
            while let Some(row) = rows.next()? {
                let seq: i64 = row.get(0)?;
                match (row.get_ref(1)?.as_str_or_null()?, row.get_ref(2)?.as_str_or_null()?) {
                    (Some(json), _) => match serde_json::from_str::<Nav<'_>>(json) {
                        Ok(nav) => p1.take(seq, Ok(nav), out),
                        Err(e) => p1.take(seq, Err(at(seq, ErrorKind::Json(e))), out),
                    },
                    (None, nav_json) => {
                        if let Some(nav) = nav_json.and_then(|n| Nav::from_navigation_json(n).ok()) {
                            p1.take(seq, Ok(nav), out);
                            continue;
                        }
                        // A compressed row without readable navigation: decode it here.
                        match self.decode_row(info, seq, &mut decoder) {
                            Ok(text) => match serde_json::from_str::<Nav<'_>>(&text) {
                                Ok(nav) => p1.take(seq, Ok(nav), out),
                                Err(e) => p1.take(seq, Err(at(seq, ErrorKind::Json(e))), out),
                            },
                            Err(e) => p1.take(seq, Err(e), out),
                        }
                    }
                }
            }
        }
        let Pass1 { scan, seqs, interesting, bad } = p1;
        let branch = scan.active_positions();
        let active: Vec<i64> = branch
            .positions
            .iter()
            .filter(|&&p| interesting.get(p as usize).copied().unwrap_or(false))
            .filter_map(|&p| seqs.get(p as usize).copied())
            .collect();
        let mut mapper = Mapper::new(info.clone());
        mapper.stats.records = seqs.len() as u64;
        mapper.stats.off_branch = branch.off_branch;
        mapper.stats.bad_records = bad.len() as u64;
        drop(seqs);
        drop(interesting);
        // Pass 2: the rows on the branch, in order.
        if let Some(&first) = active.first() {
            let mut stmt = self.conn.prepare_cached(
                "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events \
                 WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq",
            )?;
            let mut rows = stmt.query(rusqlite::params![&info.session_id, first])?;
            let mut next = 0usize;
            while let Some(row) = rows.next()? {
                let Some(&want) = active.get(next) else { break };
                let seq: i64 = row.get(0)?;
                if seq < want {
                    continue;
                }
                next += 1;
                if seq > want {
                    // The row vanished between the passes (cannot happen inside one snapshot).
                    continue;
                }
                let text: Result<&str, Error> = match row.get_ref(1)?.as_str_or_null()? {
                    Some(json) => Ok(json),
                    None => {
                        let blob = row.get_ref(2)?.as_blob_or_null()?;
                        let size: Option<i64> = row.get(3)?;
                        match blob {
                            Some(b) => decoder.decode(b, size).map_err(|m| at(seq, ErrorKind::Zstd(m))),
                            None => {
                                Err(at(seq, ErrorKind::BadRecord("both event_json and event_zstd are NULL".into())))
                            }
                        }
                    }
                };
                match text {
                    Ok(text) => {
                        if let Err(e) = mapper.record(text, Location::Row(seq), sink) {
                            out.push(e);
                        }
                    }
                    Err(e) => {
                        mapper.stats.bad_records += 1;
                        out.push(e);
                    }
                }
            }
        }
        out.stats = mapper.finish();
        Ok(())
    }

    /// Decompresses one row by seq (pass 1's fallback for a compressed row without readable
    /// `navigation_json`).
    fn decode_row(&self, info: &SessionInfo, seq: i64, decoder: &mut Decoder) -> Result<String, Error> {
        let at = |kind| Error::new(kind, &self.path).in_session(&info.session_id).at(Location::Row(seq));
        let row = self
            .conn
            .prepare_cached(
                "SELECT event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id = ?1 AND seq = ?2",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![&info.session_id, seq], |r| {
                    Ok((r.get::<_, Option<Vec<u8>>>(0)?, r.get::<_, Option<i64>>(1)?))
                })
            })
            .map_err(|e| at(ErrorKind::Sqlite(e)))?;
        match row {
            (Some(blob), size) => decoder.decode(&blob, size).map(str::to_string).map_err(|m| at(ErrorKind::Zstd(m))),
            (None, _) => Err(at(ErrorKind::BadRecord("both event_json and event_zstd are NULL".into()))),
        }
    }
}

/// What pass 1 keeps per session: the tree scan, and per record its seq and whether pass 2 must
/// decode it (only `message` and `compaction` records can produce events).
#[derive(Default)]
struct Pass1 {
    scan: TreeScan,
    seqs: Vec<i64>,
    interesting: Vec<bool>,
    bad: HashSet<i64>,
}

impl Pass1 {
    fn take(&mut self, seq: i64, nav: Result<Nav<'_>, Error>, out: &mut Collector) {
        self.seqs.push(seq);
        match nav {
            Ok(nav) => {
                self.interesting.push(matches!(nav.ty.as_str(), Some("message" | "compaction")));
                self.scan.push(Some(&nav));
            }
            Err(e) => {
                self.interesting.push(false);
                self.bad.insert(seq);
                out.push(e);
                self.scan.push(None);
            }
        }
    }
}

/// `resolveSessionColdArchivePath`: `<dir>/cold/<name>`, where `<dir>` is the sibling
/// `sessions/` of a store in a directory named `agent`, else the store's directory.
fn cold_archive_path(store: &Path, name: &str) -> PathBuf {
    let dir = store.parent().unwrap_or(Path::new("."));
    let base = if dir.file_name().is_some_and(|n| n == "agent") {
        dir.parent().unwrap_or(dir).join("sessions")
    } else {
        dir.to_path_buf()
    };
    base.join("cold").join(name)
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

/// A reusable zstd context and buffer.
struct Decoder {
    ctx: Option<zstd::bulk::Decompressor<'static>>,
    buf: Vec<u8>,
}

impl Decoder {
    fn new() -> Self {
        Decoder { ctx: zstd::bulk::Decompressor::new().ok(), buf: Vec::new() }
    }

    /// Decodes one payload; `size` is `event_utf8_bytes`, which the output must match (as
    /// OpenClaw's own decoder demands).
    fn decode(&mut self, blob: &[u8], size: Option<i64>) -> Result<&str, String> {
        let expected = match size {
            Some(n) if n >= 1 && (n as usize) <= MAX_EVENT_BYTES => Some(n as usize),
            Some(n) => return Err(format!("event_utf8_bytes is {n}, outside 1..={MAX_EVENT_BYTES}")),
            None => None,
        };
        let capacity = expected.unwrap_or(MAX_EVENT_BYTES);
        let Some(ctx) = self.ctx.as_mut() else { return Err("zstd context could not be created".into()) };
        self.buf.clear();
        self.buf.reserve(capacity);
        let n = ctx.decompress_to_buffer(blob, &mut self.buf).map_err(|e| e.to_string())?;
        if let Some(want) = expected {
            if n != want {
                return Err(format!("decompressed to {n} bytes, event_utf8_bytes says {want}"));
            }
        }
        std::str::from_utf8(&self.buf[..n]).map_err(|e| format!("not UTF-8: {e}"))
    }
}
