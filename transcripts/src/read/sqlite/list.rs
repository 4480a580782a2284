//! Listing the sessions of an agent store, with the keys the gateway filed them under.
//!
//! Separate from opening the store because this is where OpenClaw's tables are interpreted:
//! live rows, cold archives and deleted or reset transcripts each name sessions, and the key
//! comes from `session_windows`, `session_nodes` or the archive table, in that order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::OptionalExtension;

use super::archives::cold_archive_path;
use super::store::{sqlite_err, Store};
use crate::error::Error;
use crate::session::{agent_from_key, KeySource, SessionInfo, SourceFormat};

/// A cold archive the store lists but whose file is gone: (session id, reason).
pub(crate) type MissingArchive = (String, String);

impl Store {
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
}

/// `<agentId>` of `…/agents/<agentId>/agent/<file>`.
fn agent_from_store_path(path: &Path) -> Option<String> {
    let agent_dir = path.parent()?;
    let id_dir = agent_dir.parent()?;
    let agents_dir = id_dir.parent()?;
    (agent_dir.file_name()? == "agent" && agents_dir.file_name()? == "agents")
        .then(|| id_dir.file_name()?.to_str().map(str::to_string))
        .flatten()
}
