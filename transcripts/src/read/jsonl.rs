//! pi-format JSONL transcripts: a `{"type":"session","version":…}` header line, then one record
//! per line. Older OpenClaw releases wrote them to `agents/<agentId>/sessions/<sessionId>.jsonl`
//! (with a `sessions.json` beside them mapping session keys to session ids).
//!
//! Read as a stream, twice (tree facts, then the records on the branch), one line in memory at a
//! time. A line that is not JSON is an error naming the line; the others are still read, as
//! OpenClaw's own reader skips such rows (`invalid-session-json`).

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use super::lines::{for_each_line, open, LineEnd, MAX_LINE_BYTES};
use super::session_read::ReadBuilder;
use super::tree::TreeScan;
use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::Mapper;
use crate::record::{Member, Nav};
use crate::session::SessionInfo;

/// What the first record says about the file.
#[derive(Debug, Default)]
pub(super) struct Header {
    /// The header's `id` (the session id).
    pub session_id: Option<String>,
    /// Whether the first record is a session header at all.
    pub is_header: bool,
}

/// A transcript file name: `*.jsonl`, or a `*.jsonl.*.zst` archive.
pub(super) fn is_transcript_name(name: &str) -> bool {
    name.ends_with(".jsonl") || (name.ends_with(".zst") && name.contains(".jsonl.") && !name.ends_with(".jsonl.zst"))
}

/// Reads the first record of a JSONL file.
pub(super) fn probe(path: &Path) -> Result<Header, Error> {
    let mut header = Header::default();
    let mut parse_error = None;
    for_each_line(open(path)?, |number, line, end| {
        if end == LineEnd::TooLong {
            parse_error = Some(Error::new(ErrorKind::LineTooLong(MAX_LINE_BYTES), path).at(Location::Line(number)));
            return false;
        }
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

/// How the lines of a stream hold records.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lines {
    /// One pi record per line (a `.jsonl` transcript); located by line number.
    Records,
    /// A cold archive (`sessions/cold/<sha256>.jsonl.zst`, decompressed): envelope lines
    /// `{"kind":"event","row":{"seq":…,"event_json":"<record>"}}` among header and index lines;
    /// located by the row's `seq`.
    ColdEnvelopes,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    kind: Member<'a>,
    #[serde(borrow, default)]
    row: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct ColdRow<'a> {
    seq: i64,
    #[serde(borrow)]
    event_json: std::borrow::Cow<'a, str>,
}

/// One line's record text and location, or `None` for a line that holds no record.
fn record_of<'a>(
    kind: Lines,
    number: u64,
    line: &'a [u8],
) -> Result<Option<(std::borrow::Cow<'a, str>, Location)>, serde_json::Error> {
    match kind {
        Lines::Records => {
            let text = std::str::from_utf8(line)
                .map_err(|e| <serde_json::Error as serde::de::Error>::custom(format!("not UTF-8: {e}")))?;
            Ok(Some((std::borrow::Cow::Borrowed(text), Location::Line(number))))
        }
        Lines::ColdEnvelopes => {
            let env: Envelope<'a> = serde_json::from_slice(line)?;
            match (env.kind.as_str(), env.row) {
                (Some("event"), Some(row)) => {
                    let row: ColdRow<'a> = serde_json::from_str(row.get())?;
                    Ok(Some((row.event_json, Location::Row(row.seq))))
                }
                _ => Ok(None),
            }
        }
    }
}

/// Streams one JSONL transcript's active branch to `sink`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let path = info.file.clone();
    let open = || open(&path);
    read_stream(info, &open, Lines::Records, sink, out);
}

/// Streams the active branch of a session whose records are lines of the streams `open` gives
/// (called twice: one pass for the tree, one for the records on the branch).
pub(super) fn read_stream<'s>(
    info: &Arc<SessionInfo>,
    open: &dyn Fn() -> Result<Box<dyn BufRead + 's>, Error>,
    kind: Lines,
    sink: &mut dyn FnMut(ImportedEvent),
    out: &mut ReadBuilder,
) {
    let path = info.file.as_path();
    let err = |kind: ErrorKind, at: Location| Error::new(kind, path).in_session(&info.session_id).at(at);
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e), path).in_session(&info.session_id);
    // Pass 1: tree facts, and the header's version.
    let mut scan = TreeScan::default();
    let mut lines: Vec<u64> = Vec::new();
    let mut interesting: Vec<bool> = Vec::new();
    let mut bad = 0u64;
    let mut version: Option<f64> = None;
    let mut saw_header = false;
    let reader = match open() {
        Ok(r) => r,
        Err(e) => return out.push(e.in_session(&info.session_id)),
    };
    let pass1 = for_each_line(reader, |number, line, end| {
        let mut fail = |e: ErrorKind| {
            lines.push(number);
            interesting.push(false);
            scan.push(None);
            bad += 1;
            out.push(err(e, Location::Line(number)));
        };
        let fail_json = |e| if end == LineEnd::Eof { ErrorKind::TruncatedLine(e) } else { ErrorKind::Json(e) };
        if end == LineEnd::TooLong {
            fail(ErrorKind::LineTooLong(MAX_LINE_BYTES));
            return true;
        }
        let text = match record_of(kind, number, line) {
            Ok(Some((text, _))) => text,
            Ok(None) => return true,
            Err(e) => {
                fail(fail_json(e));
                return true;
            }
        };
        match serde_json::from_str::<Nav<'_>>(&text) {
            Ok(nav) => {
                lines.push(number);
                if !saw_header && nav.ty.as_str() == Some("session") {
                    saw_header = true;
                    version = nav.version.as_ref().and_then(serde_json::Number::as_f64);
                }
                interesting.push(matches!(nav.ty.as_str(), Some("message" | "compaction")));
                scan.push(Some(&nav));
            }
            Err(e) => fail(fail_json(e)),
        }
        true
    });
    if let Err(e) = pass1 {
        return out.push(io(e));
    }
    let legacy = kind == Lines::Records && version.unwrap_or(1.0) < 2.0;
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
    let reader = match open() {
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
        let result = match record_of(kind, number, line) {
            Ok(Some((text, at))) => mapper.record(&text, at, sink),
            Ok(None) => Ok(()),
            Err(e) => Err(err(ErrorKind::Json(e), Location::Line(number))),
        };
        if let Err(e) = result {
            out.push(e);
        }
        true
    });
    if let Err(e) = pass2 {
        out.push(io(e));
    }
    out.stats = mapper.finish();
}
