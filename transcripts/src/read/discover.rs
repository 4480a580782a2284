//! Finding sessions under the paths an operator passes.
//!
//! Accepted: the coding CLIs' transcripts (a Claude Code session, a Codex rollout, a Gemini CLI
//! chat, a Copilot CLI `events.jsonl`, a Qwen Code chat, a Cline `<id>.messages.json`, OpenCode's
//! `opencode.db`, or a directory holding them such as `~/.claude/projects`), an OpenClaw state directory (`<state>/agents/<agentId>/agent/openclaw-agent.sqlite`,
//! plus legacy `<state>/agents/<agentId>/sessions/*.jsonl`), one agent `.sqlite` file, one pi
//! JSONL transcript, a trajectory export directory (or its `session-branch.json`), or any
//! directory holding these (searched a few levels deep); a file named by the caller whose name
//! says none of this is told by its first line (`sniff`). The same session found twice (an agent
//! store and a trajectory export of it, or a legacy JSONL that doctor already imported) is read
//! once, from the store.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use super::jsonl::{is_transcript_name, probe, Header};
use super::sniff::{self, Content};
use super::sqlite::{is_sqlite, Store};
use super::trajectory::{identity, BRANCH_FILE, EVENTS_FILE};
use super::{cline, opencode};
use crate::error::{Error, ErrorKind};
use crate::record::non_blank_value;
use crate::session::{agent_from_key, KeySource, SessionInfo, SourceFormat};

/// Something found but not read, and why (not an error: e.g. a cold-archived transcript).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub file: PathBuf,
    /// The session id, if the skip is about one session.
    pub session_id: Option<String>,
    /// Why it was not read.
    pub reason: String,
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The sessions, grouped by file.
    pub sessions: Vec<Arc<SessionInfo>>,
    /// Paths that could not be read (each names its file).
    pub errors: Vec<Error>,
    /// Things found and deliberately not read.
    pub skipped: Vec<Skipped>,
}

/// How deep a plain directory is searched.
const MAX_DEPTH: usize = 8;

/// Finds the sessions under `paths`.
pub fn discover<P: AsRef<Path>>(paths: &[P]) -> Discovery {
    let mut found = Found::default();
    for path in paths {
        found.path(path.as_ref(), true, 0);
    }
    found.finish()
}

#[derive(Default)]
struct Found {
    sessions: Vec<SessionInfo>,
    errors: Vec<Error>,
    skipped: Vec<Skipped>,
    seen_files: HashSet<PathBuf>,
    /// Session id → key of the transcript files of a directory, read once per directory.
    keys: HashMap<PathBuf, HashMap<String, (String, KeySource)>>,
}

/// `.sqlite`, `.sqlite3` or `.db`: the names an agent store goes by.
fn has_database_extension(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e, "sqlite" | "sqlite3" | "db"))
}

impl Found {
    fn path(&mut self, path: &Path, explicit: bool, depth: usize) {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => return self.errors.push(Error::new(ErrorKind::Io(e), path)),
        };
        if meta.is_dir() {
            self.dir(path, explicit, depth);
            return;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let parent = path.parent().unwrap_or(Path::new("."));
        if name == BRANCH_FILE
            || name == "manifest.json"
            || (name == "events.jsonl" && parent.join(BRANCH_FILE).is_file())
        {
            self.trajectory(parent);
        } else if is_sqlite(path) && opencode::is_opencode(path) {
            self.opencode(path);
        } else if is_sqlite(path) || (explicit && has_database_extension(path)) {
            // A named `.sqlite` that is not SQLite is opened anyway: SQLite's own "file is not a
            // database" says more than "not a transcript source".
            self.store(path, explicit);
        } else if let Some(task) = cline::identify(path) {
            if self.first_time(path) {
                self.sessions.push(task);
            }
        } else if is_transcript_name(name) {
            self.jsonl(path, explicit);
        } else if explicit {
            self.by_content(path);
        }
    }

    /// A file named by the caller whose name says nothing (`/dev/fd/63`, a copy of stdin,
    /// `session.txt`): its first line tells what it is ([`sniff`]).
    fn by_content(&mut self, path: &Path) {
        match sniff::content(path) {
            Ok(Content::Transcript) => self.jsonl(path, true),
            Ok(Content::Other(format)) => self.errors.push(format.error(path)),
            Ok(Content::Unknown) => self.errors.push(Error::new(ErrorKind::UnknownSource, path)),
            Err(e) => self.errors.push(e),
        }
    }

