//! A table of config entries keyed by name, looked up for every event.

use crate::js::same_text;
use crate::store::FastMap;

/// Entries keyed by name (a channel's accounts and rooms, the channels): a few names are
/// scanned, more are hashed.
///
/// Why not only a [`FastMap`]: most configs name a handful of channels and accounts, and a bot
/// message looks up two or three of them. Hashing a name (foldhash), probing and comparing with
/// wasi-libc's `memcmp` cost ~280 instructions a lookup in the component; scanning a few names,
/// lengths first and the one candidate by words ([`same_text`]), a fraction of that (callgrind,
/// the replay bench's bot trace: 14.7 k -> 14.0 k instructions a bot event).
#[derive(Debug, Clone, Default)]
pub struct Names<V> {
    entries: Vec<(String, V)>,
    /// Where each name is in `entries`, once there are more than [`SCAN`] of them.
    index: Option<FastMap<String, usize>>,
}

/// Tables up to this many entries are scanned.
const SCAN: usize = 16;

impl<V> Names<V> {
    /// Sets the entry of `name` (a later one replaces an earlier one).
    pub fn insert(&mut self, name: String, value: V) {
        if let Some(i) = self.position(&name) {
            self.entries[i].1 = value;
            return;
        }
        self.entries.push((name, value));
        if self.entries.len() > SCAN {
            let index = self.index.get_or_insert_with(FastMap::default);
            for (i, (name, _)) in self.entries.iter().enumerate().skip(index.len()) {
                index.insert(name.clone(), i);
            }
        }
    }

    /// The entry of `name`.
    pub fn get(&self, name: &str) -> Option<&V> {
        self.position(name).map(|i| &self.entries[i].1)
    }

    fn position(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().position(|(n, _)| n.len() == name.len() && same_text(n, name)),
        }
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_finds_its_latest_entry_below_and_above_the_scan_limit() {
        for count in [0, 1, 3, SCAN, SCAN + 1, 3 * SCAN] {
            let mut names = Names::default();
            let name = |i: usize| format!("n{}", "x".repeat(i % 5)) + &i.to_string();
            for i in 0..count {
                names.insert(name(i), i);
            }
            // Replacing keeps one entry per name, wherever the table looks it up.
            for i in (0..count).step_by(2) {
                names.insert(name(i), i + 1000);
            }
            for i in 0..count {
                let want = if i % 2 == 0 { i + 1000 } else { i };
                assert_eq!(names.get(&name(i)), Some(&want), "{count} entries, name {i}");
            }
            assert_eq!(names.entries.len(), count);
            assert_eq!(names.get("missing"), None);
            assert_eq!(names.get(""), None);
            assert_eq!(names.is_empty(), count == 0);
            names.clear();
            assert_eq!(names.get(&name(0)), None);
        }
    }
}
