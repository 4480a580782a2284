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

/// `out.extend_from_slice(b)`. On wasm32, a `b` of at most 32 bytes is written into the
/// vector's spare room with the fixed-size moves of [`copy_short`]: `extend_from_slice` is a
/// call to `Vec::append_elements` with the length as a parameter, so its copy is a
/// `memory.copy` however short `b` is. Native builds copy directly (their `memcpy` is a cheap
/// library call); the guest's unit tests run on wasm32 as well, so both ways are tested.
#[inline(always)]
pub fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if !cfg!(target_arch = "wasm32") || n > 32 {
        out.extend_from_slice(b);
        return;
    }
    out.reserve(n);
    let at = out.len();
    // SAFETY: `reserve` made room for `n` more bytes after `at`; `copy_short_raw` writes
    // exactly the bytes `at..at + n` (from `b`, which does not overlap the vector's spare
    // room), so they are initialized before the length covers them.
    #[allow(unsafe_code)]
    unsafe {
        copy_short_raw(b.as_ptr(), out.as_mut_ptr().add(at), n);
        out.set_len(at + n);
    }
}

/// [`copy_short`] between raw pointers, for `n <= 32`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, and the two must not overlap.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn copy_short_raw(src: *const u8, dst: *mut u8, n: usize) {
    use std::ptr::copy_nonoverlapping as copy;
    // SAFETY (every arm): each copy lies within the first `n` bytes of both ranges.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                *dst = *src;
                *dst.add(n / 2) = *src.add(n / 2);
                *dst.add(n - 1) = *src.add(n - 1);
            }
            4..=7 => {
                copy(src, dst, 4);
                copy(src.add(n - 4), dst.add(n - 4), 4);
            }
            8..=16 => {
                copy(src, dst, 8);
                copy(src.add(n - 8), dst.add(n - 8), 8);
            }
            _ => {
                debug_assert!(n <= 32);
                copy(src, dst, 16);
                copy(src.add(n - 16), dst.add(n - 16), 16);
            }
        }
    }
}

/// `a == b`, sixteen bytes per step with an overlapping last step.
///
/// Why: in the component, `==` on slices is a call to a byte-at-a-time `memcmp`, and the memo
/// compares whole arguments texts (hundreds of bytes) and session keys on every decision. Two
/// `u128` loads and a compare are a handful of plain instructions on both targets.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        let mut w = [0u8; N];
        w.copy_from_slice(&s[at..at + N]);
        w
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        17..=32 => {
            let wide = |s: &[u8], at: usize| u128::from_ne_bytes(word::<16>(s, at));
            wide(a, 0) == wide(b, 0) && wide(a, n - 16) == wide(b, n - 16)
        }
        _ => same_long(a, b),
    }
}

/// [`same_bytes`] of more than 32 bytes: 32 bytes per step, the last step overlapping. In the
/// component, one step is two vector compares, and the loop's interruption check is paid once
/// per 32 bytes.
#[inline(never)]
fn same_long(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    let mut i = 0;
    while i + 32 < n {
        if differ32(&a[i..i + 32], &b[i..i + 32]) {
            return false;
        }
        i += 32;
    }
    !differ32(&a[n - 32..], &b[n - 32..])
}

/// Whether two 32-byte slices differ: vector loads and compares in the component.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn differ32(a: &[u8], b: &[u8]) -> bool {
    use core::arch::wasm32::{v128, v128_any_true, v128_load, v128_or, v128_xor};
    assert!(a.len() >= 32 && b.len() >= 32);
    // SAFETY: both slices hold at least 32 bytes (asserted above), and `v128_load` reads 16
    // bytes at any alignment.
    #[allow(unsafe_code)]
    let (a0, a1, b0, b1) = unsafe {
        let (pa, pb) = (a.as_ptr().cast::<v128>(), b.as_ptr().cast::<v128>());
        (v128_load(pa), v128_load(pa.add(1)), v128_load(pb), v128_load(pb.add(1)))
    };
    v128_any_true(v128_or(v128_xor(a0, b0), v128_xor(a1, b1)))
}

/// Whether two 32-byte slices differ.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn differ32(a: &[u8], b: &[u8]) -> bool {
    let wide = |s: &[u8], at: usize| {
        let mut w = [0u8; 16];
        w.copy_from_slice(&s[at..at + 16]);
        u128::from_ne_bytes(w)
    };
    ((wide(a, 0) ^ wide(b, 0)) | (wide(a, 16) ^ wide(b, 16))) != 0
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

    #[test]
    fn same_bytes_is_equality_at_every_length_and_position() {
        let a: Vec<u8> = (0..80u8).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..=a.len() {
            assert!(same_bytes(&a[..n], &a[..n]), "length {n}");
            for j in 0..n {
                let mut b = a[..n].to_vec();
                b[j] ^= 0x80;
                assert!(!same_bytes(&a[..n], &b), "length {n}, byte {j} differs");
            }
            if n > 0 {
                assert!(!same_bytes(&a[..n], &a[..n - 1]), "lengths {n} and {}", n - 1);
            }
            if n < a.len() {
                assert_eq!(same_bytes(&a[1..=n], &a[..n]), a[1..=n] == a[..n], "shifted, length {n}");
            }
        }
    }
}
