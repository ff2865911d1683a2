// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, ReasonCode, Scope, SigningKey, Status};
use herald_verify::{AuditOptions, EnvelopeReport, Input, Keyring, Provenance, Report, audit};

mod support;

use support::{DAY, T0, birth, birth_with, key, molt, molt_as, nonce, say, say_as, sigil};

fn run(envs: &[&Envelope], pinned: &[&SigningKey]) -> Report {
    let mut ring = Keyring::new();
    for k in pinned {
        ring.insert(k.public_key(), Provenance::Pinned);
    }
    let bytes = envs.iter().flat_map(|e| e.as_bytes().to_vec()).collect();
    audit(
        &[Input {
            name: "set".into(),
            bytes,
        }],
        &ring,
        &AuditOptions::default(),
    )
}

fn codes(r: &EnvelopeReport) -> Vec<ReasonCode> {
    let mut c: Vec<ReasonCode> = r.reasons.iter().map(|r| r.code).collect();
    c.sort();
    c
}

#[test]
fn deprecation_rejects_later_envelopes_from_the_sigil_not_to_it() {
    let (a, b) = (key(1), key(2));
    let before = say(&a, T0 + 10);
    let death = EnvelopeBuilder::genesis(T0 + 20)
        .kind(Kind::Deprecation)
        .nonce(nonce())
        .payload(Value::Map(Map::new()))
        .sign(&a)
        .unwrap();
    let after = say(&a, T0 + 30);
    let to_the_dead = EnvelopeBuilder::genesis(T0 + 40)
        .kind(Kind::PosthumousCitation)
        .to(sigil(&a))
        .nonce(nonce())
        .payload(Value::text("in memoriam"))
        .sign(&b)
        .unwrap();
    let r = run(
        &[&birth(&a, T0), &before, &death, &after, &to_the_dead],
        &[&b],
    );
    let s: Vec<Status> = r.envelopes.iter().map(|e| e.status()).collect();
    assert_eq!(
        s,
        vec![
            Status::Valid,
            Status::Valid,
            Status::Valid,
            Status::Invalid,
            Status::Valid
        ]
    );
    assert_eq!(codes(&r.envelopes[3]), vec![ReasonCode::DeprecatedSigner]);
}

#[test]
fn a_current_duress_marks_later_envelopes_with_a_warning() {
    let (a, w, other) = (key(1), key(9), key(8));
    let mut dw = Map::new();
    dw.insert("sigil", Value::Text(sigil(&w).to_string()));
    let born = birth_with(&a, T0, &[], |b| b.attest("duress_witness", Value::Map(dw)));
    let duress = |witness: &SigningKey, ts| {
        EnvelopeBuilder::genesis(ts)
            .kind(Kind::Duress)
            .nonce(nonce())
            .payload(Value::Map(Map::new()))
            .sign(&a)
            .unwrap()
            .cosign(witness, Scope::DuressWitness, None)
            .unwrap()
    };
    let black = duress(&w, T0 + 10);
    let later = say(&a, T0 + 20);
    let r = run(&[&born, &black, &later], &[&w]);
    assert_eq!(r.envelopes[2].status(), Status::Valid);
    assert_eq!(codes(&r.envelopes[2]), vec![ReasonCode::SignerUnderDuress]);
    // A duress co-signed by someone other than the registered witness has no effect.
    let fake = duress(&other, T0 + 10);
    let r = run(&[&born, &fake, &later], &[&other]);
    assert_eq!(codes(&r.envelopes[2]), vec![]);
}

