//! Proof bundles (herald_verify::Bundle): envelopes, the inclusion proofs
//! they need and keys, verified as a unit; P8 rule 3 (an envelope signed by
//! a molted-in key counts only with an inclusion proof of the molt in a log
//! the verifier pinned), each proof checked against the very molt it names.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, ReasonCode, SigningKey, Status};
use herald_verify::{
    AuditOptions, BUNDLE_FORMAT, Bundle, BundleError, Input, Keyring, Log, LogPolicy, Provenance,
    Report, audit, encode_bundle, encode_bundle_with_checkpoints, is_bundle,
};

mod support;

use support::{DAY, T0, birth, key, molt, nonce, say, say_as, sigil};

const STH_TS: u64 = T0 + 5 * DAY;

/// A log in `dir` holding `logged`, keyed by `log_key`; the inclusion
/// proof's bytes of each logged envelope.
fn log_and_prove(dir: &Path, log_key: &SigningKey, logged: &[&Envelope]) -> Vec<Vec<u8>> {
    let mut log = Log::create(dir, &log_key.public_key(), None).unwrap();
    for e in logged {
        log.append(&e.view()).unwrap();
    }
    logged
        .iter()
        .map(|e| {
            log.inclusion_proof(log_key, &e.id(), None, STH_TS)
                .unwrap()
                .encode()
        })
        .collect()
}

fn pinned(keys: &[&SigningKey]) -> Keyring {
    let mut ring = Keyring::new();
    for k in keys {
        ring.insert(k.public_key(), Provenance::Pinned);
    }
    ring
}

fn verify(inputs: Vec<Vec<u8>>, ring: &Keyring) -> Report {
    let inputs: Vec<Input> = inputs
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| Input {
            name: format!("input{i}"),
            bytes,
        })
        .collect();
    audit(&inputs, ring, &AuditOptions::default())
}

fn make_bundle(envs: &[&Envelope], proofs: &[&[u8]], keys: &[&SigningKey]) -> Vec<u8> {
    let envs: Vec<&[u8]> = envs.iter().map(|e| e.as_bytes()).collect();
    let keys: Vec<_> = keys.iter().map(|k| k.public_key()).collect();
    encode_bundle(&envs, proofs, &keys)
}

fn codes(r: &Report, i: usize) -> Vec<ReasonCode> {
    r.envelopes[i].reasons.iter().map(|r| r.code).collect()
}

/// Alice is born, speaks, molts to a new key (no earlier envelope within
/// the 24 h cool-off), and the new key speaks after `not_before`.
struct Story {
    alice: SigningKey,
    new: SigningKey,
    envs: Vec<Envelope>,
}

fn story() -> Story {
    let (alice, new) = (key(1), key(2));
    let envs = vec![
        birth(&alice, T0),
        say(&alice, T0 + 10),
        molt(&alice, &new, T0 + 2 * DAY, T0 + 3 * DAY),
        say_as(&alice, &new, T0 + 4 * DAY),
    ];
    Story { alice, new, envs }
}

const MOLT: usize = 2;
const NEW_KEY_SPEAKS: usize = 3;

#[test]
fn a_bundled_inclusion_proof_of_the_molt_lets_the_new_key_speak() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    let proofs = log_and_prove(dir.path(), &log_key, &[&s.envs[MOLT]]);
    let envs: Vec<&Envelope> = s.envs.iter().collect();

    // Without the proof: P8 rule 3.
    let plain = verify(vec![make_bundle(&envs, &[], &[])], &pinned(&[&log_key]));
    assert_eq!(
        codes(&plain, NEW_KEY_SPEAKS),
        vec![ReasonCode::MoltUnproven]
    );

    // With it, in a log the verifier pinned.
    let b = make_bundle(&envs, &[&proofs[0]], &[]);
    let r = verify(vec![b], &pinned(&[&log_key]));
    assert!(r.all_valid(), "{}", serde_json::to_string(&r).unwrap());
    assert_eq!(r.envelopes[NEW_KEY_SPEAKS].status(), Status::Valid);
    assert_eq!(
        r.envelopes[NEW_KEY_SPEAKS]
            .signing_key
            .map(|k| k.to_string())
            .as_deref(),
        Some("molt 1")
    );
    assert_eq!(r.proofs.len(), 1);
    assert_eq!(r.proofs[0].status, Status::Valid);
    assert_eq!(r.proofs[0].index, Some(0));
    assert_eq!(r.proofs[0].size, Some(1));
    assert_eq!(
        r.proofs[0].id.as_deref(),
        Some(herald_verify::hex(&s.envs[MOLT].id()).as_str())
    );
    // The JSON report lists the proofs; without any, the key is absent (CLI.md shape).
    assert!(serde_json::to_string(&r).unwrap().contains("\"proofs\":[{"));
    assert!(
        !serde_json::to_string(&plain)
            .unwrap()
            .contains("\"proofs\"")
    );
}

