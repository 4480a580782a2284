//! A word-at-a-time `memcmp` for the component.
//!
//! Why: on `wasm32` every `==` on strings and byte slices (hash-map key lookups, JSON keys, the
//! call memo) ends in the C `memcmp`, and the one the toolchain links there compares one byte per
//! step: profiling a tool-call decision through wasmtime put it at a tenth of all instructions.
//! Comparing eight bytes per step cuts that several times. Native builds keep the platform's
//! vectorized `memcmp`; this module is compiled for `wasm32` only.
//!
//! The symbols below replace the toolchain's weak definitions at link time. They read only the
//! `n` bytes the caller names, with unaligned loads (which `wasm32` allows).
#![allow(unsafe_code)]

/// Compares `n` bytes, returning the sign of the first differing byte pair (as unsigned bytes).
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes (the C contract of `memcmp`).
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n, and the caller guarantees n readable bytes at a and b.
        let (x, y) = unsafe { (a.add(i).cast::<u64>().read_unaligned(), b.add(i).cast::<u64>().read_unaligned()) };
        if x != y {
            // Little-endian: the lowest differing bit belongs to the first differing byte.
            let at = ((x ^ y).trailing_zeros() / 8) as usize;
            // SAFETY: at < 8, so i + at < n.
            let (p, q) = unsafe { (*a.add(i + at), *b.add(i + at)) };
            return i32::from(p) - i32::from(q);
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        let (p, q) = unsafe { (*a.add(i), *b.add(i)) };
        if p != q {
            return i32::from(p) - i32::from(q);
        }
        i += 1;
    }
    0
}

/// `bcmp`: zero exactly when the `n` bytes are equal (LLVM emits it for equality tests).
///
/// # Safety
/// As for [`memcmp`].
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract.
    unsafe { memcmp(a, b, n) }
}
