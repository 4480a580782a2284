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
//! use loopguard_policy::{config::Config, gateway::Gateway};
//! let mut gw = Gateway::new(Config::parse(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).unwrap());
//! let out = gw.apply_events(r#"{"kind":"tool_call","session":"s","tool":"read","args":{"path":"/a"}}"#, 1).unwrap();
//! assert_eq!(out, "{\"line\":1,\"kind\":\"tool_call\",\"action\":\"allow\"}\n");
//! ```
// No unsafe code, except what wit-bindgen generates in `component` and the word-at-a-time
// `memcmp` of `wasm_mem` (both wasm32 only).
#![deny(unsafe_code)]

pub mod bot_loop;
pub mod bytes;
pub mod canonical_text;
pub mod config;
pub mod digest;
pub mod error;
pub mod gateway;
pub mod group;
pub mod json;
pub mod packed;
pub mod registry;
pub mod replay;
pub mod snapshot;
pub mod store;
pub mod tool_loop;
pub mod trace;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component;
#[cfg(target_arch = "wasm32")]
mod wasm_mem;

/// The policy version (this crate's version).
pub const POLICY_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The version of the WIT package this policy implements.
pub const INTERFACE_VERSION: &str = "0.5.0";
