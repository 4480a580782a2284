//! The UTF-8 byte-order mark (`EF BB BF`) at the start of a file: skipped by every reader.
//!
//! Why: editors and exporters on Windows write one, and a BOM is no JSON, so a transcript, a
//! trace, a config or a hook event saved that way would otherwise fail at line 1, byte 0
//! Only a leading BOM is skipped: one further in is data, as in the file.
//!
//! Where each reader skips it: the transcript files in `read/lines.rs` (`for_each_line`: the
//! JSONL of every source) and `read/trajectory.rs` (`events.jsonl`, `manifest.json`,
//! `session-branch.json`), the legacy `sessions.json` in `read/discover.rs`, a config in
//! [`crate::apply_overrides`] (the policy's own config reader skips it too); in the CLI, a trace
//! (`cli/src/trace/`), the transcripts on stdin and a hook's event on stdin (`cli/src/hook/`).

use std::io::BufRead;

/// The UTF-8 byte-order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `text` without a leading byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{FEFF}').unwrap_or(text)
}

/// Consumes a byte-order mark at the start of `reader`, if its first read holds one. An error is
/// left for the caller's next read to meet, where it is named as that reader names its errors.
pub fn skip_bom<R: BufRead + ?Sized>(reader: &mut R) {
    if reader.fill_buf().is_ok_and(|buf| buf.starts_with(BOM)) {
        reader.consume(BOM.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_leading_mark_is_skipped() {
        assert_eq!(strip_bom("\u{FEFF}{}"), "{}");
        assert_eq!(strip_bom("{}\u{FEFF}"), "{}\u{FEFF}");
        assert_eq!(strip_bom("\u{FEFF}\u{FEFF}{}"), "\u{FEFF}{}");
        let mut reader: &[u8] = b"\xEF\xBB\xBF{}\n";
        skip_bom(&mut reader);
        assert_eq!(reader, b"{}\n");
        let mut reader: &[u8] = b"{}\n";
        skip_bom(&mut reader);
        assert_eq!(reader, b"{}\n");
    }
}
