//! Heralds (PROFILE P14): when a certification counts, the quorum by
//! distinct Heralds, and the hostile cases, each with its verdict stated
//! from the rules; then the effects on a trace audit (a certified key
//! resolves a sigil, a certified deprecation is witnessed, lineage proofs,
//! certified claims in the report), and that nothing changes without
//! Heralds. Fixtures are built with herald-core's builder and herald-tlog
//! (herald-testkit's `heralds`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::sync::Arc;

use herald_core::cbor::Value;
use herald_core::payload::Claim;
use herald_core::{EnvelopeBuilder, Kind, ReasonCode, SigilForm, SigningKey, Status};
use herald_testkit::heralds::{TestHerald, Witness, list, model, policy};
use herald_testkit::{T0, key, nonce};
use herald_tlog::Policy;
use herald_verify::{
    AuditOptions, CertificationItem, Certified, HeraldList, Heralds, Input, Keyring, NotCounted,
    audit,
};

const NOW: u64 = T0 + 3_600;

fn heralds(list_text: &str, policy_text: &str) -> Heralds {
    Heralds::new(
        HeraldList::parse(list_text, "heralds").unwrap(),
        Policy::parse(policy_text.as_bytes()).unwrap(),
    )
    .unwrap()
}

fn alice() -> SigningKey {
    key(1)
}

fn bob() -> SigningKey {
    key(2)
}

/// Three Heralds (seeds 11, 12, 13), one witness everything needs.
struct World {
    h: [TestHerald; 3],
    w: Witness,
}

impl World {
    fn new() -> Self {
        Self {
            h: [
                TestHerald::new(11),
                TestHerald::new(12),
                TestHerald::new(13),
            ],
            w: Witness::new("w1", 31),
        }
    }

    fn heralds(&self, threshold: usize) -> Heralds {
        let [a, b, c] = &self.h;
        heralds(
            &list(&[a, b, c], threshold),
            &policy(&[a, b, c], &[&self.w], "", "w1"),
        )
    }
}

fn verdicts(c: &Certified) -> Vec<Result<(), NotCounted>> {
    c.judgements().iter().map(|j| j.verdict.clone()).collect()
}

fn certified_models(c: &Certified) -> Vec<(String, usize)> {
    c.claims()
        .filter(|k| k.claim == "model")
        .map(|k| {
            let v = k.value().unwrap();
            let name = v.as_map().unwrap().get("name").unwrap().as_text().unwrap();
            (name.to_owned(), k.heralds.len())
        })
        .collect()
}

#[test]
fn a_claim_is_certified_at_the_threshold_of_distinct_heralds_and_not_below() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let e0 = world.h[0].certify(subject, &model("m-1"), T0, None);
    let e1 = world.h[1].certify(subject, &model("m-1"), T0, None);
    // The third Herald lies: another model.
    let e2 = world.h[2].certify(subject, &model("m-2"), T0, None);
    let w = &world.w;
    let items = vec![
        world.h[0].item(&e0, &[w]),
        world.h[1].item(&e1, &[w]),
        world.h[2].item(&e2, &[w]),
    ];
    let c = world.heralds(2).judge(&items, NOW);
    assert_eq!(verdicts(&c), vec![Ok(()), Ok(()), Ok(())]);
    // m-1 by two distinct Heralds: certified; m-2 by one: not, at 2.
    assert_eq!(certified_models(&c), vec![("m-1".to_owned(), 2)]);
    let c = world.heralds(3).judge(&items, NOW);
    assert_eq!(certified_models(&c), vec![]);
    let c = world.heralds(1).judge(&items, NOW);
    assert_eq!(
        certified_models(&c),
        vec![("m-1".to_owned(), 2), ("m-2".to_owned(), 1)]
    );
}

