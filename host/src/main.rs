//! The `loopguard` CLI: argument parsing, then calls into `loopguard_host`.
//!
//! Exit codes: 0 success, 2 any error (one line `loopguard: <message>` on stderr).

use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use loopguard_host::{replay, FailureMode, Limits, LoadOptions, Policy, Supervision, SwappableGateway, HOST_VERSION};

const USAGE: &str = "\
loopguard: a loop guard for AI-agent gateways

Usage:
  loopguard replay --config FILE [--policy FILE.wasm] [OPTIONS] TRACE|-
      Replay a trace (JSON Lines; `-` = stdin) on a gateway built from the config (JSON or JSON5)
      and write one decision per event line (JSON Lines) to stdout.
  loopguard inspect FILE.wasm
      Print what a policy component says about itself: size, digest, versions, imports.
  loopguard version
      Print the CLI, policy and interface versions.
  loopguard --help

Options:
  --config FILE        OpenClaw-style config document (`{}` = defaults)
  --policy FILE.wasm   policy component to use instead of the embedded one
  --expect-digest HEX  refuse the policy unless its blake3 digest is HEX (checked before compiling)
  --swap-at N          hot-swap the policy right before trace line N …
  --swap-to FILE.wasm  … to this component, keeping the state (both options together)
  --shadow FILE.wasm   run this candidate beside the policy; stdout stays the policy's decisions,
                       each differing line goes to stderr as {\"shadow_diff\":{…}}, then a summary
  --deadline-ms N      deadline of one typed call into the policy (default 100)
  --memory-mib N       memory cap of a policy instance (default 256)
  --fail-closed        if the policy breaks on a decision, block instead of allow

Environment:
  LOOPGUARD_CACHE_DIR  where compiled policies are cached (default ~/.cache/loopguard; empty = off)

Exit codes: 0 success, 2 error (one line on stderr).
";

enum Command {
    Help,
    Version { policy: Option<PathBuf> },
    Inspect { file: PathBuf },
    Replay(Replay),
}

struct Replay {
    config: PathBuf,
    policy: Option<PathBuf>,
    trace: String,
    options: LoadOptions,
    supervision: Supervision,
    swap: Option<(u64, PathBuf)>,
    shadow: Option<PathBuf>,
}

fn main() -> ExitCode {
    // A bug must still end in one `loopguard:` line and exit code 2, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("loopguard: internal error{at}: {}; please report it", one_line(&what));
    }));
    let result = std::panic::catch_unwind(|| parse(std::env::args().skip(1)).and_then(run));
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        // The reader went away (`loopguard replay … | head`): that is how pipes end, not an error.
        Ok(Err(err)) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            eprintln!("loopguard: {}", one_line(&format!("{err:#}")));
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| match e.downcast_ref::<loopguard_host::Error>() {
        Some(loopguard_host::Error::Io { source, .. }) => source.kind() == std::io::ErrorKind::BrokenPipe,
        _ => e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe),
    })
}

fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

