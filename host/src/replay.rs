//! Streaming a trace through a gateway in chunks of whole lines.
//!
//! Why chunks: one `apply-events` call per line would pay the component boundary per event, and
//! one call for the whole trace would hold a multi-gigabyte trace (and its decisions) in memory
//! twice. Chunks of whole lines keep both costs bounded, and `first-line` keeps the trace's own
//! line numbers in decisions and errors.

use std::io::{BufRead, Write};

use crate::error::{Error, Result};
use crate::gateway::Gateway;

/// The default chunk size: large enough that the boundary cost vanishes, small enough to bound
/// memory. A single longer line is still sent whole (the policy decides whether it is too long).
pub const DEFAULT_CHUNK_BYTES: usize = 4 << 20;

/// Replays `trace` through `gateway` in chunks of at most `chunk_bytes` (whole lines), writing the
/// decisions to `out` as each chunk is decided. Returns the number of lines read.
pub fn stream(gateway: &mut Gateway, trace: &mut dyn BufRead, out: &mut dyn Write, chunk_bytes: usize) -> Result<u64> {
    let mut chunk: Vec<u8> = Vec::with_capacity(chunk_bytes.min(DEFAULT_CHUNK_BYTES) + 1024);
    let mut chunk_first_line: u64 = 1;
    let mut lines_read: u64 = 0;
    let read_err = |source| Error::Io { what: "reading the trace".into(), source };
    loop {
        let line_start = chunk.len();
        let n = trace.read_until(b'\n', &mut chunk).map_err(read_err)?;
        if n == 0 {
            break;
        }
        lines_read += 1;
        if std::str::from_utf8(&chunk[line_start..]).is_err() {
            return Err(Error::Policy {
                path: format!("line {lines_read}"),
                reason: "is not valid UTF-8; traces are UTF-8 JSON Lines".into(),
            });
        }
        if chunk.len() >= chunk_bytes {
            flush(gateway, &mut chunk, chunk_first_line, out)?;
            chunk_first_line = lines_read + 1;
        }
    }
    if !chunk.is_empty() {
        flush(gateway, &mut chunk, chunk_first_line, out)?;
    }
    out.flush().map_err(|source| Error::Io { what: "writing the decisions".into(), source })?;
    Ok(lines_read)
}

fn flush(gateway: &mut Gateway, chunk: &mut Vec<u8>, first_line: u64, out: &mut dyn Write) -> Result<()> {
    let first_line = u32::try_from(first_line).map_err(|_| Error::Policy {
        path: format!("line {first_line}"),
        reason: "the trace has more lines than a u32 can number; split it".into(),
    })?;
    // Every line was checked to be UTF-8 as it was read, and a chunk ends on a line boundary.
    let text = std::str::from_utf8(chunk)
        .map_err(|_| Error::Policy { path: format!("line {first_line}"), reason: "is not valid UTF-8".into() })?;
    let decisions = gateway.apply_events(text, first_line)?;
    out.write_all(decisions.as_bytes()).map_err(|source| Error::Io { what: "writing the decisions".into(), source })?;
    chunk.clear();
    Ok(())
}
