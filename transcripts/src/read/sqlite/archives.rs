//! The store's archive tables: `session_transcript_archives` (deleted and reset transcripts) and
//! `session_transcript_cold_archives` (sessions moved out of `transcript_events`).
//!
//! Separate from the session listing because archives are read differently from live rows: as
//! one blob each, streamed and decompressed incrementally (never loaded whole), or as a file
//! beside the store.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

use super::store::{sqlite_err, Store};

impl Store {
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
    pub(super) fn cold_archives(&self) -> Result<Vec<(String, String, String)>, Error> {
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
}

/// `resolveSessionColdArchivePath`: `<dir>/cold/<name>`, where `<dir>` is the sibling
/// `sessions/` of a store in a directory named `agent`, else the store's directory.
pub(super) fn cold_archive_path(store: &Path, name: &str) -> PathBuf {
    let dir = store.parent().unwrap_or(Path::new("."));
    let base = if dir.file_name().is_some_and(|n| n == "agent") {
        dir.parent().unwrap_or(dir).join("sessions")
    } else {
        dir.to_path_buf()
    };
    base.join("cold").join(name)
}
