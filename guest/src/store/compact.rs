//! [`CompactMap`]: the [`super::BoundedMap`] of digest-keyed state, laid out for a million
//! entries.
//!
//! Why: issue 3 allows 256 bytes of guest memory per bot pair at the default `maxPairs` of one
//! million, and a pair holding a full window is already a 192-byte block. A `HashMap` bucket
//! holding the 16-byte key, the LRU tick and the block's pointer is 32 bytes on wasm32, and the
//! table holds between 8/7 and 16/7 buckets per entry (a power of two, at most 7/8 full): at one
//! million entries 2²¹ buckets, 69 bytes per entry, and the pair was 277 bytes. Here the entries
//! sit densely, in insertion order, in pages of [`PAGE`] (28 bytes each on wasm32: key, block
//! pointer and a 32-bit tick, nothing padded), and only the hash index is a sparse table, of
//! 4-byte entry numbers: 28 bytes plus 5 bytes × 8/7 to 16/7 per entry, 34 to 42 bytes from ten
//! thousand entries up (38.5 at one million; below that the last page's free room weighs more).
//!
//! The behaviour is [`super::BoundedMap`]'s exactly (same ticks, same batched eviction, same
//! least-recently-used-first order for snapshots; a test drives both with the same operations):
//!
//! - the tick is 32-bit; when it would overflow (after 4 billion touches) every entry's tick is
//!   replaced by its rank, which keeps the order and costs one sort per 2³¹ touches at least;
//! - removing an entry moves the last one into its place, so the index stays dense; removing many
//!   at once (the prune, an eviction) marks them in a bit set, compacts the pages in order and
//!   renumbers the index in one pass, without hashing a key;
//! - an eviction finds the cut-off tick with a three-pass radix select over the ticks (an 8 KiB
//!   histogram) instead of a copy of all ticks (4 MB at a million entries, which would stay in the
//!   allocator's free lists and count as the guest's memory from then on).
//!
//! Keys are stored as four `u32`s so that an entry needs only 4-byte alignment (a `u128` field
//! would make it 16-byte aligned and 32 bytes long); the index hashes keys with a cheap hash
//! keyed by a random secret (`hash_of`), so a sender cannot aim its keys at one probe sequence.
//!
//! ```
//! use loopguard_policy::store::CompactMap;
//! let mut m = CompactMap::new(2);
//! *m.entry_or_insert_with(1, || 0) += 1;
//! *m.entry_or_insert_with(2, || 0) += 1;
//! *m.entry_or_insert_with(3, || 0) += 1; // evicts 1, the least recently used
//! assert_eq!(m.len(), 2);
//! assert!(m.get(1).is_none());
//! ```

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use hashbrown::HashTable;

/// The key type: a 128-bit digest.
pub type Key = u128;

/// Entries per page (a page is one allocation of up to 28 KiB on wasm32, so growing the map never
/// copies more than that, and the last page's unused room is all the slack the entries have).
pub const PAGE: usize = 1024;

/// The most entries a map may hold: entry numbers are `u32`, and after renumbering the tick stays
/// below 2³¹ (the config caps `maxPairs` at 10⁸ anyway).
pub const MAX_CAPACITY: usize = 1 << 31;

/// One entry. Field order is free; with every field 4-byte aligned on wasm32 there is no padding.
#[derive(Debug, Clone)]
struct Entry<V> {
    key: [u32; 4],
    tick: u32,
    value: V,
}

// On wasm32 an entry whose value is a boxed slice (a bot pair's block) is 28 bytes, unpadded:
// the figure issue 3's memory budget counts on, checked wherever the component is built.
#[cfg(target_arch = "wasm32")]
const _: () = assert!(std::mem::size_of::<Entry<Box<[u64]>>>() == 28);

fn split(key: Key) -> [u32; 4] {
    [key as u32, (key >> 32) as u32, (key >> 64) as u32, (key >> 96) as u32]
}

fn join(k: [u32; 4]) -> Key {
    u128::from(k[0]) | u128::from(k[1]) << 32 | u128::from(k[2]) << 64 | u128::from(k[3]) << 96
}

