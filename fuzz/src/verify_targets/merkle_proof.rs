//! The `merkle_proof` target: RFC 9162 proofs (P9).

use super::*;

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    for (dst, src) in b.iter_mut().zip(data.iter().skip(at)) {
        *dst = *src;
    }
    u64::from_le_bytes(b)
}

/// `merkle_proof`: RFC 9162 proofs from arbitrary bytes (P9).
///
/// Layout: byte 0 = mode, bytes 1..9 = `a`, 9..17 = `b` (u64 LE), the rest
/// = hashes. Mode bit 0: consistency (else inclusion); bit 1: each hash is
/// prefixed by a length byte (`len % 40`, to reach non-32-byte hashes),
/// else 32-byte chunks; bit 2: sizes reduced to 0..1024; bit 3: also build
/// a small tree from `a`, `b` and check that its own proofs verify and that
/// a flipped bit does not.
///
/// For the arbitrary proof: the call must not panic, and whenever it
/// verifies, the proof has the length the sizes determine; a root
/// recomputed from an inclusion proof verifies against itself.
pub fn merkle_proof(data: &[u8]) {
    let mode = data.first().copied().unwrap_or(0);
    let (mut a, mut b) = (u64_at(data, 1), u64_at(data, 9));
    if mode & 4 != 0 {
        a %= 1024;
        b %= 1024;
    }
    let rest = data.get(17..).unwrap_or(&[]);
    let mut hashes: Vec<&[u8]> = Vec::new();
    if mode & 2 != 0 {
        let mut at = 0;
        while let Some(&len) = rest.get(at) {
            let len = usize::from(len % 40);
            let end = (at + 1 + len).min(rest.len());
            hashes.push(rest.get(at + 1..end).unwrap_or(&[]));
            at = end;
        }
    } else {
        hashes.extend(rest.chunks(32));
    }
    let first = hashes.first().copied().unwrap_or(&[]);
    let second = hashes.get(1).copied().unwrap_or(&[]);
    let proof = hashes.get(2..).unwrap_or(&[]);
    if mode & 1 == 0 {
        if verify_inclusion(first, a, b, proof, second).is_ok() {
            assert_eq!(inclusion_proof_len(a, b).ok(), Some(proof.len()));
        }
        if let Ok(root) = merkle::root_from_inclusion_proof(first, a, b, proof) {
            assert_eq!(verify_inclusion(first, a, b, proof, &root), Ok(()));
        }
    } else if verify_consistency(a, b, proof, first, second).is_ok() {
        assert_eq!(consistency_proof_len(a, b).ok(), Some(proof.len()));
    }
    if mode & 8 != 0 {
        own_tree(a, b, mode, rest);
    }
}

/// Proofs from a small tree verify; with one bit flipped they do not.
fn own_tree(a: u64, b: u64, mode: u8, salt: &[u8]) {
    let n = a % 300 + 1;
    let leaves: Vec<Hash> = (0..n)
        .map(|i| {
            let mut leaf = i.to_le_bytes().to_vec();
            leaf.extend_from_slice(salt.get(..salt.len().min(8)).unwrap_or(&[]));
            leaf_hash(&leaf)
        })
        .collect();
    let tree = Tree::from_leaf_hashes(leaves.iter().copied());
    assert_eq!(tree.len(), n);
    assert_eq!(
        Tree::from_levels(tree.levels().to_vec()).as_ref(),
        Ok(&tree)
    );
    let size = b % n + 1;
    let index = (b >> 16) % size;
    let size1 = (a >> 16) % size + 1;
    let root = tree.root_at(size);
    let prefix = usize::try_from(size).ok().and_then(|s| leaves.get(..s));
    assert_eq!(root.ok(), prefix.map(root_from_leaves));
    let roots = (tree.root_at(size), tree.root_at(size1));
    assert!(
        roots.0.is_ok() && roots.1.is_ok(),
        "roots exist up to the tree's size"
    );
    let (Ok(root), Ok(root1)) = roots else { return };
    let leaf = usize::try_from(index).ok().and_then(|i| leaves.get(i));
    let path = tree.inclusion_proof(index, size);
    assert!(
        leaf.is_some() && path.is_ok(),
        "proofs exist up to the tree's size"
    );
    let (Some(leaf), Ok(path)) = (leaf, path) else {
        return;
    };
    assert_eq!(verify_inclusion(leaf, index, size, &path, &root), Ok(()));
    let consistency = tree.consistency_proof(size1, size);
    assert!(consistency.is_ok());
    let Ok(consistency) = consistency else { return };
    assert_eq!(
        verify_consistency(size1, size, &consistency, &root1, &root),
        Ok(())
    );

    // One flipped bit, chosen by `mode`, breaks each proof.
    let bit = usize::from(mode >> 4);
    let flip = |h: &Hash| {
        let mut h = *h;
        if let Some(byte) = h.get_mut(bit % 32) {
            *byte ^= 1 << (bit % 8);
        }
        h
    };
    assert!(verify_inclusion(&flip(leaf), index, size, &path, &root).is_err());
    assert!(verify_inclusion(leaf, index, size, &path, &flip(&root)).is_err());
    if let Some(p) = path.first() {
        let mut bad = path.clone();
        bad[0] = flip(p);
        assert!(verify_inclusion(leaf, index, size, &bad, &root).is_err());
    }
    assert!(verify_consistency(size1, size, &consistency, &root1, &flip(&root)).is_err());
    if size1 != size {
        assert!(verify_consistency(size1, size, &consistency, &flip(&root1), &root).is_err());
    }
    if let Some(p) = consistency.last() {
        let mut bad = consistency.clone();
        let last = bad.len() - 1;
        bad[last] = flip(p);
        assert!(verify_consistency(size1, size, &bad, &root1, &root).is_err());
    }
}
