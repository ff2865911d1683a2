//! RFC 9162 Merkle tree vectors (vectors/external/README.md §5) against
//! `herald_merkle`, under the PROFILE P9 policies.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use herald_merkle::{
    Hash, ProofError, Tree, consistency_proof_len, empty_root, inclusion_proof_len, leaf_hash,
    node_hash, root_from_leaves, verify_consistency, verify_inclusion,
};
use serde_json::Value;

const EXTERNAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/external");

fn external(rel: &str) -> PathBuf {
    Path::new(EXTERNAL).join(rel)
}

/// Every `.json` file under `dir`, recursively, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Standard base64 with padding (README §5).
fn b64(v: &Value) -> Vec<u8> {
    BASE64.decode(v.as_str().unwrap().as_bytes()).unwrap()
}

fn b64_32(v: &Value) -> Hash {
    b64(v).try_into().unwrap()
}

/// `null` means an empty proof (README §5).
fn b64_list(v: &Value) -> Vec<Vec<u8>> {
    match v {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().map(b64).collect(),
        other => panic!("not a proof: {other}"),
    }
}

fn u64_of(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// The one transparency-dev file whose expectation P9 flips: it expects
/// success for equal sizes with 12-byte roots ("don't care 2"), but P9 says
/// hashes are exactly 32 bytes, so our verifier rejects it (README §5 item 2:
/// a policy difference, not a bug).
const TD_FLIPPED: &str = "consistency/additional/sizes-are-equal-one-and-proof-is-empty.json";

#[test]
fn transparency_dev_golden_probes() {
    let root = external("merkle-transparency-dev");
    let mut files = 0;
    let mut want_ok = [0usize; 2]; // [inclusion, consistency] files with wantErr false
    let mut accepted = [0usize; 2];
    let mut exceptions = Vec::new();
    for (kind, sub) in ["inclusion", "consistency"].iter().enumerate() {
        for path in json_files(&root.join(sub)) {
            files += 1;
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let v = read_json(&path);
            let want_err = v["wantErr"].as_bool().unwrap();
            let proof = b64_list(&v["proof"]);
            let got = if kind == 0 {
                verify_inclusion(
                    &b64(&v["leafHash"]),
                    u64_of(&v["leafIdx"]),
                    u64_of(&v["treeSize"]),
                    &proof,
                    &b64(&v["root"]),
                )
            } else {
                verify_consistency(
                    u64_of(&v["size1"]),
                    u64_of(&v["size2"]),
                    &proof,
                    &b64(&v["root1"]),
                    &b64(&v["root2"]),
                )
            };
            if !want_err {
                want_ok[kind] += 1;
            }
            if got.is_ok() {
                accepted[kind] += 1;
            }
            if rel == TD_FLIPPED {
                // P9 flip: 12-byte roots are rejected.
                assert!(!want_err, "{rel}: upstream expectation changed");
                assert!(
                    matches!(got, Err(ProofError::HashLength { len: 12, .. })),
                    "{rel}: {got:?}"
                );
                exceptions.push(rel);
                continue;
            }
            assert_eq!(
                got.is_err(),
                want_err,
                "{rel}: wantErr {want_err}, got {got:?}"
            );
        }
    }
    assert_eq!(files, 196);
    assert_eq!(want_ok, [6, 6]);
    // Every wantErr=false file is accepted except the one flipped file.
    assert_eq!(accepted, [6, 5]);
    assert_eq!(exceptions, [TD_FLIPPED]);
}

fn cctv(name: &str) -> Vec<Value> {
    match read_json(&external("merkle-cctv-rgdd").join(name)) {
        Value::Array(items) => items,
        other => panic!("{name}: not an array: {other}"),
    }
}

#[test]
fn cctv_tree_heads() {
    let entries = cctv("merkle_tree.json");
    assert_eq!(entries.len(), 16);
    let mut leaves = Vec::new();
    let mut tree = Tree::new();
    let mut roots = vec![empty_root()];
    for (i, e) in entries.iter().enumerate() {
        let data = e["leaf_data"].as_str().unwrap();
        assert_eq!(data.len(), 1);
        let lh = leaf_hash(data.as_bytes());
        assert_eq!(lh, b64_32(&e["leaf_hash"]), "leaf {i}");
        leaves.push(lh);
        assert_eq!(tree.push(lh), i as u64);
        let want = b64_32(&e["root_hash"]);
        assert_eq!(root_from_leaves(&leaves), want, "MTH size {}", i + 1);
        assert_eq!(tree.root(), want, "Tree size {}", i + 1);
        roots.push(want);
        // Every past root is still available from the incremental tree.
        for (k, r) in roots.iter().enumerate() {
            assert_eq!(tree.root_at(k as u64).unwrap(), *r, "root_at({k})");
        }
    }
    assert_eq!(Tree::from_leaf_hashes(leaves.iter().copied()), tree);
    assert!(tree.root_at(17).is_err());
}

/// The 16-leaf CCTV tree ("a" … "p").
fn cctv_tree() -> Tree {
    Tree::from_leaf_hashes((b'a'..=b'p').map(|c| leaf_hash(&[c])))
}

#[test]
fn cctv_inclusion() {
    let tree = cctv_tree();
    for (name, valid) in [
        ("inclusion-valid.json", true),
        ("inclusion-invalid.json", false),
    ] {
        let entries = cctv(name);
        assert_eq!(entries.len(), 4, "{name}");
        for e in &entries {
            let index = u64_of(&e["leaf_index"]);
            let size = u64_of(&e["tree_size"]);
            let proof = b64_list(&e["inclusion_path"]);
            let root = b64(&e["root_hash"]);
            let got = verify_inclusion(&b64(&e["leaf_hash"]), index, size, &proof, &root);
            assert_eq!(got.is_ok(), valid, "{name} ({index}, {size}): {got:?}");
            if valid {
                // Our prover produces the same path and root.
                let mine = tree.inclusion_proof(index, size).unwrap();
                assert_eq!(mine.iter().map(|h| h.to_vec()).collect::<Vec<_>>(), proof);
                assert_eq!(tree.root_at(size).unwrap().to_vec(), root);
            }
        }
    }
}

#[test]
fn cctv_consistency() {
    let tree = cctv_tree();
    let valid = cctv("consistency-valid.json");
    assert_eq!(valid.len(), 4);
    let mut flipped = 0;
    for e in &valid {
        let size1 = u64_of(&e["old_size"]);
        let size2 = u64_of(&e["new_size"]);
        let proof = b64_list(&e["consistency_path"]);
        let got = verify_consistency(
            size1,
            size2,
            &proof,
            &b64(&e["old_root"]),
            &b64(&e["new_root"]),
        );
        if size1 == 0 {
            // P9 flip: this set accepts (0, n) with an empty path; P9 (like
            // current transparency-dev/merkle) makes size1 = 0 an error.
            assert_eq!(got, Err(ProofError::ZeroFirstSize), "({size1}, {size2})");
            flipped += 1;
            continue;
        }
        assert_eq!(got, Ok(()), "({size1}, {size2})");
        let mine = tree.consistency_proof(size1, size2).unwrap();
        assert_eq!(mine.iter().map(|h| h.to_vec()).collect::<Vec<_>>(), proof);
    }
    // (0, 0) and (0, 1).
    assert_eq!(flipped, 2);

    let invalid = cctv("consistency-invalid.json");
    assert_eq!(invalid.len(), 16);
    for e in &invalid {
        let size1 = u64_of(&e["old_size"]);
        let size2 = u64_of(&e["new_size"]);
        let proof = b64_list(&e["consistency_path"]);
        let got = verify_consistency(
            size1,
            size2,
            &proof,
            &b64(&e["old_root"]),
            &b64(&e["new_root"]),
        );
        assert!(got.is_err(), "invalid ({size1}, {size2}) accepted");
    }
}

fn leaf_for(i: u64) -> Hash {
    leaf_hash(&i.to_be_bytes())
}

fn ceil_log2(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        (u64::BITS - (n - 1).leading_zeros()) as usize
    }
}

