//! Where a session's guard state lives between hook processes.
//!
//! Why a folder of files and a lock: each hook call is its own process, and every CLI runs the
//! hooks of parallel tool calls at the same time, so two processes may read, decide and write
//! the same session at once. One lock for the whole folder (`state.lock`, held with the
//! standard library's `File::lock`, an `flock` on Linux: released by the kernel when the
//! process dies, so a killed hook never leaves it held) makes each hook's read-decide-write one
//! step: no count is lost. A session is written to a temporary file and renamed over the old
//! one, so a reader never sees half a file. A lock per session would let sessions run side by
//! side, but eviction deletes other sessions' files, which is only safe under one lock.
//!
//! Bounded: a session file expires after [`Bounds::expire`] without use, and when a new session
//! is written the folder is cut to [`Bounds::max_sessions`] files and [`Bounds::max_bytes`]
//! bytes, least recently used first.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

/// The first line of every state file.
const MAGIC: &str = "loopguard-hook-state 1";
/// Warnings waiting for their call's outcome, per session (the oldest goes first).
const MAX_NOTES: usize = 32;

/// How big the state folder may grow.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Session files kept at most.
    pub max_sessions: usize,
    /// Bytes of session files kept at most.
    pub max_bytes: u64,
    /// A session unused this long is deleted.
    pub expire: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { max_sessions: 1000, max_bytes: 64 << 20, expire: Duration::from_secs(7 * 24 * 3600) }
    }
}

/// One session's state: the policy's snapshot and what the hook protocol needs between calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    /// The policy's `export-state` snapshot (empty: a new session).
    pub snapshot: Vec<u8>,
    /// Set once the session must end: every later call gets this text.
    pub stop: Option<String>,
    /// Warnings to hand to the model with the outcome of their call: (call key, text).
    pub notes: Vec<(String, String)>,
}

impl Session {
    /// Queues a warning for the call with this key.
    pub fn push_note(&mut self, key: String, text: String) {
        self.notes.retain(|(k, _)| *k != key);
        if self.notes.len() >= MAX_NOTES {
            self.notes.remove(0);
        }
        self.notes.push((key, text));
    }

    /// Takes the warning queued for this call, if any.
    pub fn take_note(&mut self, key: &str) -> Option<String> {
        let at = self.notes.iter().position(|(k, _)| k == key)?;
        Some(self.notes.remove(at).1)
    }

    fn encode(&self, session: &str) -> Vec<u8> {
        let notes: Vec<Value> = self.notes.iter().map(|(k, t)| json!([k, t])).collect();
        let meta = json!({"session": session, "stop": self.stop, "notes": notes});
        let mut out = format!("{MAGIC}\n{meta}\n").into_bytes();
        out.extend_from_slice(&self.snapshot);
        out
    }

    fn decode(bytes: &[u8]) -> Result<Session, String> {
        let mut parts = bytes.splitn(3, |b| *b == b'\n');
        if parts.next() != Some(MAGIC.as_bytes()) {
            return Err("not a loopguard hook state file".into());
        }
        let meta: Value = serde_json::from_slice(parts.next().unwrap_or_default()).map_err(|e| e.to_string())?;
        // `blocks` (a count older hooks kept, when the hook itself ended a session at its second
        // block) is read past: the policy's ladder decides that now.
        let notes = meta.get("notes").and_then(Value::as_array).ok_or("no `notes` list")?;
        let notes = notes
            .iter()
            .filter_map(|n| Some((n.get(0)?.as_str()?.to_string(), n.get(1)?.as_str()?.to_string())))
            .collect();
        Ok(Session {
            snapshot: parts.next().unwrap_or_default().to_vec(),
            stop: meta.get("stop").and_then(Value::as_str).map(str::to_string),
            notes,
        })
    }
}

/// The state folder, locked for as long as this value lives.
pub struct StateDir {
    dir: PathBuf,
    bounds: Bounds,
    _lock: File,
}

