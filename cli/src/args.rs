//! The command line: clap's derive API, and clap's errors turned into the CLI's one-line
//! `loopguard: …` messages. Each command's own options live in its folder, the options they
//! share in `options.rs`; nothing here decides anything.

use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Parser, Subcommand};

const ABOUT: &str = "loopguard: a loop guard for AI-agent gateways";

const AFTER: &str = "\
Environment:
  LOOPGUARD_CACHE_DIR  where compiled policies are cached (default ~/.cache/loopguard; empty = off)

Exit codes: 0 success, 2 error (one line on stderr); `transcripts`, `report`: 1 when the report was
written but some input could not be read (one `loopguard:` line per error on stderr).";

/// `loopguard`.
#[derive(Debug, Parser)]
#[command(
    name = "loopguard",
    about = ABOUT,
    override_usage = "\n  loopguard replay --config FILE [--policy FILE.wasm] [OPTIONS] TRACE|-\n  \
                      loopguard transcripts [--config FILE | --agent-default] [--policy FILE.wasm] [OPTIONS] PATH...\n  \
                      loopguard report [--config FILE | --agent-default] [-o FILE.html] [OPTIONS] PATH...\n  \
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
    Replay(Box<crate::replay::ReplayArgs>),
    /// Read OpenClaw's transcripts (a state directory, an agent's .sqlite, a JSONL transcript or a
    /// directory of them, a trajectory export), replay them, and report per session where the
    /// guard warns, blocks and aborts; with --set/--compare, what changes under another config.
    ///
    /// The coding CLIs' own histories are read too, as loopguard's hooks and plugins see the
    /// calls: Claude Code (~/.claude/projects), Codex (~/.codex/sessions), Gemini CLI
    /// (~/.gemini/tmp), OpenCode (~/.local/share/opencode/opencode.db), GitHub Copilot CLI
    /// (~/.copilot/session-state), Cline (~/.cline/data/sessions) and Qwen Code
    /// (~/.qwen/projects); pass the folder or a file.
    ///
    /// Without --config the replay is under OpenClaw's defaults (`{}`, in which the rolling loop
    /// detectors are off); --agent-default decides as the agent-facing hosts do.
    #[command(
        override_usage = "loopguard transcripts [--config FILE] [--agent-default] [--policy FILE.wasm] [--json | --trace] \
                          [--set KEY=VALUE]... [--compare FILE] [OPTIONS] PATH...",
        after_help = AFTER
    )]
    Transcripts(crate::transcripts::command::TranscriptsArgs),
    /// Read and replay the transcripts as `transcripts` does and write one self-contained HTML
    /// page (default loopguard-report.html; -o - for stdout): an overview, a timeline of each
    /// session the guard touched that opens to its calls and the message the model would have
    /// read, and with --set/--compare the sessions that change (see docs/REPORT.md).
    #[command(
        override_usage = "loopguard report [--config FILE] [--agent-default] [--policy FILE.wasm] [-o FILE.html] \
                          [--set KEY=VALUE]... [--compare FILE] [OPTIONS] PATH...",
        after_help = AFTER
    )]
    Report(crate::report::ReportArgs),
    /// Serve one hook event of Claude Code, Codex, Gemini CLI or Copilot CLI: the event on
    /// stdin, the answer on stdout (see docs/AGENT-CLIS.md). Copilot CLI's events do not name
    /// themselves: `loopguard hook copilot preToolUse` (or `postToolUse`, `postToolUseFailure`).
    ///
    /// The policy, the config and the fail mode also come from LOOPGUARD_POLICY,
    /// LOOPGUARD_CONFIG and LOOPGUARD_FAIL_MODE=closed. Without a config the hook reads
    /// config.json5 or config.json in the state folder, else `{}`; tool-loop detection is on with
    /// the `cautious` preset unless the document says otherwise (`enabled: false`,
    /// `loopguard.preset: "off"`). --fail-closed: when the hook fails, deny the tool call instead
    /// of letting it run.
    #[command(
        override_usage = "loopguard hook <claude-code|codex|gemini|copilot> [EVENT] [--state-dir DIR] [--config FILE] [OPTIONS]"
    )]
    Hook(crate::hook::HookArgs),
    /// Run an MCP server behind the loop guard: stdio (`-- <server command…>`) or streamable
    /// HTTP (`--listen ADDR --upstream URL`); every message passes untouched except a blocked
    /// `tools/call` (see docs/PROXIES.md).
    ///
    /// Where the config is silent (or without --config), tool-loop detection is on with the
    /// `cautious` preset, the agent-facing hosts' one default. --fail-closed: a call the broken
    /// policy cannot decide is blocked instead of let through.
    #[command(override_usage = "loopguard mcp [--config FILE] [--policy FILE.wasm] -- <server command…>\n       \
                                loopguard mcp [--config FILE] --listen ADDR --upstream URL")]
    Mcp(crate::mcp::McpArgs),
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
        ErrorKind::MissingRequiredArgument if sub == "transcripts" || sub == "report" => {
            format!("{sub} needs at least one PATH (a state directory, an agent .sqlite, a .jsonl, a trajectory export; - for stdin)")
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
