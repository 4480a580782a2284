//! `global_circuit_breaker`: any tool repeated with identical outcomes past the global limit.
//!
//! The last line of defence: it applies to every tool, known poll or not, whatever the detector
//! switches say, so an operator who turns the other detectors off still has a ceiling.
//!
//! Settings: `globalCircuitBreakerThreshold`. State: the session's history.

use crate::config::profile::render;
use crate::config::tool::LoopSettings;
use crate::tool_loop::decision::{Detector, Finding, Scope};

/// Checks the call; `None` when this detector has nothing to say.
pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding> {
    let np = scope.streak.count;
    (np >= s.global).then(|| {
        let message = render(s.texts.global_critical, &[("tool", scope.tool), ("n", &np.to_string())]);
        Finding::block(Detector::GlobalCircuitBreaker, np, message)
    })
}