#[test]
fn old_key_after_a_proven_molt_is_rotated_key() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    let proofs = log_and_prove(dir.path(), &log_key, &[&s.envs[MOLT]]);
    let late_old = say(&s.alice, T0 + 4 * DAY + 1);
    let mut envs: Vec<&Envelope> = s.envs.iter().collect();
    envs.push(&late_old);
    let r = verify(
        vec![make_bundle(&envs, &[&proofs[0]], &[])],
        &pinned(&[&log_key]),
    );
    assert_eq!(r.envelopes[NEW_KEY_SPEAKS].status(), Status::Valid);
    assert_eq!(codes(&r, 4), vec![ReasonCode::RotatedKey]);
}

#[test]
fn the_new_key_before_not_before_is_unproven_even_with_a_proof() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    let proofs = log_and_prove(dir.path(), &log_key, &[&s.envs[MOLT]]);
    let early = say_as(&s.alice, &s.new, T0 + 2 * DAY + 5);
    let mut envs: Vec<&Envelope> = s.envs.iter().collect();
    envs.push(&early);
    let r = verify(
        vec![make_bundle(&envs, &[&proofs[0]], &[])],
        &pinned(&[&log_key]),
    );
    assert_eq!(r.envelopes[NEW_KEY_SPEAKS].status(), Status::Valid);
    assert_eq!(codes(&r, 4), vec![ReasonCode::MoltUnproven]);
    assert!(r.envelopes[4].reasons[0].detail.contains("not_before"));
}

#[test]
fn a_log_key_carried_by_the_bundle_is_not_trusted() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    let proofs = log_and_prove(dir.path(), &log_key, &[&s.envs[MOLT]]);
    let envs: Vec<&Envelope> = s.envs.iter().collect();
    // The bundle carries the log's key, the verifier pins nothing.
    let r = verify(
        vec![make_bundle(&envs, &[&proofs[0]], &[&log_key])],
        &Keyring::new(),
    );
    assert_eq!(r.proofs[0].status, Status::Invalid);
    assert!(r.proofs[0].detail.contains("sth"), "{}", r.proofs[0].detail);
    assert_eq!(codes(&r, NEW_KEY_SPEAKS), vec![ReasonCode::MoltUnproven]);
    assert!(!r.all_valid());
}

#[test]
fn a_proof_counts_only_for_the_envelope_it_names() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    // The log holds Alice's first message, not the molt.
    let proofs = log_and_prove(dir.path(), &log_key, &[&s.envs[1]]);
    let envs: Vec<&Envelope> = s.envs.iter().collect();
    let r = verify(
        vec![make_bundle(&envs, &[&proofs[0]], &[])],
        &pinned(&[&log_key]),
    );
    assert_eq!(r.proofs[0].status, Status::Valid);
    assert_eq!(codes(&r, NEW_KEY_SPEAKS), vec![ReasonCode::MoltUnproven]);

    // A proof of another molt (same keys, another not_before) proves
    // nothing about the molt the bundle carries, and names no envelope of it.
    let other_molt = molt(&s.alice, &s.new, T0 + 2 * DAY, T0 + 3 * DAY + 1);
    let dir2 = tempfile::tempdir().unwrap();
    let other = log_and_prove(dir2.path(), &log_key, &[&other_molt]);
    let r = verify(
        vec![make_bundle(&envs, &[&other[0]], &[])],
        &pinned(&[&log_key]),
    );
    assert_eq!(r.proofs[0].status, Status::Invalid);
    assert!(
        r.proofs[0].detail.contains("no envelope of the set"),
        "{}",
        r.proofs[0].detail
    );
    assert_eq!(codes(&r, NEW_KEY_SPEAKS), vec![ReasonCode::MoltUnproven]);
}

#[test]
fn every_flipped_byte_of_a_proof_loses_it() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    // Three leaves, so the path is not empty.
    let filler = [say(&key(3), T0), say(&key(4), T0)];
    let proofs = log_and_prove(
        dir.path(),
        &log_key,
        &[&filler[0], &s.envs[MOLT], &filler[1]],
    );
    let envs: Vec<&Envelope> = s.envs.iter().collect();
    let ring = pinned(&[&log_key]);
    let good = proofs[1].clone();
    assert_eq!(
        verify(vec![make_bundle(&envs, &[&good], &[])], &ring).proofs[0].status,
        Status::Valid
    );
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x01;
        let r = verify(vec![make_bundle(&envs, &[&bad], &[])], &ring);
        assert_eq!(r.proofs[0].status, Status::Invalid, "byte {i}");
        assert_eq!(
            codes(&r, NEW_KEY_SPEAKS),
            vec![ReasonCode::MoltUnproven],
            "byte {i}"
        );
        assert!(!r.proofs[0].detail.is_empty(), "byte {i}");
    }
}

