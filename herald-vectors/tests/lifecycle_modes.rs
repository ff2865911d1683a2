//! One P8 engine, two modes (docs/lifecycle.md *Live mode*): every
//! lifecycle conformance case (a `verify` or `bundle` case holding a birth,
//! molt, deprecation or duress) is judged by a trace audit and by a live
//! `Receiver` fed the same envelopes in `ts` order, the bundle's inclusion
//! proofs offered as soon as their molt has arrived. The verdicts (status
//! and reason codes) must be equal, except where docs/lifecycle.md ("Live
//! mode") says arrival order makes them differ: those cases are listed
//! below with the live verdict they must have instead.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use herald_core::{EnvelopeRef, Kind};
use herald_vectors::manifest::{Case, EnvelopeExpect, Manifest};
use herald_vectors::run::envelope_verdict;
use herald_verify::{
    AuditOptions, Bundle, InclusionProof, Input, Keyring, Piece, Provenance, Receiver, Store,
    audit, is_bundle, sequence_pieces,
};

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance")
}

/// The envelopes, proofs and keys of a case's input.
fn contents(bytes: &[u8]) -> (Vec<&[u8]>, Vec<&[u8]>, Vec<herald_core::PublicKey>) {
    if is_bundle(bytes) {
        // A bundle that does not decode holds nothing to compare.
        let Ok(b) = Bundle::decode(bytes) else {
            return (Vec::new(), Vec::new(), Vec::new());
        };
        let envelopes = b.envelopes().iter().map(|&(_, e)| e).collect();
        let proofs = b.proofs().iter().map(|&(_, p)| p).collect();
        (envelopes, proofs, b.keys().to_vec())
    } else {
        let envelopes = sequence_pieces(bytes, 1 << 20, 512)
            .map(|p| match p {
                Piece::Item { bytes, .. } => bytes,
                other => panic!("unsplittable conformance input: {other:?}"),
            })
            .collect();
        (envelopes, Vec::new(), Vec::new())
    }
}

fn keyring(dir: &Path, manifest: &Manifest, names: &[String]) -> Keyring {
    let mut ring = Keyring::new();
    for name in names {
        let entry = manifest.keys.iter().find(|k| &k.name == name).unwrap();
        let text = std::fs::read_to_string(dir.join(&entry.keyring_file)).unwrap();
        ring.parse(&text, &entry.keyring_file).unwrap();
    }
    ring
}

/// The live verdicts of `envelopes`, in input order.
fn live(
    envelopes: &[&[u8]],
    proofs: &[&[u8]],
    keys: Keyring,
    now: u64,
    scratch: &Path,
) -> Vec<EnvelopeExpect> {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch).unwrap();
    let store = Store::create(scratch.join("live.redb"), "lifecycle-modes").unwrap();
    let rx = Receiver::new(store, keys).with_clock(move || now);
    // A proof that does not decode proves nothing in either mode.
    let proofs: Vec<InclusionProof> = proofs
        .iter()
        .filter_map(|p| InclusionProof::decode(p).ok())
        .collect();
    let ts = |e: &[u8]| EnvelopeRef::decode(e).map_or(0, |v| v.ts());
    let mut order: Vec<usize> = (0..envelopes.len()).collect();
    order.sort_by_key(|&i| (ts(envelopes[i]), i));
    let mut got = BTreeMap::new();
    for i in order {
        let report = rx.receive(envelopes[i]).unwrap();
        if let Ok(v) = EnvelopeRef::decode(envelopes[i]) {
            for p in proofs.iter().filter(|p| p.leaf().id() == v.id()) {
                let _ = rx.accept_inclusion_proof(p);
            }
        }
        got.insert(i, envelope_verdict(&report));
    }
    let _ = std::fs::remove_dir_all(scratch);
    got.into_values().collect()
}

/// Cases whose live verdicts differ from the audit's by arrival order, and
/// why (docs/lifecycle.md, "Live mode"): the live statuses, in input order.
const ARRIVAL_ORDER: &[(&str, &[&str], &str)] = &[
    (
        "disputed",
        &["valid", "valid", "invalid", "invalid"],
        "the first of two overlapping molts was accepted when it arrived; \
         the second voids it from then on",
    ),
    (
        "bundle_disputed_one_proven",
        &["valid", "valid", "invalid", "invalid", "invalid"],
        "as `disputed`, with one molt proven",
    ),
    (
        "lineage_cycle",
        &["valid", "invalid"],
        "the birth witnessed first closes no cycle yet; the one that closes it is refused",
    ),
];

#[test]
fn every_lifecycle_case_gets_one_verdict_in_both_modes() {
    let dir = committed();
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let scratch = std::env::temp_dir().join(format!("herald-modes-{}", std::process::id()));
    let mut compared = 0;
    let mut differing = Vec::new();
    for case in &manifest.cases {
        let (name, input, names, now, skew) = match case {
            Case::Verify {
                name,
                input,
                keyring,
                now,
                skew,
                required_scopes,
                ..
            }
            | Case::Bundle {
                name,
                input,
                keyring,
                now,
                skew,
                required_scopes,
                ..
            } if required_scopes.is_empty() => (name, input, keyring, *now, *skew),
            _ => continue,
        };
        let bytes = std::fs::read(dir.join(input)).unwrap();
        let (envelopes, proofs, bundle_keys) = contents(&bytes);
        let lifecycle = envelopes.iter().any(|e| {
            EnvelopeRef::decode(e).is_ok_and(|v| {
                matches!(
                    v.kind(),
                    Kind::Birth | Kind::Molt | Kind::Deprecation | Kind::Duress
                )
            })
        });
        if !lifecycle {
            continue;
        }
        let keys = keyring(&dir, &manifest, names);
        let opts = AuditOptions {
            now: Some(now),
            skew,
            ..AuditOptions::default()
        };
        let inputs = [Input {
            name: input.clone(),
            bytes: bytes.clone(),
        }];
        let audited: Vec<EnvelopeExpect> = audit(&inputs, &keys, &opts)
            .envelopes
            .iter()
            .map(envelope_verdict)
            .collect();
        // Live, a bundle's keys are what a receiver would have been given.
        let mut live_keys = keys.clone();
        for k in bundle_keys {
            live_keys.insert(k, Provenance::Bundle);
        }
        let lived = live(&envelopes, &proofs, live_keys, now, &scratch);
        compared += 1;
        match ARRIVAL_ORDER.iter().find(|(n, _, _)| n == name) {
            Some((_, statuses, why)) => {
                let got: Vec<&str> = lived.iter().map(|v| v.status.as_str()).collect();
                assert_eq!(&got, statuses, "{name}: live verdicts ({why})");
                assert_ne!(
                    audited, lived,
                    "{name} no longer differs: drop it from the list"
                );
            }
            None => {
                if audited != lived {
                    differing.push(format!("{name}:\n  audit {audited:?}\n  live  {lived:?}"));
                }
            }
        }
    }
    assert!(compared >= 15, "only {compared} lifecycle cases");
    assert!(differing.is_empty(), "{}", differing.join("\n"));
}
