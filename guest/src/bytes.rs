//! Copies of short byte strings without a runtime call.
//!
//! Why: in the component (wasm32 with bulk memory), a copy whose length is not known at compile
//! time is a `memory.copy` instruction, which wasmtime runs as a call into the runtime: a few
//! dozen instructions however short the copy. Keys, ids and JSON literals are mostly under 32
//! bytes, and a decision made dozens of such copies. Fixed-size moves of 4, 8 and 16 bytes
//! (overlapping when the length is not a multiple) are plain loads and stores instead.

/// `dst.copy_from_slice(src)` for slices of equal length: two overlapping fixed-size copies for
/// every length up to 32, a plain copy above.
#[inline(always)]
pub fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..n]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..n]);
        }
        17..=32 => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..n]);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// `out.extend_from_slice(b)`. On wasm32, a `b` of at most 32 bytes goes through a 32-byte stack
/// buffer: the buffer is appended whole (a fixed-size copy) and the excess cut off again. Native
/// builds copy directly (their `memcpy` is a cheap library call); the guest's unit tests run on
/// wasm32 as well, so both ways are tested.
#[inline(always)]
pub fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if !cfg!(target_arch = "wasm32") || n > 32 {
        out.extend_from_slice(b);
        return;
    }
    let mut buf = [0u8; 32];
    copy_short(&mut buf[..n], b);
    let at = out.len();
    out.extend_from_slice(&buf);
    out.truncate(at + n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_is_copied_exactly() {
        let src: Vec<u8> = (1..=80).collect();
        for n in 0..=80 {
            let mut dst = vec![0u8; n];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(dst, &src[..n], "copy_short, length {n}");
            let mut out = b"head".to_vec();
            push_bytes(&mut out, &src[..n]);
            assert_eq!(&out[..4], b"head");
            assert_eq!(&out[4..], &src[..n], "push_bytes, length {n}");
        }
    }
}
