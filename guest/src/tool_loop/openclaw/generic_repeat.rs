//! `generic_repeat`: the same call with the same arguments keeps coming back.
//!
//! It **warns** on identical arguments alone (the model may be retrying something that will
//! work) and **blocks** only on identical outcomes too: the no-progress streak. Known poll tools
//! never trigger it ([`super::known_poll`] covers them).
//!
//! Settings: `warningThreshold`, `criticalThreshold`, `detectors.genericRepeat`. State: the
//! session's history.

use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::digest::{key_digest, tag, Digest};
use crate::tool_loop::decision::{Detector, Finding, Scope};

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    critical(scope, s).or_else(|| warning(scope, s))
}

/// The block on identical outcomes. (openclaw 2026.9 runs `argument_churn` between this and
/// [`warning`].)
pub fn critical(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    if scope.known_poll || !s.generic_repeat {
        return None;
    }
    let np = scope.streak.count;
    (np >= s.critical).then(|| {
        let message = render(s.texts.generic_critical, &[("tool", scope.tool), ("n", &np.to_string())]);
        Finding::block(Detector::GenericRepeat, np, message)
    })
}

/// The warning on identical arguments.
pub fn warning(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    if scope.known_poll || !s.generic_repeat {
        return None;
    }
    let recent = scope.streak.same_args;
    (recent >= s.warning).then(|| {
        let message = render(s.texts.generic_warning, &[("tool", scope.tool), ("n", &recent.to_string())]);
        Finding::warn(Detector::GenericRepeat, recent, warning_key(&scope.args), message)
    })
}

/// `generic:<tool>:<argsHash>` (the args digest includes the tool).
fn warning_key(args: &Digest) -> Digest {
    key_digest(tag::WARN_KEY, &[b"generic", args])
}
