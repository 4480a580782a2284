//! # loopguard-transcripts
//!
//! "On my agents' real history, where would the guard have fired?" OpenClaw keeps that history
//! in per-agent SQLite stores (zstd-compressed rows, pi session records in a tree of
//! `id`/`parentId`), older releases in JSONL files, and exports in trajectory bundles. This crate
//! reads all three without loading a store into memory, follows each session's active branch the
//! way OpenClaw does, and turns the records into loopguard trace events
//! (`docs/spec/trace-format.md`) exactly as OpenClaw's own loop guard saw the calls and outcomes:
//! the tool names go through the policy's own
//! `loopguard_policy::config::profile::releases::normalize_tool_name`. It then builds the report
//! from the decisions a replay produced, and compares two configs.
//!
//! ## The command
//!
//! `loopguard transcripts` is this crate behind the CLI (`host/src/transcripts`):
//!
//! ```text
//! loopguard transcripts [--config FILE] [--policy FILE.wasm] PATH...          # the report, a table
//! loopguard transcripts --config openclaw.json5 --set tools.loopDetection.criticalThreshold=12 PATH...
//! loopguard transcripts --config a.json5 --compare b.json5 PATH...           # what changes under b
//! loopguard transcripts --json PATH...                                        # report as JSON Lines
//! loopguard transcripts --trace PATH...                                       # the trace events, no replay
//! ```
//!
//! `PATH` is a state directory (`~/.openclaw`), an agent's `.sqlite`, a JSONL transcript or a
//! directory of them, or a trajectory export; or a coding CLI's history: Claude Code sessions
//! (`~/.claude/projects`), Codex rollouts (`~/.codex/sessions`), Gemini CLI chats
//! (`~/.gemini/tmp`), Copilot CLI session logs (`~/.copilot/session-state`) and Qwen Code chats
//! (`~/.qwen/projects`), read as their hooks saw the calls ([`cli_tool_result`]); OpenCode's
//! database (`~/.local/share/opencode/opencode.db`) and Cline's tasks
//! (`~/.cline/data/sessions`), read as loopguard's in-process plugins saw them. `--set KEY=VALUE` (repeatable) and `--compare FILE`
//! replay a second time under the changed config and list the sessions whose verdicts change.
//!
//! ## The library
//!
//! [`discover`] finds the sessions under the paths, an [`Importer`] reads them one at a time as
//! [`SessionTrace`]s, a replay (the host's gateway, or here the policy's native core) decides each
//! event, and a [`ReportBuilder`] folds the decisions into a [`Report`]:
//!
//! ```
//! use loopguard_policy::gateway::Gateway;
//! use loopguard_transcripts::{discover, Importer, ReportBuilder};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use serde_json::json;
//! # let dir = tempfile::tempdir()?;
//! # let mut lines = vec![json!({"type": "session", "version": 3, "id": "s1"}).to_string()];
//! # let mut parent = serde_json::Value::Null;
//! # for i in 0..12 {
//! #     let (c, r, t) = (format!("c{i}"), format!("r{i}"), format!("t{i}"));
//! #     lines.push(json!({"type": "message", "id": c, "parentId": parent, "timestamp": "2026-12-01T20:00:00.000Z",
//! #         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": t, "name": "Read", "arguments": {"path": "a"}}]}}).to_string());
//! #     lines.push(json!({"type": "message", "id": r, "parentId": c, "timestamp": "2026-12-01T20:00:00.500Z",
//! #         "message": {"role": "toolResult", "toolCallId": t, "toolName": "Read", "content": [{"type": "text", "text": "same"}], "isError": false}}).to_string());
//! #     parent = json!(r);
//! # }
//! # std::fs::write(dir.path().join("s1.jsonl"), lines.join("\n") + "\n")?;
//! # let state_dir = dir.path();
//! let found = discover(&[state_dir]);
//! let mut gateway = Gateway::from_config(r#"{"tools":{"loopDetection":{"enabled":true}}}"#)?;
//! let (mut report, mut line) = (ReportBuilder::new(), 1);
//! for trace in Importer::default().traces(&found.sessions) {
//!     let decisions = gateway.apply_events(&trace.trace_text(), line)?;
//!     line += trace.events.len() as u32;
//!     report.add_trace(&trace, &decisions.lines().collect::<Vec<_>>())?;
//! }
//! let report = report.finish();
//! print!("{}", report.to_table()); // or report.write_jsonl(&mut std::io::stdout())?, as --json does
//! assert_eq!((report.summary.tool_calls, report.summary.sessions_with_warnings), (12, 1));
//! # Ok(())
//! # }
//! ```
//!
//! For a what-if, replay the same traces on a second gateway (built from
//! [`apply_overrides`]`(config, &["KEY=VALUE"])`) into a second builder and compare with
//! [`what_if`]. For a session too large to hold, [`Importer::read_session`] streams its events to
//! a closure instead, and [`SessionTally::observe`] folds one decision at a time.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bom;
mod error;
mod event;
mod mapping;
mod overrides;
mod progress;
mod read;
mod record;
mod report;
mod session;
mod table;
mod timestamp;
mod whatif;

pub use bom::{skip_bom, strip_bom, BOM};
pub use error::{Error, ErrorKind, Location};
pub use event::{Compaction, EventKind, EventRef, ImportedEvent, Outcome, Recorded, ToolCall, ToolResult, TraceEvent};
pub use mapping::{cli_tool_result, copilot_shell_footer, SessionStats};
pub use overrides::{apply_overrides, OverrideError};
pub use progress::{progress_fn, NoProgress, Progress, ProgressFn, TerminalProgress};
pub use read::{discover, Discovery, ImportOptions, Importer, SessionRead, SessionTrace, Skipped, Traces};
pub use report::{
    Decision, DecisionError, DetectorCounts, DetectorSummary, Finding, Report, ReportBuilder, SessionRow, SessionTally,
    Summary,
};
pub use session::{KeySource, SessionInfo, SourceFormat};
pub use whatif::{compare_rows, what_if, Change, SessionChange, WhatIf, WhatIfSummary};
