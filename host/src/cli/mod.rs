//! The command line: clap's derive API, and clap's errors turned into the CLI's one-line
//! `loopguard: …` messages. Nothing here decides anything about the policy: `run.rs` calls the
//! library with what was parsed.

pub mod hook;
pub mod mcp;
pub mod parallel;
pub mod replay;
pub mod run;
pub mod store;
pub mod transcripts;

use std::num::NonZeroU64;
use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser, Subcommand};

const ABOUT: &str = "loopguard: a loop guard for AI-agent gateways";

const AFTER: &str = "\
Environment:
  LOOPGUARD_CACHE_DIR  where compiled policies are cached (default ~/.cache/loopguard; empty = off)

Exit codes: 0 success, 2 error (one line on stderr); `transcripts`: 1 when the report was
written but some input could not be read (one `loopguard:` line per error on stderr).";

/// `loopguard`.
#[derive(Debug, Parser)]
#[command(
    name = "loopguard",
    about = ABOUT,
    override_usage = "\n  loopguard replay --config FILE [--policy FILE.wasm] [OPTIONS] TRACE|-\n  \
                      loopguard transcripts [--config FILE | --agent-default] [--policy FILE.wasm] [OPTIONS] PATH...\n  \
                      loopguard hook <claude-code|codex|gemini> [--state-dir DIR] [--config FILE] [OPTIONS]\n  \
                      loopguard mcp [--config FILE] [--policy FILE.wasm] -- <server command…>\n  \
                      loopguard mcp [--config FILE] --listen ADDR --upstream URL\n  \
                      loopguard inspect FILE.wasm\n  loopguard version\n  loopguard --help",
    after_help = AFTER,
    disable_version_flag = true,
    args_override_self = true,
    subcommand_required = false
)]
pub struct Cli {
    /// Print the CLI, policy and interface versions (same as `loopguard version`).
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a trace (JSON Lines; `-` = stdin) on a gateway built from the config (JSON or
    /// JSON5) and write one decision per event line (JSON Lines) to stdout.
    #[command(
        override_usage = "loopguard replay --config FILE [--policy FILE.wasm] [OPTIONS] TRACE|-",
        after_help = AFTER
    )]
    Replay(Replay),
    /// Read OpenClaw's transcripts (a state directory, an agent's .sqlite, a JSONL transcript or a
    /// directory of them, a trajectory export), replay them, and report per session where the
    /// guard warns, blocks and aborts; with --set/--compare, what changes under another config.
    #[command(
        override_usage = "loopguard transcripts [--config FILE] [--agent-default] [--policy FILE.wasm] [--json | --trace] \
                          [--set KEY=VALUE]... [--compare FILE] [OPTIONS] PATH...",
        after_help = AFTER
    )]
    Transcripts(Transcripts),
    /// Serve one hook event of Claude Code, Codex or Gemini CLI: the event on stdin, the answer
    /// on stdout (see docs/AGENT-CLIS.md).
    #[command(
        override_usage = "loopguard hook <claude-code|codex|gemini> [--state-dir DIR] [--config FILE] [OPTIONS]"
    )]
    Hook(hook::HookArgs),
    /// Run an MCP server behind the loop guard: stdio (`-- <server command…>`) or streamable
    /// HTTP (`--listen ADDR --upstream URL`); every message passes untouched except a blocked
    /// `tools/call` (see docs/PROXIES.md).
    #[command(override_usage = "loopguard mcp [--config FILE] [--policy FILE.wasm] -- <server command…>\n       \
                                loopguard mcp [--config FILE] --listen ADDR --upstream URL")]
    Mcp(mcp::Mcp),
    /// Print what a policy component says about itself: size, digest, versions, imports.
    #[command(override_usage = "loopguard inspect FILE.wasm")]
    Inspect {
        /// The policy component.
        #[arg(value_name = "FILE.wasm")]
        file: PathBuf,
    },
    /// Print the CLI, policy and interface versions.
    Version {
        /// Ask this policy component instead of the embedded one.
        #[arg(long, value_name = "FILE.wasm")]
        policy: Option<PathBuf>,
    },
}

/// Options shared by the commands that load a policy.
#[derive(Debug, Args)]
pub struct PolicyArgs {
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
    /// If the policy breaks on a decision, block instead of allow.
    #[arg(long)]
    pub fail_closed: bool,
    /// Workers, each with its own policy instance, the first on the thread that reads the trace
    /// (default: the machine's available parallelism). The output is byte for byte the same for
    /// any N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
}

