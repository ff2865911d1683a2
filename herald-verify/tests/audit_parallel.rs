//! `audit` verifies signatures in blocks on every core (check_with +
//! batch::verify_each, then check again for any envelope with a bad
//! signature); `audit_sequential` is the old path, `check` one envelope after
//! the other. Their reports must be equal, reason for reason, for sets with
//! bad signatures planted at random positions: flipped bits in R or S,
//! S ≥ L, a small-order R, an edited body (id mismatch too), on origin and
//! co-signatures, among births (learned keys), unknown signers and replies.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::attestation::birth_attestation;
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, EnvelopeRef, Kind, ReasonCode, Scope, Status};
use herald_testkit::{T0, key, nonce};
use herald_verify::internal::audit_sequential;
use herald_verify::{AuditOptions, Input, Keyring, Provenance, Report, audit};
use proptest::prelude::*;

/// Keys 1–4 are pinned; key 5 announces itself with a birth; key 6 is unknown.
fn keyring() -> Keyring {
    let mut k = Keyring::new();
    for n in 1..=4 {
        k.insert(key(n).public_key(), Provenance::Pinned);
    }
    k
}

const SCOPES: [Scope; 3] = [
    Scope::ToolSandbox,
    Scope::HumanApproval,
    Scope::HeraldEndorsement,
];

/// One envelope of a generated set.
#[derive(Clone, Debug)]
struct Step {
    /// Reply to an earlier envelope (index modulo what exists), or a genesis.
    parent: Option<usize>,
    /// Signer, 1..=6.
    signer: u8,
    /// A co-signature by this key in one of [`SCOPES`].
    cosign: Option<(u8, usize)>,
}

fn build(steps: &[Step]) -> Vec<Envelope> {
    let birth = EnvelopeBuilder::genesis(T0)
        .kind(Kind::Birth)
        .nonce(nonce(u64::MAX))
        .attest(
            "birth",
            birth_attestation(&key(5).public_key(), "a test agent", &[]),
        )
        .sign(&key(5))
        .unwrap();
    let mut out = vec![birth];
    for (n, s) in steps.iter().enumerate() {
        let ts = T0 + n as u64 + 1;
        let b = match s.parent {
            Some(p) => EnvelopeBuilder::reply(&out[p % out.len()].view(), ts),
            None => EnvelopeBuilder::genesis(ts),
        };
        let mut e = b
            .nonce(nonce(n as u64))
            .payload(Value::text(format!("envelope {n}")))
            .sign(&key(s.signer))
            .unwrap();
        if let Some((k, scope)) = s.cosign
            && k != s.signer
        {
            e = e
                .cosign(&key(k), SCOPES[scope % SCOPES.len()], None)
                .unwrap();
        }
        out.push(e);
    }
    out
}

/// Ways to spoil one envelope's bytes.
#[derive(Clone, Copy, Debug)]
enum Spoil {
    /// Flip one bit of signature k's R half.
    FlipR,
    /// Flip one bit of signature k's S half.
    FlipS,
    /// S ≥ L (non-canonical).
    HighS,
    /// R = the identity (small order).
    SmallOrderR,
    /// Change a payload byte: the id no longer matches and no signature verifies.
    Body,
}

fn spoil(bytes: &[u8], how: Spoil, k: usize, bit: u8) -> Vec<u8> {
    let view = EnvelopeRef::decode(bytes).unwrap();
    let sigs: Vec<[u8; 64]> = view.signatures().map(|s| *s.unwrap().sig).collect();
    let sig = sigs[k % sigs.len()];
    let at = bytes.windows(64).position(|w| w == sig).unwrap();
    let mut out = bytes.to_vec();
    let bit = 1 << (bit % 8);
    match how {
        Spoil::FlipR => out[at + usize::from(bit) % 32] ^= bit,
        Spoil::FlipS => out[at + 32 + usize::from(bit) % 31] ^= bit,
        Spoil::HighS => out[at + 63] |= 0xf0,
        Spoil::SmallOrderR => {
            out[at..at + 32].fill(0);
            out[at] = 1;
        }
        Spoil::Body => {
            let text = b"envelope ";
            if let Some(p) = bytes.windows(text.len()).position(|w| w == text) {
                out[p] = b'E';
            } else {
                out[at + 40] ^= 1;
            }
        }
    }
    out
}

fn inputs(envs: &[Vec<u8>]) -> Vec<Input> {
    // Two inputs, so sources and offsets differ across files too.
    let half = envs.len() / 2;
    vec![
        Input {
            name: "a".into(),
            bytes: envs[..half].concat(),
        },
        Input {
            name: "b".into(),
            bytes: envs[half..].concat(),
        },
    ]
}

fn both(inputs: &[Input], opts: &AuditOptions) -> Report {
    let keys = keyring();
    let parallel = audit(inputs, &keys, opts);
    let sequential = audit_sequential(inputs, &keys, opts);
    assert_eq!(parallel, sequential);
    parallel
}

