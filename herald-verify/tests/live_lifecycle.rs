//! P8 identity lifecycle in live mode (`Receiver`): one test per rule, each
//! asserting its reason code by name, inclusion proofs (rule 3), and the
//! witnessed state surviving a restart (the store file reopened).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{
    Envelope, EnvelopeBuilder, Kind, ReasonCode, Scope, Sigil, SigilForm, SigningKey, Status,
};
use herald_verify::{
    EnvelopeReport, InclusionProof, Keyring, Leaf, Log, MoltProofError, Provenance, Receiver, Store,
};

mod support;

use support::{DAY, T0, birth, birth_with, key, molt, molt_as, nonce, say, say_as, sigil};

/// The owner these tests create their stores for.
const OWNER: &str = "test";

/// The receivers' clock: every envelope here is in its past, none stale.
const NOW: u64 = T0 + 20 * DAY;

fn deprecation(k: &SigningKey, ts: u64) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Deprecation)
        .nonce(nonce())
        .payload(Value::Map(Map::new()))
        .sign(k)
        .unwrap()
}

fn duress(k: &SigningKey, witness: &SigningKey, ts: u64) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Duress)
        .nonce(nonce())
        .payload(Value::Map(Map::new()))
        .sign(k)
        .unwrap()
        .cosign(witness, Scope::DuressWitness, None)
        .unwrap()
}

/// A receiver on the store at `path`, with `pinned` keys and the clock at NOW.
fn receiver(path: &Path, pinned: &[&SigningKey]) -> Receiver {
    let mut ring = Keyring::new();
    for k in pinned {
        ring.insert(k.public_key(), Provenance::Pinned);
    }
    Receiver::new(Store::open_or_create(path, OWNER).unwrap(), ring).with_clock(|| NOW)
}

fn codes(r: &EnvelopeReport) -> Vec<&'static str> {
    let mut c: Vec<&'static str> = r.reasons.iter().map(|r| r.code.name()).collect();
    c.sort_unstable();
    c
}

/// Received and accepted with no reason at all.
fn ok(rx: &Receiver, e: &Envelope) -> EnvelopeReport {
    let r = rx.receive(e.as_bytes()).unwrap();
    assert_eq!(r.status(), Status::Valid, "{:?}", r.reasons);
    assert!(r.reasons.is_empty(), "{:?}", r.reasons);
    r
}

/// Received and refused for exactly `code`.
fn only(rx: &Receiver, e: &Envelope, code: ReasonCode) -> EnvelopeReport {
    let r = rx.receive(e.as_bytes()).unwrap();
    assert_eq!(r.status(), Status::Invalid, "{:?}", r.reasons);
    assert_eq!(codes(&r), [code.name()]);
    r
}