#[test]
fn one_herald_counts_once_whichever_sigil_form_signed_and_however_often() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let by_default = world.h[0].certify(subject, &model("m-1"), T0, None);
    let by_long = world.h[0].sign(subject, &model("m-1"), T0 + 1, None, SigilForm::Long);
    world.h[0].log(&by_long);
    // The same claim about the long form of the subject is the same claim.
    let about_long = world.h[0].certify(alice().sigil(SigilForm::Long), &model("m-1"), T0, None);
    let w = &world.w;
    let items: Vec<CertificationItem> = [&by_default, &by_long, &about_long]
        .into_iter()
        .map(|e| world.h[0].item(e, &[w]))
        .collect();
    let c = world.heralds(2).judge(&items, NOW);
    assert_eq!(verdicts(&c), vec![Ok(()), Ok(()), Ok(())]);
    assert_eq!(c.supported().len(), 1, "{:?}", c.supported());
    assert_eq!(c.supported()[0].heralds.len(), 1);
    assert!(!c.supported()[0].certified, "one Herald is not two");
    assert_eq!(certified_models(&c), vec![]);
}

#[test]
fn a_list_naming_one_herald_under_two_forms_has_one_herald() {
    let h = TestHerald::new(11);
    let long = h.list_line("").replacen(
        &h.sigil().to_string(),
        &h.key.sigil(SigilForm::Long).to_string(),
        1,
    );
    let text = format!("{}\n{long}\n", h.list_line(""));
    let l = HeraldList::parse(&text, "heralds").unwrap();
    assert_eq!(l.heralds().len(), 1);
    let err = HeraldList::parse(&format!("{text}threshold 2\n"), "heralds").unwrap_err();
    assert_eq!(
        err.to_string(),
        "heralds:3: threshold 2 is more than the 1 distinct Heralds listed (PROFILE P14)"
    );
}

#[test]
fn a_herald_certifying_two_keys_for_one_sigil_never_substitutes_a_key() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let real = *alice().public_key().as_bytes();
    let fake = *bob().public_key().as_bytes();
    let e_real = world.h[0].certify(subject, &Claim::Key(&real), T0, None);
    let e_fake = world.h[0].certify(subject, &Claim::Key(&fake), T0, None);
    let w = &world.w;
    let items = vec![
        world.h[0].item(&e_real, &[w]),
        world.h[0].item(&e_fake, &[w]),
    ];
    let c = world.heralds(1).judge(&items, NOW);
    // P15: the key must hash to the sigil.
    assert_eq!(
        verdicts(&c),
        vec![Ok(()), Err(NotCounted::KeyNotTheSubjects)]
    );
    let keys: Vec<_> = c.keys().collect();
    assert_eq!(keys, vec![alice().public_key()]);
    // At 2 of 3, one Herald's word is not enough even for the real key.
    let c = world.heralds(2).judge(&items, NOW);
    assert_eq!(c.keys().count(), 0);
}

#[test]
fn without_a_proof_or_with_an_unwitnessed_checkpoint_nothing_counts() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let e = world.h[0].certify(subject, &model("m-1"), T0, None);
    let bare = CertificationItem::new(e.as_bytes().to_vec(), String::new());
    let unwitnessed = world.h[0].item(&e, &[]);
    let other_witness = Witness::new("w1", 99);
    let wrong_witness = world.h[0].item(&e, &[&other_witness]);
    // A proof whose checkpoint is of a tree without the certification.
    let unlogged = world.h[0].sign(subject, &model("m-1"), T0 + 5, None, SigilForm::Default);
    let cp = world.h[0].checkpoint(&[&world.w], T0);
    let elsewhere = CertificationItem::new(unlogged.as_bytes().to_vec(), world.h[0].proof(&e, &cp));
    let c = world
        .heralds(1)
        .judge(&[bare, unwitnessed, wrong_witness, elsewhere], NOW);
    let v = verdicts(&c);
    assert_eq!(v[0], Err(NotCounted::NoProof));
    assert!(
        matches!(&v[1], Err(NotCounted::Checkpoint(why)) if why.contains("quorum")),
        "{v:?}"
    );
    assert!(matches!(&v[2], Err(NotCounted::Checkpoint(_))), "{v:?}");
    assert!(matches!(&v[3], Err(NotCounted::NotIncluded(_))), "{v:?}");
    assert_eq!(c.claims().count(), 0);
}