#[test]
fn molt_cooloff_and_an_accepted_molt() {
    let (a, a2) = (key(1), key(2));
    let born = birth(&a, T0);
    let last = say(&a, T0 + 100);
    // Too soon: not_before less than 24 h after the outgoing key's last envelope.
    let hasty = molt(&a, &a2, T0 + 200, T0 + 100 + DAY - 1);
    let r = run(&[&born, &last, &hasty], &[]);
    assert_eq!(codes(&r.envelopes[2]), vec![ReasonCode::MoltCooloff]);
    assert_eq!(r.envelopes[2].status(), Status::Invalid);

    // Patient: accepted. Then the new key's envelopes need an inclusion proof
    // (rule 3), and the old key is retired from not_before on.
    let not_before = T0 + 100 + DAY;
    let patient = molt(&a, &a2, T0 + 200, not_before);
    let early_new = say_as(&a, &a2, not_before - 10);
    let new = say_as(&a, &a2, not_before + 10);
    let old_after = say(&a, not_before + 20);
    let old_before = say(&a, not_before - 20);
    let r = run(
        &[
            &born,
            &last,
            &patient,
            &new,
            &old_after,
            &old_before,
            &early_new,
        ],
        &[],
    );
    assert_eq!(
        r.envelopes[2].status(),
        Status::Valid,
        "{:?}",
        r.envelopes[2]
    );
    assert_eq!(codes(&r.envelopes[3]), vec![ReasonCode::MoltUnproven]);
    assert_eq!(
        r.envelopes[3].signing_key.map(|k| k.to_string()).as_deref(),
        Some("molt 1")
    );
    assert_eq!(r.envelopes[3].key_source.map(|k| k.name()), Some("molt"));
    assert!(r.envelopes[3].reasons[0].detail.contains("inclusion proof"));
    assert_eq!(codes(&r.envelopes[4]), vec![ReasonCode::RotatedKey]);
    assert_eq!(
        r.envelopes[4].signing_key.map(|k| k.to_string()).as_deref(),
        Some("birth")
    );
    assert_eq!(codes(&r.envelopes[5]), vec![]);
    assert_eq!(codes(&r.envelopes[6]), vec![ReasonCode::MoltUnproven]);
    assert!(
        r.envelopes[6].reasons[0]
            .detail
            .contains("before its not_before")
    );
}

#[test]
fn a_trusted_herald_waives_the_cooloff_when_there_is_no_policy() {
    let (a, a2, h) = (key(1), key(2), key(7));
    let born = birth(&a, T0);
    let last = say(&a, T0 + 100);
    let hasty = molt(&a, &a2, T0 + 200, T0 + 300)
        .cosign(&h, Scope::HeraldEndorsement, None)
        .unwrap();
    let r = run(&[&born, &last, &hasty], &[&h]);
    assert_eq!(codes(&r.envelopes[2]), vec![]);
    // The same endorsement by an unpinned Herald waives nothing (and is unknown).
    let r = run(&[&born, &last, &hasty], &[]);
    assert_eq!(
        codes(&r.envelopes[2]),
        vec![ReasonCode::UnknownSigner, ReasonCode::MoltCooloff]
    );
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
    let r = run(&[&born, &one], &[&h1, &h2, &h3]);
    assert_eq!(codes(&r.envelopes[1]), vec![ReasonCode::MoltCosignMissing]);
    let two = one.cosign(&h3, Scope::HeraldEndorsement, None).unwrap();
    let r = run(&[&born, &two], &[&h1, &h2, &h3]);
    assert_eq!(codes(&r.envelopes[1]), vec![]);
}

#[test]
fn overlapping_molts_are_both_void_and_the_sigil_disputed() {
    let (a, b, c) = (key(1), key(2), key(3));
    let born = birth(&a, T0);
    let m1 = molt(&a, &b, T0 + 10, T0 + 2 * DAY);
    let m2 = molt(&a, &c, T0 + 20, T0 + 3 * DAY);
    let later = say(&a, T0 + 30);
    let earlier = say(&a, T0 + 5);
    let r = run(&[&born, &earlier, &m1, &m2, &later], &[]);
    assert_eq!(codes(&r.envelopes[1]), vec![]);
    assert_eq!(codes(&r.envelopes[2]), vec![ReasonCode::Disputed]);
    assert_eq!(codes(&r.envelopes[3]), vec![ReasonCode::Disputed]);
    assert_eq!(codes(&r.envelopes[4]), vec![ReasonCode::Disputed]);
    assert!(
        r.envelopes[2..]
            .iter()
            .all(|e| e.status() == Status::Invalid)
    );
}

