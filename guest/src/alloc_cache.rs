//! The component's allocator: talc, with the last few freed small blocks of each size kept for
//! the next allocation of that size.
//!
//! Why talc and not wasi-libc's dlmalloc (a floor needs it): dlmalloc was ~10.6 k instructions
//! of a ~70 k decision through wasmtime; talc took ~3.7 k fewer (callgrind, `decision_profile`),
//! with the same memory per bot pair (231.5 bytes at a million pairs with full windows, dlmalloc
//! 231.4).
//!
//! Why the cache in front of it (the decision's and the bot message's floors need it): a
//! decision allocates and frees ~30 blocks (the strings the boundary lowers, each a
//! `cabi_realloc` call; the JSON trees of the arguments and the result), of the same sizes call
//! after call, and a bot message its seven lowered strings. A block freed by one call serves the
//! same allocation of the next one without talc's bins: a tool decision through wasmtime
//! 58.4 k -> 53.9 k instructions, a bot message 13.7 k -> 12.5 k (callgrind, `decision_profile`
//! and `bot_profile`, 2026-12-05). Memory per bot pair unchanged: 226.8 bytes at 100,000 pairs
//! with full windows (`bot_memory`; 227 before).
//!
//! Bounded: at most [`DEPTH`] blocks per size class, classes of [`STEP`] bytes up to
//! [`MAX_CACHED`], so the cache holds at most 4 × (8 + 16 + … + 1024) bytes (258 KiB). A block
//! only ever serves its own class, and a live value holds its size rounded up to [`STEP`].
//!
//! The fast path is inlined into every allocation site (the component is ~95 KB larger for it):
//! out of line, the call cost 1.1 k of the 4.5 k a decision saves.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

/// Size classes are multiples of this many bytes.
pub const STEP: usize = 8;
/// Largest size (bytes) whose blocks are kept.
pub const MAX_CACHED: usize = 1024;
/// Blocks kept per size class.
pub const DEPTH: usize = 4;
const CLASSES: usize = MAX_CACHED / STEP;

/// talc plus the per-size stacks of freed blocks.
pub struct CachedTalc {
    talc: talc::wasm::WasmDynamicTalc,
    cache: UnsafeCell<Stacks>,
}

struct Stacks {
    len: [u8; CLASSES],
    blocks: [[*mut u8; DEPTH]; CLASSES],
}

// SAFETY: the component is single-threaded wasm32 (talc's own cell asserts the same, and a build
// with threads is refused below).
unsafe impl Sync for CachedTalc {}

#[cfg(target_feature = "atomics")]
compile_error!("alloc_cache assumes single-threaded WebAssembly: its cache has no lock");

impl CachedTalc {
    /// The allocator over a dynamically grown wasm memory.
    pub const fn new() -> Self {
        CachedTalc {
            talc: talc::wasm::new_wasm_dynamic_allocator(),
            cache: UnsafeCell::new(Stacks { len: [0; CLASSES], blocks: [[std::ptr::null_mut(); DEPTH]; CLASSES] }),
        }
    }

    /// talc's allocation, out of line: the cache's fast path is inlined into every allocation
    /// site, and talc's code inlined with it made the component ~100 KB larger still.
    #[cold]
    #[inline(never)]
    fn talc_alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: `GlobalAlloc::alloc`'s contract, passed on (a non-zero size).
        unsafe { self.talc.alloc(layout) }
    }

    /// talc's free, out of line (see `talc_alloc`).
    #[cold]
    #[inline(never)]
    fn talc_dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from talc with `layout` (the caller's contract).
        unsafe { self.talc.dealloc(ptr, layout) }
    }
}

impl Default for CachedTalc {
    fn default() -> Self {
        Self::new()
    }
}

/// The class of a layout the cache serves (size 1..=MAX_CACHED, alignment at most STEP), and
/// the layout every block of that class is allocated from talc with.
#[inline(always)]
fn class(layout: Layout) -> Option<(usize, Layout)> {
    let size = layout.size();
    if size == 0 || size > MAX_CACHED || layout.align() > STEP {
        return None;
    }
    let c = (size - 1) / STEP;
    // (c + 1) * STEP <= MAX_CACHED and STEP is a power of two: always a valid layout.
    Layout::from_size_align((c + 1) * STEP, STEP).ok().map(|l| (c, l))
}

unsafe impl GlobalAlloc for CachedTalc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some((c, rounded)) = class(layout) else { return self.talc_alloc(layout) };
        // SAFETY: single-threaded, and no reference into the cache outlives this call.
        let stacks = unsafe { &mut *self.cache.get() };
        match stacks.len[c] {
            0 => self.talc_alloc(rounded),
            n => {
                stacks.len[c] = n - 1;
                stacks.blocks[c][usize::from(n - 1)]
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some((c, rounded)) = class(layout) else { return self.talc_dealloc(ptr, layout) };
        // SAFETY: as in `alloc`.
        let stacks = unsafe { &mut *self.cache.get() };
        let n = usize::from(stacks.len[c]);
        if n == DEPTH {
            return self.talc_dealloc(ptr, rounded);
        }
        stacks.blocks[c][n] = ptr;
        stacks.len[c] += 1;
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract (`layout` is ptr's, new_size is valid for its alignment).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(layout), class(new_layout)) {
            // Neither size is cached: talc resizes in place when it can.
            (None, None) => unsafe { self.talc.realloc(ptr, layout, new_size) },
            // The same class: the block already has the room.
            (Some((a, _)), Some((b, _))) if a == b => ptr,
            _ => {
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DEPTH, MAX_CACHED, STEP};

    /// Blocks of every cached size and a few larger ones, filled, freed in a scrambled order,
    /// allocated again and grown and shrunk across classes: every value keeps its bytes.
    #[test]
    fn blocks_keep_their_bytes_through_reuse_and_resizing() {
        let sizes: Vec<usize> = (1..=MAX_CACHED + 3 * STEP).step_by(3).collect();
        for round in 0..(2 * DEPTH) {
            let mut held: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![(n + round) as u8; n]).collect();
            for (i, v) in held.iter_mut().enumerate().filter(|(i, _)| i % 3 == round % 3) {
                v.resize(v.len() * 2 + 1, i as u8); // into another class, or out of the cache
                v.truncate(v.len() / 3 + 1); // and back down
                v.shrink_to_fit();
            }
            for (i, v) in held.iter().enumerate() {
                let n = sizes[i];
                let fill = (n + round) as u8;
                assert!(v.iter().take(n.min(v.len())).all(|b| *b == fill), "size {n}, round {round}");
            }
            // Freed in an order unlike allocation, so that classes refill out of order.
            while !held.is_empty() {
                let at = (held.len() * 7 + round) % held.len();
                drop(held.swap_remove(at));
            }
        }
    }

    /// A freed block serves the next allocation of its class (any size in it), last freed first.
    #[test]
    fn a_freed_block_serves_the_next_allocation_of_its_class() {
        // Empty the class first: earlier frees may have filled its stack.
        let held: Vec<Vec<u8>> = (0..DEPTH).map(|_| Vec::with_capacity(3 * STEP)).collect();
        let a = vec![1u8; 2 * STEP + 3];
        let b = vec![2u8; 2 * STEP + 3];
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        drop(a);
        drop(b);
        let c: Vec<u8> = Vec::with_capacity(3 * STEP); // the same class: 2 * STEP + 1 ..= 3 * STEP
        let d: Vec<u8> = Vec::with_capacity(2 * STEP + 1);
        assert_eq!((c.as_ptr(), d.as_ptr()), (pb, pa));
        drop(held);
    }
}