#[test]
fn a_revoked_certification_does_not_count_even_without_the_revocations_proof() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let e = world.h[0].certify(subject, &model("m-1"), T0, None);
    let id = e.id();
    let revocation = world.h[0].certify(subject, &Claim::Revocation(&id), T0 + 10, None);
    let w = &world.w;
    let item = world.h[0].item(&e, &[w]);
    let c = world.heralds(1).judge(std::slice::from_ref(&item), NOW);
    assert_eq!(certified_models(&c), vec![("m-1".to_owned(), 1)]);
    let bare_revocation = CertificationItem::new(revocation.as_bytes().to_vec(), String::new());
    let c = world
        .heralds(1)
        .judge(&[item.clone(), bare_revocation], NOW);
    assert_eq!(
        verdicts(&c),
        vec![Err(NotCounted::Revoked(revocation.id())), Ok(())]
    );
    assert_eq!(certified_models(&c), vec![]);
    // Another Herald's revocation revokes nothing of this one's.
    let other = world.h[1].certify(subject, &Claim::Revocation(&id), T0 + 10, None);
    let c = world
        .heralds(1)
        .judge(&[item, world.h[1].item(&other, &[w])], NOW);
    assert_eq!(certified_models(&c), vec![("m-1".to_owned(), 1)]);
}

#[test]
fn a_herald_outside_the_list_counts_for_nothing() {
    let mut world = World::new();
    let mut outsider = TestHerald::new(14);
    let subject = alice().sigil(SigilForm::Default);
    let e = outsider.certify(subject, &model("m-1"), T0, None);
    let item = outsider.item(&e, &[&world.w]);
    let e0 = world.h[0].certify(subject, &model("m-1"), T0, None);
    let item0 = world.h[0].item(&e0, &[&world.w]);
    let c = world.heralds(2).judge(&[item, item0], NOW);
    assert_eq!(verdicts(&c), vec![Err(NotCounted::UnlistedHerald), Ok(())]);
    assert_eq!(certified_models(&c), vec![]);
}

#[test]
fn a_certification_counts_only_between_its_ts_and_its_not_after() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let expired = world.h[0].certify(subject, &model("m-1"), T0, Some(NOW - 1));
    let last_second = world.h[1].certify(subject, &model("m-1"), T0, Some(NOW));
    let future = world.h[2].certify(subject, &model("m-1"), NOW + 1, None);
    let w = &world.w;
    let items = vec![
        world.h[0].item(&expired, &[w]),
        world.h[1].item(&last_second, &[w]),
        world.h[2].item(&future, &[w]),
    ];
    let c = world.heralds(2).judge(&items, NOW);
    assert_eq!(
        verdicts(&c),
        vec![
            Err(NotCounted::Expired { not_after: NOW - 1 }),
            Ok(()),
            Err(NotCounted::NotYet { ts: NOW + 1 }),
        ]
    );
    assert_eq!(certified_models(&c), vec![]);
}

#[test]
fn a_forked_log_counts_for_nothing() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let honest = world.h[0].certify(subject, &model("m-1"), T0, None);
    let w = &world.w;
    // The same Herald shows two trees of size 2: [honest, a] and [honest, b].
    let a = world.h[0].certify(subject, &model("m-a"), T0, None);
    let view_a = world.h[0].item(&honest, &[w]);
    let item_a = world.h[0].item(&a, &[w]);
    world.h[0].entries.pop();
    let b = world.h[0].certify(subject, &model("m-b"), T0, None);
    let view_b = world.h[0].item(&b, &[w]);
    // Each view alone is a log: its certifications count.
    let c = world
        .heralds(1)
        .judge(&[view_a.clone(), item_a.clone()], NOW);
    assert_eq!(verdicts(&c), vec![Ok(()), Ok(())]);
    // Both views: the log forked at size 2, and nothing of it counts.
    let c = world.heralds(1).judge(&[view_a, item_a, view_b], NOW);
    assert!(
        verdicts(&c)
            .iter()
            .all(|v| *v == Err(NotCounted::ForkedLog { size: 2 })),
        "{:?}",
        verdicts(&c)
    );
    assert_eq!(c.claims().count(), 0);
}

