//! Streaming a trace through a gateway in chunks of whole lines.
//!
//! Why chunks: one `apply-events` call per line would pay the component boundary per event, and
//! one call for the whole trace would hold a multi-gigabyte trace (and its decisions) in memory
//! twice. Chunks of whole lines keep both costs bounded, and `first-line` keeps the trace's own
//! line numbers in decisions and errors.

use std::io::{BufRead, Write};

use super::read;
use loopguard_host::Gateway;
use loopguard_host::Policy;
use loopguard_host::{Error, Result};
use loopguard_host::{SwapReport, SwappableGateway};

/// Anything that applies a batch of trace lines: a [`Gateway`] or a [`SwappableGateway`].
pub trait ApplyEvents {
    /// See [`Gateway::apply_events`].
    fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String>;
}

impl ApplyEvents for Gateway {
    fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String> {
        Gateway::apply_events(self, events, first_line)
    }
}

impl ApplyEvents for &SwappableGateway {
    fn apply_events(&mut self, events: &str, first_line: u32) -> Result<String> {
        SwappableGateway::apply_events(self, events, first_line)
    }
}

/// The default chunk size: large enough that the boundary cost vanishes, small enough to bound
/// the guest memory a call needs (the policy reads and checks a whole chunk before it applies
/// any of it, so every line's parsed tree is held at once). A single longer line is still sent
/// whole, up to [`read::MAX_LINE_BYTES`] (the policy decides whether it is too long). Was 4 MiB: the
/// trees of a chunk that size are tens of MiB, and natively a 200,000-event tool trace replayed
/// in 2.2 s with 4 MiB chunks and 1.1-1.4 s with 16-128 KiB ones (docs/PERFORMANCE.md).
pub const DEFAULT_CHUNK_BYTES: usize = 256 << 10;

/// Replays `trace` through `gateway` in chunks of at most `chunk_bytes` (whole lines), writing the
/// decisions to `out` as each chunk is decided. Returns the number of lines read.
///
/// The trace is read in blocks cut at line ends (`read::Chunks`), not line by line: reading
/// and checking each line on its own (`read_until`, then UTF-8 per line and again per chunk) was
/// ~0.7 k instructions of a bot event's ~15 k in replay (callgrind).
pub fn stream<G: ApplyEvents + ?Sized>(
    gateway: &mut G,
    trace: &mut dyn BufRead,
    out: &mut dyn Write,
    chunk_bytes: usize,
) -> Result<u64> {
    let mut chunks = read::Chunks::new(trace);
    let mut first_line: u64 = 1;
    loop {
        let chunk = chunks.next(first_line, chunk_bytes);
        // A chunk with a bad line (or a failed read) is never applied; the ones before it were.
        if let Some(e) = chunk.error {
            return Err(e);
        }
        if chunk.text.is_empty() {
            break;
        }
        decide(gateway, &chunk.text, first_line, out)?;
        first_line += chunk.lines;
        chunks.recycle(chunk.text);
    }
    out.flush().map_err(|source| Error::io("writing the decisions", source))?;
    Ok(first_line - 1)
}

/// Like [`stream`], but swaps `gateway` to `policy` right before trace line `swap_at` (1-based)
/// is applied. Returns the lines read and the swap's report (`None` if the trace is shorter).
pub fn stream_with_swap(
    gateway: &SwappableGateway,
    trace: &mut dyn BufRead,
    out: &mut dyn Write,
    chunk_bytes: usize,
    swap_at: u64,
    policy: Policy,
) -> Result<(u64, Option<SwapReport>)> {
    let mut sink = gateway;
    let before = stream_until(&mut sink, trace, out, chunk_bytes, 0, swap_at.saturating_sub(1))?;
    if before + 1 < swap_at {
        return Ok((before, None));
    }
    let report = gateway.swap(policy)?;
    let after = stream_until(&mut sink, trace, out, chunk_bytes, before, u64::MAX)?;
    Ok((before + after, Some(report)))
}

/// What a shadow run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShadowSummary {
    /// Trace lines that produced a decision from the active policy.
    pub events: u64,
    /// Lines where the candidate's decision (or error) differs.
    pub differ: u64,
}

