//! # loopguard-transcripts
//!
//! "On my agents' real history, where would the guard have fired?" OpenClaw keeps that history
//! in per-agent SQLite stores (zstd-compressed rows, pi session records in a tree of
//! `id`/`parentId`), older releases in JSONL files, and exports in trajectory bundles. This crate
//! reads all three without loading a store into memory, follows each session's active branch the
//! way OpenClaw does, and turns the records into loopguard trace events
//! (`spec/trace-format.md`) exactly as OpenClaw's own loop guard saw the calls and outcomes. It
//! then builds the report from the decisions a replay produced, and compares two configs.
//!
//! How a CLI wires it (`loopguard import PATH… --config C [--set K=V]… [--what-if-set K=V]… [--json]`);
//! the replay is the host's `Gateway::apply_events` (or the policy core's, as in this crate's
//! tests), one gateway per config, fed session after session:
//!
//! ```no_run
//! use loopguard_transcripts::{apply_overrides, discover, what_if, Importer, ReportBuilder, TerminalProgress};
//! # struct Gateway;
//! # impl Gateway {
//! #     fn new(_config: &str) -> Gateway { Gateway }
//! #     fn apply_events(&mut self, _trace: &str, _first_line: u32) -> String { String::new() }
//! # }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config_a = std::fs::read_to_string("openclaw.json5")?;
//! let config_b = apply_overrides(&config_a, &["tools.loopDetection.criticalThreshold=12"])?;
//! let found = discover(&["/home/me/.openclaw"]);
//! let mut failed = !found.errors.is_empty();
//! for e in &found.errors {
//!     eprintln!("error: {e}");
//! }
//! let (mut a, mut b) = (Gateway::new(&config_a), Gateway::new(&config_b));
//! let (mut report_a, mut report_b) = (ReportBuilder::new(), ReportBuilder::new());
//! let mut line = 1u32;
//! let mut importer = Importer::default();
//! for trace in importer.traces(&found.sessions).with_progress(TerminalProgress::new()) {
//!     for e in &trace.read.errors {
//!         eprintln!("error: {e}");
//!         failed = true;
//!     }
//!     let text = trace.trace_text();
//!     let decisions_a = a.apply_events(&text, line);
//!     let decisions_b = b.apply_events(&text, line);
//!     line += trace.events.len() as u32;
//!     report_a.add_trace(&trace, &decisions_a.lines().collect::<Vec<_>>())?;
//!     report_b.add_trace(&trace, &decisions_b.lines().collect::<Vec<_>>())?;
//! }
//! let (report_a, report_b) = (report_a.finish(), report_b.finish());
//! print!("{}", report_a.to_table()); // or report_a.write_jsonl(&mut std::io::stdout())? for --json
//! print!("{}", what_if(&report_a, &report_b).to_table());
//! std::process::exit(i32::from(failed));
//! # }
//! ```
//!
//! For a session too large to hold, [`Importer::read_session`] streams its events to a closure
//! instead, and [`SessionTally::observe`] folds one decision at a time.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod discover;
mod error;
mod event;
mod jsonl;
mod mapping;
mod overrides;
mod progress;
mod reader;
mod record;
mod report;
mod session;
mod store;
mod table;
mod text;
mod trajectory;
mod tree;
mod whatif;

pub use discover::{discover, Discovery, Skipped};
pub use error::{Error, ErrorKind, Location};
pub use event::{Compaction, EventKind, EventRef, ImportedEvent, Outcome, Recorded, ToolCall, ToolResult, TraceEvent};
pub use mapping::SessionStats;
pub use overrides::{apply_overrides, OverrideError};
pub use progress::{progress_fn, NoProgress, Progress, ProgressFn, TerminalProgress};
pub use reader::{ImportOptions, Importer, SessionRead, SessionTrace, Traces};
pub use report::{
    Decision, DecisionError, DetectorCounts, DetectorSummary, Finding, Report, ReportBuilder, SessionRow, SessionTally,
    Summary,
};
pub use session::{KeySource, SessionInfo, SourceFormat};
pub use text::normalize_tool_name;
pub use whatif::{compare_rows, what_if, Change, SessionChange, WhatIf, WhatIfSummary};
