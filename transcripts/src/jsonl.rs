//! pi-format JSONL transcripts: a `{"type":"session","version":…}` header line, then one record
//! per line. Older OpenClaw releases wrote them to `agents/<agentId>/sessions/<sessionId>.jsonl`
//! (with a `sessions.json` beside them mapping session keys to session ids).
//!
//! Read as a stream, twice (tree facts, then the records on the branch), one line in memory at a
//! time. A line that is not JSON is an error naming the line; the others are still read, as
//! OpenClaw's own reader skips such rows (`invalid-session-json`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::Mapper;
use crate::reader::Collector;
use crate::record::{non_blank_value, Nav};
use crate::session::SessionInfo;
use crate::tree::TreeScan;

/// What the first record says about the file.
#[derive(Debug, Default)]
pub(crate) struct Header {
    /// The header's `id` (the session id).
    pub session_id: Option<String>,
    /// Whether the first record is a session header at all.
    pub is_header: bool,
}

/// Reads lines from `r`, calling `f(line_number, bytes, is_last_without_newline)` for each
/// non-blank line (trailing `\r` removed).
fn for_each_line<R: BufRead>(mut r: R, mut f: impl FnMut(u64, &[u8], bool) -> bool) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let unterminated = buf.last() != Some(&b'\n');
        let mut line = buf.as_slice();
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        if let Some(rest) = line.strip_suffix(b"\r") {
            line = rest;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !f(number, line, unterminated) {
            return Ok(());
        }
    }
}

fn open(path: &Path) -> Result<BufReader<File>, Error> {
    File::open(path).map(|f| BufReader::with_capacity(1 << 16, f)).map_err(|e| Error::new(ErrorKind::Io(e), path))
}

/// Reads the first record of a JSONL file.
pub(crate) fn probe(path: &Path) -> Result<Header, Error> {
    let mut header = Header::default();
    let mut parse_error = None;
    for_each_line(open(path)?, |number, line, _| {
        match serde_json::from_slice::<Nav>(line) {
            Ok(nav) if nav.ty.as_str() == Some("session") => {
                header.is_header = true;
                header.session_id = nav.id.non_blank().map(str::to_string);
            }
            Ok(_) => {}
            Err(e) => parse_error = Some(Error::new(ErrorKind::Json(e), path).at(Location::Line(number))),
        }
        false
    })
    .map_err(|e| Error::new(ErrorKind::Io(e), path))?;
    match parse_error {
        Some(e) => Err(e),
        None => Ok(header),
    }
}

/// A legacy `sessions.json` (session key → entry with `sessionId`), as a map session id → key.
pub(crate) fn legacy_keys(dir: &Path) -> HashMap<String, String> {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(rename = "sessionId", default)]
        session_id: serde_json::Value,
    }
    let Ok(file) = File::open(dir.join("sessions.json")) else { return HashMap::new() };
    let Ok(map) = serde_json::from_reader::<_, HashMap<String, serde_json::Value>>(BufReader::new(file)) else {
        return HashMap::new();
    };
    let mut out = HashMap::new();
    for (key, value) in map {
        if let Ok(entry) = serde_json::from_value::<Entry>(value) {
            if let Some(id) = non_blank_value(&entry.session_id) {
                out.entry(id.to_string()).or_insert(key);
            }
        }
    }
    out
}

/// Streams one JSONL transcript's active branch to `sink`.
pub(crate) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut Collector) {
    let path = info.file.as_path();
    let at = |n: u64, kind: ErrorKind| Error::new(kind, path).in_session(&info.session_id).at(Location::Line(n));
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e), path).in_session(&info.session_id);
    // Pass 1: tree facts, and the header's version.
    let mut scan = TreeScan::default();
    let mut lines: Vec<u64> = Vec::new();
    let mut interesting: Vec<bool> = Vec::new();
    let mut bad = 0u64;
    let mut version: Option<f64> = None;
    let mut saw_header = false;
    let reader = match open(path) {
        Ok(r) => r,
        Err(e) => return out.push(e.in_session(&info.session_id)),
    };
    let pass1 = for_each_line(reader, |number, line, unterminated| {
        lines.push(number);
        match serde_json::from_slice::<Nav>(line) {
            Ok(nav) => {
                if !saw_header && nav.ty.as_str() == Some("session") {
                    saw_header = true;
                    version = nav.version.as_ref().and_then(serde_json::Number::as_f64);
                }
                interesting.push(matches!(nav.ty.as_str(), Some("message" | "compaction")));
                scan.push(Some(&nav));
            }
            Err(e) => {
                bad += 1;
                interesting.push(false);
                scan.push(None);
                out.push(at(number, if unterminated { ErrorKind::TruncatedLine(e) } else { ErrorKind::Json(e) }));
            }
        }
        true
    });
    if let Err(e) = pass1 {
        return out.push(io(e));
    }
    let legacy = version.unwrap_or(1.0) < 2.0;
    let branch = if legacy { scan.legacy_positions() } else { scan.active_positions() };
    let active: Vec<u64> = branch
        .positions
        .iter()
        .filter(|&&p| interesting.get(p as usize).copied().unwrap_or(false))
        .filter_map(|&p| lines.get(p as usize).copied())
        .collect();
    let mut mapper = Mapper::new(info.clone());
    mapper.stats.records = lines.len() as u64;
    mapper.stats.off_branch = branch.off_branch;
    mapper.stats.bad_records = bad;
    drop(lines);
    drop(interesting);
    // Pass 2: the records on the branch.
    let reader = match open(path) {
        Ok(r) => r,
        Err(e) => return out.push(e.in_session(&info.session_id)),
    };
    let mut next = 0usize;
    let pass2 = for_each_line(reader, |number, line, _| {
        let Some(&want) = active.get(next) else { return false };
        if number < want {
            return true;
        }
        next += 1;
        let result = std::str::from_utf8(line)
            .map_err(|e| at(number, ErrorKind::BadRecord(format!("not UTF-8: {e}"))))
            .and_then(|text| mapper.record(text, Location::Line(number), sink));
        if let Err(e) = result {
            out.push(e);
        }
        true
    });
    if let Err(e) = pass2 {
        out.push(io(e));
    }
    out.stats = mapper.stats;
}
