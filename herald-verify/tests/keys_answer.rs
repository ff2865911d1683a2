//! A sigil's key history from a conduit's `GET /v1/keys/{sigil}` answer
//! (herald_verify::check_keys; CONDUIT.md, PROFILE.md P15): births by
//! hash (P2, P7), molts by the P8 rules with their P9 proofs, so a lying
//! conduit can withhold but never substitute a key.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;

use herald_core::{Envelope, EnvelopeBuilder, Kind, SigilForm, SigningKey};
use herald_verify::{
    HistoryOrigin, KeyHistory, Keyring, KeysError, KeysLimits, Log, Provenance, check_keys,
};

mod support;

use support::{DAY, T0, birth, key, molt, nonce, say, sigil};

const STH_TS: u64 = T0 + 5 * DAY;

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

fn seq(items: &[&[u8]]) -> Vec<u8> {
    items.concat()
}

fn deprecation(k: &SigningKey, signer: &SigningKey, ts: u64) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Deprecation)
        .from_sigil(sigil(k))
        .nonce(nonce())
        .payload(herald_core::cbor::Value::Map(herald_core::cbor::Map::new()))
        .sign(signer)
        .unwrap()
}

fn check(answer: &[u8], who: &SigningKey, ring: &Keyring) -> Result<KeyHistory, KeysError> {
    check_keys(answer, &sigil(who), ring, &KeysLimits::default())
}

/// Alice (key 1) born at T0, molted to key 2 at T0 + 2 d (not_before
/// T0 + 3 d), deprecated by key 2 at T0 + 4 d; the notary's key is 9.
struct Story {
    birth: Envelope,
    molt: Envelope,
    deprecation: Envelope,
    proof: Vec<u8>,
    _dir: tempfile::TempDir,
}

fn story() -> Story {
    let (alice, next, notary) = (key(1), key(2), key(9));
    let birth = birth(&alice, T0);
    let molt = molt(&alice, &next, T0 + 2 * DAY, T0 + 3 * DAY);
    let deprecation = deprecation(&alice, &next, T0 + 4 * DAY);
    let dir = tempfile::tempdir().unwrap();
    let proof = log_and_prove(dir.path(), &notary, &[&molt]).remove(0);
    Story {
        birth,
        molt,
        deprecation,
        proof,
        _dir: dir,
    }
}

#[test]
fn a_birth_alone_gives_the_sigils_own_key() {
    let s = story();
    let h = check(s.birth.as_bytes(), &key(1), &Keyring::new()).unwrap();
    assert_eq!(h.keys.len(), 1);
    assert_eq!(h.keys[0].key, key(1).public_key());
    assert_eq!(h.keys[0].origin, HistoryOrigin::Birth);
    assert_eq!(h.keys[0].since, T0);
    assert_eq!(h.deprecated, None);
    // Every form of the sigil names the same history.
    for form in [SigilForm::Short, SigilForm::Long] {
        let h = check_keys(
            s.birth.as_bytes(),
            &key(1).sigil(form),
            &Keyring::new(),
            &KeysLimits::default(),
        )
        .unwrap();
        assert_eq!(h.current().unwrap().key, key(1).public_key());
    }
}

#[test]
fn a_proven_molt_and_a_deprecation_make_the_history() {
    let s = story();
    let answer = seq(&[
        s.birth.as_bytes(),
        s.molt.as_bytes(),
        &s.proof,
        s.deprecation.as_bytes(),
    ]);
    let h = check(&answer, &key(1), &pinned(&[&key(9)])).unwrap();
    assert_eq!(h.keys.len(), 2);
    assert_eq!(h.keys[1].key, key(2).public_key());
    assert_eq!(h.keys[1].since, T0 + 3 * DAY);
    assert_eq!(h.keys[1].origin, HistoryOrigin::Molt(1));
    assert_eq!(h.keys[1].molt, Some(s.molt.id()));
    assert_eq!(h.deprecated, Some(T0 + 4 * DAY));
    assert_eq!(h.key_at(T0 + DAY).unwrap().key, key(1).public_key());
    assert_eq!(h.current().unwrap().key, key(2).public_key());
}

#[test]
fn a_birth_for_another_sigil_is_refused() {
    let s = story();
    // Bob's own birth, served for Alice.
    let bob = birth(&key(3), T0);
    let e = check(bob.as_bytes(), &key(1), &Keyring::new()).unwrap_err();
    assert!(matches!(e, KeysError::ForeignEnvelope { .. }), "{e}");
    // A birth claiming Alice's sigil but announcing Bob's key.
    let forged = EnvelopeBuilder::genesis(T0)
        .kind(Kind::Birth)
        .from_sigil(sigil(&key(1)))
        .nonce(nonce())
        .attest(
            "birth",
            herald_core::attestation::birth_attestation(&key(3).public_key(), "x", &[]),
        )
        .sign(&key(3))
        .unwrap();
    let e = check(
        &seq(&[forged.as_bytes(), s.birth.as_bytes()]),
        &key(1),
        &Keyring::new(),
    )
    .unwrap_err();
    assert_eq!(e, KeysError::ForeignBirth { offset: 0 });
    assert!(e.to_string().contains("another sigil"), "{e}");
}

