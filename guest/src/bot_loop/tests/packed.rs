//! The packed pair holds exactly what the plain rules hold (spec/bot-loop.md §2.4 state).
//!
//! A packed pair must never change a decision, so every test here compares it with
//! [`PairEntry`], the plain form the spec describes: first the representation's edge cases one by
//! one (rebasing, wide gaps, extreme timestamps, snapshot ids), then long random histories.

use crate::bot_loop::packed::{tag_of, PackedPair};
use crate::bot_loop::pair::{Event, PairEntry};

/// One step of the guard's pair logic (spec §2.4 steps 7, 8, 10–12), on both forms; panics when
/// they disagree about the decision or the state.
fn step(packed: &mut PackedPair, plain: &mut PairEntry, now: i64, tag: u32, s: (i64, i64, i64)) -> Option<i64> {
    let (window_ms, max, cooldown_ms) = s;
    packed.set_window(window_ms);
    packed.drop_expired(now, window_ms);
    plain.window_ms = window_ms;
    plain.drop_expired(now, window_ms);
    let replay = packed.holds_tag(tag);
    assert_eq!(replay, plain.holds_id(tag.into()), "replay at {now}");
    let cooldown = packed.cooldown_at(now);
    assert_eq!(cooldown, plain.cooldown_at(now), "cooldown at {now}");
    let decision = match (cooldown, replay) {
        (Some(until), _) => Some(until),
        (None, true) => None,
        (None, false) => {
            let tripped = packed.record(now, tag, max, cooldown_ms);
            assert_eq!(tripped, plain.record(Event { ts: now, id: tag.into() }, max, cooldown_ms), "trip at {now}");
            tripped
        }
    };
    assert_eq!(&packed.unpack(), plain, "state after {now}");
    decision
}

/// The prune's part (spec §2.4 step 6), on both forms: [`PackedPair::prune`] keeps the pair
/// exactly when the plain pair is not idle, holds what the plain pair holds, and leaves the
/// block as the separate steps (drop, shrink) would.
fn prune(packed: &mut PackedPair, plain: &mut PairEntry, now: i64) {
    let mut by_steps = packed.clone();
    by_steps.drop_expired(now, by_steps.window_ms());
    let idle = by_steps.is_idle(now);
    by_steps.shrink();
    plain.drop_expired(now, plain.window_ms);
    assert_eq!(idle, plain.is_idle(now), "idle at {now}");
    assert_eq!(packed.prune(now), !idle, "kept at {now}");
    if !idle {
        assert_eq!(packed, &by_steps, "block after the prune at {now}");
    }
    *packed = by_steps;
    assert_eq!(&packed.unpack(), plain, "state after the prune at {now}");
}

const DEFAULT: (i64, i64, i64) = (60_000, 20, 60_000);

fn both(window_ms: i64) -> (PackedPair, PairEntry) {
    (PackedPair::new(window_ms), PairEntry::new(window_ms))
}

#[test]
fn an_older_event_rebases_the_offsets_in_place() {
    let (mut packed, mut plain) = both(60_000);
    for now in [1_000_000, 999_000, 1_000_500, 940_001, 1_000_000] {
        assert_eq!(step(&mut packed, &mut plain, now, 0, DEFAULT), None);
    }
    assert_eq!(packed.len(), 5);
    assert_eq!(packed.capacity(), 8, "still compact: 1 → 2 → 4 → 8 slots");
}

#[test]
fn events_further_apart_than_49_days_switch_to_the_wide_layout_and_back() {
    let day = 86_400_000;
    let (mut packed, mut plain) = both(60_000);
    // A platform timestamp 60 days ahead arrives first; it stays, future-dated, while current
    // events come in, and no 32-bit offset spans the two.
    step(&mut packed, &mut plain, 60 * day, 1, DEFAULT);
    step(&mut packed, &mut plain, 0, 2, DEFAULT);
    step(&mut packed, &mut plain, 1, 3, DEFAULT);
    assert_eq!(packed.block_bytes(), (4 + 2 * 3) * 8, "wide: four header words, two per event");
    assert!(packed.holds_tag(1) && packed.holds_tag(2) && packed.holds_tag(3));
    // Once the current events leave the window, the pair packs back to compact.
    prune(&mut packed, &mut plain, 120_000);
    assert_eq!(packed.block_bytes(), (3 + 1) * 8, "compact again");
    step(&mut packed, &mut plain, 60 * day + 1, 4, DEFAULT);
    assert_eq!((packed.len(), packed.capacity()), (2, 2));
}

#[test]
fn extreme_timestamps_are_kept_exactly() {
    let cases: &[&[i64]] = &[
        &[i64::MIN, i64::MIN + 1, i64::MIN],
        &[i64::MAX, i64::MAX - 1, i64::MAX],
        &[-5, 0, -60_000, 59_999, -1],
        &[i64::MIN, 0, i64::MAX],
        &[1_700_000_000_000, -1_700_000_000_000, 1_700_000_000_001],
        &[0, u32::MAX as i64 - 1, u32::MAX as i64, 1, u32::MAX as i64 + 1],
    ];
    for stamps in cases {
        for window in [1, 60_000, u32::MAX as i64, u32::MAX as i64 + 1, i64::MAX] {
            let (mut packed, mut plain) = both(window);
            for (i, &now) in stamps.iter().enumerate() {
                step(&mut packed, &mut plain, now, i as u32, (window, 2, 1_000));
                prune(&mut packed, &mut plain, now);
            }
        }
    }
}

