//! Reading a trace in the chunks one worker reads it in, without copying it line by line.
//!
//! [`crate::replay::stream`] appends whole lines until the chunk holds at least `chunk_bytes`,
//! so a chunk ends at the first line end at or after byte `chunk_bytes - 1`. Here the trace is
//! read in large blocks straight into the chunk's buffer, cut at that line end, and the bytes
//! after it start the next chunk: the same chunks, one copy fewer, and buffers reused.

use std::io::{BufRead, Read as _};

use crate::error::{Error, ErrorKind};

/// Most bytes asked of the reader at a time: at most a chunk, because the bytes read past the
/// chunk's end are moved to the next chunk (a 1 MiB read for a 64 KiB chunk moved ~2 MiB per
/// chunk, a fifth of a parallel replay's CPU time).
const BLOCK: usize = 1 << 20;

/// One chunk and why reading stopped after it.
pub(super) struct Read {
    /// Whole lines (the last one may lack its `\n` at the end of the trace), valid UTF-8.
    pub text: String,
    /// Lines in `text`.
    pub lines: u64,
    /// An error met while reading: returned once the chunks before it are written; this chunk is
    /// then never applied, as one worker never applies it.
    pub error: Option<Error>,
}

pub(super) fn input_error(line: u64, reason: &str) -> Error {
    Error::Policy { kind: ErrorKind::Input, path: format!("line {line}"), reason: reason.into() }
}

/// Cuts a trace into chunks.
pub(super) struct Chunks<'a> {
    trace: &'a mut dyn BufRead,
    /// Bytes read after the last chunk.
    carry: Vec<u8>,
    /// A buffer to reuse.
    spare: Vec<u8>,
    eof: bool,
}

impl<'a> Chunks<'a> {
    pub(super) fn new(trace: &'a mut dyn BufRead) -> Self {
        Chunks { trace, carry: Vec::new(), spare: Vec::new(), eof: false }
    }

    /// Gives back a chunk's buffer once it is written.
    pub(super) fn recycle(&mut self, text: String) {
        if text.capacity() > self.spare.capacity() {
            self.spare = text.into_bytes();
        }
    }

    /// The next chunk (empty at the end of the trace). `first_line` numbers its first line.
    pub(super) fn next(&mut self, first_line: u64, chunk_bytes: usize) -> Read {
        let mut text = std::mem::take(&mut self.spare);
        text.clear();
        text.reserve(chunk_bytes + (1 << 16));
        text.append(&mut self.carry);
        let want = chunk_bytes.max(1) - 1;
        let mut scanned = 0;
        let mut error = None;
        let end = loop {
            if text.len() > want {
                let from = want.max(scanned);
                if let Some(i) = memchr::memchr(b'\n', &text[from..]) {
                    break Some(from + i + 1);
                }
                scanned = text.len();
            }
            if self.eof {
                break None;
            }
            // Straight into the chunk: a reader whose buffer is empty hands a large read through.
            match (&mut *self.trace).take(BLOCK.min(chunk_bytes.max(1)) as u64).read_to_end(&mut text) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(source) => {
                    error = Some(Error::Io { what: "reading the trace".into(), source });
                    break None;
                }
            }
        };
        if let Some(end) = end {
            self.carry = text.split_off(end);
        }
        let newlines = text.iter().filter(|b| **b == b'\n').count() as u64;
        let lines = newlines + u64::from(text.last().is_some_and(|b| *b != b'\n'));
        let text = String::from_utf8(text).unwrap_or_else(|e| {
            // The first bad line comes before anything read after it, an I/O error included.
            let bad = e.utf8_error().valid_up_to();
            let line = first_line + e.as_bytes()[..bad].iter().filter(|b| **b == b'\n').count() as u64;
            error = Some(input_error(line, "is not valid UTF-8; traces are UTF-8 JSON Lines"));
            String::new()
        });
        Read { text, lines, error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunks `replay::stream` would make: whole lines until at least `size` bytes.
    fn by_lines(text: &str, size: usize) -> Vec<String> {
        let (mut out, mut chunk) = (Vec::new(), String::new());
        for line in text.split_inclusive('\n') {
            chunk.push_str(line);
            if chunk.len() >= size {
                out.push(std::mem::take(&mut chunk));
            }
        }
        if !chunk.is_empty() {
            out.push(chunk);
        }
        out
    }

    #[test]
    fn blocks_are_cut_where_whole_lines_would_be() {
        let text: String = (0..500).map(|i| format!("{}\n", "x".repeat(i % 37))).collect::<String>() + "tail";
        for size in [1, 2, 7, 64, 100, 1000, 1 << 20] {
            let mut input = std::io::BufReader::with_capacity(13, text.as_bytes());
            let mut chunks = Chunks::new(&mut input);
            let (mut got, mut line) = (Vec::new(), 1);
            loop {
                let read = chunks.next(line, size);
                assert!(read.error.is_none());
                if read.text.is_empty() {
                    break;
                }
                assert_eq!(read.lines as usize, read.text.split_inclusive('\n').count());
                line += read.lines;
                got.push(read.text);
            }
            assert_eq!(got, by_lines(&text, size), "chunk size {size}");
        }
    }

    #[test]
    fn a_bad_line_is_named_and_its_chunk_dropped() {
        let mut bytes = b"a\nb\nc\n".to_vec();
        bytes[4] = 0xff;
        let mut input = &bytes[..];
        let read = Chunks::new(&mut input).next(10, 1 << 20);
        let e = read.error.map(|e| e.to_string()).unwrap_or_default();
        assert!(read.text.is_empty() && e.starts_with("line 12: is not valid UTF-8"), "{e}");
    }
}