#[test]
fn lineage_cycle_deprecated_parent_and_consent() {
    let (x, y, p, c) = (key(21), key(22), key(23), key(24));
    let x_born = birth_with(&x, T0, &[sigil(&y)], |b| b);
    let y_born = birth_with(&y, T0 + 1, &[sigil(&x)], |b| b);
    let r = run(&[&x_born, &y_born], &[]);
    assert_eq!(codes(&r.envelopes[0]), vec![ReasonCode::LineageCycle]);
    assert_eq!(codes(&r.envelopes[1]), vec![ReasonCode::LineageCycle]);

    let p_born = birth(&p, T0);
    let p_dies = EnvelopeBuilder::genesis(T0 + 10)
        .kind(Kind::Deprecation)
        .nonce(nonce())
        .payload(Value::Map(Map::new()))
        .sign(&p)
        .unwrap();
    let orphan = birth_with(&c, T0 + 20, &[sigil(&p)], |b| b);
    let r = run(&[&p_born, &p_dies, &orphan], &[]);
    assert_eq!(
        codes(&r.envelopes[2]),
        vec![ReasonCode::LineageDeprecatedParent]
    );

    let consented = birth_with(&c, T0 + 20, &[sigil(&p), sigil(&y)], |b| b)
        .cosign(&p, Scope::LineageConsent, None)
        .unwrap();
    let r = run(&[&p_born, &consented], &[&p]);
    assert_eq!(
        r.envelopes[1].status(),
        Status::Valid,
        "{:?}",
        r.envelopes[1]
    );
    assert_eq!(r.envelopes[1].lineage_consents, vec![sigil(&p).to_string()]);
}

/// The audit retires a molted-in key when a later accepted molt replaces
/// it, as a live receiver does (one rule, `lifecycle/rules.rs`).
#[test]
fn a_molted_in_key_replaced_by_a_later_molt_is_rotated() {
    let (a, a2, a3) = (key(31), key(32), key(33));
    let nb1 = T0 + DAY;
    let first = molt(&a, &a2, T0 + 10, nb1);
    let spoken = say_as(&a, &a2, nb1 + 10);
    let nb2 = nb1 + 10 + DAY + 100;
    let second = molt_as(&a, &a2, &a3, nb1 + 30, nb2);
    let late = say_as(&a, &a2, nb2 + 200);
    let r = run(&[&birth(&a, T0), &first, &spoken, &second, &late], &[]);
    // Unproven (no bundle), and past molt 2's not_before: rotated too.
    assert_eq!(
        codes(&r.envelopes[4]),
        vec![ReasonCode::RotatedKey, ReasonCode::MoltUnproven],
        "{:?}",
        r.envelopes[4]
    );
    assert!(!codes(&r.envelopes[2]).contains(&ReasonCode::RotatedKey));
}

/// A birth that names itself (`lineage_self`, decided alone) and also
/// closes a real cycle is `lineage_cycle` too, in an audit as live.
#[test]
fn a_self_naming_birth_in_a_real_cycle_is_a_cycle() {
    let (x, y) = (key(41), key(42));
    let x_born = birth_with(&x, T0, &[sigil(&y), sigil(&x)], |b| b);
    let y_born = birth_with(&y, T0 + 1, &[sigil(&x)], |b| b);
    let r = run(&[&x_born, &y_born], &[]);
    let x_codes = codes(&r.envelopes[0]);
    assert!(x_codes.contains(&ReasonCode::LineageSelf), "{x_codes:?}");
    assert!(x_codes.contains(&ReasonCode::LineageCycle), "{x_codes:?}");
    assert_eq!(codes(&r.envelopes[1]), vec![ReasonCode::LineageCycle]);
}
