//! # loopguard host
//!
//! A gateway that lets agents call tools needs to stop an agent that is stuck in a loop before
//! it burns hours of tokens. The decision logic is the loopguard policy, a sandboxed WebAssembly
//! component (so that it can be swapped without rebuilding the gateway); this crate runs it under
//! wasmtime with a typed API.
//!
//! Entry points for a gateway that embeds it:
//! - [`Policy`]: loads the component ([`Policy::embedded`] for the one shipped in this crate,
//!   [`Policy::from_file`], [`Policy::from_file_with`] with [`LoadOptions`]: an expected digest and
//!   the sandbox's [`Limits`]) and checks its interface version ([`INTERFACE_VERSION`]).
//! - [`Gateway`] ([`Policy::gateway`]): one gateway's loop-guard state in its own instance;
//!   [`Gateway::check_tool_call`], [`Gateway::record_tool_outcome`],
//!   [`Gateway::check_bot_message`], [`Gateway::apply_events`] for a batch of trace lines,
//!   [`Gateway::export_state`] / [`Gateway::import_state`].
//! - [`SwappableGateway`]: the same calls under [`Supervision`]: a broken instance is restored
//!   from its last snapshot, and [`SwappableGateway::swap`] replaces the policy while calls go on.
//! - [`Error`]: every failure, with its [`ErrorKind`] and the path of the bad input.
//! - [`store`]: the same decisions on state shared by several replicas ([`store::StoredGateway`]
//!   over [`store::MemoryStore`], or Valkey/Redis with the cargo feature `redis`).
//! - [`agent_config`] / [`AGENT_DEFAULTS`]: the one default document of the agent-facing hosts.
//!
//! The products built on this library live apart: the `loopguard` command (crate
//! `loopguard-cli`: `replay`, `transcripts`, `inspect`, the agent-CLI `hook` and the `mcp`
//! proxy), the Python package and its LiteLLM guardrail (`packages/python`). ARCHITECTURE.md
//! in the repository draws the whole house.
//!
//! ```no_run
//! use loopguard_host::{Policy, ToolCall};
//! let policy = Policy::embedded()?;
//! let mut gw = policy.gateway(r#"{"tools":{"loopDetection":{"enabled":true}}}"#)?;
//! let call = ToolCall {
//!     session: "s1".into(), tool: "read".into(), args_json: r#"{"path":"/a"}"#.into(),
//!     run: None, agent: None, call_id: None,
//! };
//! let verdict = gw.check_tool_call(&call)?;
//! println!("{:?}", verdict.action);
//! # Ok::<(), loopguard_host::Error>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod bindings;
#[allow(unsafe_code)] // mapping compiled code from a file: see the module's SAFETY comments
mod compile_cache;
mod error;
mod gateway;
mod limits;
pub mod metrics;
mod policy;
pub mod store;
mod swap;

pub use agent::{agent_config, AGENT_DEFAULTS};
pub use bindings::loopguard::policy::types::{
    AbortInfo, BotMessage, BotVerdict, Budget, Call, Compaction, CompactionVerdict, GroupFinals, GroupMessage,
    GroupReply, GroupRound, GroupStart, GroupStep, GroupThread, KeyedDecision, KeyedVerdict, OutcomeVerdict,
    PolicyError, Stats, StopReason, Suppression, ToolAction, ToolCall, ToolOutcome, ToolVerdict, Verdict,
};
pub use error::{Error, ErrorKind, Result};
pub use gateway::Gateway;
pub use limits::{Deadline, Limits, EPOCH_TICK};
pub use policy::{
    default_compile_cache_dir, use_compile_cache, use_default_compile_cache, Inspection, Instance, LoadOptions, Policy,
    INTERFACE_VERSION,
};
pub use swap::{FailureMode, Health, Supervision, SwapReport, SwappableGateway};

/// This crate's version (the CLI's too: the workspace releases them together).
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");