    fn dir(&mut self, dir: &Path, explicit: bool, depth: usize) {
        if dir.join(BRANCH_FILE).is_file() {
            return self.trajectory(dir);
        }
        let agents = dir.join("agents");
        if agents.is_dir() {
            return self.state_dir(&agents);
        }
        if depth >= MAX_DEPTH {
            return;
        }
        let mut entries = match read_dir_sorted(dir) {
            Ok(e) => e,
            Err(e) => return self.errors.push(Error::new(ErrorKind::Io(e), dir)),
        };
        // Stores first, so that a store wins over JSONL copies of its sessions.
        entries.sort_by_cached_key(|p| (!is_sqlite(p), p.clone()));
        let before = self.sessions.len() + self.errors.len();
        for entry in entries {
            let Ok(meta) = std::fs::symlink_metadata(&entry) else { continue };
            if meta.is_dir() {
                let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name != "node_modules" && name != ".git" && name != "target" {
                    self.dir(&entry, false, depth + 1);
                }
            } else if meta.is_file() {
                self.path(&entry, false, depth + 1);
            }
        }
        if explicit && self.sessions.len() + self.errors.len() == before {
            self.errors.push(Error::new(ErrorKind::UnknownSource, dir));
        }
    }

    /// `<state>/agents/<agentId>/…`
    fn state_dir(&mut self, agents: &Path) {
        let ids = match read_dir_sorted(agents) {
            Ok(e) => e,
            Err(e) => return self.errors.push(Error::new(ErrorKind::Io(e), agents)),
        };
        for agent_dir in ids.into_iter().filter(|p| p.is_dir()) {
            let store = agent_dir.join("agent").join("openclaw-agent.sqlite");
            if store.is_file() {
                self.store(&store, true);
            }
            let sessions = agent_dir.join("sessions");
            if let Ok(files) = read_dir_sorted(&sessions) {
                let is_transcript =
                    |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(is_transcript_name);
                for f in files.into_iter().filter(|p| is_transcript(p) && p.is_file()) {
                    self.jsonl(&f, true);
                }
            }
        }
    }

    fn first_time(&mut self, path: &Path) -> bool {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.seen_files.insert(canonical)
    }

    /// OpenCode's database: one session per `session` row.
    fn opencode(&mut self, path: &Path) {
        if !self.first_time(path) {
            return;
        }
        match opencode::sessions(path) {
            Ok(sessions) => self.sessions.extend(sessions),
            Err(e) => self.errors.push(e),
        }
    }

    fn store(&mut self, path: &Path, explicit: bool) {
        if !self.first_time(path) {
            return;
        }
        let store = match Store::open(path) {
            Ok(s) => s,
            Err(e) if !explicit && matches!(e.kind(), ErrorKind::MissingTable(_)) => {
                return self.skipped.push(Skipped {
                    file: path.to_path_buf(),
                    session_id: None,
                    reason: "SQLite file without a transcript_events table (not an agent store)".into(),
                });
            }
            Err(e) => return self.errors.push(e),
        };
        match store.sessions() {
            Ok((sessions, missing)) => {
                self.sessions.extend(sessions);
                self.skipped.extend(missing.into_iter().map(|(id, reason)| Skipped {
                    file: path.to_path_buf(),
                    session_id: Some(id),
                    reason,
                }));
            }
            Err(e) => self.errors.push(e),
        }
    }

    fn jsonl(&mut self, path: &Path, explicit: bool) {
        if !self.first_time(path) {
            return;
        }
        if let Some(session) = super::cli::identify(path) {
            return self.sessions.push(session);
        }
        let header = match probe(path) {
            Ok(h) => h,
            // Unreadable: say so. A first line that is not JSON: read it anyway when asked to
            // (the read names the line), skip it in a directory walk (likely not a transcript).
            Err(e) if matches!(e.kind(), ErrorKind::Io(_)) => return self.errors.push(e),
            Err(_) if explicit => Header::default(),
            Err(_) => return,
        };
        if !header.is_header && !explicit {
            return;
        }
        let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("session");
        let stem = name.split(".jsonl").next().unwrap_or(name).to_string();
        let session_id = header.session_id.unwrap_or(stem);
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let keys = self.keys.entry(dir.clone()).or_insert_with(|| known_keys(&dir));
        let (session_key, key_source) = match keys.get(&session_id) {
            Some(known) => known.clone(),
            None => (session_id.clone(), KeySource::SessionId),
        };
        let agent_id = agent_from_sessions_path(path).or_else(|| agent_from_key(&session_key));
        self.sessions.push(SessionInfo {
            file: path.to_path_buf(),
            format: SourceFormat::Jsonl,
            agent_id,
            session_key,
            key_source,
            session_id,
        });
    }