#[test]
fn not_to_its_subject_or_of_a_bad_claim_shape_it_does_not_count() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let to_bob = EnvelopeBuilder::genesis(T0)
        .kind(Kind::Certification)
        .to(bob().sigil(SigilForm::Default))
        .nonce(nonce(77))
        .payload(herald_core::payload::certification(
            &subject,
            &model("m-1"),
            None,
        ))
        .sign(&world.h[0].key)
        .unwrap();
    world.h[0].log(&to_bob);
    let mut p = herald_core::cbor::Map::new();
    p.insert("subject", Value::text(subject.to_string()));
    p.insert("claim", Value::text("key"));
    p.insert("value", Value::Bytes(vec![1; 31]));
    let short_key = EnvelopeBuilder::genesis(T0)
        .kind(Kind::Certification)
        .to(subject)
        .nonce(nonce(78))
        .payload(Value::Map(p))
        .sign(&world.h[0].key)
        .unwrap();
    world.h[0].log(&short_key);
    let w = &world.w;
    let items = vec![
        world.h[0].item(&to_bob, &[w]),
        world.h[0].item(&short_key, &[w]),
    ];
    let c = world.heralds(1).judge(&items, NOW);
    let v = verdicts(&c);
    assert_eq!(v[0], Err(NotCounted::NotToSubject));
    assert!(matches!(&v[1], Err(NotCounted::ClaimShape(_))), "{v:?}");
}

#[test]
fn the_herald_list_names_line_and_rule() {
    let h = TestHerald::new(11);
    let good = h.list_line("https://herald.example alice-herald");
    assert!(HeraldList::parse(&good, "l").is_ok());
    let short = h.list_line("").replacen(
        &h.sigil().to_string(),
        &h.key.sigil(SigilForm::Short).to_string(),
        1,
    );
    for (text, want) in [
        (
            "threshold 1\n".to_owned(),
            "l: no herald line (PROFILE P14)",
        ),
        (
            format!("{good}\nthreshold 0\n"),
            "l:2: the threshold is a decimal number from 1 (PROFILE P14)",
        ),
        (
            format!("{good}\nthreshold 1\nthreshold 1\n"),
            "l:3: a second threshold line (PROFILE P14)",
        ),
        (
            format!("# x\n{short}\n"),
            "l:2: a short sigil cannot be a Herald (P2) (PROFILE P14)",
        ),
        (
            h.list_line("label:with-colon"),
            "l:1: a label is 1 to 64 ASCII letters, digits, `.`, `_`, `-`, `@` or `+` (never `:`) (PROFILE P14)",
        ),
        (
            h.list_line("ftp://x y"),
            "l:1: after the log origin: an http:// or https:// URL, then a label (PROFILE P14)",
        ),
        (
            "herald sigil:x\n".to_owned(),
            "l:1: expected `herald <sigil> ed25519 <64 hex> <log origin> [<URL>] [label]` (PROFILE P14)",
        ),
        (
            "witness x\n".to_owned(),
            "l:1: unknown keyword \"witness\" (herald or threshold) (PROFILE P14)",
        ),
    ] {
        assert_eq!(
            HeraldList::parse(&text, "l").unwrap_err().to_string(),
            want,
            "{text}"
        );
    }
    // A Herald whose log the policy does not name could never count.
    let err = Heralds::new(
        HeraldList::parse(&good, "l").unwrap(),
        Policy::parse(b"quorum none\n").unwrap(),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("Herald list line 1:"), "{err}");
}

// ---- effects on a trace audit ---------------------------------------------

fn audited(
    envelopes: &[&herald_core::Envelope],
    keyring: &Keyring,
    heralds: Option<Certified>,
) -> herald_verify::Report {
    let bytes: Vec<u8> = envelopes
        .iter()
        .flat_map(|e| e.as_bytes().to_vec())
        .collect();
    let inputs = vec![Input {
        name: "t".into(),
        bytes,
    }];
    let opts = AuditOptions {
        now: Some(NOW),
        heralds: heralds.map(Arc::new),
        ..AuditOptions::default()
    };
    audit(&inputs, keyring, &opts)
}

