//! Target (6) of docs/performance.md: an inclusion proof generated and
//! verified in a 1 000 000-leaf `herald_merkle::Tree` against the
//! same in a 1 000-leaf tree (leaf indices spread over the whole tree); and
//! the same through the audit log itself (`auditlog::Log`, a file log): the
//! proof object `herald log prove` writes (leaf read from the file, tree
//! head signed) and `InclusionProof::verify` under a pinned log key, as
//! `herald log verify-proof` checks it.

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use herald_core::SigningKey;
use herald_merkle::{Tree, leaf_hash, verify_inclusion};
use herald_verify::{Keyring, Leaf, Log, Provenance};

fn indices(n: u64) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        })
        .collect()
}

fn merkle(c: &mut Criterion) {
    let mut g = c.benchmark_group("merkle");
    for (n, label) in [(1_000u64, "1k"), (1_000_000, "1M")] {
        let tree = Tree::from_leaf_hashes((0..n).map(|i| leaf_hash(&i.to_be_bytes())));
        let root = tree.root();
        let idx = indices(n);
        let proofs: Vec<_> = idx
            .iter()
            .map(|&i| tree.inclusion_proof(i, n).unwrap())
            .collect();
        let mut k = 0usize;
        g.bench_function(format!("inclusion_{label}"), |b| {
            b.iter(|| {
                k = (k + 1) % idx.len();
                let i = idx[k];
                let proof = tree.inclusion_proof(black_box(i), n).unwrap();
                let leaf = tree.leaf(i).unwrap();
                assert!(verify_inclusion(&leaf, i, n, &proof, &root).is_ok());
            })
        });
        g.bench_function(format!("inclusion_gen_{label}"), |b| {
            b.iter(|| {
                k = (k + 1) % idx.len();
                black_box(tree.inclusion_proof(black_box(idx[k]), n).unwrap())
            })
        });
        g.bench_function(format!("inclusion_verify_{label}"), |b| {
            b.iter(|| {
                k = (k + 1) % idx.len();
                let i = idx[k];
                let leaf = tree.leaf(i).unwrap();
                verify_inclusion(&leaf, black_box(i), n, &proofs[k], &root).is_ok()
            })
        });
    }
    g.finish();
}

/// The proof objects of a real audit log: `Log::inclusion_proof` (index
/// lookup by id, path, leaf read back from the log file, tree head signed)
/// then `InclusionProof::verify` (tree-head signature under the pinned log
/// key, leaf hash, path).
fn audit_log(c: &mut Criterion) {
    let key = SigningKey::from_seed(&[7; 32]);
    let mut ring = Keyring::new();
    ring.insert(key.public_key(), Provenance::Pinned);
    let mut g = c.benchmark_group("auditlog");
    for (n, label) in [(1_000u64, "1k"), (1_000_000, "1M")] {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(&dir.path().join("log"), &key.public_key(), None).unwrap();
        let id = |i: u64| {
            let mut id = [0u8; 32];
            id[..8].copy_from_slice(&i.to_be_bytes());
            id
        };
        let leaves: Vec<Leaf> = (0..n)
            .map(|i| Leaf::from_parts(id(i), i.checked_sub(1).map(id), id(0), 1_000_000 + i, None))
            .collect();
        for chunk in leaves.chunks(100_000) {
            log.append_leaves(chunk).unwrap();
        }
        drop(leaves);
        let ids: Vec<[u8; 32]> = indices(n).into_iter().map(id).collect();
        let mut k = 0usize;
        g.bench_function(format!("inclusion_{label}"), |b| {
            b.iter(|| {
                k = (k + 1) % ids.len();
                let proof = log
                    .inclusion_proof(&key, black_box(&ids[k]), None, 2_000_000)
                    .unwrap();
                assert!(proof.verify(&ring).is_ok());
            })
        });
    }
    g.finish();
}

criterion_group!(benches, merkle, audit_log);
criterion_main!(benches);
