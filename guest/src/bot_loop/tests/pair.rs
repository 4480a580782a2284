//! The pair holds exactly what the spec's rules hold (docs/spec/bot-loop.md §2.4 state).
//!
//! [`Pair`] keeps its events in a compact block, so every test here compares it with [`Model`],
//! the rules written the plain way the spec states them (a `Vec` of `(ts, tag)` and three
//! numbers), used only here as an oracle: first the block's edge cases one by one (rebasing,
//! far gaps, extreme timestamps, snapshot ids), then long random histories.

use std::num::NonZeroU64;

use crate::bot_loop::pair::{tag_of, Pair};
use crate::bot_loop::snapshot::{Event as SnapshotEvent, PairEntry};
use crate::time::Millis;

/// The plain rules (what `pair.rs` held before pairs were kept in blocks), as a snapshot entry.
type Model = PairEntry;

fn model(window_ms: i64) -> Model {
    PairEntry { events: Vec::new(), window_ms, cooldown_started_at: 0, cooldown_until: 0 }
}

fn model_drop_expired(m: &mut Model, now: i64, window_ms: i64) {
    let horizon = now.saturating_sub(window_ms);
    m.events.retain(|e| e.ts > horizon);
}

fn model_is_idle(m: &Model, now: i64) -> bool {
    m.events.is_empty() && m.cooldown_until <= now
}

fn model_cooldown_at(m: &Model, now: i64) -> Option<i64> {
    (m.cooldown_started_at <= now && now < m.cooldown_until).then_some(m.cooldown_until)
}

fn model_record(m: &mut Model, now: i64, tag: u32, max: i64, cooldown_ms: i64) -> Option<i64> {
    m.events.push(SnapshotEvent { ts: now, id: tag.into() });
    let count = m.events.iter().filter(|e| e.ts <= now).count();
    if count as i64 <= max {
        return None;
    }
    m.cooldown_started_at = now;
    m.cooldown_until = now.saturating_add(cooldown_ms);
    m.events.retain(|e| e.ts > now);
    Some(m.cooldown_until)
}

fn state(p: &Pair) -> PairEntry {
    PairEntry::from(p)
}

/// One step of the guard's pair logic (spec §2.4 steps 7, 8, 10–12), on both; panics when they
/// disagree about the decision or the state.
fn step(pair: &mut Pair, plain: &mut Model, now: i64, tag: u32, s: (i64, i64, i64)) -> Option<i64> {
    let (window_ms, max, cooldown_ms) = s;
    pair.set_window(Millis(window_ms));
    pair.drop_expired(Millis(now), Millis(window_ms));
    plain.window_ms = window_ms;
    model_drop_expired(plain, now, window_ms);
    let replay = pair.holds_tag(tag);
    assert_eq!(replay, tag != 0 && plain.events.iter().any(|e| e.id == u64::from(tag)), "replay at {now}");
    let cooldown = pair.cooldown_at(Millis(now)).map(Millis::ms);
    assert_eq!(cooldown, model_cooldown_at(plain, now), "cooldown at {now}");
    let decision = match (cooldown, replay) {
        (Some(until), _) => Some(until),
        (None, true) => None,
        (None, false) => {
            let max_nz = NonZeroU64::new(max as u64).unwrap();
            let tripped = pair.record(Millis(now), tag, max_nz, Millis(cooldown_ms)).map(Millis::ms);
            assert_eq!(tripped, model_record(plain, now, tag, max, cooldown_ms), "trip at {now}");
            tripped
        }
    };
    assert_eq!(&state(pair), plain, "state after {now}");
    decision
}

/// The prune's part (spec §2.4 step 6), on both: [`Pair::prune`] keeps the pair exactly when the
/// plain pair is not idle, and holds what the plain pair holds.
fn prune(pair: &mut Pair, plain: &mut Model, now: i64) {
    model_drop_expired(plain, now, plain.window_ms);
    let idle = model_is_idle(plain, now);
    assert_eq!(pair.prune(Millis(now)), !idle, "kept at {now}");
    assert_eq!(&state(pair), plain, "state after the prune at {now}");
}

const DEFAULT: (i64, i64, i64) = (60_000, 20, 60_000);

fn both(window_ms: i64) -> (Pair, Model) {
    (Pair::new(Millis(window_ms)), model(window_ms))
}

#[test]
fn an_older_event_rebases_the_offsets_in_place() {
    let (mut pair, mut plain) = both(60_000);
    for now in [1_000_000, 999_000, 1_000_500, 940_001, 1_000_000] {
        assert_eq!(step(&mut pair, &mut plain, now, 0, DEFAULT), None);
    }
    assert_eq!(pair.block().len(), 5);
    assert_eq!(pair.block().capacity(), 8, "still near: 1 → 2 → 4 → 8 slots");
}

