//! Which records are on a session's active branch.
//!
//! A pi transcript is a tree: every record has an `id` and a `parentId`, and a rewind or fork
//! starts a second child under an older record. Only one branch is the conversation the agent
//! went on with; tool calls on an abandoned branch were undone by the user, so a report that
//! counted them would show loops nobody lives with any more.
//!
//! How OpenClaw 2026.9.6 picks the branch (read in `dist/transcript-tree-*.mjs`,
//! `scanSessionTranscriptNavigation`, and `dist/export-trajectory-*.mjs`, `readSessionBranch`,
//! which writes `session-branch.json`): it scans the records in `seq` (file) order, and the
//! **active leaf is the last record that moves the leaf**: every canonical record (`message`,
//! `compaction`, `model_change`, … — not `appendMode:"side"` ones) moves it to itself, and a
//! `type:"leaf"` navigation record moves it to its `targetId` (a rewind writes one). Parent links
//! are normalized on the way: a canonical record whose parent is unknown, or that points at the
//! append cursor while the leaf moved elsewhere, or that follows a `reset` without descending
//! from it, hangs under the current leaf; a parent that is a leaf record resolves to its target;
//! a record without `parentId` hangs under the current leaf. The branch is then the walk from
//! the leaf up the normalized parents, keeping canonical records (it stops at a missing parent
//! or a cycle). A transcript in which no record moves the leaf is read flat, in order. Neither
//! `session_nodes.entry_json` nor any index table decides it: the records alone do.
//!
//! This module ports that scan over `(id, parentId, …)` facts only, so the first pass over a
//! session holds ids, not records.
//!
//! This file holds the scan's state, the parent normalization and the walk up from the leaf;
//! [`parse`] reads one record's tree facts.

mod parse;

use std::collections::{HashMap, HashSet};

use crate::record::{Member, Nav};

use parse::{is_canonical_type, Id, Leaf, Names};

#[derive(Debug, Clone)]
struct Node {
    id: Id,
    parent: Option<Id>,
    leaf: Leaf,
    append_parent: Option<Id>,
    leaf_control: bool,
    canonical: bool,
    position: u32,
}

/// The first pass: feed each record's tree facts in order, then ask for the active branch.
#[derive(Default)]
pub(crate) struct TreeScan {
    names: Names,
    nodes: Vec<Node>,
    by_id: HashMap<Id, u32>,
    /// Positions of canonical records with a string id, for the flat case.
    flat: Vec<u32>,
    /// Positions of all canonical records, for legacy (version < 2) transcripts.
    all_canonical: Vec<u32>,
    leaf: Option<Id>,
    append_parent: Option<Id>,
    has_leaf_update: bool,
    latest_reset: Option<Id>,
    reset_descendants: HashSet<Id>,
    invalid_leaf_controls: HashSet<Id>,
    position: u32,
}

impl TreeScan {
    /// `resolveCanonicalParentId`: a parent that is a leaf record resolves to its target.
    fn resolve_parent(&self, parent: Option<Id>) -> Option<Id> {
        let mut seen = HashSet::new();
        let mut current = parent;
        while let Some(cur) = current {
            if !seen.insert(cur) {
                return Some(cur);
            }
            match self.by_id.get(&cur).map(|&i| &self.nodes[i as usize]) {
                Some(node) if node.leaf_control => current = node.parent,
                _ => return Some(cur),
            }
        }
        None
    }

    fn known(&self, id: Option<Id>) -> bool {
        id.is_none_or(|id| self.by_id.contains_key(&id) && !self.invalid_leaf_controls.contains(&id))
    }

