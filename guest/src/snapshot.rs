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
//! | 3 | format 2, each session with openclaw 2026.9's state: the records' veto, no-progress and failure-identity facts, and the per-attempt recovery state |
//! | 4 | format 3, each session with the trail of the detectors beyond OpenClaw (`loopguard.preset`, `loopguard.detectors`) |
//! | 5 | format 4 with the trail of policy 1.1: each call's fold, quiet results, the calls blocked (read from format 4 by conversion) |
//!
//! Which format is written: 5 when some session holds a trail, else 3 when some session holds
//! openclaw 2026.9 state, else 2. A gateway with no preset and no detector of its own under the
//! documented profile never holds either, so its snapshots are byte-for-byte what earlier
//! policies wrote (and an older policy that reads format 2 still reads them).

use serde::{Deserialize, Serialize};

use crate::bot_loop::{BotGuard, BotGuardSnapshot, BotGuardSnapshotRef};
use crate::error::{ErrorKind, PolicyError};
use crate::gateway::Gateway;
use crate::group::{GroupCoordinator, GroupSnapshot};
use crate::store::BoundedMap;
use crate::tool_loop::{Session, SessionWire, SessionWithTrail, SessionWithTrailV4};

const MAGIC: &[u8; 6] = b"LGSNAP";
/// The newest format this policy writes (and reads).
pub const FORMAT_VERSION: u16 = 5;

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

/// Format 3 as written.
#[derive(Serialize)]
struct V3Out<'a> {
    sessions: Vec<(&'a String, SessionWire)>,
    bots: BotGuardSnapshotRef<'a>,
    groups: GroupSnapshot,
}

#[derive(Serialize, Deserialize)]
struct V3 {
    sessions: Vec<(String, SessionWire)>,
    bots: BotGuardSnapshot,
    groups: GroupSnapshot,
}

/// Format 5 as written.
#[derive(Serialize)]
struct V5Out<'a> {
    sessions: Vec<(&'a String, SessionWithTrail)>,
    bots: BotGuardSnapshotRef<'a>,
    groups: GroupSnapshot,
}

#[derive(Serialize, Deserialize)]
struct V5 {
    sessions: Vec<(String, SessionWithTrail)>,
    bots: BotGuardSnapshot,
    groups: GroupSnapshot,
}

/// Format 4 as policy 1.0 wrote it.
#[derive(Serialize, Deserialize)]
struct V4 {
    sessions: Vec<(String, SessionWithTrailV4)>,
    bots: BotGuardSnapshot,
    groups: GroupSnapshot,
}

impl Gateway {
    /// Exports the whole state: format 5 when a session holds a trail, else 3 when a session
    /// holds openclaw 2026.9 state, else format 2.
    pub fn export_state(&self) -> Vec<u8> {
        let sessions = self.sessions.ordered_refs();
        let v5 = sessions.iter().any(|(_, s)| s.has_trail());
        let v3 = sessions.iter().any(|(_, s)| s.needs_wire());
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(MAGIC);
        // Serializing plain in-memory data into a Vec cannot fail.
        let body = if v5 {
            out.extend_from_slice(&5u16.to_le_bytes());
            let sessions = sessions.into_iter().map(|(k, s)| (k, s.to_wire_with_trail())).collect();
            postcard::to_allocvec(&V5Out { sessions, bots: self.bots.snapshot_ref(), groups: self.groups.snapshot() })
        } else if v3 {
            out.extend_from_slice(&3u16.to_le_bytes());
            let sessions = sessions.into_iter().map(|(k, s)| (k, s.to_wire())).collect();
            postcard::to_allocvec(&V3Out { sessions, bots: self.bots.snapshot_ref(), groups: self.groups.snapshot() })
        } else {
            out.extend_from_slice(&2u16.to_le_bytes());
            postcard::to_allocvec(&V2Out { sessions, bots: self.bots.snapshot_ref(), groups: self.groups.snapshot() })
        };
        out.extend(body.unwrap_or_default());
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
            3 => {
                let v: V3 = postcard::from_bytes(body).map_err(bad)?;
                let sessions = v.sessions.into_iter().map(|(k, s)| (k, Session::from_wire(s))).collect();
                (sessions, BotGuard::restore(v.bots, l.max_pairs), GroupCoordinator::restore(v.groups, l.max_group_threads))
            }
            4 => {
                let v: V4 = postcard::from_bytes(body).map_err(bad)?;
                let sessions = v.sessions.into_iter().map(|(k, s)| (k, Session::from_wire_with_trail_v4(s))).collect();
                (sessions, BotGuard::restore(v.bots, l.max_pairs), GroupCoordinator::restore(v.groups, l.max_group_threads))
            }
            5 => {
                let v: V5 = postcard::from_bytes(body).map_err(bad)?;
                let sessions = v.sessions.into_iter().map(|(k, s)| (k, Session::from_wire_with_trail(s))).collect();
                (sessions, BotGuard::restore(v.bots, l.max_pairs), GroupCoordinator::restore(v.groups, l.max_group_threads))
            }
            newer => {
                return Err(err(format!(
                    "format {newer} is newer than this policy reads (up to {FORMAT_VERSION}); swap to a newer policy instead"
                )))
            }
        };
        self.sessions = BoundedMap::from_ordered(l.max_sessions, sessions);
        self.bots = bots.with_rules(self.config.profile.bot);
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
