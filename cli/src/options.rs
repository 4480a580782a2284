//! The options every command that decides takes, and the one loader of a policy and a config.
//!
//! Why one set: `replay`, `transcripts`, `hook` and `mcp` all load a policy and a config
//! document; when each declared its own options, `mcp` lacked the digest pin and the sandbox
//! limits, and each command named a bad file its own way. Here they are declared once
//! ([`PolicyArgs`], flattened into each command) and read once ([`PolicyArgs::policy`],
//! [`Config::read`]). What a command assumes when an option is absent (a config file it finds by
//! itself, the agent-facing default document) stays with the command.

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::builder::TypedValueParser as _;
use clap::Args;
use loopguard_host::{Deadline, FailureMode, Limits, LoadOptions, Policy, Supervision};

/// The policy and config options of `replay`, `transcripts`, `hook` and `mcp`.
#[derive(Debug, Clone, Default, Args)]
pub struct PolicyArgs {
    /// The config document (OpenClaw's, JSON or JSON5); what a command assumes without one is in
    /// its help.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Policy component to use instead of the embedded one.
    #[arg(long, value_name = "FILE.wasm")]
    pub policy: Option<PathBuf>,
    /// Refuse the policy unless its blake3 digest is HEX (checked before compiling).
    #[arg(long, value_name = "HEX")]
    pub expect_digest: Option<String>,
    /// Deadline of one typed call into the policy (default 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..).try_map(NonZeroU64::try_from))]
    pub deadline_ms: Option<NonZeroU64>,
    /// Memory cap of a policy instance (default 256).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..).try_map(NonZeroU64::try_from))]
    pub memory_mib: Option<NonZeroU64>,
    /// If the policy (or, in `hook`, the hook) breaks on a decision, block instead of allow.
    #[arg(long)]
    pub fail_closed: bool,
}

impl PolicyArgs {
    /// The digest pin and the sandbox's limits.
    pub fn load_options(&self) -> LoadOptions {
        let mut limits = Limits::default();
        if let Some(ms) = self.deadline_ms {
            limits.call_deadline = Deadline::from_millis(ms);
        }
        if let Some(mib) = self.memory_mib {
            let bytes = mib.saturating_mul(NonZeroU64::MIN.saturating_add((1 << 20) - 1));
            limits.memory_bytes = NonZeroUsize::try_from(bytes).unwrap_or(NonZeroUsize::MAX);
        }
        LoadOptions { expect_digest: self.expect_digest.clone(), limits }
    }

    /// What a broken policy answers.
    pub fn failure_mode(&self) -> FailureMode {
        if self.fail_closed {
            FailureMode::Closed
        } else {
            FailureMode::Open
        }
    }

    /// The supervision of a one-shot replay (`replay`, `transcripts`): the fail mode asked
    /// for, no standby, no call log.
    pub fn replay_supervision(&self) -> Supervision {
        Supervision {
            failure_mode: self.failure_mode(),
            // A one-shot replay does not need microsecond recoveries, and the standby's
            // background imports would compete with it for the CPU.
            standby: false,
            // It swaps between two chunks if at all (`--swap-at`), so nothing is gained by
            // copying every chunk into the log for a live migration: the bench's bot trace
            // replays 10.8 % faster without it, the tool trace 4.2 % (8.6 % with `--jobs 2`).
            log_calls: false,
            ..Supervision::default()
        }
    }

    /// Loads the policy: `--policy`, else the embedded one, with the digest pin and limits (the
    /// library's error names the file).
    pub fn policy(&self) -> loopguard_host::Result<Policy> {
        // A cache that cannot be used only costs start-up time: go on without it.
        let _ = loopguard_host::use_default_compile_cache();
        let options = self.load_options();
        match &self.policy {
            Some(path) => Policy::from_file_with(path, &options),
            None => Policy::embedded_with(&options),
        }
    }
}

/// A config document as read, with the name its errors go by.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from (`None`: the built-in `{}`).
    pub path: Option<PathBuf>,
    /// Its text.
    pub text: String,
}

impl Config {
    /// Reads `path`, or the empty document `{}` (every setting at its default) without one.
    pub fn read(path: Option<&Path>) -> anyhow::Result<Config> {
        let Some(path) = path else { return Ok(Config { path: None, text: "{}".into() }) };
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()))?;
        Ok(Config { path: Some(path.to_path_buf()), text })
    }

    /// The file's name in messages.
    pub fn name(&self) -> String {
        self.path.as_ref().map_or_else(|| "(built-in default)".into(), |p| p.display().to_string())
    }

    /// The document with the agent-facing hosts' defaults filled in where it is silent
    /// ([`loopguard_host::AGENT_DEFAULTS`]), as JSON.
    pub fn with_agent_defaults(self) -> anyhow::Result<Config> {
        let text = loopguard_host::agent_config(&self.text)
            .map_err(|e| anyhow::anyhow!("invalid config {}: {e}", self.name()))?;
        Ok(Config { text, ..self })
    }

    /// A policy error about this document, named by its file (replay's and the proxy's way).
    pub fn refused(&self, err: loopguard_host::Error) -> anyhow::Error {
        match &self.path {
            Some(path) => in_file(err, path),
            None => err.into(),
        }
    }
}

/// Workers for the commands that replay in parallel.
#[derive(Debug, Clone, Args)]
pub struct JobsArgs {
    /// Workers, each with its own policy instance, the first on the thread that reads the trace
    /// (default: the machine's available parallelism). The output is byte for byte the same for
    /// any N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
}

impl JobsArgs {
    /// `--jobs`, else the machine's parallelism.
    pub fn count(&self) -> usize {
        match self.jobs {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Names the file a policy error (config path, trace line) is about; other errors already say.
pub fn in_file(err: loopguard_host::Error, file: &Path) -> anyhow::Error {
    match err {
        loopguard_host::Error::Policy { .. } => anyhow::Error::new(err).context(file.display().to_string()),
        other => other.into(),
    }
}

/// What the process exits with when nothing failed outright.
pub enum Exit {
    /// Everything worked.
    Success,
    /// The output was written, but some input could not be read (said on stderr).
    InputErrors,
}
