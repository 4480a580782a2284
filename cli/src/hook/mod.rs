//! `loopguard hook <claude-code|codex|gemini|copilot>`: the guard inside the coding agents' CLIs.
//!
//! Why a process per event: Claude Code, Codex, Gemini CLI and Copilot CLI call a hook as a
//! command with one JSON event on stdin and read one JSON answer from stdout. This module reads
//! the event in the CLI's protocol (`claude.rs`, `codex.rs`, `gemini.rs`, `copilot.rs`), maps it onto the policy's calls on the
//! session's saved state (`guard.rs`, `state.rs`), and answers in the same protocol. No file here
//! decides anything about loops: the verdicts are the policy's.
//!
//! Failures (bad stdin, an unreadable state file, a policy that cannot load or breaks, an
//! invalid config) answer in the fail mode (`--fail-closed` or `LOOPGUARD_FAIL_MODE=closed`
//! denies the tool call; open, the default, lets it run) with one line on stderr, and the whole
//! hook answers within `--timeout-ms` even if the state folder's lock is held or the policy hangs.

mod claude;
mod codex;
mod copilot;
mod event;
mod gemini;
mod guard;
mod state;
#[cfg(test)]
mod tests;

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use loopguard_host::Policy;
use serde_json::Value;

use crate::options::{Config, PolicyArgs};

use event::{Answer, Event, Hook, Point, Reply};
use state::{Bounds, StateDir};

/// The CLIs whose hook protocol `loopguard hook` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Host {
    /// Claude Code (2.1.332): `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `PostCompact`, `SessionEnd`.
    ClaudeCode,
    /// Codex CLI (0.171.0): the same events; a session cannot be ended from a hook.
    Codex,
    /// Gemini CLI (0.61.0): `BeforeTool`, `AfterTool`, `SessionEnd`.
    Gemini,
    /// GitHub Copilot CLI (1.0.102): `preToolUse`, `postToolUse`, `postToolUseFailure`, named
    /// after the host (`loopguard hook copilot preToolUse`): its events do not name themselves.
    Copilot,
}

/// `loopguard hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// Which CLI calls the hook.
    #[arg(value_enum)]
    pub host: Host,
    /// The event, for a CLI whose events do not name themselves (Copilot CLI: `preToolUse`,
    /// `postToolUse`, `postToolUseFailure`, `sessionStart`); the others read it from the event.
    #[arg(value_name = "EVENT")]
    pub event: Option<String>,
    /// Where session state is kept (default: $LOOPGUARD_STATE_DIR, else Claude Code's
    /// $CLAUDE_PLUGIN_DATA, else ~/.claude/loopguard, $CODEX_HOME/loopguard, ~/.gemini/loopguard
    /// or ~/.copilot/loopguard).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    // The policy, the config and the fail mode; the command's help says where else they come from.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The longest the hook may take before it answers in the fail mode (default 5000, or
    /// $LOOPGUARD_HOOK_TIMEOUT_MS). A warm call takes milliseconds; the first call on a machine
    /// compiles the policy (about a second), unless `SessionStart` already did.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: Option<u64>,
    /// Session files kept at most (least recently used go first).
    #[arg(long, value_name = "N", default_value_t = Bounds::default().max_sessions)]
    pub max_sessions: usize,
    /// Bytes of session files kept at most.
    #[arg(long, value_name = "BYTES", default_value_t = Bounds::default().max_bytes)]
    pub max_state_bytes: u64,
    /// A session unused this many hours is forgotten.
    #[arg(long, value_name = "HOURS", default_value_t = 24 * 7)]
    pub expire_hours: u64,
}

/// What the worker thread tells the waiting main thread.
enum Progress {
    /// The event was read: a failure from now on is answered at this point.
    Read(Point, String),
    /// The answer.
    Done(Answer),
}

