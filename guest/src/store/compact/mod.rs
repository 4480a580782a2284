//! [`CompactMap`]: the [`super::BoundedMap`] of digest-keyed state, laid out for a million
//! entries.
//!
//! Why (the one piece of speed-or-size code in the store, kept for the memory floor of docs/PERFORMANCE.md): a
//! million bot pairs must fit the sandbox's default 256 MiB, 268 bytes a pair with the
//! component's own memory inside it, and a pair holding a full default window is already a
//! 200-byte chunk ([`crate::bot_loop::pair::block`]). A `HashMap` bucket holding the 16-byte key,
//! the LRU tick and the block's pointer is 32 bytes on wasm32, and the table holds between 8/7
//! and 16/7 buckets per entry (a power of two, at most 7/8 full): at one million entries 2²¹
//! buckets, 69 bytes per entry, 269 bytes a pair in all, over the cap. Here the entries
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
//! let mut m = CompactMap::new(std::num::NonZeroUsize::new(2).unwrap());
//! *m.entry_or_insert_with(1, || 0) += 1;
//! *m.entry_or_insert_with(2, || 0) += 1;
//! *m.entry_or_insert_with(3, || 0) += 1; // evicts 1, the least recently used
//! assert_eq!(m.len(), 2);
//! assert!(m.get(1).is_none());
//! ```

mod evict;
mod hash;
pub mod ordered;
#[cfg(test)]
mod tests;

use hash::{hash_of, Seed};

use std::num::NonZeroUsize;

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
// the figure the memory floor counts on, checked wherever the component is built.
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

impl<V> CompactMap<V> {
    /// An empty map that holds at most `capacity` entries, and never more than `MAX_CAPACITY`
    /// (the map's own limit: entry numbers are `u32`; the config caps `maxPairs` far below it).
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self {
            index: HashTable::new(),
            pages: Vec::new(),
            len: 0,
            hasher: Seed::new(),
            capacity: capacity.get().min(MAX_CAPACITY),
            tick: 0,
            evicted: 0,
        }
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Changes the capacity; evicts at once if the map is now over it.
    pub fn set_capacity(&mut self, capacity: NonZeroUsize) {
        self.capacity = capacity.get().min(MAX_CAPACITY);
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

    /// Starts the tick at `tick`, to test what happens when it runs out.
    #[cfg(test)]
    pub(crate) fn set_tick(&mut self, tick: u32) {
        self.tick = tick;
    }
}
