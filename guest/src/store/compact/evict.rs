//! Removing many entries at once (the prune, an eviction) without hashing a key.

use super::{CompactMap, Entry};

impl<V> CompactMap<V> {
    /// Removes every entry `doomed` picks; returns how many. One pass marks them, one renumbers
    /// the index (an entry's new number is its old one minus the removed entries before it), one
    /// moves the survivors down in order, freeing each old page once it has been read.
    pub(super) fn remove_where(&mut self, mut doomed: impl FnMut(&mut Entry<V>) -> bool) -> usize {
        let mut dead: Vec<u64> = Vec::new();
        let mut removed = 0;
        for (i, e) in self.pages.iter_mut().flatten().enumerate() {
            if doomed(e) {
                if dead.is_empty() {
                    dead = vec![0; self.len.div_ceil(64)];
                }
                dead[i / 64] |= 1 << (i % 64);
                removed += 1;
            }
        }
        if removed == 0 {
            return 0;
        }
        // Removed entries before each word of `dead`.
        let before: Vec<u32> = dead
            .iter()
            .scan(0u32, |acc, w| {
                let b = *acc;
                *acc += w.count_ones();
                Some(b)
            })
            .collect();
        let is_dead = |i: usize| dead[i / 64] >> (i % 64) & 1 == 1;
        self.index.retain(|n| {
            let i = *n as usize;
            if is_dead(i) {
                return false;
            }
            *n -= before[i / 64] + (dead[i / 64] & ((1u64 << (i % 64)) - 1)).count_ones();
            true
        });
        let old = std::mem::take(&mut self.pages);
        self.len = 0;
        let mut i = 0;
        for page in old {
            for e in page {
                if !is_dead(i) {
                    self.push(e);
                }
                i += 1;
            }
        }
        removed
    }

    /// Drops the least recently used entries so that one more insert leaves the map at or below
    /// 63/64 of its capacity (at least one entry goes), exactly as [`super::BoundedMap`] does.
    pub(super) fn evict(&mut self) {
        let target = (self.capacity - self.capacity / 64).saturating_sub(1);
        let excess = self.len.saturating_sub(target).max(1).min(self.len);
        if excess == 0 {
            return;
        }
        // Ticks are distinct, so exactly `excess` entries have a tick up to the cut-off.
        let cutoff = self.nth_tick(excess - 1);
        let removed = self.remove_where(|e| e.tick <= cutoff);
        self.evicted += removed as u64;
    }

    /// The `k`-th smallest tick (from 0; `k < len`): a radix select, 11 + 11 + 10 bits, each pass
    /// counting the ticks that share the bits chosen so far.
    fn nth_tick(&self, mut k: usize) -> u32 {
        let (mut prefix, mut chosen) = (0u32, 0u32);
        for width in [11u32, 11, 10] {
            let shift = 32 - chosen - width;
            let mut counts = [0usize; 1 << 11];
            for e in self.entries() {
                // The top `chosen` bits (a shift by 32 would overflow: none chosen matches all).
                if e.tick.checked_shr(32 - chosen).unwrap_or(0) == prefix {
                    counts[(e.tick >> shift) as usize & ((1 << width) - 1)] += 1;
                }
            }
            let mut digit = 0;
            for (d, &c) in counts.iter().enumerate().take(1 << width) {
                digit = d;
                if k < c {
                    break;
                }
                k -= c;
            }
            prefix = prefix << width | digit as u32;
            chosen += width;
        }
        prefix
    }
}
