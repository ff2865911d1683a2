//! Target (4) of docs/performance.md: canonical encoding of the typical
//! envelope by herald-core against ciborium encoding the same envelope from
//! a `ciborium::Value`; plus the builder's routes to `body(E, 0)`: the old one
//! (assemble a `cbor::Map`, encode) and the current one (direct writes).

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use herald_benches::{Fixture, PAYLOAD_SIZES, attestation_pairs, builder_map_encode, direct};
use herald_core::SigilForm;
use herald_core::cbor::{Encoder, Value};

fn cbor(c: &mut Criterion) {
    for (len, label) in PAYLOAD_SIZES {
        let f = Fixture::new(len);
        f.self_check().unwrap();
        let sigil = f.key.sigil(SigilForm::Default);
        let from = sigil.to_string();
        assert_eq!(builder_map_encode(&f.parts, &sigil), f.body);
        assert_eq!(direct::body(&f.parts, &from).0, f.body);

        let mut g = c.benchmark_group(format!("cbor_{label}"));
        // The wire envelope from a prebuilt value, both libraries.
        g.bench_function("herald_value_encode", |b| {
            b.iter(|| black_box(f.value.to_vec()))
        });
        // The same, into a buffer sized up front (how much of it is `Vec` growth).
        let size = f.envelope.as_bytes().len();
        g.bench_function("herald_value_encode_presized", |b| {
            b.iter(|| {
                let mut e = Encoder::new(Vec::with_capacity(size));
                let _ = black_box(&f.value).encode(&mut e);
                black_box(e.into_inner())
            })
        });
        g.bench_function("ciborium_value_encode", |b| {
            b.iter(|| {
                let mut out = Vec::new();
                ciborium::into_writer(black_box(&f.ciborium), &mut out).unwrap();
                black_box(out)
            })
        });
        // body(E, 0) from the parts: the route owned.rs took before (a
        // cbor::Map), the route it takes now (direct writes, payload and
        // payload and attestation values from Values), and direct writes of
        // constants.
        g.bench_function("builder_map_encode", |b| {
            b.iter(|| black_box(builder_map_encode(black_box(&f.parts), &sigil)))
        });
        let payload = Value::text(f.parts.payload.as_str());
        let attestations = attestation_pairs();
        assert_eq!(attestations.len(), 5);
        assert_eq!(
            direct::body_values(&f.parts, &from, &payload, &attestations),
            f.body
        );
        g.bench_function("builder_write_encode", |b| {
            b.iter(|| {
                black_box(direct::body_values(
                    black_box(&f.parts),
                    &from,
                    &payload,
                    &attestations,
                ))
            })
        });
        g.bench_function("direct_body_encode", |b| {
            b.iter(|| black_box(direct::body(black_box(&f.parts), &from)))
        });
        g.finish();
    }
}

criterion_group!(benches, cbor);
criterion_main!(benches);