/// A hash map from 128-bit digests with a capacity and least-recently-used eviction, laid out
/// densely (see the module docs).
#[derive(Debug, Clone)]
pub struct CompactMap<V> {
    /// Entry numbers, found by the key's hash.
    index: HashTable<u32>,
    /// The entries, [`PAGE`] per page; only the last page may be partly filled.
    pages: Vec<Vec<Entry<V>>>,
    len: usize,
    hasher: Seed,
    capacity: usize,
    tick: u32,
    evicted: u64,
}

/// The entry numbered `i` (`i < len`).
fn at<V>(pages: &[Vec<Entry<V>>], i: usize) -> &Entry<V> {
    &pages[i / PAGE][i % PAGE]
}

fn at_mut<V>(pages: &mut [Vec<Entry<V>>], i: usize) -> &mut Entry<V> {
    &mut pages[i / PAGE][i % PAGE]
}

/// The secret of the index's hash, drawn once per map from std's randomly keyed hasher.
#[derive(Debug, Clone, Copy)]
struct Seed([u64; 2]);

impl Seed {
    fn new() -> Self {
        let r = RandomState::new();
        Seed([r.hash_one(0u64), r.hash_one(1u64)])
    }
}

/// The index's hash of a key: a folded 64×64→128-bit multiply of the key's halves, each mixed
/// with a secret word.
///
/// Why not SipHash: keys are already blake3 digests, uniformly spread; what the hash must still
/// do is keep a sender who grinds ids from aiming many keys at one probe sequence, and for that
/// it is enough that the bucket depends on a secret the sender never sees. Rebuilding the index
/// when it doubles rehashes every key: with SipHash, the decision that grows it past ~917 k
/// pairs took 120–130 ms of CPU in the component, over the default 100 ms call deadline. This is
/// a handful of instructions per key.
fn hash_of(seed: &Seed, key: [u32; 4]) -> u64 {
    let a = (u64::from(key[0]) | u64::from(key[1]) << 32) ^ seed.0[0];
    let b = (u64::from(key[2]) | u64::from(key[3]) << 32) ^ seed.0[1];
    let (lo, hi) = mul_wide(a, b);
    lo ^ hi
}

/// The 128-bit product of `a` and `b` as (low, high) halves, from four 32×32→64-bit multiplies.
/// wasm32 has no 64×64→128 multiply, and `u128` arithmetic there is a call to `__multi3`, which
/// took three times as many instructions as this on every lookup.
fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    const LOW: u64 = 0xFFFF_FFFF;
    let (a0, a1, b0, b1) = (a & LOW, a >> 32, b & LOW, b >> 32);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // At most 3 · (2³² − 1) < 2⁶⁴: no overflow.
    let mid = (p00 >> 32) + (p01 & LOW) + (p10 & LOW);
    ((p00 & LOW) | (mid << 32), p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32))
}

