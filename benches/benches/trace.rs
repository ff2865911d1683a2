//! Target (5) of docs/performance.md: the origin signatures of 10 000
//! envelopes (100 traces, 16 signers) verified with
//! `herald_verify::verify_prepared` (the cofactored batch equation of P5
//! revision 2, every core) against sequential `verify_strict`; the parts
//! that bound it (preparing: byte checks and the challenge hash; the batch
//! equation per signature; single verification), and the full `audit`, with
//! its signatures in batches on every core and one envelope after the other
//! (`audit_sequential`).

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ed25519_dalek::{Signature, VerifyingKey};
use herald_benches::{OwnedItem, TraceSet};
use herald_core::SysRng;
use herald_core::{EnvelopeRef, Prepared, PublicKey, verify_batch};
use herald_verify::{
    AuditOptions, BatchOptions, Input, audit, internal::audit_sequential, verify_prepared,
    verify_prepared_with,
};

const N: usize = 10_000;

fn trace(c: &mut Criterion) {
    let set = TraceSet::new(N, 100, 16);
    let owned: Vec<OwnedItem> = set.origin_items();
    let prepared: Vec<Prepared> = owned.iter().map(|o| o.prepared().unwrap()).collect();
    let dalek: Vec<(VerifyingKey, Signature, &[u8])> =
        owned.iter().map(|o| o.dalek().unwrap()).collect();
    let herald_keys: Vec<PublicKey> = owned
        .iter()
        .map(|o| PublicKey::from_bytes(&o.key).unwrap())
        .collect();
    assert!(verify_prepared(&prepared).iter().all(|&v| v));
    let keyring = set.keyring();
    let inputs = vec![Input {
        name: "set".into(),
        bytes: set.sequence(),
    }];
    let audit_opts = AuditOptions::default();
    assert!(audit(&inputs, &keyring, &audit_opts).all_valid());
    assert_eq!(
        audit(&inputs, &keyring, &audit_opts),
        audit_sequential(&inputs, &keyring, &audit_opts)
    );

    let mut g = c.benchmark_group("trace_10k");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("seq_verify_strict", |b| {
        b.iter(|| {
            dalek
                .iter()
                .filter(|(k, s, m)| k.verify_strict(black_box(m), s).is_ok())
                .count()
        })
    });
    g.bench_function("seq_herald_decode_verify", |b| {
        b.iter(|| {
            set.envelopes
                .iter()
                .zip(&herald_keys)
                .filter(|(e, key)| {
                    let v = EnvelopeRef::decode(e.as_bytes()).unwrap();
                    let body = v.body(0).unwrap();
                    let sig = v.signatures().next().unwrap().unwrap();
                    key.verify_parts(sig.sig, |feed| {
                        feed(v.kind().origin_tag());
                        body.feed(feed);
                    })
                    .is_ok()
                })
                .count()
        })
    });
    g.bench_function("seq_prepare", |b| {
        b.iter(|| owned.iter().filter_map(|o| black_box(o).prepared()).count())
    });
    g.bench_function("verify_all", |b| {
        b.iter(|| verify_prepared(black_box(&prepared)))
    });
    for (name, opts) in [
        (
            "verify_all_1thread",
            BatchOptions {
                chunk: BatchOptions::DEFAULT_CHUNK,
                threads: 1,
            },
        ),
        (
            "verify_all_chunk64",
            BatchOptions {
                chunk: 64,
                threads: 0,
            },
        ),
        (
            "verify_all_chunk1024",
            BatchOptions {
                chunk: 1024,
                threads: 0,
            },
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| verify_prepared_with(black_box(&prepared), &opts))
        });
    }
    g.bench_function("audit", |b| {
        b.iter(|| audit(black_box(&inputs), &keyring, &audit_opts))
    });
    g.bench_function("audit_sequential", |b| {
        b.iter(|| audit_sequential(black_box(&inputs), &keyring, &audit_opts))
    });
    g.finish();

    // What bounds the batch: its per-signature cost against one
    // verify_strict, on one thread.
    let mut g = c.benchmark_group("ed25519_parts");
    let (vk, sig, msg) = dalek[7];
    let one = prepared[7];
    g.bench_function("verify_strict", |b| {
        b.iter(|| vk.verify_strict(black_box(msg), &sig).is_ok())
    });
    g.bench_function("prepared_verify", |b| {
        b.iter(|| black_box(one).verify().is_ok())
    });
    for chunk in [64usize, 256, 1024] {
        let part = &prepared[..chunk];
        g.bench_function(format!("verify_batch_{chunk}"), |b| {
            b.iter(|| verify_batch(black_box(part), &mut SysRng))
        });
    }
    g.finish();
}

criterion_group!(benches, trace);
criterion_main!(benches);
