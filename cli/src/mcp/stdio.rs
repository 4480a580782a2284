//! The stdio transport: `loopguard mcp -- <server command…>`. The MCP client spawns the proxy
//! as its server; the proxy spawns the real server and relays newline-delimited JSON-RPC both
//! ways, each message as the bytes it came as (MCP 2025-11-25 "Transports", stdio).
//!
//! The session is the connection: one client per proxy process, so one policy session, named
//! `mcp-stdio:<pid>`. Two threads, one per direction: a server request (sampling, elicitation,
//! roots) that arrives while a `tools/call` is pending passes at once, and the client's answer
//! goes straight back; nothing waits on anything else.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::Context;

use super::guard::Guard;
use super::relay::{self, Forward};

/// Runs the server and relays until it exits; returns its exit code.
pub fn run(guard: Arc<Guard>, command: &[String]) -> anyhow::Result<i32> {
    let (program, args) = command.split_first().context("mcp needs a server command after `--`")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start the MCP server {program:?}"))?;
    let session = format!("mcp-stdio:{}", std::process::id());
    let mut to_server = child.stdin.take().context("the server's stdin")?;
    let from_server = child.stdout.take().context("the server's stdout")?;

    let up = {
        let (guard, session) = (Arc::clone(&guard), session.clone());
        std::thread::spawn(move || -> std::io::Result<()> {
            let mut input = BufReader::with_capacity(1 << 16, std::io::stdin().lock());
            let mut line = Vec::new();
            while read_line(&mut input, &mut line)? {
                let step = relay::from_client(&guard, &session, text(&line));
                if let Some(answer) = step.answer {
                    to_client(answer.as_bytes(), true)?;
                }
                match step.forward {
                    Forward::Original => to_server.write_all(&line)?,
                    Forward::Rest(rest) => {
                        to_server.write_all(rest.as_bytes())?;
                        to_server.write_all(b"\n")?;
                    }
                    Forward::Nothing => continue,
                }
                to_server.flush()?;
            }
            // The client hung up: closing the server's stdin asks it to exit (dropped here).
            Ok(())
        })
    };

    let mut output = BufReader::with_capacity(1 << 16, from_server);
    let mut line = Vec::new();
    let relayed = (|| -> std::io::Result<()> {
        while read_line(&mut output, &mut line)? {
            match relay::from_server(&guard, &session, text(&line)) {
                Some(changed) => to_client(changed.as_bytes(), true)?,
                None => to_client(&line, false)?,
            }
        }
        Ok(())
    })();
    guard.end(&session);
    let status = child.wait().context("waiting for the MCP server")?;
    relayed.context("relaying the server's messages to the client")?;
    // The client side ends when the client closes stdin; a server that exited first ends the proxy.
    if up.is_finished() {
        if let Ok(Err(e)) = up.join() {
            return Err(anyhow::Error::new(e).context("relaying the client's messages to the server"));
        }
    }
    Ok(status.code().unwrap_or(1))
}

/// Reads one line (with its `\n`) into `line`; false at the end of the input.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    Ok(input.read_until(b'\n', line)? > 0)
}

/// The message without its line end; invalid UTF-8 is not JSON, so the text is then empty of
/// meaning and the message passes as bytes.
fn text(line: &[u8]) -> &str {
    std::str::from_utf8(line).map_or("\u{0}", |t| t.trim_end_matches(['\n', '\r']))
}

/// Writes one message to the client (stdout is the protocol: nothing else is written there).
fn to_client(bytes: &[u8], newline: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    if newline {
        out.write_all(b"\n")?;
    }
    out.flush()
}
