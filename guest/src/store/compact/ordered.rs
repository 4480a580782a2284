//! Entries in least-recently-used-first order: what a snapshot holds, and how a map is rebuilt
//! from one.

use super::{at, at_mut, hash_of, join, split, CompactMap, Entry, Key};

impl<V> CompactMap<V> {
    /// All entries by reference, least recently used first: what a snapshot serializes.
    pub fn ordered(&self) -> Ordered<'_, V> {
        Ordered { map: self, order: self.by_tick() }
    }

    /// Rebuilds a map from entries least recently used first (a snapshot). Beyond the capacity,
    /// the least recently used entries are dropped; a key given twice keeps its later value and
    /// place, as [`crate::store::BoundedMap::from_ordered`] does.
    pub fn from_ordered(capacity: std::num::NonZeroUsize, entries: Vec<(Key, V)>) -> Self {
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
