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
use std::sync::Arc;

use anyhow::bail;
use clap::Args;
use loopguard_host::{Supervision, SwappableGateway};

use crate::metrics::serve::MetricsArgs;
use crate::metrics::{self, Metrics};
use crate::options::{Config, PolicyArgs};

/// `loopguard mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    // The policy, the config (where it is silent, detection is on with the `cautious` preset:
    // the agent-facing hosts' one default, `loopguard_host::AGENT_DEFAULTS`) and the fail mode
    // (`--fail-closed`: a call the broken policy cannot decide is blocked).
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Serve streamable HTTP on this address (with --upstream) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// The MCP server's streamable-HTTP endpoint (http://HOST:PORT/PATH).
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    // `--metrics ADDR` for the stdio proxy; `--listen` answers /metrics on its own address.
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// The stdio MCP server to run, after `--`.
    #[arg(last = true, value_name = "SERVER COMMAND")]
    pub command: Vec<String>,
}

/// Runs the proxy; returns the exit code (the stdio server's).
pub fn run(args: McpArgs) -> anyhow::Result<i32> {
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
    if http.is_some() && args.metrics.metrics.is_some() {
        bail!("mcp --listen serves /metrics on its own address; --metrics ADDR is for the stdio proxy")
    }
    let config = Config::read(args.policy.config.as_deref())?.with_agent_defaults()?;
    let policy = args.policy.policy()?;
    let supervision = Supervision { failure_mode: args.policy.failure_mode(), ..Supervision::default() };
    let gateway = SwappableGateway::new(policy, &config.text, supervision).map_err(|e| config.refused(e))?;
    let gateway = Arc::new(gateway);
    let metrics = (http.is_some() || args.metrics.metrics.is_some()).then(|| {
        let mut metrics = Metrics::new("mcp");
        metrics.watch_policy(&gateway, SwappableGateway::health);
        Arc::new(metrics)
    });
    if let (Some(addr), Some(metrics)) = (args.metrics.metrics, &metrics) {
        metrics::serve::spawn(addr, Arc::clone(metrics))?;
    }
    let guard = Arc::new(guard::Guard::new(gateway, metrics.clone()));
    match http {
        Some((listen, upstream)) => http::run(guard, metrics, listen, &upstream).map(|()| 0),
        None => stdio::run(guard, &args.command),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `loopguard mcp ARGS…` as the command line would parse it.
    #[derive(Debug, clap::Parser)]
    struct Line {
        #[command(flatten)]
        mcp: McpArgs,
    }

    fn refused(args: &[&str]) -> String {
        let line = <Line as clap::Parser>::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        format!("{:#}", run(line.mcp).expect_err("refused"))
    }

    #[test]
    fn a_transport_that_is_missing_or_half_given_is_named() {
        for (args, says) in [
            (&["mcp"][..], "mcp needs a server command after `--`"),
            (&["mcp", "--listen", "127.0.0.1:0"][..], "--listen needs --upstream"),
            (&["mcp", "--upstream", "http://127.0.0.1:1/mcp"][..], "--upstream needs --listen"),
            (&["mcp", "--listen", "127.0.0.1:0", "--upstream", "http://h/mcp", "--", "x"][..], "not both"),
            (&["mcp", "--config", "/nonexistent/c.json", "--", "x"][..], "cannot read config /nonexistent/c.json"),
            (
                &["mcp", "--listen", "127.0.0.1:0", "--upstream", "http://h/mcp", "--metrics", "127.0.0.1:0"][..],
                "serves /metrics on its own address",
            ),
        ] {
            let error = refused(args);
            assert!(error.contains(says), "{args:?}: {error}");
        }
    }
}