impl StateDir {
    /// Creates the folder if needed and waits for its lock.
    pub fn lock(dir: &Path, bounds: Bounds) -> Result<StateDir, String> {
        let fail = |what: &str, e: std::io::Error| format!("cannot {what} state folder {}: {e}", dir.display());
        fs::create_dir_all(dir).map_err(|e| fail("create", e))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("state.lock"))
            .map_err(|e| fail("open the lock of", e))?;
        lock.lock().map_err(|e| fail("lock", e))?;
        Ok(StateDir { dir: dir.to_path_buf(), bounds, _lock: lock })
    }

    /// The file of a session: named by a digest of its id, whatever characters the id has.
    fn path(&self, session: &str) -> PathBuf {
        let digest = blake3::hash(session.as_bytes()).to_hex();
        self.dir.join(format!("{}.state", &digest[..32]))
    }

    /// Reads a session (a new one if it has no file). A file that cannot be read is moved aside
    /// (`.bad`, evicted like the rest) so that the next call starts the session afresh.
    pub fn load(&self, session: &str) -> Result<Session, String> {
        let path = self.path(session);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Session::default()),
            Err(e) => return Err(format!("cannot read state file {}: {e}", path.display())),
        };
        Session::decode(&bytes).map_err(|why| {
            let _ = fs::rename(&path, path.with_extension("bad"));
            format!("unreadable state file {} ({why}); moved aside, the session starts afresh", path.display())
        })
    }

    /// Writes a session: a temporary file renamed over the old one. A new session first makes
    /// room under the bounds.
    pub fn save(&self, session: &str, state: &Session) -> Result<(), String> {
        let path = self.path(session);
        if !path.exists() {
            self.evict(1);
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = File::create(&tmp).and_then(|mut f| f.write_all(&state.encode(session)));
        written.and_then(|()| fs::rename(&tmp, &path)).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            format!("cannot write state file {}: {e}", path.display())
        })
    }

    /// Deletes a session's file.
    pub fn remove(&self, session: &str) {
        let _ = fs::remove_file(self.path(session));
    }

    /// Deletes expired files and leftovers of killed hooks, then the least recently used
    /// sessions until `room` more fit under the bounds.
    pub fn evict(&self, room: usize) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        let now = SystemTime::now();
        let mut kept: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            let Ok(meta) = entry.metadata() else { continue };
            let used = meta.modified().unwrap_or(now);
            let idle = now.duration_since(used).unwrap_or_default();
            // Under the lock no other hook is writing: a temporary file is a killed hook's.
            let stale = ext.starts_with("tmp") || ext == "bad" || idle > self.bounds.expire;
            if stale && (ext == "state" || ext == "bad" || ext.starts_with("tmp")) {
                let _ = fs::remove_file(&path);
            } else if ext == "state" {
                kept.push((used, meta.len(), path));
            }
        }
        kept.sort_by_key(|(used, _, _)| std::cmp::Reverse(*used));
        let mut bytes: u64 = kept.iter().map(|(_, len, _)| len).sum();
        while kept.len() + room > self.bounds.max_sessions || (bytes > self.bounds.max_bytes && !kept.is_empty()) {
            let Some((_, len, path)) = kept.pop() else { break };
            bytes -= len;
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_reads_back_as_written() {
        let mut s = Session { snapshot: vec![0, 10, 255, b'\n', 7], stop: Some("end".into()), notes: vec![] };
        s.push_note("id:a".into(), "warn\nline".into());
        assert_eq!(Session::decode(&s.encode("sess")), Ok(s));
    }

    #[test]
    fn notes_are_capped_and_taken_once() {
        let mut s = Session::default();
        for i in 0..(MAX_NOTES + 5) {
            s.push_note(format!("k{i}"), format!("t{i}"));
        }
        assert_eq!(s.notes.len(), MAX_NOTES);
        // The oldest five went; the newest stay, each taken once.
        assert_eq!(s.take_note("k4"), None);
        assert_eq!(s.take_note("k5").as_deref(), Some("t5"));
        let last = format!("k{}", MAX_NOTES + 4);
        assert_eq!(s.take_note(&last), Some(format!("t{}", MAX_NOTES + 4)));
        assert_eq!(s.take_note(&last), None);
    }

    #[test]
    fn garbage_is_refused() {
        assert!(Session::decode(b"{\"blocks\":1}").is_err());
        assert!(Session::decode(format!("{MAGIC}\nnot json\n").as_bytes()).is_err());
    }
}