#[test]
fn a_molt_without_its_proof_gives_no_key() {
    let s = story();
    let answer = seq(&[s.birth.as_bytes(), s.molt.as_bytes()]);
    let e = check(&answer, &key(1), &pinned(&[&key(9)])).unwrap_err();
    assert_eq!(
        e,
        KeysError::MoltUnproven {
            id: s.molt.id(),
            detail: None
        }
    );
    // With the proof, but the log's key not pinned: still unproven.
    let answer = seq(&[s.birth.as_bytes(), s.molt.as_bytes(), &s.proof]);
    let e = check(&answer, &key(1), &Keyring::new()).unwrap_err();
    assert!(
        matches!(
            e,
            KeysError::MoltUnproven {
                detail: Some(_),
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_molt_the_rules_refuse_gives_no_key() {
    let (alice, next, notary) = (key(1), key(2), key(9));
    let b = birth(&alice, T0);
    // Inside the cool-off (P8 rule 2): not_before less than a day after
    // the birth.
    let early = molt(&alice, &next, T0 + 10, T0 + 20);
    let dir = tempfile::tempdir().unwrap();
    let proof = log_and_prove(dir.path(), &notary, &[&early]).remove(0);
    let e = check(
        &seq(&[b.as_bytes(), early.as_bytes(), &proof]),
        &alice,
        &pinned(&[&notary]),
    )
    .unwrap_err();
    match e {
        KeysError::Rejected { kind, reasons, .. } => {
            assert_eq!(kind, "molt");
            assert_eq!(reasons, ["molt_cooloff"]);
        }
        other => panic!("{other}"),
    }
    // A molt signed by a key that is not the sigil's: does not verify.
    let stolen = support::molt_as(&alice, &key(4), &key(4), T0 + 2 * DAY, T0 + 3 * DAY);
    let e = check(
        &seq(&[b.as_bytes(), stolen.as_bytes()]),
        &alice,
        &Keyring::new(),
    )
    .unwrap_err();
    assert!(matches!(e, KeysError::Rejected { .. }), "{e}");
}

#[test]
fn overlapping_molts_are_disputed() {
    let (alice, notary) = (key(1), key(9));
    let b = birth(&alice, T0);
    let m1 = molt(&alice, &key(2), T0 + 2 * DAY, T0 + 4 * DAY);
    let m2 = molt(&alice, &key(3), T0 + 3 * DAY, T0 + 5 * DAY);
    let dir = tempfile::tempdir().unwrap();
    let proofs = log_and_prove(dir.path(), &notary, &[&m1, &m2]);
    let answer = seq(&[
        b.as_bytes(),
        m1.as_bytes(),
        &proofs[0],
        m2.as_bytes(),
        &proofs[1],
    ]);
    let e = check(&answer, &alice, &pinned(&[&notary])).unwrap_err();
    assert_eq!(e, KeysError::Disputed);
}

#[test]
fn bad_bytes_are_named() {
    let s = story();
    let ring = Keyring::new();
    assert_eq!(check(&[], &key(1), &ring).unwrap_err(), KeysError::Empty);
    // Truncated.
    let b = s.birth.as_bytes();
    let e = check(&b[..b.len() - 3], &key(1), &ring).unwrap_err();
    assert!(
        matches!(e, KeysError::Unsplittable { offset: 0, .. }),
        "{e}"
    );
    // Trailing bytes after a good birth.
    let mut trailing = b.to_vec();
    trailing.extend_from_slice(&[0xff, 0x00]);
    let e = check(&trailing, &key(1), &ring).unwrap_err();
    assert!(
        matches!(e, KeysError::Unsplittable { offset, .. } if offset == b.len()),
        "{e}"
    );
    // Another item (a CBOR integer).
    let mut other = b.to_vec();
    other.push(0x01);
    let e = check(&other, &key(1), &ring).unwrap_err();
    assert_eq!(e, KeysError::NotAnItem { offset: b.len() });
    // Oversize.
    let limits = KeysLimits::new(b.len() - 1, 64);
    let e = check_keys(b, &sigil(&key(1)), &ring, &limits).unwrap_err();
    assert!(matches!(e, KeysError::Oversize { .. }), "{e}");
    // Too many envelopes.
    let births: Vec<Envelope> = (0..3).map(|i| birth(&key(1), T0 + i)).collect();
    let many = seq(&births.iter().map(|e| e.as_bytes()).collect::<Vec<_>>());
    let e = check_keys(&many, &sigil(&key(1)), &ring, &KeysLimits::new(1 << 20, 2)).unwrap_err();
    assert_eq!(e, KeysError::TooManyItems { limit: 2 });
    // The same envelope twice.
    let e = check(&seq(&[b, b]), &key(1), &ring).unwrap_err();
    assert_eq!(e, KeysError::Duplicate { id: s.birth.id() });
    // A message among them.
    let e = check(&seq(&[b, say(&key(1), T0 + 1).as_bytes()]), &key(1), &ring).unwrap_err();
    assert!(
        matches!(
            e,
            KeysError::UnexpectedKind {
                kind: "message",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn without_a_birth_a_pinned_key_anchors_the_molts() {
    let s = story();
    let answer = seq(&[s.molt.as_bytes(), &s.proof]);
    let e = check(&answer, &key(1), &pinned(&[&key(9)])).unwrap_err();
    assert_eq!(e, KeysError::NoBirth);
    let h = check(&answer, &key(1), &pinned(&[&key(9), &key(1)])).unwrap();
    assert_eq!(h.keys[0].origin, HistoryOrigin::Pinned);
    assert_eq!(h.current().unwrap().key, key(2).public_key());
}
