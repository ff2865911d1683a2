//! Roots and proofs assembled from complete subtrees (RFC 9162 §2.1.1,
//! §2.1.3.1, §2.1.4.1), over any store of them: the in-memory
//! [`Tree`](super::Tree), or a C2SP tlog-tiles reader that fetches the
//! tiles holding them.
//!
//! The subtrees a past tree is made of are complete, so every root and
//! proof is a fold of O(log n) complete-subtree roots: node `i` of level
//! `l` covers leaves `[i·2^l, (i+1)·2^l)`.

use alloc::vec::Vec;

use super::Hash;
use super::hash::{empty_root, node_hash};
use super::verify::{ProofError, inclusion_shape, split_point, usize_from};

/// A store of complete-subtree roots (RFC 9162 §2.1; PROFILE P9).
pub trait Subtrees {
    /// What a failed lookup reports; a proof-shape error converts into it.
    type Error: From<ProofError>;

    /// The root of the complete subtree of `2^level` leaves starting at leaf
    /// `index · 2^level`.
    fn subtree(&self, level: u32, index: u64) -> Result<Hash, Self::Error>;
}

/// `MTH(D[0:size])` (RFC 9162 §2.1.1); size 0 gives the empty root. The
/// caller checks that the store holds `size` leaves.
pub fn root_at<S: Subtrees + ?Sized>(store: &S, size: u64) -> Result<Hash, S::Error> {
    if size == 0 {
        return Ok(empty_root());
    }
    range_hash(store, 0, size)
}

/// `PATH(index, D[0:size])`, leaf-side hash first (RFC 9162 §2.1.3.1).
pub fn inclusion_proof<S: Subtrees + ?Sized>(
    store: &S,
    index: u64,
    size: u64,
) -> Result<Vec<Hash>, S::Error> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size }.into());
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
            store.subtree(level, sibling)?
        } else {
            range_hash(store, start, size)?
        });
    }
    for level in inner..u64::BITS {
        let at = index.checked_shr(level).unwrap_or(0);
        if at & 1 == 1 {
            path.push(store.subtree(level, at ^ 1)?);
        }
    }
    Ok(path)
}

/// `PROOF(size1, D[0:size2])` (RFC 9162 §2.1.4.1; PROFILE P9: needs
/// `0 < size1 ≤ size2`; equal sizes give an empty proof).
pub fn consistency_proof<S: Subtrees + ?Sized>(
    store: &S,
    size1: u64,
    size2: u64,
) -> Result<Vec<Hash>, S::Error> {
    if size1 == 0 {
        return Err(ProofError::ZeroFirstSize.into());
    }
    if size1 > size2 {
        return Err(ProofError::SizesReversed { size1, size2 }.into());
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
                head = Some(range_hash(store, lo, hi)?);
            }
            break;
        }
        let k = split_point(n);
        let mid = lo + k;
        if m <= k {
            top_down.push(range_hash(store, mid, hi)?);
            hi = mid;
        } else {
            top_down.push(range_hash(store, lo, mid)?);
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

/// `MTH(D[lo:hi])` for a non-empty subtree met while splitting per RFC
/// 9162 §2.1.1: `lo` is a multiple of the largest power of two not above
/// `hi - lo` (or 0). Such a range is a run of complete subtrees of
/// decreasing size, one per set bit of `hi - lo`; fold them right to
/// left. At most 64 lookups and 63 hashes.
fn range_hash<S: Subtrees + ?Sized>(store: &S, lo: u64, hi: u64) -> Result<Hash, S::Error> {
    let width = hi.saturating_sub(lo);
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
            return Err(ProofError::SizeBeyondTree { size: hi, len: lo }.into());
        }
        let node = store.subtree(level, start >> level)?;
        acc = Some(match acc {
            None => node,
            Some(right) => node_hash(&node, &right),
        });
    }
    acc.ok_or_else(|| ProofError::SizeBeyondTree { size: hi, len: lo }.into())
}