#[test]
fn bundle_keys_verify_their_sigils_and_are_reported_as_bundle() {
    let bob = key(5);
    let hello = say(&bob, T0);
    let without = verify(vec![make_bundle(&[&hello], &[], &[])], &Keyring::new());
    assert_eq!(codes(&without, 0), vec![ReasonCode::UnknownSigner]);
    let with = verify(vec![make_bundle(&[&hello], &[], &[&bob])], &Keyring::new());
    assert_eq!(with.envelopes[0].status(), Status::Valid);
    assert_eq!(
        with.envelopes[0].key_source.map(|k| k.name()),
        Some("bundle")
    );
    // A pinned key stays pinned when a bundle carries it too.
    let both = verify(vec![make_bundle(&[&hello], &[], &[&bob])], &pinned(&[&bob]));
    assert_eq!(
        both.envelopes[0].key_source.map(|k| k.name()),
        Some("keyring")
    );
}

#[test]
fn a_bundle_joins_the_other_inputs_in_one_set() {
    let alice = key(1);
    let first = say(&alice, T0);
    let answer = EnvelopeBuilder::reply(&first.view(), T0 + 1)
        .nonce(nonce())
        .payload(Value::text("re"))
        .sign(&alice)
        .unwrap();
    let r = verify(
        vec![first.as_bytes().to_vec(), make_bundle(&[&answer], &[], &[])],
        &pinned(&[&alice]),
    );
    assert!(r.all_valid(), "{}", serde_json::to_string(&r).unwrap());
    assert_eq!(r.traces.len(), 1);
    assert_eq!(r.envelopes[1].source.input, "input1");
    // The offset is where the envelope's bytes start in the bundle file.
    let b = make_bundle(&[&answer], &[], &[]);
    let at = r.envelopes[1].source.offset;
    assert_eq!(&b[at..at + answer.as_bytes().len()], answer.as_bytes());
}

#[test]
fn bundles_round_trip_and_envelopes_are_not_bundles() {
    let s = story();
    let envs: Vec<&Envelope> = s.envs.iter().collect();
    let bytes = make_bundle(&envs, &[b"proof bytes"], &[&s.alice, &s.new]);
    assert!(is_bundle(&bytes));
    let b = Bundle::decode(&bytes).unwrap();
    assert_eq!(b.envelopes().len(), 4);
    for (i, &(offset, env)) in b.envelopes().iter().enumerate() {
        assert_eq!(env, s.envs[i].as_bytes());
        assert_eq!(&bytes[offset..offset + env.len()], env);
    }
    assert_eq!(b.proofs().len(), 1);
    assert_eq!(b.proofs()[0].1, b"proof bytes");
    assert_eq!(b.keys().len(), 2);
    // Re-encoding what was decoded gives the same bytes (P1).
    let again = encode_bundle(
        &b.envelopes().iter().map(|e| e.1).collect::<Vec<_>>(),
        &b.proofs().iter().map(|p| p.1).collect::<Vec<_>>(),
        b.keys(),
    );
    assert_eq!(again, bytes);
    assert!(!is_bundle(s.envs[0].as_bytes()));
    let sequence: Vec<u8> = s.envs.iter().flat_map(|e| e.as_bytes().to_vec()).collect();
    assert!(!is_bundle(&sequence));
    assert!(!is_bundle(&[]));
}

fn bundle_map(edit: impl FnOnce(&mut Map)) -> Vec<u8> {
    let hello = say(&key(5), T0);
    let mut m = Map::new();
    m.insert("format", Value::text(BUNDLE_FORMAT));
    m.insert(
        "envelopes",
        Value::Array(vec![Value::Bytes(hello.as_bytes().to_vec())]),
    );
    m.insert("proofs", Value::Array(Vec::new()));
    edit(&mut m);
    Value::Map(m).to_vec()
}

