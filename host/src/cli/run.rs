//! The commands: what was parsed, handed to `loopguard_host`.

use std::io::{BufRead, BufReader, Read, Write};
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};

use super::transcripts::{Output, Spooled, Transcripts};
use anyhow::{bail, Context};
use loopguard_host::{Deadline, FailureMode, Limits, LoadOptions, Policy, Supervision, SwappableGateway, HOST_VERSION};

use super::{parallel, replay, Cli, Command, PolicyArgs};

/// What the process exits with when nothing failed outright.
pub enum Exit {
    /// Everything worked.
    Success,
    /// The output was written, but some input could not be read (said on stderr).
    InputErrors,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    let command = match cli.command {
        Some(c) if !cli.version => c,
        _ => Command::Version { policy: None },
    };
    match command {
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
        Command::Transcripts(t) => return transcripts_command(t),
        Command::Hook(h) => super::hook::run(h)?,
        // The proxy exits with its stdio server's exit code.
        Command::Mcp(m) => match super::mcp::run(m)? {
            0 => {}
            code => std::process::exit(code),
        },
    }
    Ok(Exit::Success)
}

fn options(p: &PolicyArgs) -> LoadOptions {
    let mut limits = Limits::default();
    if let Some(ms) = p.deadline_ms {
        limits.call_deadline = Deadline::from_millis(ms);
    }
    if let Some(mib) = p.memory_mib {
        let bytes = mib.saturating_mul(NonZeroU64::MIN.saturating_add((1 << 20) - 1));
        limits.memory_bytes = NonZeroUsize::try_from(bytes).unwrap_or(NonZeroUsize::MAX);
    }
    LoadOptions { expect_digest: p.expect_digest.clone(), limits }
}

fn supervision(p: &PolicyArgs) -> Supervision {
    Supervision {
        failure_mode: if p.fail_closed { FailureMode::Closed } else { FailureMode::Open },
        // A one-shot replay does not need microsecond recoveries, and the standby's background
        // imports would compete with it for the CPU.
        standby: false,
        // It swaps between two chunks if at all (`--swap-at`), so nothing is gained by copying
        // every chunk into the log for a live migration: the bench's bot trace replays 10.8 %
        // faster without it, the tool trace 4.2 % (8.6 % with `--jobs 2`).
        log_calls: false,
        ..Supervision::default()
    }
}

fn jobs(p: &PolicyArgs) -> usize {
    match p.jobs {
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

fn replay_command(r: super::Replay) -> anyhow::Result<()> {
    let Some(config) = r.config else { bail!("replay needs --config FILE (use a file with `{{}}` for defaults)") };
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
    let options = options(&r.policy);
    let supervision = supervision(&r.policy);
    let config_text =
        std::fs::read_to_string(&config).with_context(|| format!("cannot read config {}", config.display()))?;
    let policy = load(r.policy.policy.clone(), &options)?;
    if let Some(url) = &r.store.store {
        return super::store::replay(&r.store, url, &policy, (&config_text, &config), &trace);
    }
    let gateway = SwappableGateway::new(policy.clone(), &config_text, supervision).map_err(|e| in_file(e, &config))?;
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
    let mut stdout = std::io::stdout().lock();
    let limits = options.limits;
    let (result, health) = if let Some((at, to)) = swap {
        let result = swap_mode(&gateway, limits, at, &to, &mut input, &mut stdout);
        (result, Health::of(&gateway))
    } else if let Some(candidate) = r.shadow {
        let result = shadow_mode(&gateway, &config_text, limits, supervision, &candidate, &mut input, &mut stdout);
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
        let done = parallel::stream(gateway, &policy, &config_text, jobs(&r.policy), &mut input, reopen, &mut stdout);
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
    let (_, report) = replay::stream_with_swap(gateway, input, stdout, replay::DEFAULT_CHUNK_BYTES, at, next)?;
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
    let summary = replay::shadow(gateway, &candidate, input, stdout, &mut stderr)?;
    writeln!(stderr, "shadow: {} events, {} differ", summary.events, summary.differ).context("writing to stderr")?;
    Ok(())
}

fn transcripts_command(t: super::Transcripts) -> anyhow::Result<Exit> {
    let options = options(&t.policy);
    let read =
        |path: &Path| std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()));
    let config = t.config.as_deref().map(read).transpose()?.unwrap_or_else(|| "{}".into());
    let other = match (&t.compare, t.set.is_empty()) {
        (None, true) => None,
        (Some(path), _) => Some(read(path)?),
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
    // `--trace` replays nothing: no policy to load.
    let policy = if t.trace { None } else { Some(load(t.policy.policy.clone(), &options)?) };
    // Refused configs are named by their file, as `replay` names them.
    let check = |text: &str, path: Option<&Path>| -> anyhow::Result<()> {
        let Some(policy) = &policy else { return Ok(()) };
        match (policy.gateway(text), path) {
            (Err(e), Some(path)) => Err(in_file(e, path)),
            (Err(e), None) => Err(anyhow::Error::new(e).context("the config with --set")),
            (Ok(_), _) => Ok(()),
        }
    };
    check(&config, t.config.as_deref())?;
    if let Some(other) = &other {
        check(other, if t.set.is_empty() { t.compare.as_deref() } else { None })?;
    }
    let output = if t.trace {
        Output::Trace
    } else if t.json {
        Output::Json
    } else {
        Output::Table
    };
    let spooled = Spooled::new(&t.paths)?;
    let run = Transcripts {
        paths: &spooled.paths,
        policy: policy.as_ref(),
        config: &config,
        other: other.as_deref(),
        output,
        jobs: jobs(&t.policy),
        supervision: supervision(&t.policy),
    };
    let finished = run.run(&mut std::io::stdout().lock(), &mut std::io::stderr().lock())?;
    Ok(if finished.errors > 0 { Exit::InputErrors } else { Exit::Success })
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

fn load(policy: Option<PathBuf>, options: &LoadOptions) -> anyhow::Result<Policy> {
    use_cache();
    Ok(match policy {
        Some(path) => Policy::from_file_with(path, options)?,
        None => Policy::embedded_with(options)?,
    })
}

fn use_cache() {
    // A cache that cannot be used only costs time: go on without it.
    let _ = loopguard_host::use_default_compile_cache();
}

/// Names the file a policy error (config path, trace line) is about; other errors already say.
fn in_file(err: loopguard_host::Error, file: &Path) -> anyhow::Error {
    match err {
        loopguard_host::Error::Policy { .. } => anyhow::Error::new(err).context(file.display().to_string()),
        other => other.into(),
    }
}
