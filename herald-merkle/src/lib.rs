//! RFC 6962 / RFC 9162 Merkle trees: the tree of the HERALD audit log
//! (PROFILE P9) and of every C2SP transparency log, with nothing else:
//! SHA-256 hashing, an in-memory tree, complete subtrees, and inclusion and
//! consistency proofs, built and verified. `no_std` with `alloc`; its one
//! dependency is `sha2`.
//!
//! * Hashing (RFC 9162 §2.1.1): leaf hash `SHA-256(0x00 ‖ leaf)`, interior
//!   node `SHA-256(0x01 ‖ left ‖ right)`, empty tree `SHA-256("")`.
//! * [`Tree`]: an append-only, in-memory tree that keeps every leaf hash and
//!   every complete-subtree node, so that appending costs amortised O(1)
//!   hashes and the root, inclusion proofs (§2.1.3.1) and consistency proofs
//!   (§2.1.4.1) for *any* past size are produced in O(log n) node lookups.
//! * [`verify_inclusion`] (§2.1.3.2) and [`verify_consistency`] (§2.1.4.2):
//!   verifiers over byte slices, so that hashes that are not exactly 32 bytes
//!   are rejected (P9: "Hashes are exactly 32 bytes").
//!
//! PROFILE P9 policies applied by the verifiers:
//! * a consistency proof needs `0 < size1 ≤ size2` (size1 = 0 is an error,
//!   as in current transparency-dev/merkle);
//! * `size1 == size2` needs an empty proof and `root1 == root2`;
//! * an inclusion proof needs `index < size`;
//! * a proof with the wrong number of hashes is an error (checked before any
//!   hashing).
//!
//! No function here recurses: every walk down the tree is a loop bounded by
//! the 64 bits of a `u64` size.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(test)]
extern crate std;

mod hash;
pub mod subtrees;
mod tree;
mod verify;

pub use hash::{empty_root, leaf_hash, node_hash, root_from_leaves};
pub use subtrees::Subtrees;
pub use tree::Tree;
pub use verify::{
    HashRole, ProofError, consistency_proof_len, inclusion_proof_len, root_from_inclusion_proof,
    verify_consistency, verify_inclusion,
};

/// A SHA-256 hash: a leaf hash, an interior node hash or a tree root
/// (RFC 9162 §2.1.1; PROFILE P9: hashes are exactly 32 bytes).
pub type Hash = [u8; 32];

/// Length in bytes of every hash in the tree (PROFILE P9).
pub const HASH_LEN: usize = 32;

#[cfg(test)]
mod tests {
    // Tests unwrap: a failure is the assertion.
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::hash::HASH_COUNT;
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    fn hashes_done() -> u64 {
        HASH_COUNT.with(|c| c.get())
    }

    fn leaf_for(i: u64) -> Hash {
        leaf_hash(&i.to_be_bytes())
    }

    #[test]
    fn hundred_thousand_leaves_are_not_quadratic() {
        const N: u64 = 100_000;
        let leaves: Vec<Hash> = (0..N).map(leaf_for).collect();

        let before = hashes_done();
        let tree = Tree::from_leaf_hashes(leaves.iter().copied());
        let build = hashes_done() - before;
        // One node per completed subtree: N - popcount(N) interior nodes.
        assert_eq!(build, N - u64::from(N.count_ones()));
        assert_eq!(tree.len(), N);

        let ceil_log2 = u64::from(u64::BITS - (N - 1).leading_zeros());
        let sizes = [1, 2, 3, 1000, 65_536, 65_537, 99_999, N];
        for &size in &sizes {
            let before = hashes_done();
            let root = tree.root_at(size).unwrap();
            assert!(hashes_done() - before <= ceil_log2);
            for index in [0, size / 3, size / 2, size - 1] {
                let before = hashes_done();
                let proof = tree.inclusion_proof(index, size).unwrap();
                // One non-perfect sibling at most, the rest are stored nodes.
                assert!(hashes_done() - before <= ceil_log2, "size {size}");
                assert!(proof.len() as u64 <= ceil_log2);
                assert_eq!(proof.len(), inclusion_proof_len(index, size).unwrap());
                verify_inclusion(&leaves[index as usize], index, size, &proof, &root).unwrap();
            }
            for size1 in [1, size / 2, size - 1, size] {
                if size1 == 0 {
                    continue;
                }
                let before = hashes_done();
                let proof = tree.consistency_proof(size1, size).unwrap();
                assert!(hashes_done() - before <= 2 * ceil_log2, "({size1}, {size})");
                assert_eq!(proof.len(), consistency_proof_len(size1, size).unwrap());
                let root1 = tree.root_at(size1).unwrap();
                verify_consistency(size1, size, &proof, &root1, &root).unwrap();
            }
        }
        assert_eq!(tree.root(), root_from_leaves(&leaves));
    }