impl<V> CompactMap<V> {
    /// An empty map that holds at most `capacity` entries (at least 1, at most [`MAX_CAPACITY`]).
    pub fn new(capacity: usize) -> Self {
        Self {
            index: HashTable::new(),
            pages: Vec::new(),
            len: 0,
            hasher: Seed::new(),
            capacity: capacity.clamp(1, MAX_CAPACITY),
            tick: 0,
            evicted: 0,
        }
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Changes the capacity; evicts at once if the map is now over it.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.clamp(1, MAX_CAPACITY);
        if self.len > self.capacity {
            self.evict();
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many entries were evicted for lack of room since the map was made.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    fn next_tick(&mut self) -> u32 {
        if self.tick == u32::MAX {
            self.renumber();
        }
        self.tick += 1;
        self.tick
    }

    /// Replaces every tick by its rank (1 = least recently used): the same order in the fewest
    /// values, so the tick can go on counting.
    fn renumber(&mut self) {
        let order = self.by_tick();
        for (rank, &w) in order.iter().enumerate() {
            at_mut(&mut self.pages, w as u32 as usize).tick = rank as u32 + 1;
        }
        self.tick = self.len as u32;
    }

    /// Every entry as `tick << 32 | number`, sorted: least recently used first.
    fn by_tick(&self) -> Vec<u64> {
        let mut order: Vec<u64> =
            self.entries().zip(0u32..).map(|(e, i)| u64::from(e.tick) << 32 | u64::from(i)).collect();
        order.sort_unstable();
        order
    }

    fn entries(&self) -> impl Iterator<Item = &Entry<V>> {
        self.pages.iter().flatten()
    }

    /// The number of the entry for `key`.
    fn find(&self, hash: u64, key: [u32; 4]) -> Option<usize> {
        let pages = &self.pages;
        self.index.find(hash, |&i| at(pages, i as usize).key == key).map(|&i| i as usize)
    }

    /// Looks an entry up without touching it.
    pub fn get(&self, key: Key) -> Option<&V> {
        let k = split(key);
        self.find(hash_of(&self.hasher, k), k).map(|i| &at(&self.pages, i).value)
    }

    /// Looks an entry up and marks it as used.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut V> {
        let tick = self.next_tick();
        let k = split(key);
        let i = self.find(hash_of(&self.hasher, k), k)?;
        let e = at_mut(&mut self.pages, i);
        e.tick = tick;
        Some(&mut e.value)
    }

    /// The entry for `key`, created with `make` if missing, marked as used. Creating an entry
    /// past the capacity evicts the least recently used ones first. One hash of the key either
    /// way: hashing is most of what a hit costs, and the bot-pair map takes one per message.
    pub fn entry_or_insert_with(&mut self, key: Key, make: impl FnOnce() -> V) -> &mut V {
        let tick = self.next_tick();
        let k = split(key);
        let hash = hash_of(&self.hasher, k);
        let i = match self.find(hash, k) {
            Some(i) => i,
            None => {
                if self.len >= self.capacity {
                    self.evict();
                }
                self.insert_new(hash, Entry { key: k, tick, value: make() })
            }
        };
        let e = at_mut(&mut self.pages, i);
        e.tick = tick;
        &mut e.value
    }

    /// Appends an entry whose key is not in the map; returns its number.
    fn insert_new(&mut self, hash: u64, entry: Entry<V>) -> usize {
        if self.index.len() == self.index.capacity() {
            self.rebuild_index();
        }
        let i = self.push(entry);
        let (pages, hasher) = (&self.pages, &self.hasher);
        self.index.insert_unique(hash, i as u32, |&j| hash_of(hasher, at(pages, j as usize).key));
        i
    }

    /// Makes room in the index for one more entry, as hashbrown would (the same bucket count
    /// while at most half of it is in use, else the next power of two), but fills the new table
    /// by reading the entries in page order. hashbrown's own resize walks its table and hashes
    /// each entry number's key, a read at a random place in the pages: one cache miss more per
    /// entry, which made the decision that grows the index past 458,752 pairs take over 100 ms
    /// (the default call deadline) in the component.
    fn rebuild_index(&mut self) {
        let buckets = self.index.num_buckets();
        let full = if buckets < 8 { buckets.saturating_sub(1) } else { buckets / 8 * 7 };
        let need = self.len + 1;
        let room = if need <= full / 2 { full } else { need.max(full + 1) };
        let mut index = HashTable::with_capacity(room);
        let (pages, hasher) = (&self.pages, &self.hasher);
        for (i, e) in pages.iter().flatten().enumerate() {
            // Never rehashes: the table was made with room for every entry.
            index.insert_unique(hash_of(hasher, e.key), i as u32, |&j| hash_of(hasher, at(pages, j as usize).key));
        }
        self.index = index;
    }

    /// Appends an entry to the pages (not to the index); returns its number.
    fn push(&mut self, entry: Entry<V>) -> usize {
        match self.pages.last_mut() {
            Some(page) if page.len() < PAGE => page.push(entry),
            _ => self.pages.push(vec![entry]),
        }
        self.len += 1;
        self.len - 1
    }

    /// Removes an entry.
    pub fn remove(&mut self, key: Key) -> Option<V> {
        let k = split(key);
        let hash = hash_of(&self.hasher, k);
        let pages = &self.pages;
        let (i, _) = self.index.find_entry(hash, |&i| at(pages, i as usize).key == k).ok()?.remove();
        let i = i as usize;
        let last = self.len - 1;
        let mut moved = self.pop()?;
        if i != last {
            // The last entry takes the removed one's number.
            let hash = hash_of(&self.hasher, moved.key);
            if let Some(n) = self.index.find_mut(hash, |&n| n as usize == last) {
                *n = i as u32;
            }
            std::mem::swap(at_mut(&mut self.pages, i), &mut moved);
        }
        Some(moved.value)
    }

    /// Takes the last entry off the pages (not off the index).
    fn pop(&mut self) -> Option<Entry<V>> {
        let page = self.pages.last_mut()?;
        let entry = page.pop();
        if page.is_empty() {
            self.pages.pop();
        }
        self.len -= usize::from(entry.is_some());
        entry
    }

    /// Keeps only the entries for which `keep` is true (pruning idle state).
    pub fn retain(&mut self, mut keep: impl FnMut(Key, &mut V) -> bool) {
        self.remove_where(|e| !keep(join(e.key), &mut e.value));
    }

    /// Iterates over all entries in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Key, &V)> {
        self.entries().map(|e| (join(e.key), &e.value))
    }

