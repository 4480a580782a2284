//! Streaming one session out of the store, in two passes inside one read transaction.
//!
//! Separate from opening and listing because this is the memory-bound part: pass 1 keeps only
//! the tree facts of each row (`navigation_json` for compressed rows, so they are not
//! decompressed) to find the active branch; pass 2 decodes only the rows on that branch, one at
//! a time. Both passes see one snapshot while the gateway appends.

use std::collections::HashSet;
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::Mapper;
use crate::record::Nav;
use crate::session::SessionInfo;

use super::decode::Decoder;
use super::store::{sqlite_err, Store};
use crate::read::session_read::ReadBuilder;
use crate::read::tree::TreeScan;

impl Store {
    /// Streams one session's active branch to `sink`.
    pub(crate) fn read_session(
        &self,
        info: &Arc<SessionInfo>,
        sink: &mut dyn FnMut(ImportedEvent),
        out: &mut ReadBuilder,
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
        out: &mut ReadBuilder,
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
    fn take(&mut self, seq: i64, nav: Result<Nav<'_>, Error>, out: &mut ReadBuilder) {
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
