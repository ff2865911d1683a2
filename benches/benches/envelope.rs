//! Targets (1)–(3) of docs/performance.md: building and signing, and
//! decoding and verifying, the typical envelope (300-byte and 16 KiB text
//! payloads) against raw SHA-256 + Ed25519 over the same bytes and against
//! COSE_Sign1 (coset + ed25519-dalek) over the same payload.

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ed25519_dalek::{Signature, Signer};
use herald_benches::{Fixture, PAYLOAD_SIZES, cose, direct, verify_envelope};
use herald_core::{CheckOptions, EnvelopeRef, Reasons, SigilForm, check};
use sha2::{Digest, Sha256};

fn envelope(c: &mut Criterion) {
    for (len, label) in PAYLOAD_SIZES {
        let f = Fixture::new(len);
        f.self_check().unwrap();
        let wire = f.envelope.as_bytes().to_vec();
        let sigil = f.key.sigil(SigilForm::Default);
        let vk = f.dalek.verifying_key();
        let sig =
            Signature::from_bytes(f.envelope.view().signatures().next().unwrap().unwrap().sig);
        assert!(vk.verify_strict(&f.message, &sig).is_ok());
        let keys = [f.public];

        let mut g = c.benchmark_group(format!("envelope_{label}"));
        // (1) build + encode + id + origin sign, and its baselines.
        g.bench_function("herald_build_sign", |b| {
            b.iter(|| black_box(f.parts.sign(&f.key)))
        });
        g.bench_function("sha256", |b| {
            b.iter(|| black_box(Sha256::digest(black_box(&f.body))))
        });
        g.bench_function("ed25519_sign", |b| {
            b.iter(|| black_box(f.dalek.sign(black_box(&f.message))))
        });
        g.bench_function("direct_build", |b| {
            b.iter(|| black_box(direct::build(&f.parts, &f.key)))
        });
        g.bench_function("direct_build_checked", |b| {
            b.iter(|| black_box(direct::build_checked(&f.parts, &f.key)))
        });
        // (2) strict decode + id + origin verify, and its baselines.
        g.bench_function("herald_verify", |b| {
            b.iter(|| assert!(verify_envelope(black_box(&wire), &f.public)))
        });
        g.bench_function("ed25519_verify_strict", |b| {
            b.iter(|| vk.verify_strict(black_box(&f.message), &sig).is_ok())
        });
        g.bench_function("herald_decode", |b| {
            b.iter(|| EnvelopeRef::decode(black_box(&wire)).is_ok())
        });
        g.bench_function("herald_check", |b| {
            b.iter(|| {
                let mut reasons = Reasons::<16>::new();
                check(
                    black_box(&wire),
                    &keys,
                    &CheckOptions::DEFAULT,
                    &mut reasons,
                )
                .status
            })
        });
        // (3) COSE_Sign1 over the same bytes.
        g.bench_function("cose_sign", |b| {
            b.iter(|| black_box(cose::sign(black_box(&f.body), &f.dalek, &sigil)))
        });
        g.bench_function("cose_verify", |b| {
            b.iter(|| assert!(cose::verify(black_box(&f.cose), &vk)))
        });
        g.finish();
    }
}

criterion_group!(benches, envelope);
criterion_main!(benches);
