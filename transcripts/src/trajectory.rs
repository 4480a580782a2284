//! Trajectory exports (`openclaw sessions export-trajectory`): a directory with `manifest.json`,
//! `events.jsonl` and `session-branch.json`.
//!
//! `session-branch.json` is `{header, leafId, entries}` where `entries` is the active branch,
//! already resolved by OpenClaw's `readSessionBranch` (the same scan as [`crate::tree`]), with
//! the raw pi records (paths redacted to `$WORKSPACE_DIR`). That is what is read: `events.jsonl`
//! holds the same records re-shaped and sanitized for diagnostics, and its compaction events
//! lose `__openclaw.runId`. The document is parsed as a stream: one entry in memory at a time.

use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{Error, ErrorKind, Location};
use crate::event::ImportedEvent;
use crate::mapping::Mapper;
use crate::reader::Collector;
use crate::record::{non_blank_value, Nav};
use crate::session::SessionInfo;

/// The branch file of an export directory.
pub(crate) const BRANCH_FILE: &str = "session-branch.json";

/// What `manifest.json` and the branch header say about the session.
#[derive(Debug, Default)]
pub(crate) struct Identity {
    pub session_id: Option<String>,
    pub session_key: Option<String>,
}

/// Reads `manifest.json` (small) and, if it lacks the session id, the branch header.
pub(crate) fn identity(dir: &Path) -> Result<Identity, Error> {
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
        let manifest: Manifest = serde_json::from_reader(BufReader::new(file))
            .map_err(|e| Error::new(ErrorKind::Json(e), dir.join("manifest.json")))?;
        id.session_id = non_blank_value(&manifest.session_id).map(str::to_string);
        id.session_key = non_blank_value(&manifest.session_key).map(str::to_string);
    }
    if id.session_id.is_none() {
        let path = dir.join(BRANCH_FILE);
        let file = File::open(&path).map_err(|e| Error::new(ErrorKind::Io(e), &path))?;
        let mut de = serde_json::Deserializer::from_reader(BufReader::new(file));
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

/// Streams the export's branch to `sink`.
pub(crate) fn read_session(info: &Arc<SessionInfo>, sink: &mut dyn FnMut(ImportedEvent), out: &mut Collector) {
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
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, file));
    let parsed = Branch { on_entry: Some(&mut on_entry), header: &mut header }.deserialize(&mut de).and_then(|()| de.end());
    for e in errors {
        out.push(e);
    }
    if let Err(e) = parsed {
        mapper.stats.bad_records += 1;
        out.push(Error::new(ErrorKind::Json(e), &path).in_session(&info.session_id));
    }
    out.stats = mapper.stats;
}
