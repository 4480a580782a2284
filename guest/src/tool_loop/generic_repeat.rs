//! `generic_repeat`: the same call with the same arguments keeps coming back.
//!
//! It **warns** on identical arguments alone (the model may be retrying something that will
//! work) and **blocks** only on identical outcomes too: the no-progress streak. Known poll tools
//! never trigger it ([`super::known_poll`] covers them).
//!
//! Settings: `warningThreshold`, `criticalThreshold`, `detectors.genericRepeat`. State: the
//! session's history.

use super::{Detector, Finding, Scope};
use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::digest::{key_digest, tag, Digest};

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    if scope.known_poll || !s.generic_repeat {
        return None;
    }
    let (tool, np) = (scope.tool, scope.streak.count);
    if np >= s.critical {
        let message = render(s.texts.generic_critical, &[("tool", tool), ("n", &np.to_string())]);
        return Some(Finding::block(Detector::GenericRepeat, np, message));
    }
    let recent = scope.streak.same_args;
    if recent >= s.warning {
        let message = render(s.texts.generic_warning, &[("tool", tool), ("n", &recent.to_string())]);
        return Some(Finding::warn(Detector::GenericRepeat, recent, warning_key(&scope.args), message));
    }
    None
}

/// `generic:<tool>:<argsHash>` (the args digest includes the tool).
fn warning_key(args: &Digest) -> Digest {
    key_digest(tag::WARN_KEY, &[b"generic", args])
}
