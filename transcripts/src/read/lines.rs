//! Bounded line reading, shared by the JSONL and trajectory readers.
//!
//! Why bounded: a line is held whole while it is parsed, so one runaway line must be skipped
//! (and named by the reader) rather than read into memory.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::{Error, ErrorKind};

/// The longest line read, in bytes. Why a cap: a line is held whole while it is parsed, so one
/// runaway line (a whole log as a tool result, a file that is not JSON Lines) would otherwise
/// take its size in memory. 16 times the largest event OpenClaw compresses in its store (4 MiB,
/// `sqlite/decode.rs`).
pub(super) const MAX_LINE_BYTES: usize = 64 << 20;

/// How a line read by [`read_line`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineEnd {
    /// At a `\n`.
    Newline,
    /// At the end of the file, without a `\n` (an interrupted write, if it is not JSON).
    Eof,
    /// Longer than [`MAX_LINE_BYTES`]: skipped to its end, `buf` left empty.
    TooLong,
}

/// Reads the next line into `buf` (cleared first): the bytes it took in the file (0 at the end)
/// and how it ended.
pub(super) fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<(u64, LineEnd)> {
    buf.clear();
    let n = std::io::Read::take(&mut *r, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', buf)?;
    if buf.last() == Some(&b'\n') || n == 0 {
        return Ok((n as u64, LineEnd::Newline));
    }
    if n <= MAX_LINE_BYTES {
        return Ok((n as u64, LineEnd::Eof));
    }
    buf.clear();
    let skipped = n as u64 + r.skip_until(b'\n')? as u64;
    Ok((skipped, LineEnd::TooLong))
}

/// Reads lines from `r`, calling `f(line_number, bytes, end)` for each non-blank line (a leading
/// byte-order mark and trailing `\r` removed; a line over [`MAX_LINE_BYTES`] comes empty, with
/// [`LineEnd::TooLong`]).
pub(super) fn for_each_line<R: BufRead>(
    mut r: R,
    mut f: impl FnMut(u64, &[u8], LineEnd) -> bool,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        let (n, end) = read_line(&mut r, &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        if end == LineEnd::TooLong {
            if !f(number, &[], end) {
                return Ok(());
            }
            continue;
        }
        let mut line = buf.as_slice();
        if number == 1 {
            line = line.strip_prefix(crate::BOM).unwrap_or(line);
        }
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        if let Some(rest) = line.strip_suffix(b"\r") {
            line = rest;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !f(number, line, end) {
            return Ok(());
        }
    }
}

/// Whether `path` is a zstd-compressed transcript: the archives OpenClaw writes when a session
/// is deleted or reset (`<sessionId>.jsonl.deleted.<ts>.<hash>.zst`, `….jsonl.reset.….zst`).
fn is_compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Opens a transcript file as lines: decompressed when it is a `.zst` archive.
pub(super) fn open(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    if is_compressed(path) {
        return open_zstd(path);
    }
    let file = File::open(path).map_err(|e| Error::new(ErrorKind::Io(e), path))?;
    Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
}

/// Opens a zstd-compressed file as a decompressing stream (never loaded whole).
pub(super) fn open_zstd(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    let io = |e| Error::new(ErrorKind::Io(e), path);
    let file = File::open(path).map_err(io)?;
    let decoder = zstd::stream::read::Decoder::new(file).map_err(io)?;
    Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
}
