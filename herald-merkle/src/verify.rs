//! Verifying proofs (RFC 9162 §2.1.3.2, §2.1.4.2) over byte slices, the
//! expected proof lengths, and their errors.

use alloc::vec::Vec;
use core::fmt;

use super::hash::node_hash;
use super::{HASH_LEN, Hash};

/// Which hash of a proof check has the wrong length (see
/// [`ProofError::HashLength`]; PROFILE P9: hashes are exactly 32 bytes).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashRole {
    /// The leaf hash whose inclusion is checked (RFC 9162 §2.1.3.2).
    LeafHash,
    /// The root of an inclusion proof (RFC 9162 §2.1.3.2).
    Root,
    /// The first (older) root of a consistency proof (RFC 9162 §2.1.4.2).
    FirstRoot,
    /// The second (newer) root of a consistency proof (RFC 9162 §2.1.4.2).
    SecondRoot,
    /// The proof hash at this position (0-based).
    ProofHash(usize),
}

impl fmt::Display for HashRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HashRole::LeafHash => f.write_str("leaf hash"),
            HashRole::Root => f.write_str("root"),
            HashRole::FirstRoot => f.write_str("first root"),
            HashRole::SecondRoot => f.write_str("second root"),
            HashRole::ProofHash(i) => write!(f, "proof hash {i}"),
        }
    }
}

/// Why a Merkle proof could not be produced or did not verify (RFC 9162
/// §2.1.3, §2.1.4; PROFILE P9).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProofError {
    /// A hash is not exactly 32 bytes (PROFILE P9).
    HashLength {
        /// Which hash.
        role: HashRole,
        /// Its length in bytes.
        len: usize,
    },
    /// The leaf index is not below the tree size (RFC 9162 §2.1.3.2 step 1).
    IndexOutOfRange {
        /// The leaf index.
        index: u64,
        /// The tree size.
        size: u64,
    },
    /// A [`Tree`](super::Tree) was asked about a size larger than the number of leaves it
    /// holds.
    SizeBeyondTree {
        /// The requested size.
        size: u64,
        /// The number of leaves in the tree.
        len: u64,
    },
    /// The proof does not have the number of hashes the sizes (and index)
    /// determine (RFC 9162 §2.1.3.2, §2.1.4.2; PROFILE P9).
    ProofLength {
        /// Number of hashes in the proof.
        got: usize,
        /// Number of hashes expected.
        expected: usize,
    },
    /// A consistency proof from size 0 (PROFILE P9: `0 < size1` is required).
    ZeroFirstSize,
    /// A consistency proof with `size1 > size2` (RFC 9162 §2.1.4).
    SizesReversed {
        /// The first (claimed older) size.
        size1: u64,
        /// The second (claimed newer) size.
        size2: u64,
    },
    /// The inclusion proof leads to a different root, or `size1 == size2`
    /// but the two roots differ (RFC 9162 §2.1.3.2 step 5; PROFILE P9).
    RootMismatch,
    /// The consistency proof does not lead to the first root (RFC 9162
    /// §2.1.4.2 step 7).
    FirstRootMismatch,
    /// The consistency proof does not lead to the second root (RFC 9162
    /// §2.1.4.2 step 7).
    SecondRootMismatch,
    /// Node storage handed to [`Tree::from_levels`](super::Tree::from_levels) has the wrong number of
    /// levels.
    LevelCount {
        /// Number of levels found.
        got: usize,
        /// Number of levels expected for that many leaves.
        expected: usize,
    },
    /// A level of the node storage handed to [`Tree::from_levels`](super::Tree::from_levels) has the
    /// wrong number of hashes.
    MalformedLevels {
        /// The level (0 = leaves) with the wrong number of hashes.
        level: usize,
        /// Number of hashes found on that level.
        got: usize,
        /// Number of hashes expected on that level.
        expected: usize,
    },
}

