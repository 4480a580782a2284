//! Trajectory exports (`openclaw sessions export-trajectory`): a directory with `manifest.json`,
//! `events.jsonl` and `session-branch.json`.
//!
//! Both files hold the active branch, already resolved by OpenClaw's `readSessionBranch` (the
//! same scan as [`super::tree`]), paths redacted to `$WORKSPACE_DIR`:
//!
//! - `events.jsonl` (read when present): runtime events mixed with one transcript event per
//!   record (`source:"transcript"`, `entryId`/`parentEntryId`, `data.message` for messages,
//!   `type` `user.message`/`assistant.message`/`tool.result`/`session.compaction`/…, plus a
//!   derived `tool.call` per call, skipped here), sorted by timestamp, so they are put back in
//!   transcript order by `sourceSeq`: a first pass keeps (sourceSeq, offset) per transcript line,
//!   the second reads the lines in that order. Its compaction events lose `__openclaw.runId`:
//!   they get the run of the message before them (a compaction happens inside the run that
//!   overflowed, and that run is retried), which is what the fixture made by the real gateway
//!   shows.
//! - `session-branch.json` (`{header, leafId, entries}`, the raw records): read only when
//!   there is no `events.jsonl`. The real 2026.9.6 export **truncates** its `entries` array (the
//!   support-bundle sanitizer replaces the elements after the first dozen or so with the string
//!   `"[Truncated]"`), so such elements are errors that name the entry.

use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::lines::{read_line, LineEnd, MAX_LINE_BYTES};
use super::session_read::ReadBuilder;
use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::Mapper;
use crate::record::{non_blank_value, Entry, Member, Message, Nav, OpenClawMeta};
use crate::session::SessionInfo;

/// The branch file of an export directory.
pub(super) const BRANCH_FILE: &str = "session-branch.json";

/// What `manifest.json` and the branch header say about the session.
#[derive(Debug, Default)]
pub(super) struct Identity {
    pub session_id: Option<String>,
    pub session_key: Option<String>,
}

/// Reads `manifest.json` (small) and, if it lacks the session id, the branch header.
pub(super) fn identity(dir: &Path) -> Result<Identity, Error> {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Manifest {
        #[serde(rename = "sessionId")]
        session_id: serde_json::Value,
        #[serde(rename = "sessionKey")]
        session_key: serde_json::Value,
    }
    let mut id = Identity::default();
    if let Ok(file) = File::open(dir.join("manifest.json")) {
        let manifest: Manifest = serde_json::from_reader(without_bom(file))
            .map_err(|e| Error::new(ErrorKind::Json(e), dir.join("manifest.json")))?;
        id.session_id = non_blank_value(&manifest.session_id).map(str::to_string);
        id.session_key = non_blank_value(&manifest.session_key).map(str::to_string);
    }
    if id.session_id.is_none() {
        let path = dir.join(BRANCH_FILE);
        let file = File::open(&path).map_err(|e| Error::new(ErrorKind::Io(e), &path))?;
        let mut de = serde_json::Deserializer::from_reader(without_bom(file));
        let mut header = None;
        Branch { on_entry: None, header: &mut header }
            .deserialize(&mut de)
            .map_err(|e| Error::new(ErrorKind::Json(e), &path))?;
        id.session_id = header;
    }
    Ok(id)
}

type OnEntry<'a> = &'a mut dyn FnMut(u64, &RawValue);

/// Visits `{header, leafId, entries}`, handing each entry to `on_entry` as it is parsed.
struct Branch<'a, 'b> {
    on_entry: Option<OnEntry<'a>>,
    header: &'b mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Branch<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Branch<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session-branch.json object {header, leafId, entries}")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "header" => {
                    let nav: Option<Nav> = map.next_value()?;
                    *self.header = nav.and_then(|n| n.id.non_blank().map(str::to_string));
                }
                "entries" => match self.on_entry.take() {
                    Some(f) => map.next_value_seed(Entries(f))?,
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct Entries<'a>(OnEntry<'a>);

impl<'de> DeserializeSeed<'de> for Entries<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of session entries")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0u64;
        while let Some(entry) = seq.next_element::<Box<RawValue>>()? {
            n += 1;
            (self.0)(n, &entry);
        }
        Ok(())
    }
}

/// The events file of an export directory.
pub(super) const EVENTS_FILE: &str = "events.jsonl";

#[derive(Deserialize)]
struct LineHead<'a> {
    #[serde(borrow, default)]
    source: Member<'a>,
    #[serde(rename = "type", borrow, default)]
    ty: Member<'a>,
    #[serde(rename = "sourceSeq", default)]
    source_seq: Option<i64>,
}

#[derive(Deserialize)]
struct TranscriptLine<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Member<'a>,
    #[serde(borrow, default)]
    ts: Member<'a>,
    #[serde(borrow, default)]
    data: Option<LineData<'a>>,
}

#[derive(Deserialize)]
struct LineData<'a> {
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

