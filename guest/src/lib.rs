//! # loopguard policy
//!
//! AI agents call tools in a loop, and bots in chat rooms reply to each other; both can run away
//! for hours and burn money. This crate is the decision logic of loopguard: OpenClaw's tool-loop
//! detectors, its post-compaction guard, the channel bot-loop budgets and the group-thread budget,
//! as pure Rust with no clock and no I/O (the host passes timestamps). Compiled to
//! `wasm32-wasip2` it is the policy component every gateway loads; compiled natively it is unit
//! tested and benchmarked.
//!
//! ```
//! use loopguard_policy::gateway::Gateway;
//! let mut gw = Gateway::from_config(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).unwrap();
//! let out = gw.apply_events(r#"{"kind":"tool_call","session":"s","tool":"read","args":{"path":"/a"}}"#, 1).unwrap();
//! assert_eq!(out, "{\"line\":1,\"kind\":\"tool_call\",\"action\":\"allow\"}\n");
//! ```
//!
//! ## Where everything is
//!
//! | what | where |
//! |---|---|
//! | one entry per decision | [`gateway::Gateway`] |
//! | **tool-loop detectors**: the two families and the order they run in | [`tool_loop`] |
//! | *OpenClaw's, decision for decision* (docs/spec/tool-loop.md) | [`tool_loop::openclaw`] |
//! | unknown tool retried | [`tool_loop::openclaw::unknown_tool`] |
//! | global circuit breaker | [`tool_loop::openclaw::circuit_breaker`] |
//! | known poll without progress | [`tool_loop::openclaw::known_poll`] |
//! | ping-pong between two calls | [`tool_loop::openclaw::ping_pong`] |
//! | generic repeat | [`tool_loop::openclaw::generic_repeat`] |
//! | argument churn (openclaw 2026.9 only) | [`tool_loop::openclaw::argument_churn`] |
//! | the no-progress streak three of them share | [`tool_loop::openclaw::no_progress`] |
//! | post-compaction guard | [`tool_loop::openclaw::post_compaction`] |
//! | what the model receives for a block (openclaw 2026.9's tool-loop recovery) | [`tool_loop::openclaw::recovery`] |
//! | warning de-duplication | [`tool_loop::openclaw::warnings`] |
//! | *beyond OpenClaw: the loops real agents make* (docs/spec/beyond.md) | [`tool_loop::beyond`] |
//! | the same error again | [`tool_loop::beyond::same_error`] |
//! | the same result again (a poll, a re-run, nothing found) | [`tool_loop::beyond::same_result`] |
//! | the same lap of calls again | [`tool_loop::beyond::lap_cycle`] |
//! | arguments that grow by repeating themselves | [`tool_loop::beyond::growing_args`] |
//! | a blocked call sent again and again: the run ends | [`tool_loop::beyond::ladder`] |
//! | the streak two of them share; a call up to cosmetics; its aim | [`tool_loop::beyond::streak`], [`tool_loop::beyond::look`], [`tool_loop::beyond::sketch`] |
//! | outcome hashing per tool family | [`tool_loop::outcome`] |
//! | a session's history | [`tool_loop::history`] |
//! | **bot-loop budgets** | [`bot_loop`] |
//! | pair budget | [`bot_loop::pair`] (its events in one block: [`bot_loop::pair::block`]) |
//! | burst budget | [`bot_loop::burst`] |
//! | **group-thread budget** | [`group`] |
//! | what counts as a reply and whom it addresses (openclaw 2026.9) | [`group::reply`] |
//! | config: parsed, typed and validated once | [`config`] |
//! | compatibility profiles (`loopguard.compat`: `documented`, `openclaw-2026.9`): the data and the rule switches | [`config::profile`] |
//! | fingerprints: JSON as JavaScript reads it (the one JSON reader: trace lines, arguments, results), the canonical text, the digests | [`json`], [`canonical`], [`digest`], [`js`] |
//! | untrusted-content marker ids (openclaw 2026.9 outcome digests) | [`canonical::markers`] |
//! | bounded maps (every map that grows with traffic) | [`store`] |
//! | time as a value: the `now` deciding functions take | [`time`] |
//! | inputs: typed-call text, trace lines | [`input`], [`trace`] |
//! | the batch path and replay | [`replay`] |
//! | deciding on one key's state kept in a store (several replicas) | [`keyed`] |
//! | snapshots for hot swaps | [`snapshot`] |
//! | errors | [`error`] |
//! | the WIT boundary (wasm32 only) | `component` |
// No unsafe code, except what wit-bindgen generates in `component` (wasm32 only).
#![deny(unsafe_code)]

pub mod bot_loop;
pub mod canonical;
pub mod config;
pub mod digest;
pub mod error;
pub mod gateway;
pub mod group;
pub mod input;
pub mod js;
pub mod json;
pub mod keyed;
pub mod replay;
pub mod snapshot;
pub mod store;
pub mod time;
pub mod tool_loop;
pub mod trace;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
pub mod component;

/// The policy version (this crate's version).
pub const POLICY_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The version of the WIT package this policy implements.
pub const INTERFACE_VERSION: &str = "1.2.0";
