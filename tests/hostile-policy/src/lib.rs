//! A hostile loopguard policy for the host's sandbox tests (never deploy it).
//!
//! It is the real policy (the real gateway behind the guest's own WIT glue, so every decision is
//! the real one) with misbehaviour on demand, so that the host's limits can be proven to hold: a
//! tool call whose session is `__loop__` spins forever, `__bomb__` allocates until memory runs
//! out, `__trap__` panics (a trap) and `__io__` writes to stdout (which a host gives no way to
//! do). The same session names inside an `apply-events` batch or
//! a `replay` trace do the same. Cargo features select the variants (see `Cargo.toml`);
//! `session-suffix` makes the names match inside a gateway's session keys (`agent:main:__trap__`).
#![cfg(target_arch = "wasm32")]

use loopguard_policy::component::{Component, Core};
use loopguard_policy::error::{ErrorKind, PolicyError};
use loopguard_policy::gateway::Gateway;
use loopguard_policy::tool_loop::{ToolAction, ToolCall, ToolVerdict};

/// The real gateway, wrapped.
pub struct Hostile(Gateway);

impl Core for Hostile {
    fn create(config: &str) -> Result<Self, PolicyError> {
        Gateway::from_config(config).map(Hostile)
    }

    fn gateway(&mut self) -> &mut Gateway {
        &mut self.0
    }

    /// The real version, marked.
    fn version() -> String {
        format!("{}+hostile", loopguard_policy::POLICY_VERSION)
    }

    /// The real interface version, or another major with `major2` / `major0`.
    fn interface_version() -> String {
        if cfg!(feature = "major2") {
            "2.0.0".into()
        } else if cfg!(feature = "major0") {
            "0.5.0".into()
        } else {
            loopguard_policy::INTERFACE_VERSION.into()
        }
    }

    /// The stateless replay export, through the hostile gateway.
    fn replay(config: &str, trace: &str) -> Result<String, PolicyError> {
        Hostile::create(config)?.apply_events(trace, 1)
    }

    /// The real check, after the misbehaviour; with `always-allow` the verdict is always allow.
    fn check_tool_call(&mut self, call: &ToolCall<'_>) -> Result<ToolVerdict, PolicyError> {
        misbehave(call.session);
        let verdict = self.0.check_tool_call(call)?;
        if cfg!(feature = "always-allow") {
            Ok(ToolVerdict { action: ToolAction::Allow, detector: None, count: 0, message: None, notify: false })
        } else {
            Ok(verdict)
        }
    }

    /// The real batch, after the misbehaviour; with `always-allow` every tool call is allowed.
    fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String, PolicyError> {
        misbehave_text(events);
        self.0.apply_events(events, first_line).map(rewrite_decisions)
    }

    /// The real import, or with `bad-import` always an error (the state is left as it was).
    fn import_state(&mut self, snapshot: &[u8]) -> Result<(), PolicyError> {
        if cfg!(feature = "bad-import") {
            return Err(PolicyError::new(
                ErrorKind::Snapshot,
                "snapshot",
                "hostile policy: import-state always fails (feature bad-import)",
            ));
        }
        self.0.import_state(snapshot)
    }
}

/// The component of the hostile gateway.
pub type HostilePolicy = Component<Hostile>;

loopguard_policy::component::bindings::export_policy!(HostilePolicy with_types_in loopguard_policy::component::bindings);

/// Misbehaves if `session` is one of the magic names (with `session-suffix`, also as the last
/// `:`-separated part of a session key such as `agent:main:__trap__`).
fn misbehave(session: &str) {
    let name = if cfg!(feature = "session-suffix") { session.rsplit(':').next().unwrap_or(session) } else { session };
    match name {
        "__loop__" => spin(),
        "__bomb__" => bomb(),
        "__trap__" => panic!("hostile policy: trap requested by session __trap__"),
        "__io__" => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(b"hostile policy: I/O requested by session __io__\n");
        }
        _ => {}
    }
}

/// Misbehaves if any event in a batch names a magic session.
fn misbehave_text(events: &str) {
    for name in ["__loop__", "__bomb__", "__trap__", "__io__"] {
        if events.contains(&format!("\"session\":\"{name}\"")) {
            misbehave(name);
        }
    }
}

/// Never returns: only the host's deadline stops it.
fn spin() {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

/// Allocates ever larger blocks (1 MiB, 2 MiB, 4 MiB, …) and keeps them until an allocation
/// fails, which aborts (a trap). Growing fast keeps the bomb well inside a call's deadline.
fn bomb() {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    let mut size = 1usize << 20;
    loop {
        let mut block: Vec<u8> = Vec::with_capacity(size);
        block.push(1);
        blocks.push(std::hint::black_box(block));
        size = size.saturating_mul(2);
    }
}

/// With `always-allow`: every tool-call decision line becomes a plain allow.
fn rewrite_decisions(out: String) -> String {
    if !cfg!(feature = "always-allow") {
        return out;
    }
    let mut rewritten = String::with_capacity(out.len());
    for line in out.lines() {
        let is_call = line.contains("\"kind\":\"tool_call\"");
        match line.strip_prefix("{\"line\":").and_then(|rest| rest.split_once(',')) {
            Some((n, _)) if is_call => {
                rewritten.push_str(&format!("{{\"line\":{n},\"kind\":\"tool_call\",\"action\":\"allow\"}}"))
            }
            _ => rewritten.push_str(line),
        }
        rewritten.push('\n');
    }
    rewritten
}