#[test]
fn deprecation_rejects_later_envelopes_from_the_sigil_not_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let (a, b, mallory) = (key(1), key(2), key(3));
    let rx = receiver(&path, &[&b]);
    // `a` is not pinned: its birth teaches this receiver its key (P7).
    let r = ok(&rx, &birth(&a, T0));
    assert_eq!(r.key_source.map(|k| k.name()), Some("birth"));
    let r = ok(&rx, &say(&a, T0 + 10));
    assert_eq!(
        (
            r.key_source.map(|k| k.name()),
            r.signing_key.map(|k| k.to_string()).as_deref()
        ),
        (Some("birth"), Some("birth"))
    );
    // A deprecation whose origin does not verify has no effect.
    let forged = EnvelopeBuilder::genesis(T0 + 15)
        .kind(Kind::Deprecation)
        .from_sigil(sigil(&a))
        .nonce(nonce())
        .payload(Value::Map(Map::new()))
        .sign(&mallory)
        .unwrap();
    assert_eq!(
        rx.receive(forged.as_bytes()).unwrap().status(),
        Status::Invalid
    );
    ok(&rx, &say(&a, T0 + 17));
    ok(&rx, &deprecation(&a, T0 + 20));
    only(&rx, &say(&a, T0 + 30), ReasonCode::DeprecatedSigner);
    // Envelopes up to the deprecation's ts still count, and envelopes to
    // the deprecated sigil are unaffected.
    ok(&rx, &say(&a, T0 + 20));
    let to_the_dead = EnvelopeBuilder::genesis(T0 + 40)
        .kind(Kind::PosthumousCitation)
        .to(sigil(&a))
        .nonce(nonce())
        .payload(Value::text("in memoriam"))
        .sign(&b)
        .unwrap();
    ok(&rx, &to_the_dead);
    // A second, later deprecation is itself from a deprecated signer.
    only(&rx, &deprecation(&a, T0 + 50), ReasonCode::DeprecatedSigner);
    let w = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert_eq!(w.deprecated, Some(T0 + 20));
    assert_eq!(
        w.birth.as_ref().map(|b| b.key),
        Some(*a.public_key().as_bytes())
    );

    // Restart: the deprecation is still in force.
    drop(rx);
    let rx = receiver(&path, &[&b]);
    only(&rx, &say(&a, T0 + 60), ReasonCode::DeprecatedSigner);
    // Every form of the sigil names the same identity.
    let short = a.sigil(SigilForm::Short);
    assert_eq!(
        rx.lifecycle(&short).unwrap().unwrap().deprecated,
        Some(T0 + 20)
    );
}

#[test]
fn a_current_duress_marks_later_envelopes_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (a, w, other) = (key(1), key(9), key(8));
    let mut dw = Map::new();
    dw.insert("sigil", Value::Text(sigil(&w).to_string()));
    let born = birth_with(&a, T0, &[], |b| b.attest("duress_witness", Value::Map(dw)));

    let rx = receiver(&dir.path().join("live.redb"), &[&w, &other]);
    ok(&rx, &born);
    // A duress co-signed by someone other than the registered witness has no effect.
    let fake = rx.receive(duress(&a, &other, T0 + 5).as_bytes()).unwrap();
    assert!(fake.status() != Status::Invalid, "{:?}", fake.reasons);
    ok(&rx, &say(&a, T0 + 6));
    // The witness's co-signature makes it count.
    let black = rx.receive(duress(&a, &w, T0 + 10).as_bytes()).unwrap();
    assert_eq!(black.status(), Status::Valid, "{:?}", black.reasons);
    let later = rx.receive(say(&a, T0 + 20).as_bytes()).unwrap();
    assert_eq!(later.status(), Status::Valid, "a warning keeps the verdict");
    assert_eq!(codes(&later), [ReasonCode::SignerUnderDuress.name()]);
    // Before the duress, nothing.
    ok(&rx, &say(&a, T0 + 9));
    assert_eq!(rx.lifecycle(&sigil(&a)).unwrap().unwrap().duress, [T0 + 10]);
    // A later lifecycle event (a deprecation) ends "latest is a duress".
    ok(&rx, &deprecation(&a, T0 + 30));
    ok(&rx, &say(&a, T0 + 30));

    // With no witness registered, any valid witness signature counts.
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("live.redb"), &[&other]);
    ok(&rx, &birth(&a, T0));
    ok(&rx, &duress(&a, &other, T0 + 10));
    let later = rx.receive(say(&a, T0 + 20).as_bytes()).unwrap();
    assert_eq!(codes(&later), [ReasonCode::SignerUnderDuress.name()]);
}