    /// Feeds one record (every record, in order; `None` for one that could not be read, which
    /// still takes a position).
    pub(crate) fn push(&mut self, nav: Option<&Nav<'_>>) {
        let position = self.position;
        self.position += 1;
        let Some(nav) = nav else { return };
        let ty = nav.ty.as_str();
        let canonical = ty.is_some_and(is_canonical_type);
        if canonical {
            self.all_canonical.push(position);
            if matches!(nav.id, Member::Str(_)) {
                self.flat.push(position);
            }
        }
        let mut explicit = self.names.parse_explicit(nav);
        let leaf_control = ty == Some("leaf") && explicit.is_some();
        if let Some(e) = explicit.as_mut() {
            if leaf_control && self.latest_reset.is_some() {
                if let (Some(leaf), Leaf::Set(target)) = (self.leaf, e.leaf) {
                    if target.is_none_or(|t| !self.reset_descendants.contains(&t)) {
                        e.parent = Some(leaf);
                        e.leaf = Leaf::Set(Some(leaf));
                        e.append_parent = Some(leaf);
                    }
                }
            }
        }
        if let (true, Some(e)) = (leaf_control, explicit.as_ref()) {
            let target = match e.leaf {
                Leaf::Set(t) => t,
                Leaf::Undefined => None,
            };
            if !self.known(target) || !self.known(e.append_parent) {
                let raw_parent = nav.parent_id.as_str().map(str::to_string);
                let raw_parent = raw_parent.map(|s| self.names.intern(&s));
                self.invalid_leaf_controls.insert(e.id);
                let node = Node {
                    id: e.id,
                    parent: raw_parent,
                    leaf: Leaf::Undefined,
                    append_parent: self.append_parent,
                    leaf_control: true,
                    canonical: false,
                    position,
                };
                self.add(node);
                return;
            }
        }
        let was_explicit = explicit.is_some();
        let mut entry = match explicit {
            Some(e) => e,
            None => match self.names.parse_parentless(nav, canonical, self.leaf) {
                Some(e) => e,
                None => return,
            },
        };
        if canonical {
            let stale =
                was_explicit && entry.parent.is_some_and(|p| !self.by_id.contains_key(&p)) && self.leaf.is_some();
            // The three cases in which OpenClaw hangs a canonical record under the current leaf:
            // after a reset, off the reset's descendants; under a parent it does not know; under
            // the append cursor while the leaf has moved elsewhere.
            let after_reset = self.latest_reset.is_some()
                && !entry.side
                && entry.parent.is_none_or(|p| !self.reset_descendants.contains(&p));
            let cursor_moved =
                was_explicit && !entry.side && entry.parent == self.append_parent && self.leaf != self.append_parent;
            let candidate =
                if after_reset || (!entry.side && stale) || cursor_moved { self.leaf } else { entry.parent };
            entry.parent = self.resolve_parent(candidate);
        }
        let node = Node {
            id: entry.id,
            parent: entry.parent,
            leaf: entry.leaf,
            append_parent: entry.append_parent,
            leaf_control,
            canonical,
            position,
        };
        if ty == Some("reset") {
            self.latest_reset = Some(node.id);
            self.reset_descendants.clear();
            self.reset_descendants.insert(node.id);
        } else if self.latest_reset.is_some() && node.parent.is_some_and(|p| self.reset_descendants.contains(&p)) {
            self.reset_descendants.insert(node.id);
        }
        self.append_parent = node.append_parent;
        if let Leaf::Set(leaf) = node.leaf {
            self.leaf = leaf;
            self.has_leaf_update = true;
        }
        self.add(node);
    }

    fn add(&mut self, node: Node) {
        let index = self.nodes.len() as u32;
        self.by_id.insert(node.id, index);
        self.nodes.push(node);
    }

    /// Legacy transcripts (header `version` below 2, or no header) have no tree: OpenClaw's
    /// `migrateLegacySessionEntries` chains every record to the one before, so the branch is every
    /// canonical record in order.
    pub(crate) fn legacy_positions(self) -> Branch {
        Branch { positions: self.all_canonical, off_branch: 0 }
    }

