//! Typed bindings generated from `wit/` (world `policy`), and the per-instance host state.
//!
//! Why typed bindings: a wrong argument order or a renamed field in the WIT becomes a compile
//! error here instead of a runtime type-check failure in a gateway.

#![allow(missing_docs)] // generated code carries the WIT's own docs

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::limits::Limiter;

wasmtime::component::bindgen!({
    world: "policy",
    path: "wit",
    additional_derives: [PartialEq],
});

/// What a store owns besides the guest: a WASI context with no filesystem, env, args or
/// network (the policy is std Rust and imports WASI, but must never do I/O), and memory limits.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: Limiter,
}

impl HostState {
    pub(crate) fn new(limits: Limiter) -> Self {
        let wasi = WasiCtx::builder().allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false).build();
        HostState { wasi, table: ResourceTable::new(), limits }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
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
