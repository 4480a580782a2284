//! `loopguard report`: what the guard would have done on the agents' history, as one page.
//!
//! Before switching the guard on, an operator wants to *see* it on their own sessions: which
//! ones, where in each, which detector, what the model would have read, and what changes under
//! another config. The command reads and replays exactly as `loopguard transcripts` does (the
//! same options, the same pipeline in `crate::transcripts`, which also keeps each session's calls
//! and verdicts for it), then writes one self-contained HTML file: [`model`] is the data,
//! [`html`] the writer, `assets/` the page's CSS and script.
//!
//! ```text
//! loopguard report --agent-default ~/.claude/projects              # → loopguard-report.html
//! loopguard report --config a.json5 --compare b.json5 -o ab.html ~/.openclaw
//! ```

pub mod html;
pub mod model;

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::options::Exit;
use crate::transcripts::command::{prepare, ReplayOptions};
use crate::transcripts::Output;

/// The default output file, in the current directory.
pub const DEFAULT_OUTPUT: &str = "loopguard-report.html";

/// `loopguard report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Where to write the page (default loopguard-report.html in the current directory; `-`
    /// writes it to stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub replay: ReplayOptions,
}

/// Runs `loopguard report`.
pub fn run(t: ReportArgs) -> anyhow::Result<Exit> {
    let prepared = prepare(&t.replay, true)?;
    let mut err = std::io::stderr().lock();
    let replayed = prepared.run(&t.replay, Output::Report).replay(&mut std::io::sink(), &mut err)?;
    let compared = match replayed.reports.as_slice() {
        [a, b] => Some(loopguard_transcripts::what_if(a, b)),
        _ => None,
    };
    let inputs: Vec<String> = t.replay.paths.iter().map(|p| p.display().to_string()).collect();
    let page = html::Page {
        reports: &replayed.reports,
        views: &replayed.views,
        compared: compared.as_ref(),
        inputs: &inputs,
        configs: &configs(&t.replay),
    };
    let path = t.output.unwrap_or_else(|| PathBuf::from(DEFAULT_OUTPUT));
    if path.as_os_str() == "-" {
        page.write(&mut std::io::stdout().lock()).context("writing the report to stdout")?;
    } else {
        // Written beside the target and renamed: an interrupted run leaves no half page.
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let mut tmp = readable(tempfile::Builder::new()).tempfile_in(dir).with_context(|| {
            format!("{}: cannot write the report there (the folder must exist and be writable)", path.display())
        })?;
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        page.write(&mut w).with_context(|| format!("writing {}", path.display()))?;
        w.flush().with_context(|| format!("writing {}", path.display()))?;
        drop(w);
        tmp.persist(&path).with_context(|| format!("{}: cannot write the report there", path.display()))?;
    }
    Ok(if replayed.finished.errors > 0 { Exit::InputErrors } else { Exit::Success })
}

/// A page is shared like any file the user writes (a temp file is private by default): 0644,
/// less the umask, on Unix.
fn readable<'a, 'b>(mut b: tempfile::Builder<'a, 'b>) -> tempfile::Builder<'a, 'b> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b
}

/// What the page calls config A and B.
fn configs(t: &ReplayOptions) -> Vec<String> {
    let name = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let default = if t.agent_default { "the agent-facing hosts' default" } else { "OpenClaw's default ({})" };
    let a = name(&t.policy.config).unwrap_or_else(|| default.into());
    let a = if t.agent_default && t.policy.config.is_some() { format!("{a} (with --agent-default)") } else { a };
    let mut out = vec![a.clone()];
    if t.compare.is_some() || !t.set.is_empty() {
        let base = name(&t.compare).unwrap_or(a);
        let sets = t.set.iter().map(|s| format!(" --set {s}")).collect::<String>();
        out.push(format!("{base}{sets}"));
    }
    out
}