/// Runs one hook call: answers on stdout and exits with the answer's code.
pub fn run(args: HookArgs) -> anyhow::Result<()> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let closed = args.policy.fail_closed || env("LOOPGUARD_FAIL_MODE").is_some_and(|v| v == "closed");
    let timeout = args
        .timeout_ms
        .or_else(|| env("LOOPGUARD_HOOK_TIMEOUT_MS").and_then(|v| v.to_str()?.parse().ok()))
        .unwrap_or(5000);
    let started = Instant::now();
    let deadline = started + Duration::from_millis(timeout);
    let host = args.host;
    let state_dir = args.state_dir.clone();
    let (tx, rx) = mpsc::channel();
    // The work runs on its own thread so that this one can answer at the deadline whatever the
    // work is waiting for (stdin, the lock, the policy).
    std::thread::spawn(move || {
        let answer = work(&args, closed, &tx);
        let _ = tx.send(Progress::Done(answer));
    });
    let mut at = (Point::Other, String::new());
    let answer = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Progress::Read(point, name)) => at = (point, name),
            Ok(Progress::Done(answer)) => break answer,
            Err(_) => {
                let reason = format!("loopguard hook: no answer within {timeout} ms (--timeout-ms)");
                break render(host, at.0, &at.1, &Reply::Failed { reason, closed });
            }
        }
    };
    let mut stdout = std::io::stdout().lock();
    if let Some(json) = &answer.stdout {
        writeln!(stdout, "{json}")?;
    }
    stdout.flush()?;
    if let Some(line) = &answer.stderr {
        eprintln!("{line}");
        log_failure(&state_dir_of(host, state_dir.as_deref()), line);
    }
    // Exit now: a worker still waiting (the deadline case) must not keep the CLI waiting.
    std::process::exit(i32::from(answer.exit));
}

fn render(host: Host, point: Point, name: &str, reply: &Reply) -> Answer {
    match (point, name, reply) {
        // Nothing was read: exit 2 (each CLI blocks a pending tool call on it) or go on.
        (_, "", Reply::Failed { reason, closed }) => Answer {
            stdout: (!closed).then(|| Value::Object(Default::default())),
            exit: if *closed { 2 } else { 0 },
            stderr: Some(reason.clone()),
        },
        _ => match host {
            Host::ClaudeCode => claude::render(point, name, reply),
            Host::Codex => codex::render(point, name, reply),
            Host::Gemini => gemini::render(point, name, reply),
            Host::Copilot => copilot::render(point, reply),
        },
    }
}

fn work(args: &HookArgs, closed: bool, tx: &mpsc::Sender<Progress>) -> Answer {
    let fail = |point, name: &str, reason: String| render(args.host, point, name, &Reply::Failed { reason, closed });
    let read = read_event(std::io::stdin().lock()).and_then(|input| {
        let named = input.get("hook_event_name").and_then(Value::as_str);
        let name = named.or(args.event.as_deref()).unwrap_or_default().to_string();
        let parsed = match args.host {
            Host::ClaudeCode => claude::read(&input),
            Host::Codex => codex::read(&input),
            Host::Gemini => gemini::read(&input),
            Host::Copilot => copilot::read(&input, &name),
        };
        parsed.map(|(hook, point)| (hook, point, name))
    });
    let (hook, point, name) = match read {
        Ok(read) => read,
        Err(why) => return fail(Point::Other, "", format!("loopguard hook: {why}")),
    };
    let _ = tx.send(Progress::Read(point, name.clone()));
    match handle(args, &hook) {
        Ok(reply) => render(args.host, point, &name, &reply),
        Err(why) => fail(point, &name, format!("loopguard hook: {why}")),
    }
}

/// Reads the one JSON event on stdin, and no further: Qwen Code writes the event but does not
/// close stdin, so a hook that read to the end would wait until its deadline. A leading UTF-8
/// byte-order mark is skipped.
fn read_event(stdin: impl Read) -> Result<Value, String> {
    let mut reader = std::io::BufReader::new(stdin);
    let head = reader.fill_buf().map_err(|e| format!("cannot read the event on stdin: {e}"))?;
    if head.starts_with(b"\xEF\xBB\xBF") {
        reader.consume(3);
    }
    match serde_json::Deserializer::from_reader(reader).into_iter::<Value>().next() {
        Some(Ok(event)) => Ok(event),
        Some(Err(e)) => Err(format!("the event on stdin is not JSON: {e}")),
        None => Err("the event on stdin is empty".into()),
    }
}

