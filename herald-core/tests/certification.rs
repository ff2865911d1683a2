//! The `certification` kind (PROFILE P7 row, P14): its origin tag, the
//! payload shape checked on decode, `short_sigil_misuse` for a short
//! subject, the typed claims of the P14 table, and the builder's payload
//! read back. Envelopes are built by hand (tests/support) where the shape
//! is what is tested, so the builder cannot hide a case.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::cbor::Value;
use herald_core::payload::{CLAIMS, Certification, Claim, certification};
use herald_core::{CheckOptions, EnvelopeBuilder, Kind, ReasonCode, SigilForm, Status};
use support::*;

use ReasonCode as R;

/// A certification by Alice (the Herald) `to` Bob with `payload`, sealed
/// under the certification tag.
fn certifying(payload: Value) -> Raw {
    Raw::genesis(&alice(), TS)
        .set("kind", Value::text("certification"))
        .set(
            "to",
            Value::text(bob().sigil(SigilForm::Default).to_string()),
        )
        .set("payload", payload)
        .seal(&alice(), b"herald.certification.v1")
}

fn bob_sigil(form: SigilForm) -> Value {
    Value::text(bob().sigil(form).to_string())
}

fn pairs(raw: &Raw) -> (Status, Vec<(ReasonCode, Option<u32>)>) {
    let out = run(&raw.bytes(), &keyring(), &CheckOptions::DEFAULT);
    (out.status, out.pairs)
}

#[test]
fn the_kind_has_its_own_origin_tag() {
    assert_eq!(Kind::from_name("certification"), Some(Kind::Certification));
    assert_eq!(Kind::Certification.origin_tag(), b"herald.certification.v1");
    let payload = map(vec![
        ("subject", bob_sigil(SigilForm::Long)),
        ("claim", Value::text("model")),
        ("value", map(vec![("name", Value::text("m-1"))])),
        ("not_after", Value::Unsigned(TS + 10)),
    ]);
    assert_eq!(pairs(&certifying(payload.clone())), (Status::Valid, vec![]));
    // The same bytes under the message tag do not verify (P5).
    let wrong = Raw::genesis(&alice(), TS)
        .set("kind", Value::text("certification"))
        .set("payload", payload)
        .seal(&alice(), b"herald.origin.v1");
    assert_eq!(
        pairs(&wrong),
        (Status::Invalid, vec![(R::BadSignature, Some(0))])
    );
}

#[test]
fn a_short_subject_is_short_sigil_misuse() {
    let raw = certifying(map(vec![
        ("subject", bob_sigil(SigilForm::Short)),
        ("claim", Value::text("handle")),
        ("value", Value::text("bob@example.com")),
    ]));
    assert_eq!(
        pairs(&raw),
        (Status::Invalid, vec![(R::ShortSigilMisuse, None)])
    );
}

#[test]
fn the_payload_shape_is_checked() {
    let subject = || ("subject", bob_sigil(SigilForm::Default));
    let claim = || ("claim", Value::text("key"));
    let value = || {
        (
            "value",
            Value::Bytes(bob().public_key().as_bytes().to_vec()),
        )
    };
    for (why, payload) in [
        ("not a map", Value::text("hello")),
        ("no subject", map(vec![claim(), value()])),
        ("no claim", map(vec![subject(), value()])),
        ("no value", map(vec![subject(), claim()])),
        (
            "a bad sigil",
            map(vec![
                ("subject", Value::text("sigil:nope")),
                claim(),
                value(),
            ]),
        ),
        (
            "a reserved subject",
            map(vec![
                ("subject", Value::text("sigil:none")),
                claim(),
                value(),
            ]),
        ),
        (
            "claim not text",
            map(vec![subject(), ("claim", Value::Unsigned(1)), value()]),
        ),
        (
            "not_after not a uint",
            map(vec![
                subject(),
                claim(),
                value(),
                ("not_after", Value::text("soon")),
            ]),
        ),
        (
            "revokes of 31 bytes",
            map(vec![
                subject(),
                claim(),
                value(),
                ("revokes", Value::Bytes(vec![0; 31])),
            ]),
        ),
        (
            "an unknown key",
            map(vec![subject(), claim(), value(), ("why", Value::Null)]),
        ),
    ] {
        assert_eq!(
            pairs(&certifying(payload)),
            (Status::Invalid, vec![(R::Malformed, None)]),
            "{why}"
        );
    }
}

#[test]
fn every_p14_claim_round_trips_through_the_builder() {
    let parent = carol().sigil(SigilForm::Default);
    let key = *bob().public_key().as_bytes();
    let id = [7u8; 32];
    let claims = [
        Claim::Handle("bob@example.com"),
        Claim::Key(&key),
        Claim::Lineage {
            parent,
            model_hash: Some(&id),
        },
        Claim::Model {
            name: "m-1",
            model_hash: None,
        },
        Claim::Deprecated { ts: TS },
        Claim::Revocation(&id),
    ];
    let names: Vec<&str> = claims.iter().map(Claim::name).collect();
    assert_eq!(names, CLAIMS);
    let subject = bob().sigil(SigilForm::Long);
    for claim in claims {
        let env = EnvelopeBuilder::genesis(TS)
            .kind(Kind::Certification)
            .to(subject)
            .payload(certification(&subject, &claim, Some(TS + 60)))
            .sign(&alice())
            .unwrap();
        let (checked, _) = env.check(&keyring(), &CheckOptions::DEFAULT);
        assert_eq!(checked.status, Status::Valid, "{claim:?}");
        let view = env.view();
        let c = Certification::parse(view.payload()).unwrap();
        assert_eq!(c.subject, subject);
        assert_eq!(c.not_after, Some(TS + 60));
        assert_eq!(c.claim().unwrap(), claim);
        assert_eq!(
            c.revokes.is_some(),
            matches!(claim, Claim::Revocation(_)),
            "{claim:?}"
        );
    }
}

#[test]
fn a_claim_value_of_the_wrong_shape_is_an_error_and_an_unknown_claim_is_carried() {
    let parse = |name: &str, value: Value, revokes: Option<[u8; 32]>| {
        let mut entries = vec![
            ("subject", bob_sigil(SigilForm::Default)),
            ("claim", Value::text(name)),
            ("value", value),
        ];
        if let Some(r) = revokes {
            entries.push(("revokes", Value::Bytes(r.to_vec())));
        }
        let bytes = map(entries).to_vec();
        let v = herald_core::cbor::decode(&bytes).unwrap();
        let c = Certification::parse(v).unwrap();
        c.claim().map(|c| c.name().to_owned())
    };
    assert!(parse("key", Value::Bytes(vec![1; 31]), None).is_err());
    assert!(parse("handle", Value::text("https://x.example/"), None).is_err());
    assert!(parse("handle", Value::text("bob@example.com"), Some([1; 32])).is_err());
    assert!(parse("revocation", Value::Null, None).is_err());
    assert!(parse("revocation", Value::Bool(true), Some([1; 32])).is_err());
    assert!(parse("deprecated", map(vec![("ts", Value::text("x"))]), None).is_err());
    assert!(
        parse(
            "lineage",
            map(vec![(
                "parent",
                Value::text(carol().sigil(SigilForm::Short).to_string())
            )]),
            None
        )
        .is_err()
    );
    assert!(parse("model", map(vec![("version", Value::Null)]), None).is_err());
    assert_eq!(
        parse("favourite_colour", Value::text("blue"), None).unwrap(),
        "favourite_colour"
    );
}