fn codes(r: &herald_verify::EnvelopeReport) -> Vec<ReasonCode> {
    r.reasons.iter().map(|r| r.code).collect()
}

#[test]
fn a_certified_key_resolves_a_sigil_and_nothing_else_changes() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let k = *alice().public_key().as_bytes();
    let e0 = world.h[0].certify(subject, &Claim::Key(&k), T0, None);
    let e1 = world.h[1].certify(subject, &Claim::Key(&k), T0, None);
    let said = herald_testkit::genesis(&alice(), 5);
    let w = &world.w;
    let items = vec![world.h[0].item(&e0, &[w]), world.h[1].item(&e1, &[w])];

    let without = audited(&[&said], &Keyring::new(), None);
    assert_eq!(
        codes(&without.envelopes[0]),
        vec![ReasonCode::UnknownSigner]
    );

    // Below the threshold: still unknown.
    let c = world.heralds(3).judge(&items, NOW);
    let mut keyring = Keyring::new();
    c.extend_keyring(&mut keyring);
    assert!(keyring.is_empty());

    let c = world.heralds(2).judge(&items, NOW);
    let mut keyring = Keyring::new();
    c.extend_keyring(&mut keyring);
    let with = audited(&[&said], &keyring, Some(c));
    let e = &with.envelopes[0];
    assert_eq!(e.status(), Status::Valid, "{:?}", e.reasons);
    assert_eq!(e.key_source.map(|k| k.name()), Some("herald"));
    let json = serde_json::to_value(e).unwrap();
    assert_eq!(json["key_source"], "herald");
    // A certified key is reported as a claim about its sender.
    assert_eq!(json["certified"][0]["claim"], "key");
    assert_eq!(json["certified"][0]["value"], herald_verify::hex(&k));
    assert_eq!(json["certified"][0]["heralds"].as_array().unwrap().len(), 2);

    // A forged signature stays bad whatever the Heralds say.
    let forged = EnvelopeBuilder::genesis(T0 + 6)
        .from_sigil(subject)
        .nonce(nonce(6))
        .sign(&bob())
        .unwrap();
    let c = world.heralds(2).judge(&items, NOW);
    let bad = audited(&[&forged], &keyring, Some(c));
    assert_eq!(codes(&bad.envelopes[0]), vec![ReasonCode::BadSignature]);
}

#[test]
fn a_certified_deprecation_acts_as_a_witnessed_one() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let e = world.h[0].certify(subject, &Claim::Deprecated { ts: T0 + 10 }, T0, None);
    let item = world.h[0].item(&e, &[&world.w]);
    let before = herald_testkit::genesis(&alice(), 10);
    let after = herald_testkit::genesis(&alice(), 11);
    let mut keyring = Keyring::new();
    keyring.insert(alice().public_key(), herald_verify::Provenance::Pinned);
    let plain = audited(&[&before, &after], &keyring, None);
    assert!(plain.envelopes.iter().all(|e| e.status() == Status::Valid));
    let c = world.heralds(1).judge(std::slice::from_ref(&item), NOW);
    let r = audited(&[&before, &after], &keyring, Some(c));
    assert_eq!(codes(&r.envelopes[0]), vec![]);
    assert_eq!(codes(&r.envelopes[1]), vec![ReasonCode::DeprecatedSigner]);
    // Below the threshold, no effect.
    let c = world.heralds(2).judge(&[item], NOW);
    let r = audited(&[&before, &after], &keyring, Some(c));
    assert!(r.envelopes.iter().all(|e| e.status() == Status::Valid));
}