#[test]
fn events_further_apart_than_49_days_make_the_block_far_and_near_again() {
    let day = 86_400_000;
    let (mut pair, mut plain) = both(60_000);
    // A platform timestamp 60 days ahead arrives first; it stays, future-dated, while current
    // events come in, and no 32-bit offset spans the two.
    step(&mut pair, &mut plain, 60 * day, 1, DEFAULT);
    step(&mut pair, &mut plain, 0, 2, DEFAULT);
    step(&mut pair, &mut plain, 1, 3, DEFAULT);
    assert_eq!(pair.block().block_bytes(), (4 + 1 + 2 * 3) * 8, "far: four header words, the marker, two per event");
    assert!(pair.holds_tag(1) && pair.holds_tag(2) && pair.holds_tag(3));
    // Once the current events leave the window, the block is near again.
    prune(&mut pair, &mut plain, 120_000);
    assert_eq!(pair.block().block_bytes(), (4 + 1) * 8, "near again");
    step(&mut pair, &mut plain, 60 * day + 1, 4, DEFAULT);
    assert_eq!((pair.block().len(), pair.block().capacity()), (2, 2));
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
            let (mut pair, mut plain) = both(window);
            for (i, &now) in stamps.iter().enumerate() {
                step(&mut pair, &mut plain, now, i as u32, (window, 2, 1_000));
                prune(&mut pair, &mut plain, now);
            }
        }
    }
}

#[test]
fn windows_and_cooldowns_beyond_32_bits_are_kept_exactly() {
    for cooldown in [1, u32::MAX as i64, u32::MAX as i64 + 1, i64::MAX] {
        for now in [0, -1, i64::MAX - 5, i64::MIN + 5] {
            let (mut pair, mut plain) = both(60_000);
            step(&mut pair, &mut plain, now, 0, (60_000, 1, cooldown));
            let until = step(&mut pair, &mut plain, now, 0, (60_000, 1, cooldown));
            assert_eq!(until, Some(now.saturating_add(cooldown)));
            assert_eq!(pair.cooldown().1, Millis(now.saturating_add(cooldown)));
        }
    }
}

#[test]
fn snapshot_ids_load_as_tags_and_tags_round_trip() {
    // Snapshots written before pairs kept tags hold whole 64-bit digests.
    let digest = 0xDEAD_BEEF_0000_0000_u64 | 0x1234_5678;
    let low_zero = 0xDEAD_BEEF_0000_0000_u64;
    let entry = PairEntry {
        events: vec![
            SnapshotEvent { ts: 5, id: digest },
            SnapshotEvent { ts: 6, id: low_zero },
            SnapshotEvent { ts: 7, id: 0 },
        ],
        window_ms: 60_000,
        cooldown_started_at: 0,
        cooldown_until: 0,
    };
    let pair = Pair::from(&entry);
    assert!(pair.holds_tag(0x1234_5678));
    assert!(pair.holds_tag(1), "an id whose low half is 0 is still an id");
    let ids: Vec<u64> = state(&pair).events.iter().map(|e| e.id).collect();
    assert_eq!(ids, [0x1234_5678, 1, 0]);
    assert_eq!(Pair::from(&state(&pair)), pair);
    assert_eq!((tag_of(0), tag_of(7), tag_of(u64::from(u32::MAX))), (0, 7, u32::MAX));
}

#[test]
fn odd_snapshot_values_are_kept_exactly() {
    let entries = [
        PairEntry { events: vec![], window_ms: 0, cooldown_started_at: 10, cooldown_until: 5 },
        PairEntry {
            events: vec![SnapshotEvent { ts: 3, id: 9 }],
            window_ms: -7,
            cooldown_started_at: 0,
            cooldown_until: 0,
        },
        PairEntry { events: vec![], window_ms: 60_000, cooldown_started_at: i64::MIN, cooldown_until: i64::MAX },
    ];
    for entry in entries {
        assert_eq!(state(&Pair::from(&entry)), entry);
    }
}

#[test]
fn the_prune_gives_unused_slots_back() {
    let (mut pair, mut plain) = both(1_000);
    for now in 0..16 {
        step(&mut pair, &mut plain, now, 0, (1_000, 20, 1_000));
    }
    assert_eq!(pair.block().capacity(), 16);
    step(&mut pair, &mut plain, 1_010, 0, (1_000, 20, 1_000)); // 0..=10 expired: five left + one
    prune(&mut pair, &mut plain, 1_010);
    assert_eq!(pair.block().capacity(), 6, "at most half the slots were in use");
    prune(&mut pair, &mut plain, 5_000);
    assert_eq!(pair.block().capacity(), 0, "an empty log keeps only its header");
    assert_eq!(pair.block().block_bytes(), 32);
}

#[test]
fn a_trip_keeps_no_slot_for_the_tripping_event() {
    let (mut pair, mut plain) = both(60_000);
    for now in 0..20 {
        assert_eq!(step(&mut pair, &mut plain, now, 0, DEFAULT), None);
    }
    assert_eq!(pair.block().capacity(), 20, "slots stop at the budget");
    assert_eq!(step(&mut pair, &mut plain, 20, 0, DEFAULT), Some(60_020));
    assert_eq!(pair.block().capacity(), 0);
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
    let (mut steps, mut far, mut trips) = (0, 0, 0);
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
        let (mut pair, mut plain) = both(window);
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
            trips += usize::from(step(&mut pair, &mut plain, now, tag, (window, max, cooldown)).is_some());
            steps += 1;
            far += usize::from(pair.block().is_far());
            if rng.below(8) == 0 {
                prune(&mut pair, &mut plain, now);
            }
        }
    }
    // Both layouts and both outcomes were exercised.
    assert!(far > steps / 5 && steps - far > steps / 5, "{far} of {steps} steps far");
    assert!(trips > steps / 20, "{trips} of {steps} steps suppressed");
}