fn flip_each_bit_fails(proof: &[Hash], check: impl Fn(&[Hash]) -> Result<(), ProofError>) {
    for i in 0..proof.len() {
        for bit in [0usize, 7, 100, 255] {
            let mut bad = proof.to_vec();
            bad[i][bit / 8] ^= 1 << (bit % 8);
            assert!(check(&bad).is_err(), "flipped bit {bit} of hash {i}");
        }
    }
}

#[test]
fn cross_check_every_proof_up_to_64() {
    let leaves: Vec<Hash> = (0..64).map(leaf_for).collect();
    let full = Tree::from_leaf_hashes(leaves.iter().copied());
    for size in 1..=64u64 {
        // A tree of exactly this size must agree with the bigger one on all
        // past sizes.
        let tree = Tree::from_leaf_hashes(leaves[..size as usize].iter().copied());
        let root = tree.root();
        assert_eq!(root, root_from_leaves(&leaves[..size as usize]));
        assert_eq!(full.root_at(size).unwrap(), root);
        for index in 0..size {
            let lh = leaves[index as usize];
            let proof = tree.inclusion_proof(index, size).unwrap();
            assert_eq!(proof, full.inclusion_proof(index, size).unwrap());
            assert_eq!(proof.len(), inclusion_proof_len(index, size).unwrap());
            assert!(proof.len() <= ceil_log2(size));
            verify_inclusion(&lh, index, size, &proof, &root).unwrap();
            flip_each_bit_fails(&proof, |p| verify_inclusion(&lh, index, size, p, &root));
            for other in 0..size.min(index + 3) {
                if other != index {
                    assert!(verify_inclusion(&lh, other, size, &proof, &root).is_err());
                }
            }
            assert!(verify_inclusion(&lh, size, size, &proof, &root).is_err());
            // (A proof may also fit a different size with the same root:
            // only the signed (size, root) pair binds the size. Against the
            // bigger tree's root it must fail.)
            if size < 64 {
                let next_root = full.root_at(size + 1).unwrap();
                assert!(verify_inclusion(&lh, index, size + 1, &proof, &next_root).is_err());
            }
        }
        assert!(tree.inclusion_proof(size, size).is_err());

        for size1 in 1..=size {
            let root1 = full.root_at(size1).unwrap();
            let proof = full.consistency_proof(size1, size).unwrap();
            assert_eq!(proof, tree.consistency_proof(size1, size).unwrap());
            assert_eq!(proof.len(), consistency_proof_len(size1, size).unwrap());
            verify_consistency(size1, size, &proof, &root1, &root).unwrap();
            flip_each_bit_fails(&proof, |p| {
                verify_consistency(size1, size, p, &root1, &root)
            });
            // Wrong sizes fail, checked against the true roots of the sizes
            // claimed: the proof only binds sizes through the signed
            // (size, root) pairs, so a wrong size with the old root could
            // still fit the same hash chain.
            let r = |n: u64| full.root_at(n).unwrap();
            if size1 < size {
                assert!(verify_consistency(size1 + 1, size, &proof, &r(size1 + 1), &root).is_err());
                assert!(verify_consistency(size1, size - 1, &proof, &root1, &r(size - 1)).is_err());
                assert!(verify_consistency(size1, size, &proof, &root, &root1).is_err());
            }
            if size < 64 {
                assert!(verify_consistency(size1, size + 1, &proof, &root1, &r(size + 1)).is_err());
            }
            if size1 > 1 {
                assert!(verify_consistency(size1 - 1, size, &proof, &r(size1 - 1), &root).is_err());
            }
            // A truncated or padded proof fails.
            if let Some((_, shorter)) = proof.split_last() {
                assert!(verify_consistency(size1, size, shorter, &root1, &root).is_err());
            }
            let mut longer = proof.clone();
            longer.push(root);
            assert!(verify_consistency(size1, size, &longer, &root1, &root).is_err());
        }
        assert_eq!(
            full.consistency_proof(0, size),
            Err(ProofError::ZeroFirstSize)
        );
        assert_eq!(
            full.consistency_proof(size, size - 1),
            Err(ProofError::SizesReversed {
                size1: size,
                size2: size - 1
            })
        );
    }
    assert!(full.root_at(65).is_err());
    assert!(full.inclusion_proof(0, 65).is_err());
    assert!(full.consistency_proof(1, 65).is_err());
}

