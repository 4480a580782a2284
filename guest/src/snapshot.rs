//! Versioned state snapshots.
//!
//! Operators swap in a new policy without a restart, and the loops it was already counting must
//! not be forgotten. The old instance exports its state, the new one imports it. A snapshot is
//! `LGSNAP` + a little-endian u16 format version + a postcard body; every format a release ever
//! wrote stays readable, so a newer policy always reads an older snapshot.
//!
//! | format | contents |
//! |---|---|
//! | 1 | agent sessions (tool-loop history, warning buckets, post-compaction guards) |
//! | 2 | format 1 + the bot-pair guard + the group-thread coordinator |

use serde::{Deserialize, Serialize};

use crate::bot_loop::{BotGuard, BotGuardSnapshot, BotGuardSnapshotRef};
use crate::error::{ErrorKind, PolicyError};
use crate::gateway::Gateway;
use crate::group::{GroupCoordinator, GroupSnapshot};
use crate::store::BoundedMap;
use crate::tool_loop::Session;

const MAGIC: &[u8; 6] = b"LGSNAP";
/// The format this policy writes.
pub const FORMAT_VERSION: u16 = 2;

#[derive(Serialize)]
struct V1Out<'a> {
    sessions: Vec<(&'a String, &'a Session)>,
}

#[derive(Serialize, Deserialize)]
struct V1 {
    sessions: Vec<(String, Session)>,
}

/// Format 2 as written: the sessions by reference (same encoding as [`V2`]).
#[derive(Serialize)]
struct V2Out<'a> {
    sessions: Vec<(&'a String, &'a Session)>,
    bots: BotGuardSnapshotRef<'a>,
    groups: GroupSnapshot,
}

#[derive(Serialize, Deserialize)]
struct V2 {
    sessions: Vec<(String, Session)>,
    bots: BotGuardSnapshot,
    groups: GroupSnapshot,
}

impl Gateway {
    /// Exports the whole state (format [`FORMAT_VERSION`]).
    pub fn export_state(&self) -> Vec<u8> {
        let body = V2Out {
            sessions: self.sessions.ordered_refs(),
            bots: self.bots.snapshot_ref(),
            groups: self.groups.snapshot(),
        };
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        // Serializing plain in-memory data into a Vec cannot fail.
        out.extend(postcard::to_allocvec(&body).unwrap_or_default());
        out
    }

    /// Replaces the state with a snapshot; on error the state is left as it was.
    pub fn import_state(&mut self, bytes: &[u8]) -> Result<(), PolicyError> {
        let err = |reason: String| PolicyError::new(ErrorKind::Snapshot, "snapshot", reason);
        if bytes.len() < 8 || &bytes[..6] != MAGIC {
            return Err(err("not a loopguard snapshot (it must start with LGSNAP)".into()));
        }
        let version = u16::from_le_bytes([bytes[6], bytes[7]]);
        let body = &bytes[8..];
        let bad = |e: postcard::Error| err(format!("format {version} snapshot is corrupt: {e}"));
        let l = &self.config.limits;
        let (sessions, bots, groups) = match version {
            1 => {
                let v: V1 = postcard::from_bytes(body).map_err(bad)?;
                (v.sessions, BotGuard::new(l.max_pairs), GroupCoordinator::new(l.max_group_threads))
            }
            2 => {
                let v: V2 = postcard::from_bytes(body).map_err(bad)?;
                (v.sessions, BotGuard::restore(v.bots, l.max_pairs), GroupCoordinator::restore(v.groups, l.max_group_threads))
            }
            newer => {
                return Err(err(format!(
                    "format {newer} is newer than this policy reads (up to {FORMAT_VERSION}); swap to a newer policy instead"
                )))
            }
        };
        self.sessions = BoundedMap::from_ordered(l.max_sessions, sessions);
        self.bots = bots;
        self.groups = groups;
        Ok(())
    }
}

/// Writes a format-1 snapshot (what policy 0.1 exported), for compatibility tests.
#[doc(hidden)]
pub fn export_v1(gw: &Gateway) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend(postcard::to_allocvec(&V1Out { sessions: gw.sessions.ordered_refs() }).unwrap_or_default());
    out
}
