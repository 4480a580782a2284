//! What-if: the same events replayed under config A and config B, and the sessions whose
//! verdicts change.
//!
//! Why per session and not per decision: an operator tuning `warningThreshold` wants to know
//! "which conversations would now be stopped, and how much sooner", not that decision 81,112
//! differs. So the comparison is of the two reports' rows: new blocks, removed blocks, the first
//! block moving earlier or later (by how many calls), warnings and aborts changing.

use std::io::Write;

use serde::Serialize;

use crate::report::{jsonl_string, write_tagged, Finding, Report, SessionRow};
use crate::table::count;

/// One change in one session, A → B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// B blocks where A did not block at all.
    NewBlock {
        /// B's first block.
        at: Finding,
    },
    /// A blocked; B does not block at all.
    BlockRemoved {
        /// A's first block.
        was: Finding,
    },
    /// Both block; B's first block comes `by` calls sooner.
    FirstBlockEarlier {
        /// A's first block.
        from: Finding,
        /// B's first block.
        to: Finding,
        /// Calls sooner.
        by: u32,
    },
    /// Both block; B's first block comes `by` calls later.
    FirstBlockLater {
        /// A's first block.
        from: Finding,
        /// B's first block.
        to: Finding,
        /// Calls later.
        by: u32,
    },
    /// Both block first at the same call, by another detector.
    BlockDetectorChanged {
        /// A's first block.
        from: Finding,
        /// B's first block.
        to: Finding,
    },
    /// The warnings differ (count or first warning).
    WarningsChanged {
        /// A's warnings.
        before: u64,
        /// B's warnings.
        after: u64,
        /// A's first warning.
        first_before: Option<Finding>,
        /// B's first warning.
        first_after: Option<Finding>,
    },
    /// The aborts differ.
    AbortsChanged {
        /// A's aborts.
        before: u64,
        /// B's aborts.
        after: u64,
    },
}

/// The changes of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionChange {
    /// The agent id.
    pub agent: Option<String>,
    /// The session key.
    pub session_key: String,
    /// The session id.
    pub session_id: String,
    /// What changed.
    pub changes: Vec<Change>,
}

/// Totals of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WhatIfSummary {
    /// Sessions compared (present in both reports).
    pub sessions: u64,
    /// Sessions with any change.
    pub changed: u64,
    /// Sessions newly blocked.
    pub new_blocks: u64,
    /// Sessions no longer blocked.
    pub blocks_removed: u64,
    /// Sessions blocked sooner.
    pub earlier: u64,
    /// Sessions blocked later.
    pub later: u64,
    /// Sessions whose warnings changed.
    pub warnings_changed: u64,
    /// Sessions whose aborts changed.
    pub aborts_changed: u64,
    /// Sessions in only one of the two reports (not compared).
    pub unmatched: u64,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhatIf {
    /// The sessions that changed, in A's order.
    pub changes: Vec<SessionChange>,
    /// Totals.
    pub summary: WhatIfSummary,
}

/// Compares one session's rows under A and B.
pub fn compare_rows(a: &SessionRow, b: &SessionRow) -> Vec<Change> {
    let mut out = Vec::new();
    match (&a.first_block, &b.first_block) {
        (None, Some(at)) => out.push(Change::NewBlock { at: at.clone() }),
        (Some(was), None) => out.push(Change::BlockRemoved { was: was.clone() }),
        (Some(x), Some(y)) if y.call < x.call => {
            out.push(Change::FirstBlockEarlier { from: x.clone(), to: y.clone(), by: x.call - y.call })
        }
        (Some(x), Some(y)) if y.call > x.call => {
            out.push(Change::FirstBlockLater { from: x.clone(), to: y.clone(), by: y.call - x.call })
        }
        (Some(x), Some(y)) if x.detector != y.detector => {
            out.push(Change::BlockDetectorChanged { from: x.clone(), to: y.clone() })
        }
        _ => {}
    }
    let first = |f: &Option<Finding>| f.as_ref().map(|f| (f.call, f.detector.clone()));
    if a.warnings != b.warnings || first(&a.first_warning) != first(&b.first_warning) {
        out.push(Change::WarningsChanged {
            before: a.warnings,
            after: b.warnings,
            first_before: a.first_warning.clone(),
            first_after: b.first_warning.clone(),
        });
    }
    if a.aborts != b.aborts {
        out.push(Change::AbortsChanged { before: a.aborts, after: b.aborts });
    }
    out
}

