//! Reading a trace in the chunks one worker reads it in, without reading it line by line.
//!
//! [`super::stream::stream`] cuts the trace into whole lines until a chunk holds at least
//! `chunk_bytes`: a chunk ends at the first line end at or after byte `chunk_bytes - 1`. The
//! reader's buffer is copied into the chunk up to that line end in one piece per buffer, and the
//! lines are counted with `memchr`. Why not `read_until` per line: with a UTF-8 check per line
//! that was ~0.7 k instructions of a bot event's ~15 k in replay (callgrind); reading large
//! blocks straight into the chunk instead moved the bytes past its end to the next one, a second
//! copy that cost as much.

use std::io::BufRead;

use loopguard_host::{Error, ErrorKind};

/// One chunk and why reading stopped after it.
pub(crate) struct Read {
    /// Whole lines (the last one may lack its `\n` at the end of the trace), valid UTF-8.
    pub text: String,
    /// Lines in `text`.
    pub lines: u64,
    /// An error met while reading: returned once the chunks before it are written; this chunk is
    /// then never applied, as one worker never applies it.
    pub error: Option<Error>,
}

pub(crate) fn input_error(line: u64, reason: &str) -> Error {
    Error::invalid(ErrorKind::Input, format!("line {line}"), reason)
}

/// The longest trace line a reader takes, without its `\n`. Why a cap: a line is held whole
/// (here and then in the policy's memory), so a file without line ends (a database, a binary
/// passed by mistake) or one runaway line would otherwise be read whole into memory, and then
/// fail in the policy as an out-of-memory that names no line. Twice the largest event the
/// shipped policy takes (8 MiB, `too-large` from the policy itself).
pub const MAX_LINE_BYTES: usize = 16 << 20;

fn too_long(line: u64) -> Error {
    Error::invalid(
        ErrorKind::TooLarge,
        format!("line {line}"),
        format!("is longer than {MAX_LINE_BYTES} bytes, the most a trace line may be; is this file JSON Lines?"),
    )
}

/// Reads line `line` (with its `\n`, if it has one) onto the end of `buf`: the bytes read, 0 at
/// the end of the trace. A line longer than [`MAX_LINE_BYTES`] is an error naming it.
pub(crate) fn read_line(trace: &mut dyn BufRead, buf: &mut Vec<u8>, line: u64) -> Result<usize, Error> {
    let limit = MAX_LINE_BYTES as u64 + 1;
    let n = std::io::Read::take(&mut *trace, limit)
        .read_until(b'\n', buf)
        .map_err(|source| Error::io("reading the trace", source))?;
    if n > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
        return Err(too_long(line));
    }
    Ok(n)
}

/// Cuts a trace into chunks.
pub(crate) struct Chunks<'a> {
    trace: &'a mut dyn BufRead,
    /// A buffer to reuse.
    spare: Vec<u8>,
}

impl<'a> Chunks<'a> {
    pub(crate) fn new(trace: &'a mut dyn BufRead) -> Self {
        Chunks { trace, spare: Vec::new() }
    }

    /// Gives back a chunk's buffer once it is written.
    pub(crate) fn recycle(&mut self, text: String) {
        if text.capacity() > self.spare.capacity() {
            self.spare = text.into_bytes();
        }
    }

    /// The next chunk (empty at the end of the trace). `first_line` numbers its first line.
    pub(crate) fn next(&mut self, first_line: u64, chunk_bytes: usize) -> Read {
        let mut text = std::mem::take(&mut self.spare);
        text.clear();
        text.reserve(chunk_bytes + (1 << 16));
        let want = chunk_bytes.max(1) - 1;
        let mut error = None;
        loop {
            let buf = match self.trace.fill_buf() {
                Ok([]) => break,
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    error = Some(Error::io("reading the trace", source));
                    break;
                }
            };
            // The bytes before `skip` come before byte `want` of the chunk: no line end there
            // ends it.
            let skip = want.saturating_sub(text.len()).min(buf.len());
            let (take, done) = match memchr::memchr(b'\n', &buf[skip..]) {
                Some(i) => (skip + i + 1, true),
                None => (buf.len(), false),
            };
            text.extend_from_slice(&buf[..take]);
            self.trace.consume(take);
            // Only the last line can be over the cap when chunks are smaller than it (the default
            // is 1/64 of it); lines before byte `want` of a larger chunk go to the policy whole.
            if text.len() > MAX_LINE_BYTES {
                let end = text.len() - usize::from(done);
                let start = memchr::memrchr(b'\n', &text[..end]).map_or(0, |i| i + 1);
                if end - start > MAX_LINE_BYTES {
                    let line = first_line + memchr::memchr_iter(b'\n', &text[..start]).count() as u64;
                    return Read { text: String::new(), lines: 0, error: Some(too_long(line)) };
                }
            }
            if done {
                break;
            }
        }
        let newlines = memchr::memchr_iter(b'\n', &text).count() as u64;
        let lines = newlines + u64::from(text.last().is_some_and(|b| *b != b'\n'));
        let text = String::from_utf8(text).unwrap_or_else(|e| {
            // The first bad line comes before anything read after it, an I/O error included.
            let bad = e.utf8_error().valid_up_to();
            let line = first_line + memchr::memchr_iter(b'\n', &e.as_bytes()[..bad]).count() as u64;
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
    fn a_line_longer_than_the_cap_is_named_by_both_readers_and_one_at_the_cap_is_read() {
        let at_cap = "x".repeat(MAX_LINE_BYTES);
        let text = format!("a\n{at_cap}\n{at_cap}y\nb\n");
        let mut input = std::io::BufReader::with_capacity(4096, text.as_bytes());
        let mut chunks = Chunks::new(&mut input);
        let read = chunks.next(7, 1 << 10);
        assert_eq!((read.lines, read.error.is_none()), (2, true));
        let read = chunks.next(9, 1 << 10);
        let e = read.error.map(|e| e.to_string()).unwrap_or_default();
        assert!(read.text.is_empty() && e.starts_with("line 9: is longer than 16777216 bytes"), "{e}");

        let mut input = std::io::BufReader::with_capacity(4096, text.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut input, &mut buf, 1).ok(), Some(2));
        assert_eq!(read_line(&mut input, &mut buf, 2).ok(), Some(MAX_LINE_BYTES + 1));
        let e = read_line(&mut input, &mut buf, 3).map_err(|e| e.to_string()).err().unwrap_or_default();
        assert!(e.starts_with("line 3: is longer than 16777216 bytes"), "{e}");
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