fn parse(mut args: impl Iterator<Item = String>) -> anyhow::Result<Command> {
    let Some(sub) = args.next() else { bail!("missing command; try `loopguard --help`") };
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut switches: Vec<String> = Vec::new();
    let mut positional = Vec::new();
    let mut only_positional = false;
    while let Some(arg) = args.next() {
        if only_positional || arg == "-" || !arg.starts_with('-') {
            positional.push(arg);
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        match flag.as_str() {
            "--" => only_positional = true,
            "-h" | "--help" => return Ok(Command::Help),
            "--fail-closed" => switches.push(flag),
            "--config" | "--policy" | "--expect-digest" | "--swap-at" | "--swap-to" | "--shadow" | "--deadline-ms"
            | "--memory-mib" => match inline.or_else(|| args.next()) {
                Some(v) => flags.push((flag, v)),
                None => bail!("{flag} needs a value"),
            },
            other => bail!("unknown option {other}; try `loopguard --help`"),
        }
    }
    let flag = |name: &str| flags.iter().rev().find(|(f, _)| f == name).map(|(_, v)| v.clone());
    let number = |name: &str| -> anyhow::Result<Option<u64>> {
        flag(name)
            .map(|v| v.parse::<u64>().with_context(|| format!("{name} needs a whole number, not {v:?}")))
            .transpose()
    };
    let policy = flag("--policy").map(PathBuf::from);
    match sub.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "version" | "--version" | "-V" => {
            if let Some(extra) = positional.first() {
                bail!("unexpected argument {extra} for version");
            }
            Ok(Command::Version { policy })
        }
        "inspect" => match positional.as_slice() {
            [one] => Ok(Command::Inspect { file: PathBuf::from(one) }),
            [] => bail!("inspect needs a policy component (FILE.wasm)"),
            [_, extra, ..] => bail!("unexpected argument {extra}; inspect takes one file"),
        },
        "replay" => {
            let Some(config) = flag("--config").map(PathBuf::from) else {
                bail!("replay needs --config FILE (use a file with `{{}}` for defaults)")
            };
            let trace = match positional.as_slice() {
                [one] => one.clone(),
                [] => bail!("replay needs a trace file (or `-` for stdin)"),
                [_, extra, ..] => bail!("unexpected argument {extra}; replay takes one trace"),
            };
            let mut limits = Limits::default();
            if let Some(ms) = number("--deadline-ms")? {
                limits.call_deadline = std::time::Duration::from_millis(ms.max(1));
            }
            if let Some(mib) = number("--memory-mib")? {
                limits.memory_bytes = usize::try_from(mib.max(1)).unwrap_or(usize::MAX >> 20) << 20;
            }
            let options = LoadOptions { expect_digest: flag("--expect-digest"), limits };
            let supervision = Supervision {
                failure_mode: if switches.iter().any(|s| s == "--fail-closed") {
                    FailureMode::Closed
                } else {
                    FailureMode::Open
                },
                // A one-shot replay does not need microsecond recoveries, and the standby's
                // background imports would compete with it for the CPU.
                standby: false,
                ..Supervision::default()
            };
            let swap = match (number("--swap-at")?, flag("--swap-to")) {
                (Some(0), _) => bail!("--swap-at counts trace lines from 1"),
                (Some(n), Some(to)) => Some((n, PathBuf::from(to))),
                (None, None) => None,
                _ => bail!("--swap-at N and --swap-to FILE.wasm go together"),
            };
            let shadow = flag("--shadow").map(PathBuf::from);
            if shadow.is_some() && swap.is_some() {
                bail!("--shadow cannot be combined with --swap-at; run them separately");
            }
            Ok(Command::Replay(Replay { config, policy, trace, options, supervision, swap, shadow }))
        }
        other => bail!("unknown command {other}; try `loopguard --help`"),
    }
}

fn load(policy: Option<PathBuf>, options: &LoadOptions) -> anyhow::Result<Policy> {
    use_cache();
    Ok(match policy {
        Some(path) => Policy::from_file_with(path, options)?,
        None => Policy::embedded_with(options)?,
    })
}

fn use_cache() {
    if let Some(dir) = cache_dir() {
        // A cache that cannot be used only costs time: go on without it.
        let _ = loopguard_host::use_compile_cache(&dir);
    }
}

/// Names the file a policy error (config path, trace line) is about; other errors already say.
fn in_file(err: loopguard_host::Error, file: &std::path::Path) -> anyhow::Error {
    match err {
        loopguard_host::Error::Policy { .. } => anyhow::Error::new(err).context(file.display().to_string()),
        other => other.into(),
    }
}

/// Where compiled policies are cached: `$LOOPGUARD_CACHE_DIR` (empty = no cache), else
/// `$XDG_CACHE_HOME/loopguard`, else `~/.cache/loopguard`.
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LOOPGUARD_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("loopguard"))
}

fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Help => std::io::stdout().write_all(USAGE.as_bytes()).context("writing to stdout")?,
        Command::Version { policy } => {
            let mut instance = load(policy, &LoadOptions::default())?.instantiate()?;
            let text = format!(
                "loopguard: {HOST_VERSION}\npolicy: {}\ninterface: {}\n",
                instance.version()?,
                instance.interface_version()?
            );
            std::io::stdout().write_all(text.as_bytes()).context("writing to stdout")?;
        }
        Command::Inspect { file } => {
            use_cache();
            let inspection = Policy::inspect_file(&file)?;
            std::io::stdout().write_all(inspection.to_string().as_bytes()).context("writing to stdout")?;
        }
        Command::Replay(r) => replay_command(r)?,
    }
    Ok(())
}

fn replay_command(r: Replay) -> anyhow::Result<()> {
    let config_text =
        std::fs::read_to_string(&r.config).with_context(|| format!("cannot read config {}", r.config.display()))?;
    let policy = load(r.policy, &r.options)?;
    let gateway = SwappableGateway::new(policy, &config_text, r.supervision).map_err(|e| in_file(e, &r.config))?;
    let input: Box<dyn Read> = if r.trace == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(&r.trace).with_context(|| format!("cannot read trace {}", r.trace))?)
    };
    let trace_name = std::path::Path::new(if r.trace == "-" { "<stdin>" } else { &r.trace }).to_path_buf();
    let mut input = BufReader::with_capacity(1 << 16, input);
    let result = replay_mode(&gateway, &config_text, r.options.limits, r.supervision, r.swap, r.shadow, &mut input)
        .map_err(|e| match e.downcast::<loopguard_host::Error>() {
            Ok(e) => in_file(e, &trace_name),
            Err(other) => other,
        });
    // Said before the error line, so that the last line stays the error.
    report_health(&gateway);
    result
}

fn replay_mode(
    gateway: &SwappableGateway,
    config_text: &str,
    limits: Limits,
    supervision: Supervision,
    swap: Option<(u64, PathBuf)>,
    shadow: Option<PathBuf>,
    input: &mut dyn std::io::BufRead,
) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let options = LoadOptions { expect_digest: None, limits };
    if let Some((at, to)) = swap {
        let next = Policy::from_file_with(&to, &options)?;
        let (_, report) = replay::stream_with_swap(gateway, input, &mut stdout, replay::DEFAULT_CHUNK_BYTES, at, next)?;
        if let Some(report) = report {
            eprintln!(
                "loopguard: swapped {} -> {} before line {at} ({} bytes of state, paused {} us)",
                report.from_version,
                report.to_version,
                report.snapshot_bytes,
                report.paused.as_micros()
            );
        }
    } else if let Some(candidate) = shadow {
        let candidate = SwappableGateway::new(Policy::from_file_with(&candidate, &options)?, config_text, supervision)?;
        let mut stderr = std::io::stderr().lock();
        let summary = replay::shadow(gateway, &candidate, input, &mut stdout, &mut stderr)?;
        writeln!(stderr, "shadow: {} events, {} differ", summary.events, summary.differ)
            .context("writing to stderr")?;
    } else {
        let mut sink = gateway;
        replay::stream(&mut sink, input, &mut stdout, replay::DEFAULT_CHUNK_BYTES)?;
    }
    Ok(())
}

/// A replay that needed the supervisor says so on stderr (the decisions stay on stdout).
fn report_health(gateway: &SwappableGateway) {
    let h = gateway.health();
    if h.recoveries + h.timeouts + h.traps + h.oom > 0 {
        eprintln!(
            "loopguard: policy failures: {} timeouts, {} traps, {} out of memory, {} recoveries; last: {}",
            h.timeouts,
            h.traps,
            h.oom,
            h.recoveries,
            gateway.last_failure().unwrap_or_default()
        );
    }
}
