//! `loopguard replay`: a trace (JSON Lines) through a gateway, one decision line per event.
//!
//! Layout: `crate::trace` reads the trace and applies it, on one gateway or on `--jobs` workers;
//! `store.rs` decides line by line on state kept in a store (`--store URL`); this file reads the
//! options and picks the mode: plain, `--swap-at` (a hot swap mid-trace), `--shadow` (a
//! candidate beside the policy).

mod store;
#[cfg(test)]
mod tests;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Args;
use loopguard_host::{Limits, LoadOptions, Policy, Supervision, SwappableGateway};

use crate::metrics::lines::Counted;
use crate::metrics::serve::MetricsArgs;
use crate::metrics::{self, Metrics};
use crate::options::{in_file, Config, JobsArgs, PolicyArgs};
use crate::trace::{parallel, stream};

/// `loopguard replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Hot-swap the policy right before trace line N (the replay then runs on one worker) …
    #[arg(long, value_name = "N")]
    pub swap_at: Option<u64>,
    /// … to this component, keeping the state (both options together).
    #[arg(long, value_name = "FILE.wasm")]
    pub swap_to: Option<PathBuf>,
    /// Run this candidate beside the policy; stdout stays the policy's decisions, each differing
    /// line goes to stderr as {"shadow_diff":{…}}, then a summary (on one worker).
    #[arg(long, value_name = "FILE.wasm")]
    pub shadow: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub jobs: JobsArgs,
    #[command(flatten)]
    pub store: store::StoreArgs,
    // `--metrics ADDR`: the decisions counted as they are written, for a long `replay … -`.
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// The trace (JSON Lines), or `-` for stdin. Tool events are sharded by session over --jobs
    /// workers; bot and group events stay on one. A trace on stdin, --swap-at and --shadow run on
    /// one worker.
    #[arg(value_name = "TRACE|-")]
    pub trace: Option<String>,
    /// More positional arguments (refused with a clear message).
    #[arg(hide = true)]
    pub extra: Vec<String>,
}