#[test]
fn molt_inside_the_cooloff_is_refused_and_its_proof_too() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a2, lk) = (key(1), key(2), key(50));
    let rx = receiver(&dir.path().join("live.redb"), &[&lk]);
    ok(&rx, &birth(&a, T0));
    ok(&rx, &say(&a, T0 + 100));
    // not_before less than 24 h after the outgoing key's last envelope.
    let hasty = molt(&a, &a2, T0 + 200, T0 + 100 + DAY - 1);
    only(&rx, &hasty, ReasonCode::MoltCooloff);
    let w = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert!(w.molts[0].cooloff && !w.molts[0].accepted());
    // Its new key counts for nothing, proof or not.
    let r = only(
        &rx,
        &say_as(&a, &a2, T0 + 2 * DAY),
        ReasonCode::MoltUnproven,
    );
    // `signing_key` names accepted molts only, in both modes.
    assert_eq!(r.signing_key, None);
    let log_dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(log_dir.path(), &lk.public_key(), None).unwrap();
    log.append(&hasty.view()).unwrap();
    let proof = log.inclusion_proof(&lk, &hasty.id(), None, T0).unwrap();
    assert!(matches!(
        rx.accept_inclusion_proof(&proof),
        Err(MoltProofError::MoltNotAccepted { .. })
    ));
    // The old key is not retired by a refused molt.
    ok(&rx, &say(&a, T0 + 3 * DAY));
}

#[test]
fn a_pinned_herald_waives_the_cooloff_when_there_is_no_policy() {
    let (a, a2, h) = (key(1), key(2), key(7));
    let hasty = molt(&a, &a2, T0 + 200, T0 + 300)
        .cosign(&h, Scope::HeraldEndorsement, None)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("live.redb"), &[&h]);
    ok(&rx, &birth(&a, T0));
    ok(&rx, &say(&a, T0 + 100));
    ok(&rx, &hasty);
    assert!(rx.lifecycle(&sigil(&a)).unwrap().unwrap().molts[0].accepted());
    // The same endorsement by an unpinned Herald waives nothing (and is unknown).
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("live.redb"), &[]);
    ok(&rx, &birth(&a, T0));
    ok(&rx, &say(&a, T0 + 100));
    let r = rx.receive(hasty.as_bytes()).unwrap();
    assert_eq!(codes(&r), ["molt_cooloff", "unknown_signer"]);
    assert_eq!(r.status(), Status::Invalid);
}

#[test]
fn molt_policy_needs_its_threshold_of_distinct_cosigners() {
    let (a, a2) = (key(1), key(2));
    let (h1, h2, h3) = (key(11), key(12), key(13));
    let mut policy = Map::new();
    policy.insert(
        "cosigners",
        Value::Array(
            [&h1, &h2, &h3]
                .iter()
                .map(|k| Value::Text(sigil(k).to_string()))
                .collect(),
        ),
    );
    policy.insert("threshold", Value::Unsigned(2));
    let born = birth_with(&a, T0, &[], |b| b.attest("molt_policy", Value::Map(policy)));
    let m = molt(&a, &a2, T0 + 10 * DAY, T0 + 11 * DAY);
    let one = m.cosign(&h1, Scope::HeraldEndorsement, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("live.redb"), &[&h1, &h2, &h3]);
    ok(&rx, &born);
    only(&rx, &one, ReasonCode::MoltCosignMissing);
    // The same molt (same id: co-signing does not change it), now with the
    // second endorsement it lacked, is judged again and accepted.
    let two = one.cosign(&h3, Scope::HeraldEndorsement, None).unwrap();
    assert_eq!(two.id(), one.id());
    ok(&rx, &two);
    let w = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert_eq!(w.molts.len(), 1);
    assert!(w.molts[0].accepted());
    // Once accepted, the envelope is a replay like any other.
    only(&rx, &two, ReasonCode::ReplayedNonce);
}

