//! The hash of [`super::CompactMap`]'s index: a keyed multiply, because the keys are digests.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

/// The secret of the index's hash, drawn once per map from std's randomly keyed hasher.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seed([u64; 2]);

impl Seed {
    pub(super) fn new() -> Self {
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
pub(super) fn hash_of(seed: &Seed, key: [u32; 4]) -> u64 {
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

#[cfg(test)]
mod tests {
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
