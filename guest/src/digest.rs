//! Fingerprints: digests of canonical texts and of keys.
//!
//! OpenClaw hex-encodes SHA-256 of the canonical text; only equality matters (docs/spec/tool-loop.md
//! §1.2), so a digest here is the first 128 bits of blake3 over a one-byte domain tag and the
//! text. The tag keeps `argsHash` (which includes the tool name), result hashes and `error:`
//! hashes apart, as OpenClaw's prefixes do.

use crate::canonical::{write_canonical, write_canonical_in, Sink, Style};
use crate::json::Json;

/// A 128-bit fingerprint. Equal inputs give equal digests; a collision needs ~2^64 inputs.
pub type Digest = [u8; 16];

/// Domain tags.
pub mod tag {
    /// `argsHash`: tool name + params.
    pub const ARGS: u8 = b'a';
    /// A result hash.
    pub const RESULT: u8 = b'r';
    /// An `error:` hash.
    pub const ERROR: u8 = b'e';
    /// A warning de-duplication key.
    pub const WARN_KEY: u8 = b'w';
    /// A store key (bot pair, burst bucket, group thread).
    pub const KEY: u8 = b'k';
}

/// Streams text into blake3 through a buffer.
///
/// Why a buffer (speed code, kept for the replay floor of docs/PERFORMANCE.md, `loopguard replay` ≥ 5× the
/// TypeScript guard): the canonical writer puts its text in pieces of a few bytes (a quote, a
/// key, a colon), and each `blake3::Hasher::update` call has a fixed cost that was about a third
/// of a decision (`perf` on the decision benchmark's workload). Text goes into `N` bytes first;
/// a text that fits (nearly every tool call and result) is hashed in one call at the end, a
/// longer one is fed to the hasher a buffer at a time. Either way the digest is blake3 of the
/// same bytes. `N` is [`BUFFER`] for canonical texts, less for short keys.
pub struct Hasher<const N: usize = BUFFER> {
    /// blake3's incremental hasher, only for texts longer than the buffer. Boxed: it is ~1.9 KB,
    /// and a hasher is made for every digest.
    inner: Option<Box<blake3::Hasher>>,
    buf: [u8; N],
    len: usize,
}

/// Bytes a [`Hasher`] collects before it feeds blake3.
pub const BUFFER: usize = 1024;

impl Hasher {
    /// A hasher whose input starts with the domain `tag`.
    pub fn new(tag: u8) -> Self {
        let mut h = Self::untagged();
        h.buf[0] = tag;
        h.len = 1;
        h
    }
}

impl<const N: usize> Hasher<N> {
    /// A hasher without a domain tag, for digests that must be blake3 of exactly the text
    /// written (the bot keys, which snapshots hold).
    pub fn untagged() -> Self {
        Hasher { inner: None, buf: [0; N], len: 0 }
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        if self.len + b.len() > N {
            return self.spill(b);
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }

    /// [`Hasher::bytes`] for a piece that does not fit: the buffer goes to blake3, then the
    /// piece (or, if it is longer than the buffer, straight to blake3 too).
    fn spill(&mut self, b: &[u8]) {
        let inner = self.inner.get_or_insert_with(Box::default);
        inner.update(&self.buf[..self.len]);
        self.len = 0;
        if b.len() > N {
            inner.update(b);
            return;
        }
        self.buf[..b.len()].copy_from_slice(b);
        self.len = b.len();
    }

    /// The digest of everything written; call it once (a second call would feed a long text's
    /// last piece to blake3 again).
    pub fn finish(&mut self) -> Digest {
        let text = &self.buf[..self.len];
        let hash = match &mut self.inner {
            None => blake3::hash(text),
            Some(inner) => {
                inner.update(text);
                inner.finalize()
            }
        };
        let mut d = [0u8; 16];
        d.copy_from_slice(&hash.as_bytes()[..16]);
        d
    }
}

impl<const N: usize> Sink for Hasher<N> {
    fn put(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// A 64-bit id for a short name (a tool name or a run id) kept in every history record: records
/// compare names by id, so they hold no strings and snapshots stay small. Within one session's
/// 30-odd records a collision has odds of about 2^-58.
pub fn name_id(name: &str) -> u64 {
    // A keyed hash: the key separates this domain from every other digest.
    const KEY: [u8; 32] = *b"loopguard name id, v1 (history)!";
    let d = blake3::keyed_hash(&KEY, name.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d.as_bytes()[..8]);
    u64::from_le_bytes(b)
}

/// `argsHash`: the tool name and the canonical params, one digest.
pub fn args_digest(tool: &str, params: &Json) -> Digest {
    args_digest_in(tool, params, Style::DOCUMENTED)
}

/// `argsHash` with the params in a canonical style.
pub fn args_digest_in(tool: &str, params: &Json, style: Style) -> Digest {
    let mut h = Hasher::new(tag::ARGS);
    h.bytes(&(tool.len() as u64).to_le_bytes());
    h.bytes(tool.as_bytes());
    write_canonical_in(params, style, &mut h);
    h.finish()
}

/// The digest of a canonical value under a domain tag.
pub fn value_digest(tag: u8, v: &Json) -> Digest {
    let mut h = Hasher::new(tag);
    write_canonical(v, &mut h);
    h.finish()
}

/// A digest of several strings, length-prefixed so that no two lists collide.
pub fn key_digest(tag: u8, parts: &[&[u8]]) -> Digest {
    let mut h = Hasher::new(tag);
    for p in parts {
        h.bytes(&(p.len() as u64).to_le_bytes());
        h.bytes(p);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn args_digest_depends_on_tool_and_params_not_key_order() {
        let a = parse(r#"{"x":1,"y":[1,2]}"#).unwrap();
        let b = parse(r#"{"y":[1,2.0],"x":1}"#).unwrap();
        assert_eq!(args_digest("read", &a), args_digest("read", &b));
        assert_ne!(args_digest("read", &a), args_digest("list", &a));
        // Large payloads are hashed whole: a change at the end is seen.
        let big1 = Json::Str("x".repeat(40_000).into());
        let big2 = Json::Str(format!("{}y", "x".repeat(39_999)).into());
        assert_ne!(args_digest("t", &big1), args_digest("t", &big2));
    }

    #[test]
    fn the_buffer_does_not_change_the_digest() {
        for n in [0, 1, BUFFER - 2, BUFFER - 1, BUFFER, BUFFER + 1, 3 * BUFFER + 7] {
            let text = "x".repeat(n);
            let mut whole = Hasher::new(tag::RESULT);
            whole.bytes(text.as_bytes());
            let mut pieces = Hasher::new(tag::RESULT);
            for chunk in text.as_bytes().chunks(5) {
                pieces.bytes(chunk);
            }
            let mut plain = vec![tag::RESULT];
            plain.extend_from_slice(text.as_bytes());
            let want: Digest = blake3::hash(&plain).as_bytes()[..16].try_into().expect("16 bytes");
            assert_eq!((whole.finish(), pieces.finish()), (want, want), "{n} bytes");
        }
    }

    #[test]
    fn domains_and_undefined_are_separate() {
        let v = Json::Str("x".into());
        assert_ne!(value_digest(tag::RESULT, &v), value_digest(tag::ERROR, &v));
        assert_ne!(value_digest(tag::RESULT, &Json::Undefined), value_digest(tag::RESULT, &Json::Null));
    }
}
