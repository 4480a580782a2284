//! Memory primitives for the component: a word-at-a-time `memcmp` and a small-block cache in
//! front of the C allocator.
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

/// A cache of small freed blocks in front of the C allocator.
///
/// Why: a decision allocates about twenty small blocks (the strings the host copies in, the
/// vectors of a parsed document) and frees them before it returns; `dlmalloc`, which the
/// toolchain links, spends a few hundred instructions on each malloc/free pair, a sixth of a
/// decision. Freed blocks of up to [`MAX_CACHED`] bytes are kept on one free list per size
/// class and handed out again in a few instructions. Everything else goes straight to the
/// C allocator.
///
/// Class sizes are 16·n − 4 bytes (12, 28, 44, …, 1020) because of how wasi-libc configures
/// dlmalloc: `MALLOC_ALIGNMENT` 16, no footers, so a chunk is the request plus one 4-byte size
/// word, rounded up to 16. A 16·n − 4 block fills a 16·n chunk exactly; the 16·n classes used
/// before cost a whole 16 bytes more per block (a bot pair's 184-byte full window took a 208-byte
/// chunk instead of 192; a million such pairs are issue 3's budget). Every block still comes
/// back 16-byte aligned: Rust's `System` asks wasi-libc's `aligned_alloc` for it, which is
/// `dlmemalign`, and that is plain `dlmalloc` for alignments up to `MALLOC_ALIGNMENT`.
///
/// Bounded: at most [`KEEP`] blocks per class are kept (64 classes × 16 blocks × ≤ 1 KiB:
/// 520 KiB at most, far less in practice); beyond that, freed blocks go back to the C allocator.
mod cache {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::UnsafeCell;
    use std::ptr;

    /// Size-class step (and the alignment every cached block has).
    const STEP: usize = 16;
    /// dlmalloc's per-chunk overhead on wasm32 (one `size_t` size word): a class is this much
    /// under a multiple of [`STEP`], so that its chunk is exactly that multiple.
    const CHUNK_OVERHEAD: usize = 4;
    /// Number of classes.
    const CLASSES: usize = 64;
    /// Largest cached block.
    pub const MAX_CACHED: usize = STEP * CLASSES - CHUNK_OVERHEAD;
    /// Blocks kept per class.
    pub const KEEP: u16 = 16;

    struct Lists {
        heads: [*mut u8; CLASSES],
        counts: [u16; CLASSES],
    }

    pub struct Cached(UnsafeCell<Lists>);

    // SAFETY: the component is single-threaded (wasm32 without the atomics feature has no
    // threads), so the lists are never touched from two threads.
    #[cfg(not(target_feature = "atomics"))]
    unsafe impl Sync for Cached {}

    #[global_allocator]
    static ALLOCATOR: Cached =
        Cached(UnsafeCell::new(Lists { heads: [ptr::null_mut(); CLASSES], counts: [0; CLASSES] }));

    /// The class of a layout the cache serves, if any: the smallest `c` with
    /// `size <= (c + 1) · STEP − CHUNK_OVERHEAD`.
    fn class(layout: Layout) -> Option<usize> {
        let size = layout.size();
        (size > 0 && size <= MAX_CACHED && layout.align() <= STEP).then(|| (size + CHUNK_OVERHEAD - 1) / STEP)
    }

    /// The layout of every block of class `c`, as the C allocator sees it (at least 12 bytes:
    /// room for the free list's link).
    fn block(c: usize) -> Layout {
        // STEP is a power of two and the size is positive: always a valid layout.
        Layout::from_size_align((c + 1) * STEP - CHUNK_OVERHEAD, STEP).unwrap_or(Layout::new::<u8>())
    }

    unsafe impl GlobalAlloc for Cached {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let Some(c) = class(layout) else {
                // SAFETY: forwarded unchanged.
                return unsafe { System.alloc(layout) };
            };
            // SAFETY: single-threaded (see `Sync`), and no reference into the lists outlives
            // this call.
            let lists = unsafe { &mut *self.0.get() };
            let head = lists.heads[c];
            if head.is_null() {
                // SAFETY: a valid non-zero layout.
                return unsafe { System.alloc(block(c)) };
            }
            // SAFETY: a cached block is at least 12 bytes, aligned to STEP, and its first word
            // holds the next free block (written in `dealloc`).
            lists.heads[c] = unsafe { head.cast::<*mut u8>().read() };
            lists.counts[c] -= 1;
            head
        }

        unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
            let Some(c) = class(layout) else {
                // SAFETY: allocated by `System` with this layout (see `alloc`).
                return unsafe { System.dealloc(p, layout) };
            };
            // SAFETY: as in `alloc`.
            let lists = unsafe { &mut *self.0.get() };
            if lists.counts[c] >= KEEP {
                // SAFETY: every block of class c was allocated by `System` as `block(c)`.
                return unsafe { System.dealloc(p, block(c)) };
            }
            // SAFETY: the block is ours again, at least 12 bytes and STEP-aligned.
            unsafe { p.cast::<*mut u8>().write(lists.heads[c]) };
            lists.heads[c] = p;
            lists.counts[c] += 1;
        }

        unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let new = Layout::from_size_align(new_size, layout.align()).unwrap_or(layout);
            match (class(layout), class(new)) {
                // Same class: the block already has room.
                (Some(a), Some(b)) if a == b => p,
                // Neither cached: let the C allocator grow in place when it can.
                // SAFETY: forwarded unchanged.
                (None, None) => unsafe { System.realloc(p, layout, new_size) },
                _ => {
                    // SAFETY: the GlobalAlloc contract, through our own alloc/dealloc.
                    unsafe {
                        let q = self.alloc(new);
                        if !q.is_null() {
                            ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                            self.dealloc(p, layout);
                        }
                        q
                    }
                }
            }
        }
    }
}