#[test]
fn overlapping_molts_are_both_void_and_the_sigil_disputed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let (a, b, c) = (key(1), key(2), key(3));
    let rx = receiver(&path, &[]);
    ok(&rx, &birth(&a, T0));
    ok(&rx, &say(&a, T0 + 5));
    let m1 = molt(&a, &b, T0 + 10, T0 + 2 * DAY);
    let m2 = molt(&a, &c, T0 + 20, T0 + 3 * DAY);
    ok(&rx, &m1);
    only(&rx, &m2, ReasonCode::Disputed);
    only(&rx, &say(&a, T0 + 30), ReasonCode::Disputed);
    let w = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert!(w.disputed);
    assert!(w.molts.iter().all(|m| m.disputed && !m.accepted()));
    // m1's key, accepted a moment ago, no longer counts.
    let r = rx
        .receive(say_as(&a, &b, T0 + 2 * DAY + 1).as_bytes())
        .unwrap();
    assert_eq!(codes(&r), ["disputed", "molt_unproven"]);

    // Restart: still disputed, from every key.
    drop(rx);
    let rx = receiver(&path, &[]);
    only(&rx, &say(&a, T0 + 40), ReasonCode::Disputed);
}

#[test]
fn the_old_key_is_rotated_from_not_before_on() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a2) = (key(1), key(2));
    let rx = receiver(&dir.path().join("live.redb"), &[&a]);
    // A pinned identity with no birth seen: t_last comes from its envelopes.
    ok(&rx, &say(&a, T0 + 100));
    let not_before = T0 + 100 + DAY;
    ok(&rx, &molt(&a, &a2, T0 + 200, not_before));
    ok(&rx, &say(&a, not_before - 20));
    let r = only(&rx, &say(&a, not_before + 20), ReasonCode::RotatedKey);
    assert_eq!(
        r.signing_key.map(|k| k.to_string()).as_deref(),
        Some("birth")
    );
    assert!(r.reasons[0].detail.contains("molt 1"));
    // Nor may the old key molt again once retired.
    only(
        &rx,
        &molt(&a, &key(3), not_before + 30, not_before + 2 * DAY),
        ReasonCode::RotatedKey,
    );
}

#[test]
fn the_new_key_needs_an_inclusion_proof_of_its_molt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let (a, a2, lk, unpinned_log) = (key(1), key(2), key(50), key(51));
    let rx = receiver(&path, &[&lk]);
    ok(&rx, &birth(&a, T0));
    ok(&rx, &say(&a, T0 + 100));
    let not_before = T0 + 100 + DAY;
    let patient = molt(&a, &a2, T0 + 200, not_before);

    let log_dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(log_dir.path(), &lk.public_key(), None).unwrap();
    let chatter = say(&a, T0 + 150);
    log.append(&chatter.view()).unwrap();
    log.append(&patient.view()).unwrap();
    let proof = log
        .inclusion_proof(&lk, &patient.id(), None, T0 + 300)
        .unwrap();
    // A proof before its molt is refused: offer it again afterwards.
    assert!(matches!(
        rx.accept_inclusion_proof(&proof),
        Err(MoltProofError::UnknownMolt { .. })
    ));

    ok(&rx, &patient);
    let r = only(
        &rx,
        &say_as(&a, &a2, not_before + 10),
        ReasonCode::MoltUnproven,
    );
    assert_eq!(
        r.signing_key.map(|k| k.to_string()).as_deref(),
        Some("molt 1")
    );
    assert_eq!(r.key_source.map(|k| k.name()), Some("molt"));
    assert!(
        r.reasons[0].detail.contains("inclusion proof"),
        "{:?}",
        r.reasons
    );

    // Proofs that do not count: of another envelope, from an unpinned log,
    // from a log key the keyring learned from a birth only.
    let other = log
        .inclusion_proof(&lk, &chatter.id(), None, T0 + 300)
        .unwrap();
    assert!(matches!(
        rx.accept_inclusion_proof(&other),
        Err(MoltProofError::UnknownMolt { .. })
    ));
    let dir2 = tempfile::tempdir().unwrap();
    let mut rogue = Log::create(dir2.path(), &unpinned_log.public_key(), None).unwrap();
    rogue.append(&patient.view()).unwrap();
    let rogue_proof = rogue
        .inclusion_proof(&unpinned_log, &patient.id(), None, T0 + 300)
        .unwrap();
    assert!(matches!(
        rx.accept_inclusion_proof(&rogue_proof),
        Err(MoltProofError::Proof(_))
    ));
    let mut learned = Keyring::new();
    learned.insert(unpinned_log.public_key(), Provenance::Birth);
    let path2 = dir2.path().join("learned.redb");
    let rx2 =
        Receiver::new(Store::open_or_create(&path2, OWNER).unwrap(), learned).with_clock(|| NOW);
    let e = rx2.accept_inclusion_proof(&rogue_proof).unwrap_err();
    assert!(matches!(e, MoltProofError::Proof(_)), "{e}");
    // A leaf with the molt's id but other fields, in the pinned log's
    // tree: the proof verifies, yet it is not the molt's leaf.
    let dir3 = tempfile::tempdir().unwrap();
    let mut odd = Log::create(dir3.path(), &lk.public_key(), None).unwrap();
    odd.append_leaves(&[Leaf::from_parts(patient.id(), None, [7; 32], T0, None)])
        .unwrap();
    let odd_proof = odd
        .inclusion_proof(&lk, &patient.id(), None, T0 + 300)
        .unwrap();
    assert!(matches!(
        rx.accept_inclusion_proof(&odd_proof),
        Err(MoltProofError::LeafMismatch { .. })
    ));
    let _: &InclusionProof = &odd_proof;

    // The proof: accepted once, idempotent after.
    let proven = rx.accept_inclusion_proof(&proof).unwrap();
    assert_eq!((proven.number, proven.already), (1, false));
    assert!(rx.accept_inclusion_proof(&proof).unwrap().already);
    let r = ok(&rx, &say_as(&a, &a2, not_before + 20));
    assert_eq!(
        r.signing_key.map(|k| k.to_string()).as_deref(),
        Some("molt 1")
    );
    // Still only from not_before on.
    let r = only(
        &rx,
        &say_as(&a, &a2, not_before - 10),
        ReasonCode::MoltUnproven,
    );
    assert!(r.reasons[0].detail.contains("before its not_before"));

    // Restart: the proof is remembered.
    drop(rx);
    let rx = receiver(&path, &[&lk]);
    ok(&rx, &say_as(&a, &a2, not_before + 30));
    only(&rx, &say(&a, not_before + 30), ReasonCode::RotatedKey);
}

