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
use crate::record::{non_blank_value, Member, Nav};
use crate::session::{KeySource, SessionInfo};
use crate::tree::TreeScan;

/// What the first record says about the file.
#[derive(Debug, Default)]
pub(crate) struct Header {
    /// The header's `id` (the session id).
    pub session_id: Option<String>,
    /// Whether the first record is a session header at all.
    pub is_header: bool,
}

/// The longest line read, in bytes. Why a cap: a line is held whole while it is parsed, so one
/// runaway line (a whole log as a tool result, a file that is not JSON Lines) would otherwise
/// take its size in memory. 16 times the largest event OpenClaw compresses in its store (4 MiB,
/// `store/decode.rs`).
pub(crate) const MAX_LINE_BYTES: usize = 64 << 20;

/// How a line read by [`read_line`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnd {
    /// At a `\n`.
    Newline,
    /// At the end of the file, without a `\n` (an interrupted write, if it is not JSON).
    Eof,
    /// Longer than [`MAX_LINE_BYTES`]: skipped to its end, `buf` left empty.
    TooLong,
}

/// Reads the next line into `buf` (cleared first): the bytes it took in the file (0 at the end)
/// and how it ended.
pub(crate) fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<(u64, LineEnd)> {
    buf.clear();
    let n = std::io::Read::take(&mut *r, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', buf)?;
    if buf.last() == Some(&b'\n') || n == 0 {
        return Ok((n as u64, LineEnd::Newline));
    }
    if n <= MAX_LINE_BYTES {
        return Ok((n as u64, LineEnd::Eof));
    }
    buf.clear();
    let skipped = n as u64 + r.skip_until(b'\n')? as u64;
    Ok((skipped, LineEnd::TooLong))
}

/// Reads lines from `r`, calling `f(line_number, bytes, end)` for each non-blank line (trailing
/// `\r` removed; a line over [`MAX_LINE_BYTES`] comes empty, with [`LineEnd::TooLong`]).
fn for_each_line<R: BufRead>(mut r: R, mut f: impl FnMut(u64, &[u8], LineEnd) -> bool) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        let (n, end) = read_line(&mut r, &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        if end == LineEnd::TooLong {
            if !f(number, &[], end) {
                return Ok(());
            }
            continue;
        }
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
        if !f(number, line, end) {
            return Ok(());
        }
    }
}

/// Whether `path` is a zstd-compressed transcript: the archives OpenClaw writes when a session
/// is deleted or reset (`<sessionId>.jsonl.deleted.<ts>.<hash>.zst`, `….jsonl.reset.….zst`).
pub(crate) fn is_compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// A transcript file name: `*.jsonl`, or a `*.jsonl.*.zst` archive.
pub(crate) fn is_transcript_name(name: &str) -> bool {
    name.ends_with(".jsonl") || (name.ends_with(".zst") && name.contains(".jsonl.") && !name.ends_with(".jsonl.zst"))
}

fn open(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    let io = |e| Error::new(ErrorKind::Io(e), path);
    let file = File::open(path).map_err(io)?;
    if is_compressed(path) {
        let decoder = zstd::stream::read::Decoder::new(file).map_err(io)?;
        return Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)));
    }
    Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
}

/// Reads the first record of a JSONL file.
pub(crate) fn probe(path: &Path) -> Result<Header, Error> {
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

/// Session id → key for the transcript files of `dir`: from the agent store beside it
/// (`../agent/openclaw-agent.sqlite`, table `session_transcript_archives`, which keeps the key
/// of every deleted or reset transcript), then from a legacy `sessions.json`.
pub(crate) fn known_keys(dir: &Path) -> HashMap<String, (String, KeySource)> {
    let mut keys: HashMap<String, (String, KeySource)> =
        legacy_keys(dir).into_iter().map(|(id, key)| (id, (key, KeySource::SessionsJson))).collect();
    let store = dir.parent().map(|p| p.join("agent").join("openclaw-agent.sqlite"));
    if let Some(store) = store.filter(|p| p.is_file()) {
        if let Ok(store) = crate::store::Store::open(&store) {
            keys.extend(store.archived_keys().into_iter().map(|(id, key)| (id, (key, KeySource::TranscriptArchives))));
        }
    }
    keys
}

/// A legacy `sessions.json` (session key → entry with `sessionId`), as a map session id → key.
fn legacy_keys(dir: &Path) -> HashMap<String, String> {
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

/// How the lines of a stream hold records.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lines {
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
pub(crate) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut Collector) {
    let path = info.file.clone();
    let open = || open(&path);
    read_stream(info, &open, Lines::Records, sink, out);
}

/// Streams the active branch of a session whose records are lines of the streams `open` gives
/// (called twice: one pass for the tree, one for the records on the branch).
pub(crate) fn read_stream<'s>(
    info: &Arc<SessionInfo>,
    open: &dyn Fn() -> Result<Box<dyn BufRead + 's>, Error>,
    kind: Lines,
    sink: &mut dyn FnMut(ImportedEvent),
    out: &mut Collector,
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