#[test]
fn policy_edges() {
    let none: &[Hash] = &[];
    let a = leaf_for(0);
    let b = leaf_for(1);
    let ab = node_hash(&a, &b);
    // size1 = 0 is an error, even (0, 0) with the empty root (P9).
    let e = empty_root();
    assert_eq!(
        verify_consistency(0, 0, none, &e, &e),
        Err(ProofError::ZeroFirstSize)
    );
    assert_eq!(
        verify_consistency(0, 1, none, &e, &a),
        Err(ProofError::ZeroFirstSize)
    );
    // Equal sizes: empty proof and equal roots.
    assert_eq!(verify_consistency(1, 1, none, &a, &a), Ok(()));
    assert_eq!(
        verify_consistency(1, 1, none, &a, &b),
        Err(ProofError::RootMismatch)
    );
    assert_eq!(
        verify_consistency(1, 1, &[b], &a, &a),
        Err(ProofError::ProofLength {
            got: 1,
            expected: 0
        })
    );
    assert_eq!(verify_consistency(1, 2, &[b], &a, &ab), Ok(()));
    // With a power-of-two size1 the old root seeds the path, so a wrong
    // root1 shows as a second-root mismatch.
    assert_eq!(
        verify_consistency(1, 2, &[b], &b, &ab),
        Err(ProofError::SecondRootMismatch)
    );
    let tree = Tree::from_leaf_hashes((0..4).map(leaf_for));
    let proof = tree.consistency_proof(3, 4).unwrap();
    let (r3, r4) = (tree.root_at(3).unwrap(), tree.root());
    assert_eq!(verify_consistency(3, 4, &proof, &r3, &r4), Ok(()));
    assert_eq!(
        verify_consistency(3, 4, &proof, &r4, &r4),
        Err(ProofError::FirstRootMismatch)
    );
    assert_eq!(
        verify_consistency(3, 4, &proof, &r3, &r3),
        Err(ProofError::SecondRootMismatch)
    );
    assert_eq!(
        verify_consistency(1, 2, &[a], &a, &ab),
        Err(ProofError::SecondRootMismatch)
    );
    assert_eq!(
        verify_consistency(2, 1, none, &ab, &a),
        Err(ProofError::SizesReversed { size1: 2, size2: 1 })
    );
    // Index ≥ size.
    assert_eq!(
        verify_inclusion(&a, 7, 7, none, &a)
            .unwrap_err()
            .to_string(),
        "index 7 is not below tree size 7"
    );
    // Wrong proof length and wrong hash length.
    assert_eq!(
        verify_inclusion(&a, 0, 2, none, &ab)
            .unwrap_err()
            .to_string(),
        "proof has 0 hashes, expected 1"
    );
    assert_eq!(
        verify_inclusion(&a[..12], 0, 2, &[b], &ab)
            .unwrap_err()
            .to_string(),
        "leaf hash is 12 bytes, expected 32"
    );
    assert_eq!(
        verify_inclusion(&a, 0, 2, &[&b[..31]], &ab)
            .unwrap_err()
            .to_string(),
        "proof hash 0 is 31 bytes, expected 32"
    );
    assert_eq!(
        verify_inclusion(&a, 0, 2, &[b], &ab[..0])
            .unwrap_err()
            .to_string(),
        "root is 0 bytes, expected 32"
    );
    assert_eq!(
        verify_inclusion(&a, 0, 2, &[a], &ab)
            .unwrap_err()
            .to_string(),
        "root mismatch"
    );
    assert_eq!(verify_inclusion(&b, 1, 2, &[a], &ab), Ok(()));
}

