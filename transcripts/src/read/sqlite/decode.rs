//! Decompressing one `event_zstd` payload, with the size checks OpenClaw's own decoder makes.
//!
//! Separate so both passes of [`super::read`] share one zstd context and one buffer per session
//! instead of allocating per row, and so the size limits sit in one place.

/// The largest payload OpenClaw writes compressed (`MAX_COMPRESSED_EVENT_BYTES`).
const MAX_EVENT_BYTES: usize = 4 << 20;

/// A reusable zstd context and buffer.
pub(super) struct Decoder {
    ctx: Option<zstd::bulk::Decompressor<'static>>,
    buf: Vec<u8>,
}

impl Decoder {
    pub(super) fn new() -> Self {
        Decoder { ctx: zstd::bulk::Decompressor::new().ok(), buf: Vec::new() }
    }

    /// Decodes one payload; `size` is `event_utf8_bytes`, which the output must match (as
    /// OpenClaw's own decoder demands).
    pub(super) fn decode(&mut self, blob: &[u8], size: Option<i64>) -> Result<&str, String> {
        let expected = match size {
            Some(n) if n >= 1 && (n as usize) <= MAX_EVENT_BYTES => Some(n as usize),
            Some(n) => return Err(format!("event_utf8_bytes is {n}, outside 1..={MAX_EVENT_BYTES}")),
            None => None,
        };
        let capacity = expected.unwrap_or(MAX_EVENT_BYTES);
        let Some(ctx) = self.ctx.as_mut() else { return Err("zstd context could not be created".into()) };
        self.buf.clear();
        self.buf.reserve(capacity);
        let n = ctx.decompress_to_buffer(blob, &mut self.buf).map_err(|e| e.to_string())?;
        if let Some(want) = expected {
            if n != want {
                return Err(format!("decompressed to {n} bytes, event_utf8_bytes says {want}"));
            }
        }
        std::str::from_utf8(&self.buf[..n]).map_err(|e| format!("not UTF-8: {e}"))
    }
}
