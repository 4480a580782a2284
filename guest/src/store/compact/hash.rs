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
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ (product >> 64) as u64
}
