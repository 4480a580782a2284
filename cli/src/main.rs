//! The `loopguard` command: the products built on the `loopguard_host` library, one folder per
//! command (`replay`, `transcripts`, `report`, `inspect` and `version`, the agent-CLI `hook`, the `mcp`
//! proxy), the options they share and their one loader in `options.rs`, reading and applying a
//! trace in `trace/` (for `replay` and `transcripts`), the command line in `args.rs`. No file here
//! decides anything about loops: the policy does.
//!
//! Exit codes: 0 success, 2 any error (one line `loopguard: <message>` on stderr);
//! `transcripts` and `report` exit 1 when their report was written but some input could not be read.

mod args;
mod hook;
mod inspect;
mod logger;
mod mcp;
mod metrics;
mod options;
mod replay;
mod report;
mod trace;

use options::Exit;
mod transcripts;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    logger::init();
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
    let result = std::panic::catch_unwind(|| match args::parse(std::env::args().skip(1)) {
        Ok(Ok(parsed)) => run(parsed),
        Ok(Err(help)) => {
            std::io::stdout().write_all(help.as_bytes()).map_err(anyhow::Error::from)?;
            Ok(Exit::Success)
        }
        Err(usage) => Err(anyhow::anyhow!(usage)),
    });
    match result {
        Ok(Ok(Exit::Success)) => ExitCode::SUCCESS,
        Ok(Ok(Exit::InputErrors)) => ExitCode::from(1),
        // The reader went away (`loopguard replay … | head`): that is how pipes end, not an error.
        Ok(Err(err)) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            eprintln!("loopguard: {}", one_line(&format!("{err:#}")));
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

/// Runs a parsed command line.
fn run(cli: args::Cli) -> anyhow::Result<Exit> {
    let command = match cli.command {
        Some(c) if !cli.version => c,
        _ => args::Command::Version { policy: None },
    };
    match command {
        args::Command::Version { policy } => inspect::version(policy)?,
        args::Command::Inspect { file } => inspect::inspect(&file)?,
        args::Command::Replay(r) => replay::run(*r)?,
        args::Command::Transcripts(t) => return transcripts::command::run(t),
        args::Command::Report(r) => return report::run(r),
        args::Command::Hook(h) => hook::run(h)?,
        // The proxy exits with its stdio server's exit code.
        args::Command::Mcp(m) => match mcp::run(m)? {
            0 => {}
            code => std::process::exit(code),
        },
    }
    Ok(Exit::Success)
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
