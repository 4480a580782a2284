//! A hostile loopguard policy for the host's sandbox tests (never deploy it).
//!
//! It is the real policy (the guest's modules, compiled here by path, so that every decision is
//! the real one) behind a gateway that misbehaves on demand, so that the host's limits can be
//! proven to hold: a tool call whose session is `__loop__` spins forever, `__bomb__` allocates
//! until memory runs out, and `__trap__` panics (a trap). The same session names inside an
//! `apply-events` batch or a `replay` trace do the same. Cargo features select the variants (see
//! `Cargo.toml`).
#![deny(unsafe_code)]

#[path = "../../../guest/src/bot_loop/mod.rs"]
pub mod bot_loop;
#[path = "../../../guest/src/bytes.rs"]
pub mod bytes;
#[path = "../../../guest/src/canonical_text.rs"]
pub mod canonical_text;
#[path = "../../../guest/src/config/mod.rs"]
pub mod config;
#[path = "../../../guest/src/digest.rs"]
pub mod digest;
#[path = "../../../guest/src/error.rs"]
pub mod error;
#[path = "../../../guest/src/gateway.rs"]
pub mod gateway;
#[path = "../../../guest/src/group/mod.rs"]
pub mod group;
#[path = "../../../guest/src/json.rs"]
pub mod json;
#[path = "../../../guest/src/packed.rs"]
pub mod packed;
#[path = "../../../guest/src/registry.rs"]
pub mod registry;
#[path = "../../../guest/src/replay.rs"]
pub mod replay;
#[path = "../../../guest/src/snapshot.rs"]
pub mod snapshot;
#[path = "../../../guest/src/store.rs"]
pub mod store;
#[path = "../../../guest/src/tool_loop/mod.rs"]
pub mod tool_loop;
#[path = "../../../guest/src/trace.rs"]
pub mod trace;

pub mod hostile;

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component {
    include!(concat!(env!("OUT_DIR"), "/component.rs"));
}

/// The policy version: the real one, marked.
pub const POLICY_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+hostile");

/// The interface version: the real one, or 1.0.0 with feature `major1`.
#[cfg(not(feature = "major1"))]
pub const INTERFACE_VERSION: &str = "0.5.0";
/// The interface version: the real one, or 1.0.0 with feature `major1`.
#[cfg(feature = "major1")]
pub const INTERFACE_VERSION: &str = "1.0.0";
