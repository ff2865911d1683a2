//! The hashes of RFC 9162 §2.1.1: leaves, interior nodes, the empty tree,
//! and the root of a list of leaf hashes.

use alloc::vec::Vec;

use sha2::{Digest, Sha256};

use super::Hash;

#[cfg(test)]
std::thread_local! {
    /// Number of SHA-256 computations done by this thread (unit tests only).
    pub(super) static HASH_COUNT: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

#[cfg(test)]
pub(super) fn count_hash() {
    HASH_COUNT.with(|c| c.set(c.get().saturating_add(1)));
}

#[cfg(not(test))]
#[inline(always)]
pub(super) fn count_hash() {}

/// Leaf hash `SHA-256(0x00 ‖ leaf)` (RFC 9162 §2.1.1; PROFILE P9).
#[must_use]
pub fn leaf_hash(leaf: &[u8]) -> Hash {
    count_hash();
    let mut h = Sha256::new();
    h.update([0x00]);
    h.update(leaf);
    h.finalize().into()
}

/// Interior node hash `SHA-256(0x01 ‖ left ‖ right)` (RFC 9162 §2.1.1;
/// PROFILE P9).
#[must_use]
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    count_hash();
    let mut h = Sha256::new();
    h.update([0x01]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// Root of the empty tree, `SHA-256("")` (RFC 9162 §2.1.1; PROFILE P9).
#[must_use]
pub fn empty_root() -> Hash {
    count_hash();
    Sha256::digest([]).into()
}

/// Merkle Tree Hash `MTH(D[n])` of a list of leaf hashes (RFC 9162 §2.1.1;
/// PROFILE P9).
///
/// Computed bottom-up without recursion: each level pairs adjacent nodes
/// left to right and carries an odd last node up unchanged, which gives the
/// same tree as the RFC's "largest power of two smaller than n" split.
#[must_use]
pub fn root_from_leaves(leaves: &[Hash]) -> Hash {
    let mut level: Vec<Hash> = match leaves {
        [] => return empty_root(),
        [only] => return *only,
        _ => leaves.chunks(2).map(pair_or_carry).collect(),
    };
    while level.len() > 1 {
        level = level.chunks(2).map(pair_or_carry).collect();
    }
    level.first().copied().unwrap_or_else(empty_root)
}

/// Hash a chunk of one or two nodes: a pair becomes its parent, a lone node
/// is carried up unchanged.
fn pair_or_carry(chunk: &[Hash]) -> Hash {
    match chunk {
        [left, right] => node_hash(left, right),
        [only] => *only,
        // `chunks(2)` never yields another shape; the empty root is a
        // harmless value for an impossible case.
        _ => empty_root(),
    }
}
