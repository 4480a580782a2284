//! OpenClaw's tool-loop detectors, decision for decision (docs/spec/tool-loop.md), in the order
//! [`Session::check`](super::Session::check) runs them: [`unknown_tool`], [`circuit_breaker`],
//! [`known_poll`], [`ping_pong`], [`generic_repeat`] (its critical, then openclaw 2026.9's
//! [`argument_churn`], then its warning). Three of them read the same [`no_progress`] streak.
//! [`warnings`] de-duplicates warnings in buckets of ten, [`post_compaction`] watches the first
//! outcomes after a context compaction and [`recovery`] words a block as openclaw 2026.9 does.
//!
//! Each file has the same shape: `check(&Scope, &LoopSettings) -> Option<Finding>`, the rule in
//! its doc comment. Nothing here may change a decision OpenClaw would make: the differential
//! against the published packages (tests/oracle) checks every release this crate claims.

pub mod argument_churn;
pub mod circuit_breaker;
pub mod generic_repeat;
pub mod known_poll;
pub mod no_progress;
pub mod ping_pong;
pub mod post_compaction;
pub mod recovery;
pub mod unknown_tool;
pub mod warnings;