/// Loads what the event needs, applies it under the state folder's lock, saves.
fn handle(args: &HookArgs, hook: &Hook) -> Result<Reply, String> {
    if hook.event == Event::Ignore {
        return Ok(Reply::Nothing);
    }
    let dir = state_dir(args)?;
    let policy = load_policy(args)?;
    if hook.event == Event::Warm {
        return Ok(Reply::Nothing);
    }
    let config = config(args, &dir)?;
    let bounds = Bounds {
        max_sessions: args.max_sessions.max(1),
        max_bytes: args.max_state_bytes,
        expire: Duration::from_secs(args.expire_hours.saturating_mul(3600)),
    };
    let states = StateDir::lock(&dir, bounds)?;
    let mut session = states.load(&hook.session)?;
    let reply = guard::apply(
        hook,
        &mut session,
        &guard::Policies { policy: &policy, config: &config.1, config_name: &config.0 },
    )?;
    if hook.event == Event::Forget {
        states.remove(&hook.session);
    } else {
        states.save(&hook.session, &session)?;
    }
    Ok(reply)
}

fn state_dir(args: &HookArgs) -> Result<PathBuf, String> {
    state_dir_of(args.host, args.state_dir.as_deref()).ok_or_else(|| "no state folder: set --state-dir or HOME".into())
}

fn state_dir_of(host: Host, state_dir: Option<&Path>) -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = state_dir.map(Path::to_path_buf).or_else(|| env("LOOPGUARD_STATE_DIR")) {
        return Some(dir);
    }
    let home = env("HOME")?;
    Some(match host {
        Host::ClaudeCode => env("CLAUDE_PLUGIN_DATA").unwrap_or_else(|| home.join(".claude/loopguard")),
        Host::Codex => env("CODEX_HOME").unwrap_or_else(|| home.join(".codex")).join("loopguard"),
        Host::Gemini => home.join(".gemini/loopguard"),
        Host::Copilot => home.join(".copilot/loopguard"),
    })
}

/// Keeps a failure's line in `errors.log` in the state folder too: the CLIs do not show a
/// hook's stderr in their non-interactive modes. The log is cut in half past 64 KiB.
fn log_failure(dir: &Option<PathBuf>, line: &str) {
    const MAX: u64 = 64 << 10;
    let Some(dir) = dir else { return };
    let path = dir.join("errors.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX) {
        if let Ok(bytes) = std::fs::read(&path) {
            let half = &bytes[bytes.len() / 2..];
            let cut = half.iter().position(|b| *b == b'\n').map_or(half.len(), |at| at + 1);
            let _ = std::fs::write(&path, &half[cut..]);
        }
    }
    let when = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
        let _ = writeln!(file, "{when} {line}");
    }
}

/// The config document (its name for messages, its text), with the agent-facing hosts' defaults
/// ([`loopguard_host::AGENT_DEFAULTS`]) filled in where the document says nothing.
fn config(args: &HookArgs, dir: &Path) -> Result<(String, String), String> {
    let env = std::env::var_os("LOOPGUARD_CONFIG").filter(|v| !v.is_empty()).map(PathBuf::from);
    let found = args
        .policy
        .config
        .clone()
        .or(env)
        .or_else(|| ["config.json5", "config.json"].iter().map(|name| dir.join(name)).find(|path| path.is_file()));
    let config = Config::read(found.as_deref()).and_then(Config::with_agent_defaults).map_err(|e| format!("{e:#}"))?;
    Ok((config.name(), config.text))
}

/// The policy: `--policy`, else $LOOPGUARD_POLICY, else the embedded one.
fn load_policy(args: &HookArgs) -> Result<Policy, String> {
    let env = std::env::var_os("LOOPGUARD_POLICY").filter(|v| !v.is_empty()).map(PathBuf::from);
    let policy = PolicyArgs { policy: args.policy.policy.clone().or(env), ..args.policy.clone() };
    policy.policy().map_err(|e| e.to_string())
}