/// `loopguard replay`.
#[derive(Debug, Args)]
pub struct Replay {
    /// OpenClaw-style config document (`{}` = defaults).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
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
    pub store: store::StoreArgs,
    /// The trace (JSON Lines), or `-` for stdin. Tool events are sharded by session over --jobs
    /// workers; bot and group events stay on one. A trace on stdin, --swap-at and --shadow run on
    /// one worker.
    #[arg(value_name = "TRACE|-")]
    pub trace: Option<String>,
    /// More positional arguments (refused with a clear message).
    #[arg(hide = true)]
    pub extra: Vec<String>,
}

/// `loopguard transcripts`.
#[derive(Debug, Args)]
pub struct Transcripts {
    /// The OpenClaw config to replay under (JSON or JSON5; default `{}`, OpenClaw's defaults,
    /// in which the rolling loop detectors are off).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
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
    /// Write the report (and the what-if changes) as JSON Lines.
    #[arg(long, conflicts_with = "trace")]
    pub json: bool,
    /// Write the derived trace events (the trace format) instead of a report; no replay.
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Where the transcripts are; `-` reads one from stdin. A file whose name says nothing (a pipe
    /// such as `<(cat x.jsonl)`, `session.txt`) is told by its first line.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

/// Parses the arguments; help (`Ok(Err(text))`) is not an error.
pub fn parse(args: impl Iterator<Item = String>) -> Result<Result<Cli, String>, String> {
    let args: Vec<String> = std::iter::once("loopguard".to_string()).chain(args).collect();
    if args.len() == 1 {
        return Err("missing command; try `loopguard --help`".into());
    }
    match Cli::try_parse_from(&args) {
        Ok(cli) if cli.command.is_none() && !cli.version => Err("missing command; try `loopguard --help`".into()),
        Ok(cli) => Ok(Ok(cli)),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(Err(e.to_string())),
        Err(e) => Err(one_line_error(&e, &args)),
    }
}

fn context(e: &clap::Error, kind: ContextKind) -> String {
    match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.join(", "),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// clap's error in the CLI's words: one line, naming the command and the argument.
fn one_line_error(e: &clap::Error, args: &[String]) -> String {
    let arg = context(e, ContextKind::InvalidArg);
    let sub = args.get(1).map(String::as_str).unwrap_or("");
    let flag = arg.split([' ', '=']).next().unwrap_or("").to_string();
    match e.kind() {
        ErrorKind::InvalidSubcommand => {
            format!("unknown command {}; try `loopguard --help`", context(e, ContextKind::InvalidSubcommand))
        }
        ErrorKind::UnknownArgument if arg.starts_with('-') => format!("unknown option {flag}; try `loopguard --help`"),
        ErrorKind::UnknownArgument => format!("unexpected argument {arg}; try `loopguard {sub} --help`"),
        ErrorKind::MissingRequiredArgument if sub == "inspect" => "inspect needs a policy component (FILE.wasm)".into(),
        ErrorKind::MissingRequiredArgument if sub == "transcripts" => {
            "transcripts needs at least one PATH (a state directory, an agent .sqlite, a .jsonl, a trajectory export; - for stdin)"
                .into()
        }
        // `--store-cert` without `--store-key`, say: the argument it needs, named.
        ErrorKind::MissingRequiredArgument if !arg.is_empty() => {
            format!("{sub} needs {arg}; try `loopguard {sub} --help`")
        }
        ErrorKind::InvalidValue if context(e, ContextKind::InvalidValue).is_empty() => format!("{flag} needs a value"),
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let value = context(e, ContextKind::InvalidValue);
            let unit = match flag.as_str() {
                "--jobs" => "workers",
                "--deadline-ms" => "milliseconds",
                "--memory-mib" => "MiB",
                _ => return format!("{flag} needs a whole number, not {value:?}"),
            };
            format!("{flag} needs a whole number of {unit} (1 or more), not {value:?}")
        }
        ErrorKind::ArgumentConflict => {
            format!("{flag} cannot be combined with {}", context(e, ContextKind::PriorArg))
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            format!("{}; try `loopguard --help`", first.trim_start_matches("error: "))
        }
    }
}
