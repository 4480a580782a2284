//! One record's tree facts: its id, its parent, where it moves the leaf and the append cursor.
//!
//! Separate from the scan because this is a direct port of OpenClaw's per-record parsers
//! (`parseSessionTranscriptTreeEntry`, `parseParentlessCanonicalEntry`,
//! `isCanonicalSessionEntryType`), checked line by line against them, while the scan in
//! `tree/mod.rs` holds the state those facts update.

use std::collections::HashMap;

use crate::record::{Member, Nav};

/// A record id, interned (the first pass holds numbers, not strings).
pub(super) type Id = u32;

/// OpenClaw's canonical session entry types (`isCanonicalSessionEntryType`).
pub(super) fn is_canonical_type(ty: &str) -> bool {
    matches!(
        ty,
        "message"
            | "thinking_level_change"
            | "model_change"
            | "compaction"
            | "reset"
            | "branch_summary"
            | "custom"
            | "custom_message"
            | "label"
            | "session_info"
    )
}

/// `undefined` / `null` / an id, as JS keeps them apart for `leafId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leaf {
    Undefined,
    Set(Option<Id>),
}

pub(super) struct Parsed {
    pub(super) id: Id,
    pub(super) parent: Option<Id>,
    pub(super) leaf: Leaf,
    pub(super) append_parent: Option<Id>,
    pub(super) side: bool,
}

/// The ids seen so far, each interned once.
#[derive(Default)]
pub(super) struct Names(HashMap<Box<str>, Id>);

impl Names {
    pub(super) fn intern(&mut self, s: &str) -> Id {
        if let Some(&id) = self.0.get(s) {
            return id;
        }
        let id = self.0.len() as Id;
        self.0.insert(s.into(), id);
        id
    }

    /// `null` → `Some(None)`, a non-blank string → `Some(Some(id))`, else `None` (undefined).
    fn link(&mut self, m: &Member<'_>) -> Option<Option<Id>> {
        match m {
            Member::Null => Some(None),
            _ => m.non_blank().map(|s| Some(self.intern(s))),
        }
    }

    /// `parseSessionTranscriptTreeEntry`.
    pub(super) fn parse_explicit(&mut self, nav: &Nav<'_>) -> Option<Parsed> {
        let ty = nav.ty.as_str();
        if ty == Some("session") || nav.parent_id == Member::Absent {
            return None;
        }
        let id = nav.id.non_blank().map(str::to_string)?;
        let parent = self.link(&nav.parent_id)?;
        let id = self.intern(&id);
        if ty == Some("leaf") {
            let target = self.link(&nav.target_id)?;
            let append_parent = match &nav.append_parent_id {
                Member::Absent => target,
                m => self.link(m)?,
            };
            let side = match &nav.append_mode {
                Member::Absent => false,
                Member::Str(s) if s == "side" => true,
                _ => return None,
            };
            return Some(Parsed { id, parent: target, leaf: Leaf::Set(target), append_parent, side });
        }
        let canonical = ty.is_some_and(is_canonical_type);
        let side = nav.append_mode.as_str() == Some("side");
        let leaf = if canonical && !side { Leaf::Set(Some(id)) } else { Leaf::Undefined };
        Some(Parsed { id, parent, leaf, append_parent: Some(id), side })
    }

    /// `parseParentlessCanonicalEntry`: a canonical record without `parentId` hangs under the
    /// current leaf (`leaf`).
    pub(super) fn parse_parentless(&mut self, nav: &Nav<'_>, canonical: bool, leaf: Option<Id>) -> Option<Parsed> {
        if !canonical || nav.parent_id != Member::Absent {
            return None;
        }
        let id = nav.id.non_blank().map(str::to_string)?;
        let id = self.intern(&id);
        let side = nav.append_mode.as_str() == Some("side");
        let moves = if side { Leaf::Undefined } else { Leaf::Set(Some(id)) };
        Some(Parsed { id, parent: leaf, leaf: moves, append_parent: Some(id), side })
    }
}
