//! [`Tree`]: the append-only, in-memory tree that produces roots and
//! proofs for any past size (RFC 9162 §2.1.3.1, §2.1.4.1).

use alloc::vec::Vec;

use super::Hash;
use super::hash::{empty_root, node_hash};
use super::subtrees::{self, Subtrees};
use super::verify::{ProofError, usize_from};

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
        subtrees::root_at(self, size)
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves,
    /// `PATH(index, D[0:size])`, leaf-side hash first (RFC 9162 §2.1.3.1;
    /// PROFILE P9).
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, ProofError> {
        self.check_size(size)?;
        subtrees::inclusion_proof(self, index, size)
    }

    /// The consistency proof between sizes `size1` and `size2`,
    /// `PROOF(size1, D[0:size2])` (RFC 9162 §2.1.4.1; PROFILE P9: needs
    /// `0 < size1 ≤ size2`; equal sizes give an empty proof).
    pub fn consistency_proof(&self, size1: u64, size2: u64) -> Result<Vec<Hash>, ProofError> {
        self.check_size(size2)?;
        subtrees::consistency_proof(self, size1, size2)
    }

    fn check_size(&self, size: u64) -> Result<(), ProofError> {
        let len = self.len();
        if size > len {
            Err(ProofError::SizeBeyondTree { size, len })
        } else {
            Ok(())
        }
    }
}

impl Subtrees for Tree {
    type Error = ProofError;

    fn subtree(&self, level: u32, index: u64) -> Result<Hash, ProofError> {
        self.node(level, index).ok_or(ProofError::SizeBeyondTree {
            size: index
                .saturating_add(1)
                .checked_shl(level)
                .unwrap_or(u64::MAX),
            len: self.len(),
        })
    }
}