impl fmt::Display for ProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofError::HashLength { role, len } => {
                write!(f, "{role} is {len} bytes, expected {HASH_LEN}")
            }
            ProofError::IndexOutOfRange { index, size } => {
                write!(f, "index {index} is not below tree size {size}")
            }
            ProofError::SizeBeyondTree { size, len } => {
                write!(f, "tree size {size} is beyond the {len} leaves in the tree")
            }
            ProofError::ProofLength { got, expected } => {
                write!(f, "proof has {got} hashes, expected {expected}")
            }
            ProofError::ZeroFirstSize => {
                f.write_str("consistency proof from tree size 0 is not allowed (size1 must be > 0)")
            }
            ProofError::SizesReversed { size1, size2 } => write!(
                f,
                "first tree size {size1} is larger than second tree size {size2}"
            ),
            ProofError::RootMismatch => f.write_str("root mismatch"),
            ProofError::FirstRootMismatch => f.write_str("first root mismatch"),
            ProofError::SecondRootMismatch => f.write_str("second root mismatch"),
            ProofError::LevelCount { got, expected } => {
                write!(f, "node storage has {got} levels, expected {expected}")
            }
            ProofError::MalformedLevels {
                level,
                got,
                expected,
            } => write!(
                f,
                "node storage level {level} has {got} hashes, expected {expected}"
            ),
        }
    }
}

impl core::error::Error for ProofError {}

/// Read a 32-byte hash out of a byte slice (PROFILE P9).
pub(super) fn to_hash(bytes: &[u8], role: HashRole) -> Result<Hash, ProofError> {
    Hash::try_from(bytes).map_err(|_| ProofError::HashLength {
        role,
        len: bytes.len(),
    })
}

/// Read every proof hash, rejecting any that is not 32 bytes.
pub(super) fn proof_hashes(proof: &[impl AsRef<[u8]>]) -> Result<Vec<Hash>, ProofError> {
    proof
        .iter()
        .enumerate()
        .map(|(i, p)| to_hash(p.as_ref(), HashRole::ProofHash(i)))
        .collect()
}

/// Largest power of two strictly smaller than `n`, for `n ≥ 2` (the split
/// point `k` of RFC 9162 §2.1.1).
pub(super) fn split_point(n: u64) -> u64 {
    debug_assert!(n >= 2);
    let bits = u64::BITS - n.saturating_sub(1).leading_zeros();
    1u64 << bits.saturating_sub(1)
}

/// Number of hashes in the inclusion proof of `index` in a tree of `size`
/// leaves (`index < size`), as `(inner, border)`: `inner` hashes below the
/// level where the paths to `index` and to the last leaf meet, `border`
/// above it (RFC 9162 §2.1.3.2, same count as transparency-dev/merkle).
pub(super) fn inclusion_shape(index: u64, size: u64) -> (u32, u32) {
    let last = size.saturating_sub(1);
    let inner = u64::BITS - (index ^ last).leading_zeros();
    let border = index.checked_shr(inner).unwrap_or(0).count_ones();
    (inner, border)
}

/// Number of hashes in an inclusion proof (RFC 9162 §2.1.3; PROFILE P9),
/// or an error when `index ≥ size`.
pub fn inclusion_proof_len(index: u64, size: u64) -> Result<usize, ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    let (inner, border) = inclusion_shape(index, size);
    Ok(usize_from(inner.saturating_add(border)))
}

/// Number of hashes in a consistency proof between sizes `size1` and
/// `size2` (RFC 9162 §2.1.4; PROFILE P9), or an error when not
/// `0 < size1 ≤ size2`.
pub fn consistency_proof_len(size1: u64, size2: u64) -> Result<usize, ProofError> {
    if size1 == 0 {
        return Err(ProofError::ZeroFirstSize);
    }
    if size1 > size2 {
        return Err(ProofError::SizesReversed { size1, size2 });
    }
    if size1 == size2 {
        return Ok(0);
    }
    // The proof is the tail of the inclusion proof of leaf size1 - 1 in the
    // size2 tree, from the level of the largest perfect subtree that ends at
    // size1, plus that subtree's root unless it is the whole old tree.
    let (inner, border) = inclusion_shape(size1 - 1, size2);
    let shift = size1.trailing_zeros();
    let seed = u32::from(!size1.is_power_of_two());
    Ok(usize_from(
        inner
            .saturating_sub(shift)
            .saturating_add(border)
            .saturating_add(seed),
    ))
}

