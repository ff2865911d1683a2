//! RFC 9162 Merkle tree layer of the audit log (PROFILE P9).
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

use alloc::vec::Vec;
use core::fmt;

use sha2::{Digest, Sha256};

/// A SHA-256 hash: a leaf hash, an interior node hash or a tree root
/// (RFC 9162 §2.1.1; PROFILE P9: hashes are exactly 32 bytes).
pub type Hash = [u8; 32];

/// Length in bytes of every hash in the tree (PROFILE P9).
pub const HASH_LEN: usize = 32;

#[cfg(test)]
std::thread_local! {
    /// Number of SHA-256 computations done by this thread (unit tests only).
    static HASH_COUNT: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

#[cfg(test)]
fn count_hash() {
    HASH_COUNT.with(|c| c.set(c.get().saturating_add(1)));
}

#[cfg(not(test))]
#[inline(always)]
fn count_hash() {}

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
    /// A [`Tree`] was asked about a size larger than the number of leaves it
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
    /// Node storage handed to [`Tree::from_levels`] has the wrong number of
    /// levels.
    LevelCount {
        /// Number of levels found.
        got: usize,
        /// Number of levels expected for that many leaves.
        expected: usize,
    },
    /// A level of the node storage handed to [`Tree::from_levels`] has the
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
fn to_hash(bytes: &[u8], role: HashRole) -> Result<Hash, ProofError> {
    Hash::try_from(bytes).map_err(|_| ProofError::HashLength {
        role,
        len: bytes.len(),
    })
}

/// Read every proof hash, rejecting any that is not 32 bytes.
fn proof_hashes(proof: &[impl AsRef<[u8]>]) -> Result<Vec<Hash>, ProofError> {
    proof
        .iter()
        .enumerate()
        .map(|(i, p)| to_hash(p.as_ref(), HashRole::ProofHash(i)))
        .collect()
}

/// Largest power of two strictly smaller than `n`, for `n ≥ 2` (the split
/// point `k` of RFC 9162 §2.1.1).
fn split_point(n: u64) -> u64 {
    debug_assert!(n >= 2);
    let bits = u64::BITS - n.saturating_sub(1).leading_zeros();
    1u64 << bits.saturating_sub(1)
}

/// Number of hashes in the inclusion proof of `index` in a tree of `size`
/// leaves (`index < size`), as `(inner, border)`: `inner` hashes below the
/// level where the paths to `index` and to the last leaf meet, `border`
/// above it (RFC 9162 §2.1.3.2, same count as transparency-dev/merkle).
fn inclusion_shape(index: u64, size: u64) -> (u32, u32) {
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
fn usize_from(n: u32) -> usize {
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

/// An append-only RFC 9162 Merkle tree held in memory (RFC 9162 §2.1;
/// PROFILE P9).
///
/// Storage: `levels()[0]` holds the leaf hashes in order, and `levels()[l]`
/// holds the roots of the complete subtrees of `2^l` leaves, so that node
/// `i` of level `l` covers leaves `[i·2^l, (i+1)·2^l)`. Level `l` therefore
/// has exactly `len() >> l` nodes. Appending hashes amortised one node per
/// leaf. The root of any past size, and every inclusion and consistency
/// proof up to the current size, is assembled from these nodes in O(log n)
/// lookups: the subtrees a past tree is made of are complete, and so
/// already stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    levels: Vec<Vec<Hash>>,
}

impl Tree {
    /// An empty tree (RFC 9162 §2.1.1; PROFILE P9).
    #[must_use]
    pub fn new() -> Self {
        Tree { levels: Vec::new() }
    }

    /// Build a tree by appending every leaf hash in order (RFC 9162 §2.1.1;
    /// PROFILE P9).
    #[must_use]
    pub fn from_leaf_hashes<I: IntoIterator<Item = Hash>>(leaves: I) -> Self {
        let mut tree = Tree::new();
        for leaf in leaves {
            tree.push(leaf);
        }
        tree
    }

    /// Rebuild a tree from node storage previously taken from
    /// [`Tree::levels`] (RFC 9162 §2.1; PROFILE P9), for a log that persists
    /// its nodes.
    ///
    /// Only the shape is checked (level `l` must hold `levels[0].len() >> l`
    /// hashes, with no empty level on top); the hashes themselves are
    /// trusted, not recomputed. Use [`Tree::from_leaf_hashes`] to rebuild
    /// from leaves alone when the node storage is not trusted.
    #[doc(hidden)]
    pub fn from_levels(levels: Vec<Vec<Hash>>) -> Result<Self, ProofError> {
        let leaves = levels.first().map_or(0, Vec::len);
        // Level l is stored iff it has at least one node: l < bit length.
        let needed = usize_from(usize::BITS - leaves.leading_zeros());
        if levels.len() != needed {
            return Err(ProofError::LevelCount {
                got: levels.len(),
                expected: needed,
            });
        }
        for (level, nodes) in levels.iter().enumerate() {
            let expected = u32::try_from(level)
                .ok()
                .and_then(|l| leaves.checked_shr(l))
                .unwrap_or(0);
            if nodes.len() != expected {
                return Err(ProofError::MalformedLevels {
                    level,
                    got: nodes.len(),
                    expected,
                });
            }
        }
        Ok(Tree { levels })
    }

    /// Append a leaf hash and return its index (RFC 9162 §2.1.1; PROFILE P9).
    ///
    /// Stores every subtree this leaf completes: amortised one node hash per
    /// leaf.
    pub fn push(&mut self, leaf_hash: Hash) -> u64 {
        let index = self.len();
        let mut level = 0usize;
        let mut node = leaf_hash;
        loop {
            if self.levels.len() <= level {
                self.levels.push(Vec::new());
            }
            let Some(nodes) = self.levels.get_mut(level) else {
                break;
            };
            nodes.push(node);
            // An even count means the node just stored is a right child: its
            // parent subtree is now complete.
            if nodes.len() % 2 == 1 {
                break;
            }
            let Some(left) = nodes.len().checked_sub(2).and_then(|i| nodes.get(i)) else {
                break;
            };
            node = node_hash(left, &node);
            level += 1;
        }
        index
    }

    /// Number of leaves (PROFILE P9).
    #[must_use]
    pub fn len(&self) -> u64 {
        self.levels
            .first()
            .map_or(0, |leaves| u64::try_from(leaves.len()).unwrap_or(u64::MAX))
    }

    /// Whether the tree has no leaves.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The node storage, level by level (level 0 = leaf hashes; see
    /// [`Tree`]), for persisting; rebuild with [`Tree::from_levels`]
    /// (RFC 9162 §2.1; PROFILE P9).
    #[must_use]
    pub fn levels(&self) -> &[Vec<Hash>] {
        &self.levels
    }

    /// The root of the complete subtree of `2^level` leaves starting at leaf
    /// `index · 2^level`, if that subtree is complete (RFC 9162 §2.1;
    /// PROFILE P9).
    #[must_use]
    pub fn node(&self, level: u32, index: u64) -> Option<Hash> {
        let level = usize::try_from(level).ok()?;
        let index = usize::try_from(index).ok()?;
        self.levels.get(level)?.get(index).copied()
    }

    /// Leaf hash number `index` (PROFILE P9).
    #[must_use]
    pub fn leaf(&self, index: u64) -> Option<Hash> {
        self.node(0, index)
    }

    /// The current root `MTH(D[len])` (RFC 9162 §2.1.1; PROFILE P9).
    #[must_use]
    pub fn root(&self) -> Hash {
        // The current size is never beyond the tree; fall back to the empty
        // root only on an impossible error.
        self.root_at(self.len()).unwrap_or_else(|_| empty_root())
    }

    /// The root the tree had at `size` leaves, `MTH(D[0:size])` (RFC 9162
    /// §2.1.1; PROFILE P9). Size 0 gives [`empty_root`].
    pub fn root_at(&self, size: u64) -> Result<Hash, ProofError> {
        self.check_size(size)?;
        if size == 0 {
            return Ok(empty_root());
        }
        self.range_hash(0, size)
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves,
    /// `PATH(index, D[0:size])`, leaf-side hash first (RFC 9162 §2.1.3.1;
    /// PROFILE P9).
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, ProofError> {
        self.check_size(size)?;
        if index >= size {
            return Err(ProofError::IndexOutOfRange { index, size });
        }
        // Bottom-up, as transparency-dev/merkle's `proof.Inclusion`: below
        // the level `inner` where the paths to `index` and to the last leaf
        // meet, the sibling of each node of the path (a stored node, or at
        // most once the right border's partial subtree `[start, size)`);
        // above it, the left siblings only. Every stored node's position
        // follows from `index` and `size` alone, so the loads are
        // independent of each other and of the hashing.
        let (inner, border) = inclusion_shape(index, size);
        let mut path = Vec::with_capacity(usize_from(inner.saturating_add(border)));
        for level in 0..inner {
            let sibling = (index >> level) ^ 1;
            let start = sibling << level;
            let end = (sibling + 1) << level;
            path.push(if end <= size {
                self.stored(level, sibling, size)?
            } else {
                self.range_hash(start, size)?
            });
        }
        for level in inner..u64::BITS {
            let at = index.checked_shr(level).unwrap_or(0);
            if at & 1 == 1 {
                path.push(self.stored(level, at ^ 1, size)?);
            }
        }
        Ok(path)
    }

    /// Stored node `index` of `level`, or the error of a tree shorter than
    /// `size`.
    fn stored(&self, level: u32, index: u64, size: u64) -> Result<Hash, ProofError> {
        self.node(level, index).ok_or(ProofError::SizeBeyondTree {
            size,
            len: self.len(),
        })
    }

    /// The consistency proof between sizes `size1` and `size2`,
    /// `PROOF(size1, D[0:size2])` (RFC 9162 §2.1.4.1; PROFILE P9: needs
    /// `0 < size1 ≤ size2`; equal sizes give an empty proof).
    pub fn consistency_proof(&self, size1: u64, size2: u64) -> Result<Vec<Hash>, ProofError> {
        self.check_size(size2)?;
        if size1 == 0 {
            return Err(ProofError::ZeroFirstSize);
        }
        if size1 > size2 {
            return Err(ProofError::SizesReversed { size1, size2 });
        }
        // SUBPROOF(m, D[lo:hi], b), unrolled; `m` counts leaves from `lo`.
        let mut lo = 0u64;
        let mut hi = size2;
        let mut m = size1;
        let mut whole_old_tree = true;
        let mut top_down = Vec::new();
        let mut head = None;
        loop {
            let n = hi - lo;
            if m == n {
                if !whole_old_tree {
                    head = Some(self.range_hash(lo, hi)?);
                }
                break;
            }
            let k = split_point(n);
            let mid = lo + k;
            if m <= k {
                top_down.push(self.range_hash(mid, hi)?);
                hi = mid;
            } else {
                top_down.push(self.range_hash(lo, mid)?);
                lo = mid;
                m -= k;
                whole_old_tree = false;
            }
        }
        let mut proof = Vec::with_capacity(top_down.len() + 1);
        proof.extend(head);
        proof.extend(top_down.into_iter().rev());
        Ok(proof)
    }

    fn check_size(&self, size: u64) -> Result<(), ProofError> {
        let len = self.len();
        if size > len {
            Err(ProofError::SizeBeyondTree { size, len })
        } else {
            Ok(())
        }
    }

    /// `MTH(D[lo:hi])` for a non-empty subtree met while splitting per RFC
    /// 9162 §2.1.1: `lo` is a multiple of the largest power of two not above
    /// `hi - lo` (or 0). Such a range is a run of complete subtrees of
    /// decreasing size, one per set bit of `hi - lo`; fold them right to
    /// left. At most 64 lookups and 63 hashes.
    fn range_hash(&self, lo: u64, hi: u64) -> Result<Hash, ProofError> {
        let width = hi.saturating_sub(lo);
        let missing = ProofError::SizeBeyondTree {
            size: hi,
            len: self.len(),
        };
        let mut acc: Option<Hash> = None;
        for level in 0..u64::BITS {
            if (width >> level) & 1 == 0 {
                continue;
            }
            // The subtree for this bit starts after the larger ones.
            let above = width
                .checked_shr(level + 1)
                .and_then(|w| w.checked_shl(level + 1))
                .unwrap_or(0);
            let start = lo + above;
            if start.trailing_zeros() < level {
                return Err(missing);
            }
            let node = self.node(level, start >> level).ok_or(missing)?;
            acc = Some(match acc {
                None => node,
                Some(right) => node_hash(&node, &right),
            });
        }
        acc.ok_or(missing)
    }
}

#[cfg(test)]
mod tests {
    // Tests unwrap: a failure is the assertion.
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use alloc::vec;

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