    fn trajectory(&mut self, dir: &Path) {
        let branch = dir.join(BRANCH_FILE);
        if !self.first_time(&branch) {
            return;
        }
        let identity = match identity(dir) {
            Ok(i) => i,
            Err(e) => return self.errors.push(e),
        };
        let session_id = identity
            .session_id
            .unwrap_or_else(|| dir.file_name().and_then(|n| n.to_str()).unwrap_or("session").to_string());
        let (session_key, key_source) = match identity.session_key {
            Some(k) => (k, KeySource::Manifest),
            None => (session_id.clone(), KeySource::SessionId),
        };
        let events = dir.join(EVENTS_FILE);
        self.sessions.push(SessionInfo {
            file: if events.is_file() { events } else { branch },
            format: SourceFormat::Trajectory,
            agent_id: agent_from_key(&session_key),
            session_key,
            key_source,
            session_id,
        });
    }

    fn finish(self) -> Discovery {
        let rank = |f: &SourceFormat| match f {
            SourceFormat::AgentStore => 0,
            SourceFormat::ColdArchive | SourceFormat::StoreArchive => 1,
            SourceFormat::Trajectory => 2,
            SourceFormat::Jsonl
            | SourceFormat::ClaudeCode
            | SourceFormat::Codex
            | SourceFormat::GeminiCli
            | SourceFormat::OpenCode
            | SourceFormat::CopilotCli
            | SourceFormat::Cline
            | SourceFormat::QwenCode => 3,
        };
        let mut best: HashMap<(Option<String>, String), (usize, usize)> = HashMap::new();
        for (i, s) in self.sessions.iter().enumerate() {
            let key = (s.agent_id.clone(), s.session_id.clone());
            let r = rank(&s.format);
            best.entry(key)
                .and_modify(|b| {
                    if r < b.0 {
                        *b = (r, i)
                    }
                })
                .or_insert((r, i));
        }
        // A copy whose agent is unknown (a JSONL file outside `agents/<id>/sessions/`, with no
        // key naming its agent) is the same session as one of that id whose agent is known.
        let with_agent: HashSet<&str> =
            self.sessions.iter().filter(|s| s.agent_id.is_some()).map(|s| s.session_id.as_str()).collect();
        let keep: HashSet<usize> = best
            .iter()
            .filter(|((agent, id), _)| agent.is_some() || !with_agent.contains(id.as_str()))
            .map(|(_, &(_, i))| i)
            .collect();
        let mut skipped = self.skipped;
        let mut sessions = Vec::new();
        for (i, s) in self.sessions.into_iter().enumerate() {
            if keep.contains(&i) {
                sessions.push(Arc::new(s));
            } else {
                skipped.push(Skipped {
                    file: s.file.clone(),
                    session_id: Some(s.session_id.clone()),
                    reason: "the same session was found in another source, which is read instead".into(),
                });
            }
        }
        Discovery { sessions, errors: self.errors, skipped }
    }
}

fn read_dir_sorted(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    out.sort();
    Ok(out)
}

/// `<agentId>` of `…/agents/<agentId>/sessions/<file>`.
fn agent_from_sessions_path(path: &Path) -> Option<String> {
    let sessions = path.parent()?;
    let id = sessions.parent()?;
    let agents = id.parent()?;
    (sessions.file_name()? == "sessions" && agents.file_name()? == "agents")
        .then(|| id.file_name()?.to_str().map(str::to_string))
        .flatten()
}

/// Session id → key for the transcript files of `dir`: from the agent store beside it
/// (`../agent/openclaw-agent.sqlite`, table `session_transcript_archives`, which keeps the key
/// of every deleted or reset transcript), then from a legacy `sessions.json`.
fn known_keys(dir: &Path) -> HashMap<String, (String, KeySource)> {
    let mut keys: HashMap<String, (String, KeySource)> =
        legacy_keys(dir).into_iter().map(|(id, key)| (id, (key, KeySource::SessionsJson))).collect();
    let store = dir.parent().map(|p| p.join("agent").join("openclaw-agent.sqlite"));
    if let Some(store) = store.filter(|p| p.is_file()) {
        if let Ok(store) = Store::open(&store) {
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
    let mut reader = BufReader::new(file);
    crate::skip_bom(&mut reader);
    let Ok(map) = serde_json::from_reader::<_, HashMap<String, serde_json::Value>>(reader) else {
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