#[test]
fn the_whole_state_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let (a, a2, w) = (key(1), key(2), key(9));
    let mut dw = Map::new();
    dw.insert("sigil", Value::Text(sigil(&w).to_string()));
    let rx = receiver(&path, &[&w]);
    ok(
        &rx,
        &birth_with(&a, T0, &[], |b| b.attest("duress_witness", Value::Map(dw))),
    );
    ok(&rx, &say(&a, T0 + 100));
    ok(&rx, &molt(&a, &a2, T0 + 200, T0 + 100 + DAY));
    ok(&rx, &duress(&a, &w, T0 + 300));
    ok(&rx, &deprecation(&a, T0 + 400));
    let before = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert_eq!(before.molts.len(), 1);
    assert_eq!(before.duress, [T0 + 300]);
    assert_eq!(before.deprecated, Some(T0 + 400));
    assert!(before.birth.as_ref().unwrap().duress_witness.is_some());
    assert_eq!(before.last_seen, [(*a.public_key().as_bytes(), T0 + 400)]);
    drop(rx.into_store());
    let rx = receiver(&path, &[&w]);
    assert_eq!(rx.lifecycle(&sigil(&a)).unwrap().unwrap(), before);
    assert_eq!(rx.lifecycle(&sigil(&key(4))).unwrap(), None);
}