    /// The positions (in feeding order) of the records on the active branch, ascending, and
    /// whether the transcript branched (some canonical record is off the branch).
    pub(crate) fn active_positions(self) -> Branch {
        if !self.has_leaf_update {
            return Branch { positions: self.flat, off_branch: 0 };
        }
        let mut positions = Vec::new();
        let mut seen = HashSet::new();
        let mut current = self.leaf;
        while let Some(id) = current {
            if !seen.insert(id) {
                break;
            }
            let Some(&index) = self.by_id.get(&id) else { break };
            let node = &self.nodes[index as usize];
            if node.canonical && !node.leaf_control {
                positions.push(node.position);
            }
            match node.parent {
                Some(p) if !self.by_id.contains_key(&p) => break,
                p => current = p,
            }
        }
        positions.reverse();
        let canonical = self.flat.len();
        let off_branch = canonical.saturating_sub(positions.len()) as u64;
        Branch { positions, off_branch }
    }
}

/// The active branch, as positions in feeding order.
pub(crate) struct Branch {
    pub positions: Vec<u32>,
    /// Canonical records not on the branch (0 for a transcript that never branched).
    pub off_branch: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(t: &mut TreeScan, v: serde_json::Value) {
        let text = v.to_string();
        let nav: Nav<'_> = serde_json::from_str(&text).unwrap_or_default();
        t.push(Some(&nav));
    }

    fn scan(records: &[serde_json::Value]) -> Vec<u32> {
        let mut t = TreeScan::default();
        for r in records {
            push(&mut t, r.clone());
        }
        t.active_positions().positions
    }

    use serde_json::json;

    #[test]
    fn linear_transcript_is_all_of_it() {
        let r = [
            json!({"type":"session","version":4,"id":"s"}),
            json!({"type":"message","id":"a","parentId":null}),
            json!({"type":"message","id":"b","parentId":"a"}),
            json!({"type":"compaction","id":"c","parentId":"b"}),
        ];
        assert_eq!(scan(&r), vec![1, 2, 3]);
    }

    #[test]
    fn the_latest_child_wins_a_fork() {
        let r = [
            json!({"type":"message","id":"a","parentId":null}),
            json!({"type":"message","id":"b1","parentId":"a"}),
            json!({"type":"message","id":"c1","parentId":"b1"}),
            json!({"type":"message","id":"b2","parentId":"a"}),
            json!({"type":"message","id":"c2","parentId":"b2"}),
        ];
        assert_eq!(scan(&r), vec![0, 3, 4]);
    }

    #[test]
    fn a_leaf_record_moves_back_to_an_old_branch() {
        let r = [
            json!({"type":"message","id":"a","parentId":null}),
            json!({"type":"message","id":"b1","parentId":"a"}),
            json!({"type":"message","id":"b2","parentId":"a"}),
            json!({"type":"leaf","id":"l","parentId":"b2","targetId":"b1"}),
            json!({"type":"message","id":"c","parentId":"l"}),
        ];
        assert_eq!(scan(&r), vec![0, 1, 4]);
    }

    #[test]
    fn side_appends_and_opaque_records_do_not_move_the_leaf() {
        let r = [
            json!({"type":"message","id":"a","parentId":null}),
            json!({"type":"custom","id":"x","parentId":"a","appendMode":"side"}),
            json!({"type":"weird","id":"w","parentId":"a"}),
            json!({"type":"message","id":"b","parentId":"a"}),
        ];
        assert_eq!(scan(&r), vec![0, 3]);
    }

    #[test]
    fn a_missing_parent_hangs_under_the_current_leaf() {
        let r = [
            json!({"type":"message","id":"a","parentId":null}),
            json!({"type":"message","id":"b","parentId":"gone"}),
            json!({"type":"message","id":"c"}),
        ];
        assert_eq!(scan(&r), vec![0, 1, 2]);
    }

    #[test]
    fn records_without_parents_are_read_flat() {
        let r = [
            json!({"type":"session","id":"s"}),
            json!({"type":"message","id":"a"}),
            json!({"type":"message","id":"b"}),
        ];
        assert_eq!(scan(&r), vec![1, 2]);
    }

    #[test]
    fn an_unreadable_record_keeps_its_position() {
        let mut t = TreeScan::default();
        push(&mut t, json!({"type":"message","id":"a","parentId":null}));
        t.push(None);
        push(&mut t, json!({"type":"message","id":"c","parentId":"b"}));
        assert_eq!(t.active_positions().positions, vec![0, 2]);
    }
}
