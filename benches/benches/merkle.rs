//! Target (6) of docs/performance.md: an inclusion proof generated and
//! verified in a 1 000 000-leaf `herald_verify::merkle::Tree` against the
//! same in a 1 000-leaf tree (leaf indices spread over the whole tree).

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use herald_verify::merkle::{Tree, leaf_hash, verify_inclusion};

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

criterion_group!(benches, merkle);
criterion_main!(benches);