/// Runs `candidate` beside `active` on every line of `trace` (one `apply-events` per line on each):
/// the active decisions go to `out`, and each line where the candidate decides differently goes
/// to `diffs` as `{"shadow_diff":{"line":N,"active":{…},"candidate":{…}}}`. A candidate error on
/// a line is a difference (`"candidate":{"error":"…"}`); an active error ends the run.
pub fn shadow(
    active: &SwappableGateway,
    candidate: &SwappableGateway,
    trace: &mut dyn BufRead,
    out: &mut dyn Write,
    diffs: &mut dyn Write,
) -> Result<ShadowSummary> {
    let mut summary = ShadowSummary::default();
    let mut line = Vec::new();
    let mut number: u32 = 0;
    let write_err = |source| Error::io("writing the decisions", source);
    loop {
        line.clear();
        if read::read_line(trace, &mut line, u64::from(number) + 1)? == 0 {
            break;
        }
        number = number.checked_add(1).ok_or_else(|| {
            Error::invalid(
                loopguard_host::ErrorKind::Input,
                format!("line {number}"),
                "the trace has more lines than a u32 can number; split it",
            )
        })?;
        let text = std::str::from_utf8(&line).map_err(|_| {
            Error::invalid(
                loopguard_host::ErrorKind::Input,
                format!("line {number}"),
                "is not valid UTF-8; traces are UTF-8 JSON Lines",
            )
        })?;
        let decided = active.apply_events(text, number)?;
        out.write_all(decided.as_bytes()).map_err(write_err)?;
        if decided.is_empty() {
            continue;
        }
        summary.events += 1;
        let other = candidate.apply_events(text, number);
        if other.as_deref().ok() != Some(decided.as_str()) {
            summary.differ += 1;
            let candidate_json = match other {
                Ok(text) => json_or_null(&text),
                Err(e) => format!("{{\"error\":{}}}", serde_json::Value::from(e.to_string())),
            };
            let diff = format!(
                "{{\"shadow_diff\":{{\"line\":{number},\"active\":{},\"candidate\":{candidate_json}}}}}\n",
                json_or_null(&decided)
            );
            diffs.write_all(diff.as_bytes()).map_err(write_err)?;
        }
    }
    out.flush().map_err(write_err)?;
    Ok(summary)
}

/// The decision line(s) of one event as one JSON value: the object, or an array if there are
/// several, or `null` if there is none.
fn json_or_null(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.as_slice() {
        [] => "null".into(),
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(",")),
    }
}

/// [`stream`] of a trace whose first `start` lines were read already, that stops after line
/// `last` (the reader is left at the next line). Returns the lines it read.
pub(crate) fn stream_until<G: ApplyEvents + ?Sized>(
    gateway: &mut G,
    trace: &mut dyn BufRead,
    out: &mut dyn Write,
    chunk_bytes: usize,
    start: u64,
    last: u64,
) -> Result<u64> {
    let mut chunk: Vec<u8> = Vec::with_capacity(chunk_bytes.min(DEFAULT_CHUNK_BYTES) + 1024);
    let mut chunk_first_line: u64 = start + 1;
    let mut lines_read: u64 = start;
    while lines_read < last {
        let line_start = chunk.len();
        if read::read_line(trace, &mut chunk, lines_read + 1)? == 0 {
            break;
        }
        lines_read += 1;
        if std::str::from_utf8(&chunk[line_start..]).is_err() {
            return Err(Error::invalid(
                loopguard_host::ErrorKind::Input,
                format!("line {lines_read}"),
                "is not valid UTF-8; traces are UTF-8 JSON Lines",
            ));
        }
        if chunk.len() >= chunk_bytes {
            flush(gateway, &mut chunk, chunk_first_line, out)?;
            chunk_first_line = lines_read + 1;
        }
    }
    if !chunk.is_empty() {
        flush(gateway, &mut chunk, chunk_first_line, out)?;
    }
    out.flush().map_err(|source| Error::io("writing the decisions", source))?;
    Ok(lines_read - start)
}

fn flush<G: ApplyEvents + ?Sized>(
    gateway: &mut G,
    chunk: &mut Vec<u8>,
    first_line: u64,
    out: &mut dyn Write,
) -> Result<()> {
    // Every line was checked to be UTF-8 as it was read, and a chunk ends on a line boundary.
    let text = std::str::from_utf8(chunk).map_err(|_| {
        Error::invalid(loopguard_host::ErrorKind::Input, format!("line {first_line}"), "is not valid UTF-8")
    })?;
    decide(gateway, text, first_line, out)?;
    chunk.clear();
    Ok(())
}

/// Applies one chunk of whole lines whose first line is `first_line`, and writes its decisions.
fn decide<G: ApplyEvents + ?Sized>(gateway: &mut G, text: &str, first_line: u64, out: &mut dyn Write) -> Result<()> {
    let first_line = u32::try_from(first_line).map_err(|_| {
        Error::invalid(
            loopguard_host::ErrorKind::Input,
            format!("line {first_line}"),
            "the trace has more lines than a u32 can number; split it",
        )
    })?;
    let decisions = gateway.apply_events(text, first_line)?;
    out.write_all(decisions.as_bytes()).map_err(|source| Error::io("writing the decisions", source))
}