/// The first line after the origin is the size, the next the base64 root
/// (C2SP tlog-checkpoint); signatures are not this module's business.
fn checkpoint_size_root(path: &Path) -> (u64, Hash) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.split('\n');
    let _origin = lines.next().unwrap();
    let size = lines.next().unwrap().parse().unwrap();
    let root = BASE64.decode(lines.next().unwrap().as_bytes()).unwrap();
    (size, root.try_into().unwrap())
}

#[test]
fn tlog_checkpoints_match_entries() {
    let seq = external("tlog-serverless-log/log/seq/00/00/00/00");
    let leaves: Vec<Hash> = (0..15)
        .map(|i| leaf_hash(&fs::read(seq.join(format!("{i:02x}"))).unwrap()))
        .collect();
    let tree = Tree::from_leaf_hashes(leaves.iter().copied());

    // Tessera's level-0 tile of width 15 is the 15 leaf hashes.
    let tile = fs::read(external("tlog-tessera/log/tile/0/000.p/15")).unwrap();
    assert_eq!(tile, leaves.concat());

    let mut checked = 0;
    for log in ["tlog-serverless-log", "tlog-tessera"] {
        for n in 0..=15u64 {
            let (size, root) =
                checkpoint_size_root(&external(&format!("{log}/log/checkpoint.{n}")));
            assert_eq!(size, n, "{log} checkpoint.{n}");
            assert_eq!(
                root,
                root_from_leaves(&leaves[..n as usize]),
                "{log} checkpoint.{n}"
            );
            assert_eq!(root, tree.root_at(n).unwrap(), "{log} checkpoint.{n}");
            checked += 1;
        }
        let (size, root) = checkpoint_size_root(&external(&format!("{log}/log/checkpoint")));
        assert_eq!((size, root), (15, tree.root()));
    }
    assert_eq!(checked, 32);

    // Consistency between every pair of checkpoints verifies.
    for n1 in 1..=15 {
        for n2 in n1..=15 {
            let proof = tree.consistency_proof(n1, n2).unwrap();
            verify_consistency(
                n1,
                n2,
                &proof,
                &tree.root_at(n1).unwrap(),
                &tree.root_at(n2).unwrap(),
            )
            .unwrap();
        }
    }
}
