//! `detectToolCallLoop`: the detectors in their order, with OpenClaw's exact messages.
//!
//! The order matters: a missing tool is reported as such even when its outcomes also repeat,
//! and the global circuit breaker applies to every tool whatever the detector switches say.

use super::history::History;
use super::{no_progress, ping_pong, unknown_tool};
use crate::config::tool::LoopSettings;
use crate::digest::{key_digest, tag, Digest};

/// The detector that fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detector {
    /// `generic_repeat`.
    GenericRepeat,
    /// `known_poll_no_progress`.
    KnownPollNoProgress,
    /// `ping_pong`.
    PingPong,
    /// `unknown_tool_repeat`.
    UnknownToolRepeat,
    /// `global_circuit_breaker`.
    GlobalCircuitBreaker,
    /// `compaction_loop_persisted`.
    CompactionLoopPersisted,
}

impl Detector {
    /// The name used in decisions and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Detector::GenericRepeat => "generic_repeat",
            Detector::KnownPollNoProgress => "known_poll_no_progress",
            Detector::PingPong => "ping_pong",
            Detector::UnknownToolRepeat => "unknown_tool_repeat",
            Detector::GlobalCircuitBreaker => "global_circuit_breaker",
            Detector::CompactionLoopPersisted => "compaction_loop_persisted",
        }
    }
}

/// A stuck verdict before warning de-duplication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    /// True for a block, false for a warning.
    pub critical: bool,
    /// Which detector.
    pub detector: Detector,
    /// Its count.
    pub count: u32,
    /// The exact message.
    pub message: String,
    /// The warning key (without the run prefix), for bucketing; only set on warnings.
    pub warning_key: Option<Digest>,
}

/// `knownPoll`: `command_status`, or `process` with action `poll` or `log`.
pub fn is_known_poll(tool: &str, action: Option<&str>) -> bool {
    tool == "command_status" || (tool == "process" && matches!(action, Some("poll" | "log")))
}

/// Runs the detectors for a call of `tool` with `args` in run `run` (normalized).
pub fn detect(
    history: &History,
    tool: &str,
    tool_id: u64,
    args: &Digest,
    known_poll: bool,
    run: Option<u64>,
    s: &LoopSettings,
) -> Option<Stuck> {
    if s.enabled != Some(true) {
        return None;
    }
    let h = history.scoped(run);
    let (unknown, unknown_name) = unknown_tool::streak(h.clone(), tool_id);
    if unknown >= s.unknown_tool {
        let name = unknown_name.unwrap_or(tool);
        return Some(block(Detector::UnknownToolRepeat, unknown, format!(
            "CRITICAL: attempted unavailable tool {name} {unknown} times. Stop retrying that missing tool and answer without it."
        )));
    }
    let no_progress::Streak { count: np, latest, same_args } = no_progress::streak(h.clone(), args);
    if np >= s.global {
        return Some(block(Detector::GlobalCircuitBreaker, np, format!(
            "CRITICAL: {tool} has repeated identical no-progress outcomes {np} times. Session execution blocked by global circuit breaker to prevent runaway loops."
        )));
    }
    if known_poll && s.known_poll {
        if np >= s.critical {
            return Some(block(Detector::KnownPollNoProgress, np, format!(
                "CRITICAL: Called {tool} with identical arguments and no progress {np} times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste."
            )));
        }
        if np >= s.warning {
            let key = warn_key(b"poll", args, &[latest.as_ref().map_or(&b"none"[..], |d| &d[..])]);
            return Some(warn(Detector::KnownPollNoProgress, np, key, format!(
                "WARNING: You have called {tool} {np} times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck."
            )));
        }
    }
    if s.ping_pong {
        let pp = ping_pong::streak(h, args);
        let n = pp.count;
        if n >= s.critical && pp.no_progress_evidence {
            return Some(block(Detector::PingPong, n, format!(
                "CRITICAL: You are alternating between repeated tool-call patterns ({n} consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste."
            )));
        }
        if n >= s.warning {
            let key = pingpong_key(args, pp.paired);
            return Some(warn(Detector::PingPong, n, key, format!(
                "WARNING: You are alternating between repeated tool-call patterns ({n} consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed."
            )));
        }
    }
    if !known_poll && s.generic_repeat {
        if np >= s.critical {
            return Some(block(Detector::GenericRepeat, np, format!(
                "CRITICAL: Called {tool} with identical arguments and identical outcomes {np} times. Session execution blocked to prevent runaway loops."
            )));
        }
        // `recentCount`: every record of this call in scope, whatever its outcome.
        let recent = same_args;
        if recent >= s.warning {
            return Some(warn(Detector::GenericRepeat, recent, warn_key(b"generic", args, &[]), format!(
                "WARNING: You have called {tool} {recent} times with identical arguments. If this is not making progress, stop retrying and report the task as failed."
            )));
        }
    }
    None
}

fn block(detector: Detector, count: u32, message: String) -> Stuck {
    Stuck { critical: true, detector, count, message, warning_key: None }
}

fn warn(detector: Detector, count: u32, key: Digest, message: String) -> Stuck {
    Stuck { critical: false, detector, count, message, warning_key: Some(key) }
}

/// `poll:<tool>:<cur>:<latest>` / `generic:<tool>:<cur>` (the args digest includes the tool).
fn warn_key(kind: &[u8], args: &Digest, extra: &[&[u8]]) -> Digest {
    let mut parts: Vec<&[u8]> = vec![kind, &args[..]];
    parts.extend_from_slice(extra);
    key_digest(tag::WARN_KEY, &parts)
}

/// `pingpong:<sorted(cur, paired) joined with "|">`: the same key from either side.
fn pingpong_key(args: &Digest, paired: Option<Digest>) -> Digest {
    match paired {
        Some(p) => {
            let (lo, hi) = if p < *args { (p, *args) } else { (*args, p) };
            key_digest(tag::WARN_KEY, &[b"pingpong", &lo, &hi])
        }
        None => warn_key(b"pingpong-single", args, &[]),
    }
}
