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
//! ```no_run
//! use loopguard_transcripts::{discover, Importer, ReportBuilder};
//! let found = discover(&["/home/me/.openclaw"]);
//! let mut importer = Importer::default();
//! let mut report = ReportBuilder::new();
//! for trace in importer.traces(&found.sessions) {
//!     let decisions: Vec<String> = Vec::new(); // replay trace.trace_text() here
//!     report.add_trace(&trace, &decisions)?;
//! }
//! print!("{}", report.finish().to_table());
//! # Ok::<(), loopguard_transcripts::DecisionError>(())
//! ```
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
pub use report::{Decision, DecisionError, DetectorCounts, DetectorSummary, Finding, Report, ReportBuilder, SessionRow, SessionTally, Summary};
pub use session::{KeySource, SessionInfo, SourceFormat};
pub use text::normalize_tool_name;
pub use whatif::{compare_rows, what_if, Change, SessionChange, WhatIf, WhatIfSummary};
