//! The `loopguard` CLI: argument parsing, then calls into `loopguard_host`.
//!
//! Exit codes: 0 success, 2 any error (one line `loopguard: <message>` on stderr).

use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use loopguard_host::{replay, Policy, HOST_VERSION};

const USAGE: &str = "\
loopguard: a loop guard for AI-agent gateways

Usage:
  loopguard replay --config FILE [--policy FILE.wasm] TRACE|-
      Replay a trace (JSON Lines; `-` = stdin) on a gateway built from the config (JSON or JSON5)
      and write one decision per event line (JSON Lines) to stdout.
  loopguard version
      Print the CLI, policy and interface versions.
  loopguard --help

Options:
  --config FILE        OpenClaw-style config document (`{}` = defaults)
  --policy FILE.wasm   policy component to use instead of the embedded one

Environment:
  LOOPGUARD_CACHE_DIR  where compiled policies are cached (default ~/.cache/loopguard; empty = off)

Exit codes: 0 success, 2 error (one line on stderr).
";

enum Command {
    Help,
    Version { policy: Option<PathBuf> },
    Replay { config: PathBuf, policy: Option<PathBuf>, trace: String },
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
    let mut config = None;
    let mut policy = None;
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
        let mut value = |name: &str| -> anyhow::Result<PathBuf> {
            match inline.clone().or_else(|| args.next()) {
                Some(v) => Ok(PathBuf::from(v)),
                None => bail!("{name} needs a value"),
            }
        };
        match flag.as_str() {
            "--" => only_positional = true,
            "-h" | "--help" => return Ok(Command::Help),
            "--config" => config = Some(value("--config")?),
            "--policy" => policy = Some(value("--policy")?),
            other => bail!("unknown option {other}; try `loopguard --help`"),
        }
    }
    match sub.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "version" | "--version" | "-V" => {
            if let Some(extra) = positional.first() {
                bail!("unexpected argument {extra} for version");
            }
            Ok(Command::Version { policy })
        }
        "replay" => {
            let Some(config) = config else {
                bail!("replay needs --config FILE (use a file with `{{}}` for defaults)")
            };
            let trace = match positional.as_slice() {
                [one] => one.clone(),
                [] => bail!("replay needs a trace file (or `-` for stdin)"),
                [_, extra, ..] => bail!("unexpected argument {extra}; replay takes one trace"),
            };
            Ok(Command::Replay { config, policy, trace })
        }
        other => bail!("unknown command {other}; try `loopguard --help`"),
    }
}

fn load(policy: Option<PathBuf>) -> anyhow::Result<Policy> {
    if let Some(dir) = cache_dir() {
        // A cache that cannot be used only costs time: go on without it.
        let _ = loopguard_host::use_compile_cache(&dir);
    }
    Ok(match policy {
        Some(path) => Policy::from_file(path)?,
        None => Policy::embedded()?,
    })
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
            let mut instance = load(policy)?.instantiate()?;
            let text = format!(
                "loopguard: {HOST_VERSION}\npolicy: {}\ninterface: {}\n",
                instance.version()?,
                instance.interface_version()?
            );
            std::io::stdout().write_all(text.as_bytes()).context("writing to stdout")?;
        }
        Command::Replay { config, policy, trace } => {
            let config_text =
                std::fs::read_to_string(&config).with_context(|| format!("cannot read config {}", config.display()))?;
            let mut gateway = load(policy)?.gateway(&config_text).map_err(|e| in_file(e, &config))?;
            let input: Box<dyn Read> = if trace == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(std::fs::File::open(&trace).with_context(|| format!("cannot read trace {trace}"))?)
            };
            let mut input = BufReader::with_capacity(1 << 16, input);
            let mut stdout = std::io::stdout().lock();
            replay::stream(&mut gateway, &mut input, &mut stdout, replay::DEFAULT_CHUNK_BYTES)
                .map_err(|e| in_file(e, std::path::Path::new(if trace == "-" { "<stdin>" } else { &trace })))?;
        }
    }
    Ok(())
}
