//! Gateways by id, for the WIT functions that take a gateway's id instead of a resource handle
//! (`check-bot-message-quick`, interface 0.4.0).
//!
//! Why: a method call lends the host's resource handle for the call's duration, and the runtime
//! checks and tracks that loan, a noticeable share of a bot decision (see the WIT). A plain
//! function given a number skips it, so the guest needs its own way from number to gateway.
//!
//! How: a slot per live gateway, reused once its gateway is gone, and a generation per slot that
//! goes up on every reuse. An id is `generation << 32 | slot`, so an id kept after its gateway was
//! dropped does not reach the gateway that took the slot later (until the slot's generation wraps,
//! after 2³² reuses). The registry holds weak
//! references: the resource owns its gateway, and dropping the resource is all it takes to end
//! it. Memory is bounded by the largest number of gateways alive at once.
//!
//! ```
//! use std::rc::Rc;
//! use loopguard_policy::registry::Registry;
//! let mut reg = Registry::default();
//! let a = Rc::new("a");
//! let id = reg.register(&a);
//! assert_eq!(reg.get(id).as_deref(), Some(&"a"));
//! drop(a);
//! assert!(reg.get(id).is_none());
//! let b = Rc::new("b");
//! let id_b = reg.register(&b); // reuses the slot with a new generation
//! assert_ne!(id_b, id);
//! assert!(reg.get(id).is_none());
//! ```

use std::rc::{Rc, Weak};

/// Live values by id.
#[derive(Debug)]
pub struct Registry<T> {
    /// `(generation, value)` per slot; a slot whose value is gone is free.
    slots: Vec<(u32, Weak<T>)>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Registry<T> {
    /// An empty registry (`const`, so that a `thread_local!` holding one needs no lazy set-up).
    pub const fn new() -> Self {
        Self { slots: Vec::new() }
    }

    /// Registers `value` and returns its id: a free slot (one whose value is gone) with its
    /// generation moved on, or a new slot.
    pub fn register(&mut self, value: &Rc<T>) -> u64 {
        let weak = Rc::downgrade(value);
        let free = self.slots.iter().position(|(_, w)| w.strong_count() == 0);
        let slot = match free {
            Some(slot) => {
                let entry = &mut self.slots[slot];
                *entry = (entry.0.wrapping_add(1), weak);
                slot
            }
            None => {
                self.slots.push((0, weak));
                self.slots.len() - 1
            }
        };
        (u64::from(self.slots[slot].0) << 32) | slot as u64
    }

    /// The live value with this id.
    pub fn get(&self, id: u64) -> Option<Rc<T>> {
        let (generation, slot) = ((id >> 32) as u32, id as u32 as usize);
        let (g, weak) = self.slots.get(slot)?;
        if *g != generation {
            return None;
        }
        weak.upgrade()
    }

    /// Slots in use or free (for tests: memory stays bounded by the live peak).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_reach_their_value_while_it_lives() {
        let mut reg = Registry::default();
        let (a, b) = (Rc::new(1), Rc::new(2));
        let (ia, ib) = (reg.register(&a), reg.register(&b));
        assert_ne!(ia, ib);
        assert_eq!(reg.get(ia).as_deref(), Some(&1));
        assert_eq!(reg.get(ib).as_deref(), Some(&2));
        drop(a);
        assert_eq!(reg.get(ia), None);
        assert_eq!(reg.get(ib).as_deref(), Some(&2));
    }

    #[test]
    fn a_stale_id_never_reaches_the_slots_next_value() {
        let mut reg = Registry::default();
        let a = Rc::new("first");
        let stale = reg.register(&a);
        drop(a);
        let b = Rc::new("second");
        let fresh = reg.register(&b);
        assert_eq!(fresh as u32, stale as u32, "the slot is reused");
        assert_eq!(reg.get(stale), None);
        assert_eq!(reg.get(fresh).as_deref(), Some(&"second"));
    }

    #[test]
    fn unknown_ids_are_none() {
        let mut reg = Registry::default();
        let a = Rc::new(());
        let id = reg.register(&a);
        assert_eq!(reg.get(id + 1), None, "no such slot");
        assert_eq!(reg.get(id + (1 << 32)), None, "wrong generation");
        assert_eq!(reg.get(u64::MAX), None);
    }

    #[test]
    fn slots_stay_bounded_by_the_live_peak() {
        let mut reg = Registry::default();
        for _ in 0..1_000 {
            let (a, b) = (Rc::new(0), Rc::new(1));
            reg.register(&a);
            reg.register(&b);
        }
        assert_eq!(reg.slots(), 2);
    }
}
