//! The trace audit's verdicts do not depend on input order (PROFILE.md P10
//! and P13, revision 2): only an envelope whose origin verifies claims its
//! `(from key, nonce)`, and parents are found by recomputed id only, so
//! forgeries that copy a real nonce and junk that claims a real id change
//! nothing for the honest envelopes, wherever they stand.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::{ReasonCode, Status};
use herald_testkit::{genesis, key, reply};
use herald_verify::{AuditOptions, Input, Keyring, Provenance, Report, audit};
use proptest::prelude::*;

/// Four honest envelopes by three keys: g (A), r1 (B, to g), r2 (A, to r1),
/// r3 (C, to g).
fn honest() -> (Vec<Vec<u8>>, Keyring) {
    let (a, b, c) = (key(1), key(2), key(3));
    let g = genesis(&a, 0);
    let r1 = reply(&g, &b, 1);
    let r2 = reply(&r1, &a, 2);
    let r3 = reply(&g, &c, 3);
    let mut keys = Keyring::new();
    for k in [&a, &b, &c] {
        keys.insert(k.public_key(), Provenance::Pinned);
    }
    let envs = [g, r1, r2, r3]
        .iter()
        .map(|e| e.as_bytes().to_vec())
        .collect();
    (envs, keys)
}

/// `bytes` with one byte of its payload text changed: the same `id`,
/// `from`, `nonce`, `trace` and `parent` fields, a body that no longer
/// hashes to the id, and an origin signature that no longer verifies.
fn forged(bytes: &[u8], which: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let text = b"genesis ";
    let reply = b"reply ";
    let at = out
        .windows(text.len())
        .position(|w| w == text)
        .or_else(|| out.windows(reply.len()).position(|w| w == reply))
        .unwrap();
    out[at + which % 5] ^= 0x20;
    out
}

fn audit_of(items: &[Vec<u8>], keys: &Keyring) -> Report {
    let inputs = vec![Input {
        name: "set".into(),
        bytes: items.concat(),
    }];
    audit(&inputs, keys, &AuditOptions::default())
}

/// Each honest envelope's status and reason codes, found by its bytes.
fn honest_verdicts(
    items: &[Vec<u8>],
    honest: &[Vec<u8>],
    keys: &Keyring,
) -> Vec<(Status, Vec<ReasonCode>)> {
    let report = audit_of(items, keys);
    assert_eq!(report.envelopes.len(), items.len());
    honest
        .iter()
        .map(|h| {
            let i = items.iter().position(|x| x == h).unwrap();
            let e = &report.envelopes[i];
            (e.status(), e.reasons.iter().map(|r| r.code).collect())
        })
        .collect()
}

#[test]
fn a_forged_copy_of_a_nonce_placed_first_does_not_make_the_real_one_a_replay() {
    let (honest, keys) = honest();
    let forgery = forged(&honest[2], 0);
    let items = vec![
        forgery.clone(),
        honest[0].clone(),
        honest[1].clone(),
        honest[2].clone(),
    ];
    let report = audit_of(&items, &keys);
    assert_eq!(report.envelopes[0].status(), Status::Invalid);
    assert!(report.envelopes[0].has(ReasonCode::BadSignature));
    assert!(!report.envelopes[0].has(ReasonCode::ReplayedNonce));
    for e in &report.envelopes[1..] {
        assert_eq!(e.status(), Status::Valid, "{e:#?}");
    }
    // Placed after the real one, the forgery is the replay.
    let items = vec![
        honest[0].clone(),
        honest[1].clone(),
        honest[2].clone(),
        forgery,
    ];
    let report = audit_of(&items, &keys);
    assert!(report.envelopes[3].has(ReasonCode::ReplayedNonce));
    assert!(
        report.envelopes[..3]
            .iter()
            .all(|e| e.status() == Status::Valid)
    );
}

#[test]
fn junk_claiming_the_genesis_id_placed_first_changes_nothing() {
    let (honest, keys) = honest();
    let junk = forged(&honest[0], 1);
    let items = vec![junk, honest[0].clone(), honest[1].clone()];
    let report = audit_of(&items, &keys);
    assert!(report.envelopes[0].has(ReasonCode::IdMismatch));
    assert_eq!(report.envelopes[1].status(), Status::Valid);
    assert_eq!(report.envelopes[2].status(), Status::Valid);
    assert_eq!(report.traces.len(), 1);
    // The genesis is the trace's genesis, and its reply (not the junk) its
    // only child.
    let g = &report.envelopes[1];
    assert_eq!(report.traces[0].genesis.as_deref(), g.id.as_deref());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random forgeries of random honest envelopes, planted among them in a
    /// random order: every honest envelope is valid with no reason, in
    /// every order.
    #[test]
    fn honest_verdicts_do_not_depend_on_order(
        plants in proptest::collection::vec((0usize..4, 0usize..5), 0..6),
        order in any::<u64>(),
    ) {
        let (honest, keys) = honest();
        let mut items = honest.clone();
        for (of, which) in &plants {
            let f = forged(&honest[*of], *which);
            if !items.contains(&f) {
                items.push(f);
            }
        }
        // A permutation from the seed (Fisher–Yates with a xorshift).
        let mut state = order | 1;
        for i in (1..items.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            items.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let got = honest_verdicts(&items, &honest, &keys);
        for (i, (status, codes)) in got.iter().enumerate() {
            prop_assert_eq!(*status, Status::Valid, "honest {} got {:?}", i, codes);
            prop_assert!(codes.is_empty(), "honest {} got {:?}", i, codes);
        }
    }
}
