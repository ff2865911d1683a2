//! Target (5) of docs/performance.md: the origin signatures of 10 000
//! envelopes (100 traces, 16 signers) verified with
//! `herald_verify::batch::verify_all` (strict pre-checks, batch equations,
//! every core) against sequential `verify_strict`; plus the alternatives that
//! bound it (`verify_each`: strict verification on every core; a batch with
//! only the issue's pre-checks, which is unsound) and the full `audit`, with
//! its signatures verified on every core and one envelope after the other
//! (`audit_sequential`).

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use ed25519_dalek::{Signature, VerifyingKey};
use herald_benches::{OwnedItem, TraceSet};
use herald_core::{EnvelopeRef, PublicKey};
use herald_verify::batch::{BatchOptions, SignedItem, verify_all, verify_all_with, verify_each};
use herald_verify::trace::audit_sequential;
use herald_verify::{AuditOptions, Input, audit};

const N: usize = 10_000;

type Prepared<'a> = (VerifyingKey, Signature, &'a [u8]);

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `verify_batch` after only the issue's pre-checks (canonical S inside
/// verify_batch, R decodes, R and A not of small order) on every core.
/// UNSOUND (accepts cofactored-only signatures, see batch.rs): measured only
/// as the bound of what batching could give.
fn batch_issue_prechecks(items: &[Prepared<'_>], chunk: usize, threads: usize) -> usize {
    let per = items.len().div_ceil(threads).div_ceil(chunk) * chunk;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(per)
            .map(|part| {
                s.spawn(move || {
                    let mut ok = 0;
                    for c in part.chunks(chunk) {
                        let pre = c.iter().all(|(k, sig, _)| {
                            !k.is_weak()
                                && CompressedEdwardsY(*sig.r_bytes())
                                    .decompress()
                                    .is_some_and(|r| !r.is_small_order())
                        });
                        let msgs: Vec<&[u8]> = c.iter().map(|i| i.2).collect();
                        let sigs: Vec<Signature> = c.iter().map(|i| i.1).collect();
                        let keys: Vec<VerifyingKey> = c.iter().map(|i| i.0).collect();
                        if pre && ed25519_dalek::verify_batch(&msgs, &sigs, &keys).is_ok() {
                            ok += c.len();
                        }
                    }
                    ok
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

fn trace(c: &mut Criterion) {
    let set = TraceSet::new(N, 100, 16);
    let owned: Vec<OwnedItem> = set.origin_items();
    let items: Vec<SignedItem<'_>> = owned.iter().map(OwnedItem::item).collect();
    let prepared: Vec<Prepared<'_>> = owned
        .iter()
        .map(|o| {
            (
                VerifyingKey::from_bytes(&o.key).unwrap(),
                Signature::from_bytes(&o.sig),
                o.msg.as_slice(),
            )
        })
        .collect();
    let herald_keys: Vec<PublicKey> = owned
        .iter()
        .map(|o| PublicKey::from_bytes(&o.key).unwrap())
        .collect();
    let threads = threads();
    assert!(verify_all(&items).iter().all(|&v| v));
    assert!(verify_each(&items, 0).iter().all(|&v| v));
    assert_eq!(batch_issue_prechecks(&prepared, 64, threads), N);
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
            prepared
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
    g.bench_function("verify_each", |b| {
        b.iter(|| verify_each(black_box(&items), 0))
    });
    g.bench_function("verify_all", |b| b.iter(|| verify_all(black_box(&items))));
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
            b.iter(|| verify_all_with(black_box(&items), &opts))
        });
    }
    g.bench_function("batch_issue_prechecks_unsound", |b| {
        b.iter(|| batch_issue_prechecks(&prepared, 64, threads))
    });
    g.bench_function("audit", |b| {
        b.iter(|| audit(black_box(&inputs), &keyring, &audit_opts))
    });
    g.bench_function("audit_sequential", |b| {
        b.iter(|| audit_sequential(black_box(&inputs), &keyring, &audit_opts))
    });
    g.finish();

    // What bounds the exact batch: its per-item steps, against one verify_strict.
    let mut g = c.benchmark_group("ed25519_parts");
    let (vk, sig, msg) = prepared[7];
    let r_bytes = CompressedEdwardsY(*sig.r_bytes());
    let r = r_bytes.decompress().unwrap();
    g.bench_function("verify_strict", |b| {
        b.iter(|| vk.verify_strict(black_box(msg), &sig).is_ok())
    });
    g.bench_function("r_decompress_small_order", |b| {
        b.iter(|| {
            black_box(r_bytes)
                .decompress()
                .is_some_and(|r| !r.is_small_order())
        })
    });
    g.bench_function("torsion_check_ct", |b| {
        b.iter(|| black_box(r).is_torsion_free())
    });
    g.bench_function("torsion_check_vartime", |b| {
        let l_minus_1 = -Scalar::ONE;
        b.iter(|| {
            (EdwardsPoint::vartime_double_scalar_mul_basepoint(
                &l_minus_1,
                &black_box(r),
                &Scalar::ZERO,
            ) + r)
                .is_identity()
        })
    });
    for chunk in [64usize, 256, 1024] {
        let part = &prepared[..chunk];
        let msgs: Vec<&[u8]> = part.iter().map(|i| i.2).collect();
        let sigs: Vec<Signature> = part.iter().map(|i| i.1).collect();
        let keys: Vec<VerifyingKey> = part.iter().map(|i| i.0).collect();
        g.bench_function(format!("verify_batch_{chunk}"), |b| {
            b.iter(|| ed25519_dalek::verify_batch(black_box(&msgs), &sigs, &keys).is_ok())
        });
    }
    g.finish();
}

criterion_group!(benches, trace);
criterion_main!(benches);