    /// Removes every entry `doomed` picks; returns how many. One pass marks them, one renumbers
    /// the index (an entry's new number is its old one minus the removed entries before it), one
    /// moves the survivors down in order, freeing each old page once it has been read.
    fn remove_where(&mut self, mut doomed: impl FnMut(&mut Entry<V>) -> bool) -> usize {
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
    fn evict(&mut self) {
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

    /// All entries by reference, least recently used first: what a snapshot serializes.
    pub fn ordered(&self) -> Ordered<'_, V> {
        Ordered { map: self, order: self.by_tick() }
    }

    /// Rebuilds a map from entries least recently used first (a snapshot). Beyond the capacity,
    /// the least recently used entries are dropped; a key given twice keeps its later value and
    /// place, as [`super::BoundedMap::from_ordered`] does.
    pub fn from_ordered(capacity: usize, entries: Vec<(Key, V)>) -> Self {
        let mut m = Self::new(capacity);
        let skip = entries.len().saturating_sub(m.capacity);
        let (pages, hasher) = (&m.pages, &m.hasher);
        m.index.reserve(entries.len() - skip, |&j| hash_of(hasher, at(pages, j as usize).key));
        for (key, value) in entries.into_iter().skip(skip) {
            let tick = m.next_tick();
            let k = split(key);
            let hash = hash_of(&m.hasher, k);
            match m.find(hash, k) {
                Some(i) => *at_mut(&mut m.pages, i) = Entry { key: k, tick, value },
                None => {
                    m.insert_new(hash, Entry { key: k, tick, value });
                }
            }
        }
        m
    }

    /// Starts the tick at `tick`, to test what happens when it runs out.
    #[cfg(test)]
    pub(crate) fn set_tick(&mut self, tick: u32) {
        self.tick = tick;
    }
}

impl<V: Clone> CompactMap<V> {
    /// All entries, least recently used first, for a snapshot.
    pub fn to_ordered(&self) -> Vec<(Key, V)> {
        self.ordered().iter().map(|(k, v)| (k, v.clone())).collect()
    }
}

/// A map's entries in least-recently-used-first order, by reference (8 bytes per entry while it
/// lives).
#[derive(Debug)]
pub struct Ordered<'a, V> {
    map: &'a CompactMap<V>,
    order: Vec<u64>,
}

impl<'a, V> Ordered<'a, V> {
    /// The entries, least recently used first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Key, &'a V)> + '_ {
        let map: &'a CompactMap<V> = self.map;
        let pages = &map.pages;
        self.order.iter().map(move |&w| {
            let e = at(pages, w as u32 as usize);
            (join(e.key), &e.value)
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod hash_tests {
    use super::mul_wide;

    #[test]
    fn mul_wide_is_the_128_bit_product() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let edges = [0, 1, 0xFFFF_FFFF, 0x1_0000_0000, u64::MAX, u64::MAX - 1, 1 << 63];
        let mut pairs: Vec<(u64, u64)> = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))).collect();
        for _ in 0..10_000 {
            // xorshift: spread values over the whole range
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pairs.push((x, x.rotate_left(29) ^ 0x5555_5555_5555_5555));
        }
        for (a, b) in pairs {
            let m = u128::from(a) * u128::from(b);
            assert_eq!(mul_wide(a, b), (m as u64, (m >> 64) as u64), "{a:#x} × {b:#x}");
        }
    }
}