/// `u32` proof lengths (at most 2 × 64) always fit in `usize`.
pub(super) fn usize_from(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Recompute the root from an inclusion proof (RFC 9162 §2.1.3.2 steps 1–4;
/// PROFILE P9).
///
/// Checks `index < size`, the number of proof hashes and that every hash is
/// 32 bytes, then returns the root the proof leads to. The caller compares
/// it with a trusted root (or uses [`verify_inclusion`]).
pub fn root_from_inclusion_proof(
    leaf_hash: &[u8],
    index: u64,
    size: u64,
    proof: &[impl AsRef<[u8]>],
) -> Result<Hash, ProofError> {
    let expected = inclusion_proof_len(index, size)?;
    if proof.len() != expected {
        return Err(ProofError::ProofLength {
            got: proof.len(),
            expected,
        });
    }
    let leaf = to_hash(leaf_hash, HashRole::LeafHash)?;
    let proof = proof_hashes(proof)?;

    // RFC 9162 §2.1.3.2 steps 2–5.
    let mut fnode = index;
    let mut snode = size - 1;
    let mut r = leaf;
    for p in &proof {
        if snode == 0 {
            return Err(ProofError::ProofLength {
                got: proof.len(),
                expected,
            });
        }
        if fnode & 1 == 1 || fnode == snode {
            r = node_hash(p, &r);
            if fnode & 1 == 0 {
                while fnode & 1 == 0 && fnode != 0 {
                    fnode >>= 1;
                    snode >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    if snode != 0 {
        return Err(ProofError::ProofLength {
            got: proof.len(),
            expected,
        });
    }
    Ok(r)
}

/// Verify that `leaf_hash` is leaf `index` of the tree of `size` leaves with
/// root `root` (RFC 9162 §2.1.3.2; PROFILE P9).
///
/// Errors: `index ≥ size`, a proof with the wrong number of hashes, any hash
/// that is not 32 bytes, or a root mismatch.
pub fn verify_inclusion(
    leaf_hash: &[u8],
    index: u64,
    size: u64,
    proof: &[impl AsRef<[u8]>],
    root: &[u8],
) -> Result<(), ProofError> {
    let computed = root_from_inclusion_proof(leaf_hash, index, size, proof)?;
    let root = to_hash(root, HashRole::Root)?;
    if computed == root {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}

/// Verify that the tree of `size1` leaves with root `root1` is a prefix of
/// the tree of `size2` leaves with root `root2` (RFC 9162 §2.1.4.2;
/// PROFILE P9).
///
/// PROFILE P9 policy: `size1 = 0` is an error (even with `size2 = 0`);
/// `size1 > size2` is an error; `size1 == size2` needs an empty proof and
/// `root1 == root2`. A proof with the wrong number of hashes and any hash
/// that is not 32 bytes are errors.
pub fn verify_consistency(
    size1: u64,
    size2: u64,
    proof: &[impl AsRef<[u8]>],
    root1: &[u8],
    root2: &[u8],
) -> Result<(), ProofError> {
    let expected = consistency_proof_len(size1, size2)?;
    if proof.len() != expected {
        return Err(ProofError::ProofLength {
            got: proof.len(),
            expected,
        });
    }
    let first = to_hash(root1, HashRole::FirstRoot)?;
    let second = to_hash(root2, HashRole::SecondRoot)?;
    if size1 == size2 {
        return if first == second {
            Ok(())
        } else {
            Err(ProofError::RootMismatch)
        };
    }
    let proof = proof_hashes(proof)?;

    // RFC 9162 §2.1.4.2 step 2: if size1 is a power of two, the old root is
    // the first node of the path.
    let mut path = proof.iter();
    let seed = if size1.is_power_of_two() {
        first
    } else {
        match path.next() {
            Some(h) => *h,
            None => {
                return Err(ProofError::ProofLength {
                    got: proof.len(),
                    expected,
                });
            }
        }
    };
    // Steps 3–4.
    let mut fnode = size1 - 1;
    let mut snode = size2 - 1;
    while fnode & 1 == 1 {
        fnode >>= 1;
        snode >>= 1;
    }
    // Step 5.
    let mut fr = seed;
    let mut sr = seed;
    // Step 6.
    for c in path {
        if snode == 0 {
            return Err(ProofError::ProofLength {
                got: proof.len(),
                expected,
            });
        }
        if fnode & 1 == 1 || fnode == snode {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if fnode & 1 == 0 {
                while fnode & 1 == 0 && fnode != 0 {
                    fnode >>= 1;
                    snode >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    // Step 7.
    if snode != 0 {
        return Err(ProofError::ProofLength {
            got: proof.len(),
            expected,
        });
    }
    if fr != first {
        return Err(ProofError::FirstRootMismatch);
    }
    if sr != second {
        return Err(ProofError::SecondRootMismatch);
    }
    Ok(())
}
