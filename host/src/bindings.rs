//! Typed bindings generated from `wit/` (world `policy`), and the per-instance host state.
//!
//! Why typed bindings: a wrong argument order or a renamed field in the WIT becomes a compile
//! error here instead of a runtime type-check failure in a gateway.

#![allow(missing_docs)] // generated code carries the WIT's own docs

use std::hash::{BuildHasher, Hasher};

use wasmtime::component::{Component, Linker};

use crate::limits::Limiter;

wasmtime::component::bindgen!({
    world: "policy",
    path: "wit",
    additional_derives: [PartialEq],
});

/// What a store owns besides the guest: its memory limits.
pub(crate) struct HostState {
    pub(crate) limits: Limiter,
}

impl HostState {
    pub(crate) fn new(limits: Limiter) -> Self {
        HostState { limits }
    }
}

/// The seed `wasi:random/insecure-seed` gives: the policy is std Rust, whose hash maps seed
/// their keys with it.
const INSECURE_SEED: &str = "wasi:random/insecure-seed@0.2.6";

/// Satisfies the WASI imports that std Rust brings into the policy (stdio, environment, exit,
/// streams) with functions that trap, and the hash maps' seed with a random one. Why not a WASI
/// implementation: the policy must never do I/O, so none is given, and a call to one is a trap
/// the supervisor recovers from; `wasmtime-wasi` would also bring tokio into every embedder.
pub(crate) fn no_io(linker: &mut Linker<HostState>, component: &Component) -> wasmtime::Result<()> {
    linker.instance(INSECURE_SEED)?.func_wrap("insecure-seed", |_, ()| {
        // std's RandomState is seeded from the operating system; two hashers give 128 bits.
        let random = || std::collections::hash_map::RandomState::new().build_hasher().finish();
        Ok(((random(), random()),))
    })?;
    linker.define_unknown_imports_as_traps(component)
}

/// The component imports the type-only `types` interface (the world `use`s it and the guard
/// interface refers to it): there is nothing to implement.
impl loopguard::policy::types::Host for HostState {}

impl loopguard::policy::types::ToolVerdict {
    /// True when this block also ends the run: the policy's ladder saw the agent send a blocked
    /// call again and again (detector `ladder`, wit/policy.wit). A host that can end a run (the
    /// agent-CLI hooks, a gateway) does so with the block's message; one that cannot keeps
    /// blocking. Every host reads this the same way, so that the decision stays the policy's.
    pub fn ends_run(&self) -> bool {
        self.action == loopguard::policy::types::ToolAction::Block && self.detector.as_deref() == Some("ladder")
    }
}