/// Streams an export's session to `sink`: from its `events.jsonl` when discovery found one,
/// else from its `session-branch.json`.
pub(super) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    if info.file.ends_with(EVENTS_FILE) {
        read_events(info, sink, out)
    } else {
        read_branch(info, sink, out)
    }
}

/// Streams an export's `events.jsonl` transcript events to `sink`, in transcript order.
fn read_events(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    use std::io::{Read, Seek, SeekFrom};
    let path = info.file.as_path();
    let err = |kind: ErrorKind, n: u64| Error::new(kind, path).in_session(&info.session_id).at(Location::Line(n));
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e), path).in_session(&info.session_id);
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return out.push(io(e)),
    };
    // Pass 1: where each transcript line is, by sourceSeq.
    let mut index: Vec<(i64, u64, u64, u64)> = Vec::new();
    {
        let mut reader = BufReader::with_capacity(1 << 16, &mut file);
        let (mut offset, mut number, mut buf) = (0u64, 0u64, Vec::new());
        loop {
            let (n, end) = match read_line(&mut reader, &mut buf) {
                Ok(read) => read,
                Err(e) => return out.push(io(e)),
            };
            if n == 0 {
                break;
            }
            number += 1;
            // The BOM's bytes are not the line's: pass 2 reads the line from after them.
            let bom = if number == 1 && buf.starts_with(crate::BOM) { crate::BOM.len() } else { 0 };
            let line = buf[bom..].strip_suffix(b"\n").unwrap_or(&buf[bom..]);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if end == LineEnd::TooLong {
                out.push(err(ErrorKind::LineTooLong(MAX_LINE_BYTES), number));
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<LineHead<'_>>(line) {
                    Ok(h) if h.source.as_str() == Some("transcript") && h.ty.as_str() != Some("tool.call") => {
                        let at = offset + bom as u64;
                        index.push((h.source_seq.unwrap_or(i64::MAX), number, at, line.len() as u64));
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let kind = if end == LineEnd::Eof { ErrorKind::TruncatedLine(e) } else { ErrorKind::Json(e) };
                        out.push(err(kind, number));
                    }
                }
            }
            offset += n;
        }
    }
    index.sort_by_key(|&(seq, number, _, _)| (seq, number));
    // Pass 2: the transcript lines in order, rebuilt as pi records.
    let mut mapper = Mapper::new(info.clone());
    let mut last_run: Option<String> = None;
    let mut buf = Vec::new();
    for (_, number, offset, len) in index {
        buf.resize(len as usize, 0);
        if let Err(e) = file.seek(SeekFrom::Start(offset)).and_then(|_| file.read_exact(&mut buf)) {
            out.push(io(e));
            break;
        }
        mapper.stats.records += 1;
        let line: TranscriptLine<'_> = match serde_json::from_slice(&buf) {
            Ok(l) => l,
            Err(e) => {
                mapper.stats.bad_records += 1;
                out.push(err(ErrorKind::Json(e), number));
                continue;
            }
        };
        let ty = line.ty.as_str().unwrap_or("");
        let message = line.data.and_then(|d| d.message);
        let entry = if ty == "session.compaction" {
            let run = last_run.clone().map(|r| Member::Str(r.into())).unwrap_or_default();
            Entry {
                ty: Member::Str("compaction".into()),
                timestamp: line.ts,
                message: None,
                openclaw: Some(OpenClawMeta { run_id: run }),
            }
        } else if let Some(m) = message {
            if let Some(run) = m.openclaw.as_ref().and_then(|o| o.run_id.as_str()) {
                last_run = Some(run.to_string());
            }
            Entry { ty: Member::Str("message".into()), timestamp: line.ts, message: Some(m), openclaw: None }
        } else {
            continue;
        };
        if let Err(e) = mapper.entry(&entry, Location::Line(number), sink) {
            out.push(e);
        }
    }
    out.stats = mapper.finish();
}

/// Streams the export's `session-branch.json` to `sink`.
fn read_branch(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut ReadBuilder) {
    let path: PathBuf = info.file.clone();
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => return out.push(Error::new(ErrorKind::Io(e), &path).in_session(&info.session_id)),
    };
    let mut mapper = Mapper::new(info.clone());
    let mut errors = Vec::new();
    let mut header = None;
    let mut on_entry = |n: u64, raw: &RawValue| {
        mapper.stats.records += 1;
        if let Err(e) = mapper.record(raw.get(), Location::Entry(n), sink) {
            errors.push(e);
        }
    };
    let mut de = serde_json::Deserializer::from_reader(without_bom(file));
    let parsed =
        Branch { on_entry: Some(&mut on_entry), header: &mut header }.deserialize(&mut de).and_then(|()| de.end());
    for e in errors {
        out.push(e);
    }
    if let Err(e) = parsed {
        mapper.stats.bad_records += 1;
        out.push(Error::new(ErrorKind::Json(e), &path).in_session(&info.session_id));
    }
    out.stats = mapper.finish();
}

/// A whole-JSON file of the export, read past a leading byte-order mark.
fn without_bom(file: File) -> BufReader<File> {
    let mut reader = BufReader::with_capacity(1 << 16, file);
    crate::skip_bom(&mut reader);
    reader
}