    #[test]
    fn levels_round_trip() {
        for n in 0..40u64 {
            let tree = Tree::from_leaf_hashes((0..n).map(leaf_for));
            for (l, level) in tree.levels().iter().enumerate() {
                assert_eq!(level.len() as u64, n >> l);
            }
            let rebuilt = Tree::from_levels(tree.levels().to_vec()).unwrap();
            assert_eq!(rebuilt, tree);
        }
        let tree = Tree::from_leaf_hashes((0..5).map(leaf_for));
        let mut bad = tree.levels().to_vec();
        bad[1].pop();
        assert!(matches!(
            Tree::from_levels(bad),
            Err(ProofError::MalformedLevels { level: 1, .. })
        ));
        let mut extra = tree.levels().to_vec();
        extra.push(vec![]);
        assert_eq!(
            Tree::from_levels(extra),
            Err(ProofError::LevelCount {
                got: 4,
                expected: 3
            })
        );
        assert!(Tree::from_levels(vec![vec![]]).is_err());
        assert_eq!(Tree::from_levels(vec![]).unwrap(), Tree::new());
        let mut short = tree.levels().to_vec();
        short.pop();
        assert!(Tree::from_levels(short).is_err());
    }

    #[test]
    fn edge_sizes_do_not_panic() {
        let none: &[Hash] = &[];
        let h = [0u8; 32];
        assert_eq!(
            verify_inclusion(&h, u64::MAX, u64::MAX, none, &h),
            Err(ProofError::IndexOutOfRange {
                index: u64::MAX,
                size: u64::MAX
            })
        );
        assert!(verify_inclusion(&h, u64::MAX - 1, u64::MAX, none, &h).is_err());
        assert!(verify_inclusion(&h, 0, u64::MAX, &[h; 64], &h).is_err());
        assert!(verify_consistency(1, u64::MAX, &[h; 64], &h, &h).is_err());
        assert!(verify_consistency(u64::MAX - 1, u64::MAX, &[h; 2], &h, &h).is_err());
        assert_eq!(inclusion_proof_len(0, u64::MAX).unwrap(), 64);
        assert_eq!(inclusion_proof_len(u64::MAX - 1, u64::MAX).unwrap(), 63);
        assert_eq!(consistency_proof_len(1, u64::MAX).unwrap(), 64);
        assert!(consistency_proof_len(1 << 63, u64::MAX).unwrap() <= 64);
        assert_eq!(consistency_proof_len(u64::MAX, u64::MAX).unwrap(), 0);
        let tree = Tree::new();
        assert_eq!(tree.root(), empty_root());
        assert!(tree.root_at(1).is_err());
        assert!(tree.inclusion_proof(0, 0).is_err());
        assert!(tree.consistency_proof(0, 0).is_err());
        assert_eq!(tree.node(u32::MAX, u64::MAX), None);
    }

    #[test]
    fn display_messages() {
        use alloc::string::ToString;
        assert_eq!(
            ProofError::IndexOutOfRange { index: 7, size: 7 }.to_string(),
            "index 7 is not below tree size 7"
        );
        assert_eq!(
            ProofError::ProofLength {
                got: 3,
                expected: 4
            }
            .to_string(),
            "proof has 3 hashes, expected 4"
        );
        assert_eq!(
            ProofError::HashLength {
                role: HashRole::Root,
                len: 12
            }
            .to_string(),
            "root is 12 bytes, expected 32"
        );
        assert_eq!(ProofError::RootMismatch.to_string(), "root mismatch");
    }
}