#[test]
fn a_damaged_lifecycle_record_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let a = key(1);
    let rx = receiver(&path, &[&a]);
    ok(&rx, &say(&a, T0));
    drop(rx);
    // Overwrite a's record with bytes that are not one.
    let who: [u8; 10] = a.sigil(SigilForm::Short).hash_prefix()[..10]
        .try_into()
        .unwrap();
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let def: redb::TableDefinition<&[u8; 10], &[u8]> =
                redb::TableDefinition::new("lifecycle");
            let mut table = txn.open_table(def).unwrap();
            table.insert(&who, b"\xa1\x61v\x02".as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let rx = receiver(&path, &[&a]);
    let e = rx.receive(say(&a, T0 + 1).as_bytes()).unwrap_err();
    assert!(
        matches!(e, herald_verify::StoreError::Corrupted { .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("lifecycle record"), "{text}");
    assert!(rx.lifecycle(&sigil(&a)).is_err());
    // Other identities are unaffected.
    let b = key(2);
    let rx = {
        drop(rx);
        receiver(&path, &[&a, &b])
    };
    ok(&rx, &say(&b, T0));
}

/// Receiving threads share one `Receiver`: each read-modify-write of an
/// identity's record happens under the write lock, so no update is lost.
#[test]
fn concurrent_receives_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let a = key(1);
    let rx = std::sync::Arc::new(receiver(&dir.path().join("live.redb"), &[&a]));
    let envs: Vec<Envelope> = (0..64).map(|i| say(&a, T0 + i)).collect();
    let envs = std::sync::Arc::new(envs);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (rx, envs) = (std::sync::Arc::clone(&rx), std::sync::Arc::clone(&envs));
            std::thread::spawn(move || {
                // Thread t takes every fourth envelope, latest first.
                for e in envs.iter().rev().skip(t).step_by(4) {
                    ok(&rx, e);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let w = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert_eq!(w.last_seen, [(*a.public_key().as_bytes(), T0 + 63)]);
    assert_eq!(rx.store().len().unwrap(), 64);
}

fn birth_of(k: &SigningKey, ts: u64, lineage: &[Sigil]) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Birth)
        .nonce(nonce())
        .attest(
            "birth",
            birth_attestation(&k.public_key(), "test agent", lineage),
        )
        .sign(k)
        .unwrap()
}

#[test]
fn lineage_deprecated_parent_cycle_and_consent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let (x, y, p, c, d) = (key(21), key(22), key(23), key(24), key(25));
    let rx = receiver(&path, &[&p]);
    // x names y before y is witnessed: no cycle yet; y naming x closes one.
    ok(&rx, &birth_of(&x, T0, &[sigil(&y)]));
    only(
        &rx,
        &birth_of(&y, T0 + 1, &[sigil(&x)]),
        ReasonCode::LineageCycle,
    );
    // A refused birth is not witnessed; x's lineage is.
    assert_eq!(rx.lifecycle(&sigil(&y)).unwrap(), None);
    let x_birth = rx.lifecycle(&sigil(&x)).unwrap().unwrap().birth.unwrap();
    assert_eq!(x_birth.lineage.len(), 1);

    ok(&rx, &birth_of(&p, T0, &[]));
    // Consent: the parent co-signed lineage_consent.
    let consented = birth_of(&c, T0 + 5, &[sigil(&p)])
        .cosign(&p, Scope::LineageConsent, None)
        .unwrap();
    let r = ok(&rx, &consented);
    assert_eq!(r.lineage_consents, vec![sigil(&p).to_string()]);
    ok(&rx, &deprecation(&p, T0 + 10));
    // Restart: a birth after the parent's deprecation names a dead parent.
    drop(rx);
    let rx = receiver(&path, &[&p]);
    only(
        &rx,
        &birth_of(&d, T0 + 20, &[sigil(&p)]),
        ReasonCode::LineageDeprecatedParent,
    );
    // ...and one dated at it too (P8: "at or before"); not one before it.
    only(
        &rx,
        &birth_of(&d, T0 + 10, &[sigil(&p)]),
        ReasonCode::LineageDeprecatedParent,
    );
    ok(&rx, &birth_of(&d, T0 + 9, &[sigil(&p)]));
}

#[test]
fn a_molted_in_key_molts_again() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a2, a3, lk) = (key(1), key(2), key(3), key(50));
    let rx = receiver(&dir.path().join("live.redb"), &[&lk]);
    let log_dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(log_dir.path(), &lk.public_key(), None).unwrap();
    let prove = |log: &mut Log, m: &Envelope| {
        log.append(&m.view()).unwrap();
        let p = log.inclusion_proof(&lk, &m.id(), None, NOW).unwrap();
        rx.accept_inclusion_proof(&p).unwrap()
    };
    ok(&rx, &birth(&a, T0));
    let nb1 = T0 + DAY;
    let first = molt(&a, &a2, T0 + 10, nb1);
    ok(&rx, &first);
    assert_eq!(prove(&mut log, &first).number, 1);
    ok(&rx, &say_as(&a, &a2, nb1 + 10));
    // The new key's own cool-off counts from its own last envelope.
    let hasty = molt_as(&a, &a2, &a3, nb1 + 20, nb1 + 10 + DAY - 1);
    only(&rx, &hasty, ReasonCode::MoltCooloff);
    let nb2 = nb1 + 10 + DAY;
    let second = molt_as(&a, &a2, &a3, nb1 + 30, nb2 + 100);
    // The hasty molt's window overlaps: both are void and the sigil disputed.
    only(&rx, &second, ReasonCode::Disputed);
    let w = rx.lifecycle(&sigil(&a)).unwrap().unwrap();
    assert!(w.disputed && w.molts[1].disputed && w.molts[2].disputed);
    assert!(w.molts[0].accepted() && w.molts[0].proven);

    // Without the hasty attempt, the second molt is accepted: molt 2.
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("live.redb"), &[&lk]);
    let prove = |log: &mut Log, m: &Envelope| {
        let p = log.inclusion_proof(&lk, &m.id(), None, NOW).unwrap();
        rx.accept_inclusion_proof(&p).unwrap()
    };
    ok(&rx, &birth(&a, T0));
    ok(&rx, &first);
    assert_eq!(prove(&mut log, &first).number, 1);
    ok(&rx, &say_as(&a, &a2, nb1 + 10));
    ok(&rx, &second);
    log.append(&second.view()).unwrap();
    assert_eq!(prove(&mut log, &second).number, 2);
    let r = ok(&rx, &say_as(&a, &a3, nb2 + 200));
    assert_eq!(
        r.signing_key.map(|k| k.to_string()).as_deref(),
        Some("molt 2")
    );
    // Molt 1's key is retired by molt 2; the birth key by molt 1.
    let r = only(&rx, &say_as(&a, &a2, nb2 + 200), ReasonCode::RotatedKey);
    assert_eq!(
        r.signing_key.map(|k| k.to_string()).as_deref(),
        Some("molt 1")
    );
    only(&rx, &say(&a, nb2 + 200), ReasonCode::RotatedKey);
}

/// CONDUIT.md *Who may read what*: the keys a receiver holds for a sigil
/// (`Receiver::signing_keys`) follow what it witnessed: none before the
/// birth, the birth key, then the molt's new key from `not_before`.
#[test]
fn signing_keys_follow_birth_and_molt() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a2) = (key(1), key(2));
    let rx = receiver(&dir.path().join("live.redb"), &[]);
    let s = sigil(&a);
    assert!(rx.signing_keys(&s, T0).unwrap().is_empty());
    ok(&rx, &birth(&a, T0));
    assert_eq!(rx.signing_keys(&s, T0 + 10).unwrap(), [a.public_key()]);
    let not_before = T0 + 200 + DAY;
    ok(&rx, &molt(&a, &a2, T0 + 200, not_before));
    assert_eq!(
        rx.signing_keys(&s, not_before - 1).unwrap(),
        [a.public_key()]
    );
    assert_eq!(rx.signing_keys(&s, not_before).unwrap(), [a2.public_key()]);
    // Another form of the sigil names the same identity.
    let long = a.sigil(SigilForm::Long);
    assert_eq!(
        rx.signing_keys(&long, not_before).unwrap(),
        [a2.public_key()]
    );
}