/// Compares report `a` (config A) with report `b` (config B) of the same sessions, matched by
/// file and session id.
pub fn what_if(a: &Report, b: &Report) -> WhatIf {
    let index: std::collections::HashMap<(&std::path::Path, &str), &SessionRow> =
        b.rows.iter().map(|r| ((r.file.as_path(), r.session_id.as_str()), r)).collect();
    let mut summary = WhatIfSummary::default();
    let mut changes = Vec::new();
    let mut matched = 0u64;
    for ra in &a.rows {
        let Some(rb) = index.get(&(ra.file.as_path(), ra.session_id.as_str())) else {
            summary.unmatched += 1;
            continue;
        };
        matched += 1;
        let c = compare_rows(ra, rb);
        if c.is_empty() {
            continue;
        }
        summary.changed += 1;
        for change in &c {
            match change {
                Change::NewBlock { .. } => summary.new_blocks += 1,
                Change::BlockRemoved { .. } => summary.blocks_removed += 1,
                Change::FirstBlockEarlier { .. } => summary.earlier += 1,
                Change::FirstBlockLater { .. } => summary.later += 1,
                Change::WarningsChanged { .. } => summary.warnings_changed += 1,
                Change::AbortsChanged { .. } => summary.aborts_changed += 1,
                Change::BlockDetectorChanged { .. } => {}
            }
        }
        changes.push(SessionChange {
            agent: ra.agent.clone(),
            session_key: ra.session_key.clone(),
            session_id: ra.session_id.clone(),
            changes: c,
        });
    }
    summary.sessions = matched;
    summary.unmatched += (b.rows.len() as u64).saturating_sub(matched);
    WhatIf { changes, summary }
}

fn opt(f: &Option<Finding>) -> String {
    f.as_ref().map(Finding::to_string).unwrap_or_else(|| "-".into())
}

impl Change {
    /// The change as (name, A, B) cells.
    fn cells(&self) -> (String, String, String) {
        match self {
            Change::NewBlock { at } => ("new block".into(), "-".into(), at.to_string()),
            Change::BlockRemoved { was } => ("block removed".into(), was.to_string(), "-".into()),
            Change::FirstBlockEarlier { from, to, by } => {
                (format!("blocks {by} calls earlier"), from.to_string(), to.to_string())
            }
            Change::FirstBlockLater { from, to, by } => {
                (format!("blocks {by} calls later"), from.to_string(), to.to_string())
            }
            Change::BlockDetectorChanged { from, to } => {
                ("block detector changed".into(), from.to_string(), to.to_string())
            }
            Change::WarningsChanged { before, after, first_before, first_after } => (
                "warnings changed".into(),
                format!("{before} (first {})", opt(first_before)),
                format!("{after} (first {})", opt(first_after)),
            ),
            Change::AbortsChanged { before, after } => ("aborts changed".into(), before.to_string(), after.to_string()),
        }
    }
}

impl WhatIf {
    /// An aligned text table (one line per change) and the summary.
    pub fn to_table(&self) -> String {
        let mut rows = Vec::new();
        for s in &self.changes {
            for c in &s.changes {
                let (name, a, b) = c.cells();
                rows.push(vec![s.agent.clone().unwrap_or_else(|| "-".into()), s.session_key.clone(), name, a, b]);
            }
        }
        let mut out = crate::table::render(&["AGENT", "SESSION", "CHANGE", "A", "B"], &rows);
        let s = &self.summary;
        out.push_str(&format!(
            "\n{} of {} {}: {} newly blocked, {} no longer blocked, {} blocked earlier, {} later, {} with other warnings, {} with other aborts",
            s.changed,
            count(s.sessions, "session"),
            if s.changed == 1 { "changes" } else { "change" },
            s.new_blocks, s.blocks_removed, s.earlier, s.later, s.warnings_changed, s.aborts_changed
        ));
        if s.unmatched > 0 {
            out.push_str(&format!(" ({} in only one report)", count(s.unmatched, "session")));
        }
        out.push('\n');
        out
    }

    /// JSON Lines: one `{"type":"change",…}` line per changed session, then `{"type":"what_if",…}`
    /// with the totals (not `summary`: a report's own summary line comes before these).
    pub fn write_jsonl(&self, w: &mut dyn Write) -> std::io::Result<()> {
        write_tagged(w, ("change", &self.changes), ("what_if", &self.summary))
    }

    /// [`WhatIf::write_jsonl`] into a string.
    pub fn to_jsonl(&self) -> String {
        jsonl_string(|w| self.write_jsonl(w))
    }
}