/// Runs `loopguard replay`.
pub fn run(r: ReplayArgs) -> anyhow::Result<()> {
    let Some(config_path) = r.policy.config.clone() else {
        bail!("replay needs --config FILE (use a file with `{{}}` for defaults)")
    };
    let trace = match (r.trace, r.extra.first()) {
        (None, _) => bail!("replay needs a trace file (or `-` for stdin)"),
        (Some(_), Some(extra)) => bail!("unexpected argument {extra}; replay takes one trace"),
        (Some(t), None) => t,
    };
    let swap = match (r.swap_at, r.swap_to) {
        (Some(0), _) => bail!("--swap-at counts trace lines from 1"),
        (Some(n), Some(to)) => Some((n, to)),
        (None, None) => None,
        _ => bail!("--swap-at N and --swap-to FILE.wasm go together"),
    };
    if r.shadow.is_some() && swap.is_some() {
        bail!("--shadow cannot be combined with --swap-at; run them separately");
    }
    let supervision = r.policy.replay_supervision();
    let config = Config::read(Some(&config_path))?;
    let policy = r.policy.policy()?;
    if let (Some(_), Some(_)) = (&r.store.store, r.metrics.metrics) {
        bail!("--metrics cannot be combined with --store yet; run the replay without one of them");
    }
    let metrics = r.metrics.metrics.map(|addr| (addr, Arc::new(Metrics::new("replay"))));
    if let Some((addr, m)) = &metrics {
        metrics::serve::spawn(*addr, Arc::clone(m))?;
    }
    if let Some(url) = &r.store.store {
        return store::replay(&r.store, url, &policy, (&config.text, &config_path), &trace);
    }
    let gateway = SwappableGateway::new(policy.clone(), &config.text, supervision).map_err(|e| config.refused(e))?;
    let stdin = trace == "-";
    let input: Box<dyn Read> = if stdin {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(&trace).with_context(|| format!("cannot read trace {trace}"))?)
    };
    let trace_name = Path::new(if stdin { "<stdin>" } else { &trace }).to_path_buf();
    let mut input = BufReader::with_capacity(1 << 16, input);
    loopguard_transcripts::skip_bom(&mut input);
    let named = |e: anyhow::Error| match e.downcast::<loopguard_host::Error>() {
        Ok(e) => in_file(e, &trace_name),
        Err(other) => other,
    };
    let stdout = std::io::stdout().lock();
    let mut stdout: Box<dyn Write> = match &metrics {
        Some((_, m)) => Box::new(Counted::new(stdout, Arc::clone(m))),
        None => Box::new(stdout),
    };
    let limits = r.policy.load_options().limits;
    let (result, health) = if let Some((at, to)) = swap {
        let result = swap_mode(&gateway, limits, at, &to, &mut input, &mut stdout);
        (result, Health::of(&gateway))
    } else if let Some(candidate) = r.shadow {
        let result = shadow_mode(&gateway, &config.text, limits, supervision, &candidate, &mut input, &mut stdout);
        (result, Health::of(&gateway))
    } else {
        // Only a regular file can be read again (see `parallel`): stdin and pipes run on one worker.
        let path = PathBuf::from(&trace);
        let reopen = move || -> std::io::Result<Box<dyn BufRead>> {
            let mut again = BufReader::with_capacity(1 << 16, std::fs::File::open(&path)?);
            loopguard_transcripts::skip_bom(&mut again);
            Ok(Box::new(again))
        };
        let seekable = !stdin && std::fs::metadata(&trace).is_ok_and(|m| m.is_file());
        let reopen: Option<parallel::Reopen<'_>> = if seekable { Some(&reopen) } else { None };
        let jobs = r.jobs.count();
        let done = parallel::stream(gateway, &policy, &config.text, jobs, &mut input, reopen, &mut stdout);
        let health = Health { counters: done.health, last: done.last_failure };
        (done.result.map(drop).map_err(anyhow::Error::from), health)
    };
    // Said before the error line, so that the last line stays the error.
    health.report();
    result.map_err(named)
}
fn swap_mode(
    gateway: &SwappableGateway,
    limits: Limits,
    at: u64,
    to: &Path,
    input: &mut dyn BufRead,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    let next = Policy::from_file_with(to, &LoadOptions { expect_digest: None, limits })?;
    let (_, report) = stream::stream_with_swap(gateway, input, stdout, stream::DEFAULT_CHUNK_BYTES, at, next)?;
    if let Some(report) = report {
        eprintln!(
            "loopguard: swapped {} -> {} before line {at} ({} bytes of state, paused {} us)",
            report.from_version,
            report.to_version,
            report.snapshot_bytes,
            report.paused.as_micros()
        );
    }
    Ok(())
}

fn shadow_mode(
    gateway: &SwappableGateway,
    config_text: &str,
    limits: Limits,
    supervision: Supervision,
    candidate: &Path,
    input: &mut dyn BufRead,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    let options = LoadOptions { expect_digest: None, limits };
    let candidate = SwappableGateway::new(Policy::from_file_with(candidate, &options)?, config_text, supervision)?;
    let mut stderr = std::io::stderr().lock();
    let summary = stream::shadow(gateway, &candidate, input, stdout, &mut stderr)?;
    writeln!(stderr, "shadow: {} events, {} differ", summary.events, summary.differ).context("writing to stderr")?;
    Ok(())
}

/// The supervisors' counters of a replay, said on stderr when a policy failed.
struct Health {
    counters: loopguard_host::Health,
    last: Option<String>,
}

impl Health {
    fn of(gateway: &SwappableGateway) -> Self {
        Health { counters: gateway.health(), last: gateway.last_failure() }
    }

    fn report(&self) {
        let h = &self.counters;
        if h.recoveries + h.timeouts + h.traps + h.oom > 0 {
            eprintln!(
                "loopguard: policy failures: {} timeouts, {} traps, {} out of memory, {} recoveries; last: {}",
                h.timeouts,
                h.traps,
                h.oom,
                h.recoveries,
                self.last.clone().unwrap_or_default()
            );
        }
    }
}
