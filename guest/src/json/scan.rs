//! The two byte scans of the reader and the canonical writer: how far a string literal runs
//! without an escape ([`verbatim_len`]), and how far a text runs without a given byte
//! ([`len_until`]).
//!
//! Why not byte loops (a floor needs it): the reader and the canonical writer pass every string
//! byte of a decision's arguments and result through these scans, and the byte loops were a
//! quarter of a decision's instructions (callgrind, the decision benchmark's workload: 13.9 k of
//! 51.4 k per decision natively). Natively they go eight bytes at a time in a `u64` (SWAR); in
//! the component sixteen at a time with WebAssembly SIMD first, which the policy is built with
//! (`.cargo/config.toml`): a tool decision through wasmtime 53.9 k -> 52.9 k instructions (callgrind,
//! `decision_profile`). Both give the same answers (the tests run natively and on wasm32).

/// Bytes one in each byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The top bit of each byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The top bit of each byte of `w` that is zero (exact for the lowest such byte: a borrow only
/// runs upward from a byte that matched).
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w
}

/// What a scan looks for, three ways: in the top bit of each byte of a word (the lowest mark
/// exact), in each lane of a SIMD vector, and byte by byte.
trait Scan {
    fn word(&self, w: u64) -> u64;
    #[cfg(target_arch = "wasm32")]
    fn lanes(&self, v: core::arch::wasm32::v128) -> core::arch::wasm32::v128;
    fn byte(&self, c: u8) -> bool;
}

/// The length of the longest prefix of `b` with no byte `scan` looks for: sixteen bytes at a
/// time (wasm32), then eight, then one.
#[inline(always)]
fn prefix_len(b: &[u8], scan: &impl Scan) -> usize {
    #[cfg(target_arch = "wasm32")]
    let done = {
        use core::arch::wasm32::{u8x16, u8x16_bitmask};
        let (blocks, _) = b.as_chunks::<16>();
        for (n, k) in blocks.iter().enumerate() {
            let v = u8x16(
                k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10], k[11], k[12], k[13], k[14], k[15],
            );
            let hits = u8x16_bitmask(scan.lanes(v));
            if hits != 0 {
                return n * 16 + hits.trailing_zeros() as usize;
            }
        }
        blocks.len() * 16
    };
    #[cfg(not(target_arch = "wasm32"))]
    let done = 0;
    let (words, _) = b[done..].as_chunks::<8>();
    for (n, word) in words.iter().enumerate() {
        let hits = scan.word(u64::from_le_bytes(*word)) & HIGH;
        if hits != 0 {
            return done + n * 8 + (hits.trailing_zeros() / 8) as usize;
        }
    }
    let done = done + words.len() * 8;
    done + b[done..].iter().position(|c| scan.byte(*c)).unwrap_or(b.len() - done)
}

/// `"`, `\\` and control characters (below 0x20).
struct Unescaped;

impl Scan for Unescaped {
    #[inline(always)]
    fn word(&self, w: u64) -> u64 {
        let quote = zero_bytes(w ^ (ONES * u64::from(b'"')));
        let backslash = zero_bytes(w ^ (ONES * u64::from(b'\\')));
        let control = w.wrapping_sub(ONES * 0x20) & !w;
        quote | backslash | control
    }

    #[cfg(target_arch = "wasm32")]
    #[inline(always)]
    fn lanes(&self, v: core::arch::wasm32::v128) -> core::arch::wasm32::v128 {
        use core::arch::wasm32::{u8x16_eq, u8x16_lt, u8x16_splat, v128_or};
        let quote = u8x16_eq(v, u8x16_splat(b'"'));
        let backslash = u8x16_eq(v, u8x16_splat(b'\\'));
        v128_or(v128_or(quote, backslash), u8x16_lt(v, u8x16_splat(0x20)))
    }

    #[inline(always)]
    fn byte(&self, c: u8) -> bool {
        c == b'"' || c == b'\\' || c < 0x20
    }
}

/// One byte value.
struct Byte(u8);

impl Scan for Byte {
    #[inline(always)]
    fn word(&self, w: u64) -> u64 {
        zero_bytes(w ^ (ONES * u64::from(self.0)))
    }

    #[cfg(target_arch = "wasm32")]
    #[inline(always)]
    fn lanes(&self, v: core::arch::wasm32::v128) -> core::arch::wasm32::v128 {
        use core::arch::wasm32::{u8x16_eq, u8x16_splat};
        u8x16_eq(v, u8x16_splat(self.0))
    }

    #[inline(always)]
    fn byte(&self, c: u8) -> bool {
        c == self.0
    }
}

/// The length of the longest prefix of `b` without `"`, `\\` or a control character (below
/// 0x20): the bytes a JSON string literal holds as they are, which are also the bytes
/// `JSON.stringify` writes without an escape.
pub(crate) fn verbatim_len(b: &[u8]) -> usize {
    prefix_len(b, &Unescaped)
}

/// The length of the longest prefix of `b` without `byte`. The reader sizes a string with
/// escapes by it (the string's literal ends at the first unescaped quote, so its text fits
/// unless it holds escaped quotes), and replay splits a batch into lines by it. Why not
/// `str::split`: its `memchr` goes four bytes at a time in wasm32 (~1 k instructions a bot line
/// in replay, ~0.2 k with eight at a time; callgrind).
pub(crate) fn len_until(b: &[u8], byte: u8) -> usize {
    prefix_len(b, &Byte(byte))
}

#[cfg(test)]
mod tests {
    use super::{len_until, verbatim_len};

    #[test]
    fn len_until_finds_the_first_such_byte() {
        for (byte, plain) in [(b'"', "a\\é\n"), (b'\n', "a\\é\"\r")] {
            for len in 0..40 {
                let plain = plain.repeat(len).into_bytes();
                assert_eq!(len_until(&plain, byte), plain.len());
                for at in 0..plain.len().min(72) {
                    let mut text = plain.clone();
                    text[at] = byte;
                    *text.last_mut().expect("not empty") = byte;
                    assert_eq!(len_until(&text, byte), at);
                }
            }
        }
    }

    #[test]
    fn verbatim_len_stops_at_the_first_byte_a_json_string_cannot_hold() {
        for len in 0..40 {
            let plain = "aé€".repeat(len).into_bytes();
            assert_eq!(verbatim_len(&plain), plain.len());
            for at in 0..plain.len().min(72) {
                for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut text = plain.clone();
                    text[at] = special;
                    // A second special byte later does not move the answer.
                    if let Some(last) = text.len().checked_sub(1).filter(|&l| l > at) {
                        text[last] = b'"';
                    }
                    assert_eq!(verbatim_len(&text), at, "{special:#x} at {at} of {}", text.len());
                }
            }
        }
        // The bytes next to the flagged ones are not flagged.
        assert_eq!(verbatim_len(b" !#[]\x7f\x21\x23\x5b\x5d"), 10);
    }
}
