//! `loopguard mcp`: a loop guard in the path of any MCP client.
//!
//! Why a proxy: IDE agents, desktop assistants and custom agents call tools through an MCP
//! server's `tools/call` and have no hook of their own; a proxy between client and server sees
//! every call and its result, so it can stop an agent that repeats a call that keeps returning
//! the same thing, whatever the client. The proxy is invisible otherwise: every other message
//! (initialize and discovery, notifications, progress, cancellation, server-initiated sampling
//! and elicitation, pings) passes as the bytes it came as, ids unchanged.
//!
//! ```text
//! loopguard mcp [--config C] -- npx -y @modelcontextprotocol/server-everything   # stdio
//! loopguard mcp --listen 127.0.0.1:3001 --upstream http://127.0.0.1:3000/mcp      # streamable HTTP
//! ```
//!
//! Layout: [`jsonrpc`] reads and writes the few messages that matter, [`guard`] maps them onto
//! the policy (its module doc has the event → call → answer table), [`relay`] is the one path
//! both transports take, [`stdio`] and [`http`] are the transports.

pub mod guard;
pub mod http;
pub mod jsonrpc;
pub mod relay;
pub mod stdio;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Args;
use loopguard_host::{FailureMode, Policy, Supervision, SwappableGateway};

/// `loopguard mcp`.
#[derive(Debug, Args)]
pub struct Mcp {
    /// OpenClaw-style config document (JSON or JSON5); where it is silent, detection is on with
    /// the `cautious` preset (the agent-facing hosts' one default, `loopguard_host::AGENT_DEFAULTS`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Policy component to use instead of the embedded one.
    #[arg(long, value_name = "FILE.wasm")]
    pub policy: Option<PathBuf>,
    /// If the policy breaks on a decision, block the call instead of letting it through.
    #[arg(long)]
    pub fail_closed: bool,
    /// Serve streamable HTTP on this address (with --upstream) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// The MCP server's streamable-HTTP endpoint (http://HOST:PORT/PATH).
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// The stdio MCP server to run, after `--`.
    #[arg(last = true, value_name = "SERVER COMMAND")]
    pub command: Vec<String>,
}

/// Runs the proxy; returns the exit code (the stdio server's).
pub fn run(args: Mcp) -> anyhow::Result<i32> {
    let http = match (&args.listen, &args.upstream, args.command.is_empty()) {
        (Some(listen), Some(upstream), true) => Some((*listen, upstream.clone())),
        (None, None, false) => None,
        (Some(_), _, false) | (_, Some(_), false) => {
            bail!("mcp: give either --listen/--upstream or a server command after `--`, not both")
        }
        (Some(_), None, true) => bail!("mcp --listen needs --upstream URL (the MCP server's HTTP endpoint)"),
        (None, Some(_), true) => bail!("mcp --upstream needs --listen ADDR (where the proxy serves)"),
        (None, None, true) => {
            bail!("mcp needs a server command after `--` (stdio) or --listen ADDR --upstream URL (HTTP)")
        }
    };
    let text = match &args.config {
        Some(path) => {
            std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()))?
        }
        None => "{}".to_string(),
    };
    let name = args.config.as_ref().map_or("(built-in default)".to_string(), |p| p.display().to_string());
    let config = loopguard_host::agent_config(&text).map_err(|e| anyhow::anyhow!("invalid config {name}: {e}"))?;
    // A cache that cannot be used only costs start-up time.
    let _ = loopguard_host::use_default_compile_cache();
    let policy = match &args.policy {
        Some(path) => Policy::from_file(path)?,
        None => Policy::embedded()?,
    };
    let supervision = Supervision {
        failure_mode: if args.fail_closed { FailureMode::Closed } else { FailureMode::Open },
        ..Supervision::default()
    };
    let gateway = SwappableGateway::new(policy, &config, supervision).map_err(|e| match &args.config {
        Some(path) => anyhow::Error::new(e).context(path.display().to_string()),
        None => e.into(),
    })?;
    let guard = Arc::new(guard::Guard::new(gateway));
    match http {
        Some((listen, upstream)) => http::run(guard, listen, &upstream).map(|()| 0),
        None => stdio::run(guard, &args.command),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(args: &[&str]) -> String {
        let cli = match crate::cli::parse(args.iter().map(|s| s.to_string())) {
            Ok(Ok(cli)) => cli,
            other => panic!("{args:?} did not parse: {other:?}"),
        };
        let Some(crate::cli::Command::Mcp(m)) = cli.command else { panic!("not mcp") };
        format!("{:#}", run(m).expect_err("refused"))
    }

    #[test]
    fn a_transport_that_is_missing_or_half_given_is_named() {
        for (args, says) in [
            (&["mcp"][..], "mcp needs a server command after `--`"),
            (&["mcp", "--listen", "127.0.0.1:0"][..], "--listen needs --upstream"),
            (&["mcp", "--upstream", "http://127.0.0.1:1/mcp"][..], "--upstream needs --listen"),
            (&["mcp", "--listen", "127.0.0.1:0", "--upstream", "http://h/mcp", "--", "x"][..], "not both"),
            (&["mcp", "--config", "/nonexistent/c.json", "--", "x"][..], "cannot read config /nonexistent/c.json"),
        ] {
            let error = refused(args);
            assert!(error.contains(says), "{args:?}: {error}");
        }
    }
}
