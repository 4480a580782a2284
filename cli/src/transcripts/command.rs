//! The options of `loopguard transcripts` and what it does with them: the configs read (and
//! changed with `--set`, compared with `--compare`), the policy loaded, the report written.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Output, Spooled, Transcripts};
use crate::options::{Config, Exit, JobsArgs, PolicyArgs};

/// The options `loopguard transcripts` and `loopguard report` share: what to read, and the
/// configs (and policy) to replay it on. One struct so that the two commands cannot drift.
#[derive(Debug, Args)]
pub struct ReplayOptions {
    /// What-if: replay again with KEY (a dotted config path, e.g.
    /// tools.loopDetection.warningThreshold) set to VALUE (JSON, else text); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// What-if: replay again under this config (--set applies on top of it).
    #[arg(long, value_name = "FILE")]
    pub compare: Option<PathBuf>,
    /// Decide as the agent-facing hosts do (`loopguard hook`, `loopguard mcp`, the LiteLLM
    /// guardrail): their default document filled in wherever the configs are silent.
    #[arg(long)]
    pub agent_default: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub jobs: JobsArgs,
    /// Where the transcripts are; `-` reads one from stdin. A file whose name says nothing (a pipe
    /// such as `<(cat x.jsonl)`, `session.txt`) is told by its first line.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

/// `loopguard transcripts`.
#[derive(Debug, Args)]
pub struct TranscriptsArgs {
    /// Write the report (and the what-if changes) as JSON Lines.
    #[arg(long, conflicts_with = "trace")]
    pub json: bool,
    /// Write the derived trace events (the trace format) instead of a report; no replay.
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub replay: ReplayOptions,
}

/// The configs and the policy of a run, read and checked.
pub struct Prepared {
    /// The config (A).
    pub config: String,
    /// The changed config (B), for a what-if.
    pub other: Option<String>,
    /// The policy (none for `--trace`, which replays nothing).
    pub policy: Option<loopguard_host::Policy>,
    /// The inputs, stdin spooled to a file.
    pub spooled: Spooled,
}

impl Prepared {
    /// The run over the prepared inputs.
    pub fn run<'a>(&'a self, t: &ReplayOptions, output: Output) -> Transcripts<'a> {
        Transcripts {
            paths: &self.spooled.paths,
            policy: self.policy.as_ref(),
            config: &self.config,
            other: self.other.as_deref(),
            output,
            jobs: t.jobs.count(),
            supervision: t.policy.replay_supervision(),
        }
    }
}

/// Runs `loopguard transcripts`.
pub fn run(t: TranscriptsArgs) -> anyhow::Result<Exit> {
    let output = if t.trace {
        Output::Trace
    } else if t.json {
        Output::Json
    } else {
        Output::Table
    };
    let prepared = prepare(&t.replay, !t.trace)?;
    let finished = prepared.run(&t.replay, output).run(&mut std::io::stdout().lock(), &mut std::io::stderr().lock())?;
    Ok(if finished.errors > 0 { Exit::InputErrors } else { Exit::Success })
}

/// Reads the configs (with `--set` and `--compare`), loads the policy when `replays`, checks
/// the configs on it and spools stdin. Without `--config` the replay is under OpenClaw's
/// defaults (`{}`, in which the rolling loop detectors are off), or the agent-facing hosts'
/// default with `--agent-default`.
pub fn prepare(t: &ReplayOptions, replays: bool) -> anyhow::Result<Prepared> {
    let config = Config::read(t.policy.config.as_deref())?.text;
    let other = match (&t.compare, t.set.is_empty()) {
        (None, true) => None,
        (Some(path), _) => Some(Config::read(Some(path))?.text),
        (None, false) => Some(config.clone()),
    };
    let other = match other {
        Some(base) if !t.set.is_empty() => Some(loopguard_transcripts::apply_overrides(&base, &t.set)?),
        other => other,
    };
    let agent = |text: String| loopguard_host::agent_config(&text).map_err(|e| anyhow::anyhow!("invalid config: {e}"));
    let (config, other) = match t.agent_default {
        true => (agent(config)?, other.map(agent).transpose()?),
        false => (config, other),
    };
    let policy = if replays { Some(t.policy.policy()?) } else { None };
    // Refused configs are named by their file, as `replay` names them.
    let check = |text: &str, path: Option<&Path>| -> anyhow::Result<()> {
        let Some(policy) = &policy else { return Ok(()) };
        match (policy.gateway(text), path) {
            (Err(e), Some(path)) => Err(crate::options::in_file(e, path)),
            (Err(e), None) => Err(anyhow::Error::new(e).context("the config with --set")),
            (Ok(_), _) => Ok(()),
        }
    };
    check(&config, t.policy.config.as_deref())?;
    if let Some(other) = &other {
        check(other, if t.set.is_empty() { t.compare.as_deref() } else { None })?;
    }
    let spooled = Spooled::new(&t.paths)?;
    Ok(Prepared { config, other, policy, spooled })
}