fn bad_signatures(r: &Report) -> usize {
    r.envelopes
        .iter()
        .flat_map(|e| &e.reasons)
        .filter(|r| r.code == ReasonCode::BadSignature)
        .count()
}

fn step() -> impl Strategy<Value = Step> {
    (
        proptest::option::of(0..64usize),
        1..=6u8,
        proptest::option::of((1..=6u8, 0..3usize)),
    )
        .prop_map(|(parent, signer, cosign)| Step {
            parent,
            signer,
            cosign,
        })
}

fn spoil_kind() -> impl Strategy<Value = Spoil> {
    prop::sample::select(vec![
        Spoil::FlipR,
        Spoil::FlipS,
        Spoil::HighS,
        Spoil::SmallOrderR,
        Spoil::Body,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn parallel_audit_equals_sequential(
        steps in proptest::collection::vec(step(), 1..80),
        planted in proptest::collection::vec((any::<prop::sample::Index>(), spoil_kind(), 0..2usize, any::<u8>()), 0..8),
        learn in any::<bool>(),
        now in proptest::option::of(T0..T0 + 200),
    ) {
        let mut envs: Vec<Vec<u8>> = build(&steps).iter().map(|e| e.as_bytes().to_vec()).collect();
        for (i, how, k, bit) in &planted {
            let i = i.index(envs.len());
            envs[i] = spoil(&envs[i], *how, *k, *bit);
        }
        let opts = AuditOptions { learn_birth_keys: learn, now, ..AuditOptions::default() };
        both(&inputs(&envs), &opts);
    }
}

#[test]
fn clean_set_is_valid_both_ways() {
    let steps: Vec<Step> = (0..40)
        .map(|n| Step {
            parent: (n % 3 != 0).then_some(n),
            signer: 1 + (n % 5) as u8,
            cosign: (n % 4 == 0).then_some((1 + ((n + 1) % 4) as u8, n)),
        })
        .collect();
    let envs: Vec<Vec<u8>> = build(&steps)
        .iter()
        .map(|e| e.as_bytes().to_vec())
        .collect();
    let report = both(&inputs(&envs), &AuditOptions::default());
    assert!(report.all_valid(), "{report:#?}");
    assert_eq!(report.envelopes.len(), 41);
}

#[test]
fn every_kind_of_bad_signature_is_named_exactly() {
    let steps: Vec<Step> = (0..30)
        .map(|n| Step {
            parent: Some(n),
            signer: 1 + (n % 4) as u8,
            cosign: Some((1 + ((n + 1) % 4) as u8, n)),
        })
        .collect();
    let clean: Vec<Vec<u8>> = build(&steps)
        .iter()
        .map(|e| e.as_bytes().to_vec())
        .collect();
    let kinds = [Spoil::FlipR, Spoil::FlipS, Spoil::HighS, Spoil::SmallOrderR];
    for (n, how) in kinds.into_iter().enumerate() {
        for k in 0..2 {
            let mut envs = clean.clone();
            let i = 1 + 7 * n + k;
            envs[i] = spoil(&envs[i], how, k, 3);
            let report = both(&inputs(&envs), &AuditOptions::default());
            // Signature 1 signs body(E, 1), which holds signature 0: spoiling
            // signature 0 spoils both.
            assert_eq!(
                bad_signatures(&report),
                2 - k,
                "{how:?} at {k}: {report:#?}"
            );
            let bad = &report.envelopes[i];
            assert!(
                bad.reasons
                    .iter()
                    .any(|r| r.code == ReasonCode::BadSignature && r.index == Some(k as u32)),
                "{bad:#?}"
            );
            let want = if k == 0 {
                Status::Invalid
            } else {
                Status::Partial
            };
            assert_eq!(bad.status(), want);
        }
    }
}

#[test]
fn several_blocks_with_bad_signatures_scattered() {
    // More envelopes than one block of step 3 holds (8192), so block
    // boundaries fall between entries; bad signatures in each block.
    let steps: Vec<Step> = (0..8300)
        .map(|n| Step {
            parent: (n % 10 != 0).then_some(n),
            signer: 1 + (n % 4) as u8,
            cosign: None,
        })
        .collect();
    let mut envs: Vec<Vec<u8>> = build(&steps)
        .iter()
        .map(|e| e.as_bytes().to_vec())
        .collect();
    // 4095 | 4096: where verify_each's chunks of 256 meet, mid-block.
    let planted = [5usize, 4000, 4095, 4096, 8191, 8192, 8193, 8299];
    for &i in &planted {
        envs[i] = spoil(&envs[i], Spoil::FlipS, 0, i as u8);
    }
    let report = both(&inputs(&envs), &AuditOptions::default());
    assert_eq!(bad_signatures(&report), planted.len());
    for &i in &planted {
        assert_eq!(report.envelopes[i].status(), Status::Invalid, "entry {i}");
    }
}