#[test]
fn windows_and_cooldowns_beyond_32_bits_are_kept_exactly() {
    for cooldown in [1, u32::MAX as i64, u32::MAX as i64 + 1, i64::MAX] {
        for now in [0, -1, i64::MAX - 5, i64::MIN + 5] {
            let (mut packed, mut plain) = both(60_000);
            step(&mut packed, &mut plain, now, 0, (60_000, 1, cooldown));
            let until = step(&mut packed, &mut plain, now, 0, (60_000, 1, cooldown));
            assert_eq!(until, Some(now.saturating_add(cooldown)));
            assert_eq!(packed.cooldown_until(), now.saturating_add(cooldown));
        }
    }
}

#[test]
fn snapshot_ids_load_as_tags_and_tags_round_trip() {
    // Snapshots written before the packed form hold whole 64-bit digests.
    let digest = 0xDEAD_BEEF_0000_0000_u64 | 0x1234_5678;
    let low_zero = 0xDEAD_BEEF_0000_0000_u64;
    let entry = PairEntry {
        events: vec![Event { ts: 5, id: digest }, Event { ts: 6, id: low_zero }, Event { ts: 7, id: 0 }],
        window_ms: 60_000,
        cooldown_started_at: 0,
        cooldown_until: 0,
    };
    let packed = PackedPair::pack(&entry);
    assert!(packed.holds_tag(0x1234_5678));
    assert!(packed.holds_tag(1), "an id whose low half is 0 is still an id");
    let ids: Vec<u64> = packed.unpack().events.iter().map(|e| e.id).collect();
    assert_eq!(ids, [0x1234_5678, 1, 0]);
    assert_eq!(PackedPair::pack(&packed.unpack()), packed);
    assert_eq!((tag_of(0), tag_of(7), tag_of(u64::from(u32::MAX))), (0, 7, u32::MAX));
}

#[test]
fn odd_snapshot_values_are_kept_exactly() {
    let entries = [
        PairEntry { events: vec![], window_ms: 0, cooldown_started_at: 10, cooldown_until: 5 },
        PairEntry { events: vec![Event { ts: 3, id: 9 }], window_ms: -7, cooldown_started_at: 0, cooldown_until: 0 },
        PairEntry { events: vec![], window_ms: 60_000, cooldown_started_at: i64::MIN, cooldown_until: i64::MAX },
    ];
    for entry in entries {
        assert_eq!(PackedPair::pack(&entry).unpack(), entry);
    }
}

#[test]
fn the_prune_gives_unused_slots_back() {
    let (mut packed, mut plain) = both(1_000);
    for now in 0..16 {
        step(&mut packed, &mut plain, now, 0, (1_000, 20, 1_000));
    }
    assert_eq!(packed.capacity(), 16);
    step(&mut packed, &mut plain, 1_010, 0, (1_000, 20, 1_000)); // 0..=10 expired: five left + one
    prune(&mut packed, &mut plain, 1_010);
    assert_eq!(packed.capacity(), 6, "at most half the slots were in use");
    prune(&mut packed, &mut plain, 5_000);
    assert_eq!(packed.capacity(), 0, "an empty log keeps only its header");
    assert_eq!(packed.block_bytes(), 24);
}

#[test]
fn a_trip_keeps_no_slot_for_the_tripping_event() {
    let (mut packed, mut plain) = both(60_000);
    for now in 0..20 {
        assert_eq!(step(&mut packed, &mut plain, now, 0, DEFAULT), None);
    }
    assert_eq!(packed.capacity(), 20, "slots stop at the budget");
    assert_eq!(step(&mut packed, &mut plain, 20, 0, DEFAULT), Some(60_020));
    assert_eq!(packed.capacity(), 0);
}

/// A small deterministic generator (xorshift64*), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn random_histories_decide_and_store_exactly_like_the_plain_rules() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut steps, mut wide, mut trips) = (0, 0, 0);
    for history in 0..3_000 {
        let mut now: i64 = match history % 4 {
            0 => 1_700_000_000_000,
            1 => 0,
            2 => i64::MAX - 10_000_000_000,
            _ => i64::MIN + 10_000_000_000,
        };
        // Mostly values the compact layout holds, some it cannot.
        let window = [1_000, 60_000, 60_000, u32::MAX as i64, 1 << 40][rng.below(5) as usize];
        let max = [1, 2, 3, 20][rng.below(4) as usize];
        let cooldown = [1, 500, 60_000, 60_000, 1 << 40][rng.below(5) as usize];
        let (mut packed, mut plain) = both(window);
        for _ in 0..60 {
            // Mostly small steps forward, some reordering, now and then a jump of weeks or years.
            now = match rng.below(100) {
                0 => now.saturating_add(rng.below(1 << 42) as i64),
                1 => now.saturating_sub(rng.below(1 << 42) as i64),
                2..=25 => now.saturating_sub(rng.below(3 * window as u64 / 2 + 1) as i64),
                _ => now.saturating_add(rng.below(window as u64 / 4 + 1) as i64),
            };
            // Tags from a small set, so that replays happen.
            let tag = rng.below(6) as u32;
            trips += usize::from(step(&mut packed, &mut plain, now, tag, (window, max, cooldown)).is_some());
            steps += 1;
            wide += usize::from(packed.is_wide());
            if rng.below(8) == 0 {
                prune(&mut packed, &mut plain, now);
            }
        }
    }
    // Both layouts and both outcomes were exercised.
    assert!(wide > steps / 5 && steps - wide > steps / 5, "{wide} of {steps} steps wide");
    assert!(trips > steps / 20, "{trips} of {steps} steps suppressed");
}