#[test]
fn a_lineage_proof_must_name_a_certified_lineage_claim_of_its_sender() {
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let lineage = Claim::Lineage {
        parent: bob().sigil(SigilForm::Default),
        model_hash: None,
    };
    let e = world.h[0].certify(subject, &lineage, T0, None);
    let about_bob = world.h[0].certify(bob().sigil(SigilForm::Default), &lineage, T0, None);
    let item = world.h[0].item(&e, &[&world.w]);
    let proven = EnvelopeBuilder::genesis(T0 + 20)
        .nonce(nonce(20))
        .lineage_proof(e.id())
        .sign(&alice())
        .unwrap();
    let wrong = EnvelopeBuilder::genesis(T0 + 21)
        .nonce(nonce(21))
        .lineage_proof(about_bob.id())
        .sign(&alice())
        .unwrap();
    let mut keyring = Keyring::new();
    keyring.insert(alice().public_key(), herald_verify::Provenance::Pinned);
    // Without Heralds, lineage_proof is not checked.
    let r = audited(&[&proven, &wrong], &keyring, None);
    assert!(r.envelopes.iter().all(|e| e.reasons.is_empty()));
    let c = world.heralds(1).judge(std::slice::from_ref(&item), NOW);
    let r = audited(&[&proven, &wrong], &keyring, Some(c));
    assert_eq!(codes(&r.envelopes[0]), vec![]);
    assert_eq!(codes(&r.envelopes[1]), vec![ReasonCode::LineageUnproven]);
    assert_eq!(r.envelopes[1].status(), Status::Valid, "a warning");
    let json = serde_json::to_value(&r.envelopes[0]).unwrap();
    assert_eq!(json["certified"][0]["claim"], "lineage");
    assert_eq!(
        json["certified"][0]["value"]["parent"],
        bob().sigil(SigilForm::Default).to_string()
    );
    // Below the threshold, the same proof is unproven.
    let c = world.heralds(2).judge(&[item], NOW);
    let r = audited(&[&proven], &keyring, Some(c));
    assert_eq!(codes(&r.envelopes[0]), vec![ReasonCode::LineageUnproven]);
}

/// PROFILE P14's `key` row ("after molts it tracks") against P15 (a
/// channel never substitutes a key) and P8 rule 3 (a molted-in key only
/// with the molt's inclusion proof): a quorum certifying the key alice
/// molted to resolves nothing, and her new key's envelope is judged by the
/// molt rules alone, as without Heralds (docs/heralds.md *Keys after a
/// molt*).
#[test]
fn a_certified_molted_in_key_is_never_applied_through_heralds() {
    const DAY: u64 = 86_400;
    let mut world = World::new();
    let (a, a2) = (alice(), key(7));
    let subject = a.sigil(SigilForm::Default);
    let new_key = *a2.public_key().as_bytes();
    let e0 = world.h[0].certify(subject, &Claim::Key(&new_key), T0, None);
    let e1 = world.h[1].certify(subject, &Claim::Key(&new_key), T0, None);
    let w = &world.w;
    let items = vec![world.h[0].item(&e0, &[w]), world.h[1].item(&e1, &[w])];
    let c = world.heralds(2).judge(&items, NOW);
    assert_eq!(
        verdicts(&c),
        vec![
            Err(NotCounted::KeyNotTheSubjects),
            Err(NotCounted::KeyNotTheSubjects)
        ]
    );
    let mut keyring = Keyring::new();
    c.extend_keyring(&mut keyring);
    assert!(keyring.is_empty());

    // The new key speaking as alice, alone: unknown.
    let new = support::say_as(&a, &a2, T0);
    let r = audited(&[&new], &keyring, Some(c));
    assert_eq!(codes(&r.envelopes[0]), vec![ReasonCode::UnknownSigner]);

    // With her birth and an accepted molt: the molt rules decide (no
    // inclusion proof of the molt: molt_unproven), not the Heralds.
    let born = support::birth(&a, T0 - 3 * DAY);
    let m = support::molt(&a, &a2, T0 - 3 * DAY + 100, T0 - DAY);
    let set = [&born, &m, &new];
    let without = audited(&set, &Keyring::new(), None);
    let with = audited(&set, &keyring, Some(world.heralds(2).judge(&items, NOW)));
    assert_eq!(codes(&with.envelopes[2]), vec![ReasonCode::MoltUnproven]);
    assert_eq!(codes(&with.envelopes[2]), codes(&without.envelopes[2]));
    assert_eq!(with.envelopes[2].status(), without.envelopes[2].status());
    assert_eq!(with.envelopes[2].key_source.map(|k| k.name()), Some("molt"));
}
