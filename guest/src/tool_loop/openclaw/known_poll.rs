//! `known_poll_no_progress`: a polling tool keeps returning the same output.
//!
//! Polling is legitimate (`process` poll/log, `command_status`), so repeating the call is not
//! the signal; an unchanged outcome is. It warns and blocks on the no-progress streak.
//!
//! Settings: `warningThreshold`, `criticalThreshold`, `detectors.knownPollNoProgress`. State: the
//! session's history.

use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::digest::{key_digest, tag};
use crate::tool_loop::decision::{Detector, Finding, Scope};

/// `knownPoll`: `command_status`, or `process` with action `poll` or `log`.
pub fn is_known_poll(tool: &str, action: Option<&str>) -> bool {
    tool == "command_status" || (tool == "process" && matches!(action, Some("poll" | "log")))
}

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    if !scope.known_poll || !s.known_poll {
        return None;
    }
    let np = scope.streak.count;
    let values = [("tool", scope.tool), ("n", &np.to_string())];
    if np >= s.critical {
        return Some(Finding::block(Detector::KnownPollNoProgress, np, render(s.texts.poll_critical, &values)));
    }
    if np >= s.warning {
        // `poll:<tool>:<argsHash>:<latest result or "none">`.
        let latest = scope.streak.latest;
        let key = key_digest(tag::WARN_KEY, &[b"poll", &scope.args, latest.as_ref().map_or(&b"none"[..], |d| &d[..])]);
        return Some(Finding::warn(Detector::KnownPollNoProgress, np, key, render(s.texts.poll_warning, &values)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_poll_tools_are_command_status_and_process_poll_or_log() {
        assert!(is_known_poll("command_status", None));
        assert!(is_known_poll("process", Some("poll")));
        assert!(is_known_poll("process", Some("log")));
        assert!(!is_known_poll("process", Some("kill")));
        assert!(!is_known_poll("exec", Some("poll")));
    }
}