#[test]
fn bad_bundles_are_refused_with_the_reason_and_reported_malformed() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            bundle_map(|m| {
                m.insert("format", Value::text("herald-bundle-v2"));
            }),
            "`format` is not \"herald-bundle-v1\"",
        ),
        (
            bundle_map(|m| {
                m.insert("extra", Value::Null);
            }),
            "unknown field `extra`",
        ),
        (
            bundle_map(|m| {
                m.remove("proofs");
            }),
            "missing field `proofs`",
        ),
        (
            bundle_map(|m| {
                m.insert("envelopes", Value::Array(Vec::new()));
            }),
            "`envelopes` is empty",
        ),
        (
            bundle_map(|m| {
                m.insert("envelopes", Value::Array(vec![Value::text("x")]));
            }),
            "`envelopes` must be an array of byte strings",
        ),
        (
            bundle_map(|m| {
                m.insert("keys", Value::Array(vec![Value::Unsigned(1)]));
            }),
            "`keys` must be an array of keyring lines",
        ),
        (
            bundle_map(|m| {
                // Bob's sigil with Carol's key.
                let line = format!(
                    "{} ed25519 {}",
                    sigil(&key(5)),
                    hex::encode(key(6).public_key().as_bytes())
                );
                m.insert("keys", Value::Array(vec![Value::text(line)]));
            }),
            "`keys` item 0",
        ),
    ];
    for (bytes, expected) in cases {
        let e: BundleError = Bundle::decode(&bytes).unwrap_err();
        assert!(e.to_string().contains(expected), "{e} / {expected}");
        // In an audit: one malformed entry naming the input and the fault.
        let r = verify(vec![bytes], &Keyring::new());
        assert_eq!(r.envelopes.len(), 1);
        assert_eq!(r.envelopes[0].status(), Status::Invalid);
        assert_eq!(codes(&r, 0), vec![ReasonCode::Malformed]);
        assert!(
            r.envelopes[0].reasons[0].detail.contains(expected),
            "{}",
            r.envelopes[0].reasons[0].detail
        );
    }
}

#[test]
fn a_bad_envelope_in_a_bundle_hides_nothing_else() {
    let bob = key(5);
    let (a, b) = (say(&bob, T0), say(&bob, T0 + 1));
    let mut broken = a.as_bytes().to_vec();
    broken.truncate(broken.len() - 3);
    let bytes = encode_bundle(&[&broken, b.as_bytes()], &[b"not a proof"], &[]);
    let r = verify(vec![bytes], &pinned(&[&bob]));
    assert_eq!(r.envelopes.len(), 2);
    assert_eq!(codes(&r, 0), vec![ReasonCode::Malformed]);
    assert_eq!(r.envelopes[1].status(), Status::Valid);
    assert_eq!(r.proofs.len(), 1);
    assert_eq!(r.proofs[0].status, Status::Invalid);
    assert!(r.proofs[0].id.is_none());
    assert!(!r.all_valid());
}

/// A witness policy for the test: a tree head is vouched for when the
/// bundle carries the checkpoint `good <size>`.
#[derive(Debug)]
struct Vouch;

impl LogPolicy for Vouch {
    fn covers(
        &self,
        head: &herald_verify::TreeHead,
        checkpoints: &[&[u8]],
    ) -> Result<String, String> {
        let want = format!("good {}", head.size());
        if checkpoints.contains(&want.as_bytes()) {
            Ok("vouched".into())
        } else {
            Err(format!(
                "no {want:?} among {} checkpoints",
                checkpoints.len()
            ))
        }
    }
}

#[test]
fn under_a_log_policy_a_molt_is_proven_only_with_a_checkpoint_it_accepts() {
    let s = story();
    let dir = tempfile::tempdir().unwrap();
    let log_key = key(9);
    let proofs = log_and_prove(dir.path(), &log_key, &[&s.envs[MOLT]]);
    let envs: Vec<&[u8]> = s.envs.iter().map(|e| e.as_bytes()).collect();
    let audit_with = |checkpoints: &[&[u8]]| {
        let b = encode_bundle_with_checkpoints(&envs, &[&proofs[0]], &[], checkpoints);
        // The checkpoints round-trip through the bundle.
        let decoded: Vec<&[u8]> = Bundle::decode(&b)
            .unwrap()
            .checkpoints()
            .iter()
            .map(|c| c.1)
            .collect();
        assert_eq!(decoded, checkpoints);
        let opts = AuditOptions {
            log_policy: Some(std::sync::Arc::new(Vouch)),
            ..AuditOptions::default()
        };
        let input = Input {
            name: "b".into(),
            bytes: b,
        };
        audit(&[input], &pinned(&[&log_key]), &opts)
    };

    // The checkpoint the policy accepts: the proof counts, the molt is proven.
    let r = audit_with(&[b"other", b"good 1"]);
    assert!(r.all_valid(), "{}", serde_json::to_string(&r).unwrap());
    assert_eq!(r.proofs[0].witnessed.as_deref(), Some("vouched"));
    assert!(
        serde_json::to_string(&r)
            .unwrap()
            .contains("\"witnessed\":\"vouched\"")
    );

    // None it accepts (or none at all): the same valid proof does not
    // count, so the new key's envelope is molt_unproven (P8 rule 3).
    for cps in [&[&b"good 2"[..]][..], &[]] {
        let r = audit_with(cps);
        assert_eq!(r.proofs[0].status, Status::Invalid);
        assert!(
            r.proofs[0].detail.starts_with("log policy: "),
            "{}",
            r.proofs[0].detail
        );
        assert_eq!(codes(&r, NEW_KEY_SPEAKS), vec![ReasonCode::MoltUnproven]);
        assert!(!r.all_valid());
    }
}
