//! The operator's report: per session, where the guard warned, blocked and aborted, beside what
//! the gateway itself did; and a summary by detector.
//!
//! Built from the events' references and the decision lines a replay produced for them (one
//! per event, in order). It keeps one small row per session, never the events, so it can follow
//! an import of any size.
//!
//! [`rows`] holds the report's data, [`builder`] sums rows into it, [`decision`] reads the
//! replay's decision lines, [`tally`] folds one session's decisions into its row, and [`render`]
//! prints the report as a table or JSON Lines.

mod builder;
mod decision;
mod render;
mod rows;
mod tally;

pub use builder::ReportBuilder;
pub use decision::{Decision, DecisionError};
pub(crate) use render::{jsonl_string, write_tagged};
pub use rows::{DetectorCounts, DetectorSummary, Finding, Report, SessionRow, Summary};
pub use tally::SessionTally;
