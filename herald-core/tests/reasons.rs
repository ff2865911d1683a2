//! One test per reason code that `herald_core::check` decides (PROFILE.md
//! P11, P13), each on an envelope built by hand (tests/support) so the
//! builder's own rules do not hide a case; the exact multiset of
//! `(code, index)` pairs and the exact status are asserted every time.
//! Also: `check_parent`, domain separation, birth-key learning, a
//! multi-fault envelope, and the reason-code registry against P11.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::collections::BTreeSet;

use herald_core::cbor::{Limits, Value};
use herald_core::{
    CheckOptions, Detail, EnvelopeBuilder, EnvelopeRef, KeyResolver, KeySource, Kind, PublicKey,
    Reason, ReasonCode, Scope, Sigil, SigilForm, SigningKey, Status,
    attestation::birth_attestation, check_parent,
};
use support::*;

use ReasonCode as R;

const NONE: Option<u32> = None;

fn at(k: u32) -> Option<u32> {
    Some(k)
}

/// A well-formed genesis message by Alice with a map payload, sealed.
fn good() -> Raw {
    Raw::genesis(&alice(), TS)
        .set("payload", map(vec![("text", Value::text("hello"))]))
        .sealed(&alice())
}

/// A well-formed reply by Bob to `good()`.
fn good_reply() -> Raw {
    let p = good();
    Raw::reply(&bob(), p.id(), p.id(), TS + 10).sealed(&bob())
}

fn opts_now(now: u64, skew: u64) -> CheckOptions<'static> {
    CheckOptions {
        now: Some(now),
        skew,
        ..CheckOptions::DEFAULT
    }
}

// ---------------------------------------------------------------------------
// Baselines: the hand-built envelopes are valid, so every fault below is the
// one the test adds.

#[test]
fn hand_built_baselines_are_valid() {
    let out = expect(&good().bytes(), Status::Valid, &[]);
    assert!(out.decoded);
    assert_eq!(out.key_source, Some(KeySource::Keyring));
    assert_eq!(out.computed_id, Some(good().id()));
    expect(&good_reply().bytes(), Status::Valid, &[]);
    expect(
        &good().cosign(&bob(), "human_approval").bytes(),
        Status::Valid,
        &[],
    );
}

#[test]
fn independent_tables_match_the_library() {
    for kind in Kind::ALL {
        assert_eq!(kind.origin_tag(), origin_tag(kind.name()), "{kind}");
    }
    assert_eq!(Scope::Origin.tag(), None);
    for scope in Scope::ALL.into_iter().filter(|s| *s != Scope::Origin) {
        assert_eq!(scope.tag(), Some(scope_tag(scope.name())), "{scope}");
    }
    for k in [alice(), bob(), carol()] {
        assert_eq!(k.sigil(SigilForm::Default).to_string(), default_sigil(&k));
        assert_eq!(k.sigil(SigilForm::Long).to_string(), long_sigil(&k));
        assert_eq!(k.sigil(SigilForm::Short).to_string(), short_sigil(&k));
    }
}

// ---------------------------------------------------------------------------
// malformed

#[test]
fn malformed_not_cbor() {
    for bytes in [&b"hello"[..], &[0xff], &[], &[0xa1, 0x61]] {
        let out = expect(bytes, Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(!out.decoded);
        assert_eq!(out.computed_id, None);
        assert!(matches!(out.reasons[0].detail, Detail::Decode(_)));
    }
    // Non-canonical: a valid envelope with a trailing byte.
    let mut bytes = good().bytes();
    bytes.push(0);
    expect(&bytes, Status::Invalid, &[(R::Malformed, NONE)]);
}

#[test]
fn malformed_not_a_map() {
    for v in [
        Value::Array(vec![]),
        Value::text("herald/0.2"),
        Value::Unsigned(1),
        Value::Null,
    ] {
        let out = expect(&v.to_vec(), Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(!out.decoded);
    }
}

#[test]
fn malformed_missing_each_required_field() {
    // P3: v, id, from, parent, trace, ts, nonce, payload, signatures.
    for field in [
        "v",
        "from",
        "parent",
        "trace",
        "ts",
        "nonce",
        "payload",
        "signatures",
    ] {
        // A reply, so that removing `parent` or `trace` keeps the body rule
        // unambiguous (not a genesis either way).
        let p = good();
        let mut raw = Raw::reply(&bob(), p.id(), p.id(), TS).remove(field);
        if field == "signatures" {
            raw = raw.set("signatures", Value::Array(vec![])).reid();
            raw = raw.remove("signatures");
        } else {
            raw = raw.sealed(&bob());
        }
        let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(!out.decoded, "{field}");
        assert!(
            matches!(out.reasons[0].detail, Detail::Field { field: f, .. } if f == field),
            "{field}: {:?}",
            out.reasons
        );
    }
    // `id` missing: nothing to compare, the origin still verifies.
    let raw = good_reply().remove("id");
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // A genesis without `trace`.
    let raw = good().remove("trace");
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
}

#[test]
fn malformed_wrong_type_of_each_field() {
    let p = good();
    let cases: Vec<(&str, Value)> = vec![
        ("v", Value::Unsigned(2)),
        ("v", Value::Bytes(b"herald/0.2".to_vec())),
        ("from", Value::Unsigned(7)),
        ("from", Value::Bytes(default_sigil(&bob()).into_bytes())),
        ("to", Value::Unsigned(7)),
        ("to", Value::Null),
        ("parent", Value::text("parent")),
        ("parent", Value::Bytes(vec![1; 31])),
        ("parent", Value::Bytes(vec![1; 33])),
        ("trace", Value::Bytes(vec![2; 31])),
        ("trace", Value::Null),
        ("ts", Value::Negative(0)),
        ("ts", Value::text("1746432000")),
        ("ts", Value::from_f64(1.5).unwrap()),
        ("nonce", Value::Bytes(vec![0; 15])),
        ("nonce", Value::Bytes(vec![0; 17])),
        ("nonce", Value::text("00000000000000000000000000000000")),
        ("expires", Value::text("tomorrow")),
        ("expires", Value::Negative(5)),
        ("kind", Value::Unsigned(1)),
        ("lineage_proof", Value::Bytes(vec![3; 31])),
        ("lineage_proof", Value::text("proof")),
        ("attestations", Value::Map(Default::default())),
        ("attestations", Value::text("model")),
        // An attestation that is not `{type: text, value}` (P3).
        ("attestations", Value::Array(vec![Value::text("model")])),
        (
            "attestations",
            Value::Array(vec![map(vec![("type", Value::text("model"))])]),
        ),
        (
            "attestations",
            Value::Array(vec![map(vec![
                ("type", Value::Unsigned(1)),
                ("value", Value::Null),
            ])]),
        ),
        (
            "attestations",
            Value::Array(vec![map(vec![
                ("type", Value::text("model")),
                ("value", Value::text("m")),
                ("extra", Value::Null),
            ])]),
        ),
    ];
    for (field, value) in cases {
        let raw = Raw::reply(&bob(), p.id(), p.id(), TS + 1)
            .set(field, value.clone())
            .sealed(&bob());
        let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
        // The shape of each attestation is checked by `check`, not by the
        // decoder: `EnvelopeRef::decode` accepts those bytes (see report).
        if field != "attestations" || value.as_map().is_some() || matches!(value, Value::Text(_)) {
            assert!(!out.decoded, "{field}: {value:?}");
        }
    }
    // `signatures` not an array: no signature can be checked, no id computed.
    let raw = Raw::reply(&bob(), p.id(), p.id(), TS + 1)
        .reid()
        .set("signatures", Value::Map(Default::default()));
    let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    assert_eq!(out.computed_id, None);
}

/// P4: `body(E, k)` is E with `id` removed whatever `id` holds. An `id` of
/// the wrong type is malformed, and that should be the only reason: the
/// origin signature is over a body without `id`.
///
/// herald-core keeps an ill-typed `id` (and an ill-typed genesis `trace`)
/// inside the body (scan.rs records `spans.id`/`spans.trace` only for a
/// well-typed value; body.rs excludes only recorded spans), so it also
/// reports a spurious `bad_signature` at 0. The status is `invalid` either
/// way; the reason list is not the one P4 implies.
#[test]
fn malformed_ill_typed_id_is_only_malformed() {
    for bad in [Value::Bytes(vec![9; 31]), Value::text("id")] {
        let raw = good_reply().set("id", bad.clone());
        expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    }
}

/// As above, for a genesis whose `trace` is ill-typed: P4 leaves a
/// genesis's `trace` out of the body, whatever it holds. Fails today for the
/// same reason (a spurious `bad_signature` at 0).
#[test]
fn malformed_ill_typed_genesis_trace_is_only_malformed() {
    for bad in [Value::Bytes(vec![9; 33]), Value::Null] {
        let raw = good().set("trace", bad);
        expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    }
}

#[test]
fn malformed_bad_sigil_in_from_and_to() {
    let a = default_sigil(&alice());
    let mut upper = a.clone();
    upper.replace_range(6..7, &a[6..7].to_ascii_uppercase());
    // Last char with non-zero unused bits: 26 chars hold 130 bits for 128.
    let last = a.chars().last().unwrap();
    let alphabet = "abcdefghijklmnopqrstuvwxyz234567";
    let pos = alphabet.find(last).unwrap();
    let flipped = alphabet.chars().nth(pos ^ 1).unwrap();
    let mut trailing = a.clone();
    trailing.pop();
    trailing.push(flipped);
    let bad_sigils = [
        upper,
        trailing,
        format!("{a}="),
        a[..a.len() - 1].to_string(),
        format!("{a}a"),
        a.replacen("sigil:", "sigul:", 1),
        "sigil:m7zr4hb2qa6kpl9xn3qg4w".to_string(), // the spec's example (P2)
        "sigil:nobody".to_string(),                 // not a reserved name
        "sigil:long:".to_string(),
        String::new(),
    ];
    for bad in &bad_sigils {
        assert!(Sigil::parse(bad).is_err(), "{bad}");
        // from: the origin's `by` stays the real sigil, so only `malformed`.
        let raw = Raw::genesis(&alice(), TS).set("from", Value::text(bad.as_str()));
        let raw = raw.reid().sign_as(&alice(), &a, "origin", MESSAGE_TAG);
        let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(
            matches!(out.reasons[0].detail, Detail::Sigil { field: "from", .. }),
            "{bad}: {:?}",
            out.reasons
        );
        // to
        let raw = Raw::genesis(&alice(), TS)
            .set("to", Value::text(bad.as_str()))
            .sealed(&alice());
        let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(
            matches!(out.reasons[0].detail, Detail::Sigil { field: "to", .. }),
            "{bad}: {:?}",
            out.reasons
        );
    }
    // Each form of a key has exactly one string, and `to` may be reserved.
    for to in [
        long_sigil(&bob()),
        short_sigil(&bob()),
        "sigil:scribe".into(),
    ] {
        let raw = Raw::genesis(&alice(), TS)
            .set("to", Value::text(to))
            .sealed(&alice());
        expect(&raw.bytes(), Status::Valid, &[]);
    }
}

#[test]
fn malformed_unknown_kind() {
    for kind in ["gossip", "Message", "", "birth "] {
        // An unknown kind has no origin tag of its own; signed with the
        // default (message) tag so that the kind is the only problem.
        let raw = good().set("kind", Value::text(kind)).sealed(&alice());
        let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(
            matches!(out.reasons[0].detail, Detail::Field { field: "kind", .. }),
            "{kind}"
        );
    }
    // `kind: "message"` spelled out is a valid (if non-minimal) message.
    let raw = good().set("kind", Value::text("message")).sealed(&alice());
    expect(&raw.bytes(), Status::Valid, &[]);
}

fn birth_raw(key: &SigningKey, attestations: Vec<Value>) -> Raw {
    let mut raw = Raw::genesis(key, TS).set("kind", Value::text("birth"));
    if !attestations.is_empty() {
        raw = raw.set("attestations", Value::Array(attestations));
    }
    raw.seal(key, origin_tag("birth"))
}

#[test]
fn malformed_birth_without_birth_attestation() {
    let raw = birth_raw(&alice(), vec![]);
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    let raw = birth_raw(&alice(), vec![attestation("model", Value::text("m"))]);
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // A birth attestation of the wrong shape, on a birth, is malformed too.
    let bad = map(vec![
        (
            "key",
            Value::Bytes(alice().public_key().as_bytes().to_vec()),
        ),
        ("description", Value::text("x")),
    ]);
    let raw = birth_raw(&alice(), vec![attestation("birth", bad)]);
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // Two birth attestations.
    let b = birth_value(&alice(), &[]);
    let raw = birth_raw(
        &alice(),
        vec![attestation("birth", b.clone()), attestation("birth", b)],
    );
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // Baseline.
    let raw = birth_raw(
        &alice(),
        vec![attestation("birth", birth_value(&alice(), &[]))],
    );
    expect(&raw.bytes(), Status::Valid, &[]);
}

#[test]
fn malformed_birth_key_not_hashing_to_from() {
    // Alice's birth naming Bob's key: with Alice's key pinned, the origin
    // verifies; the birth rule alone fails.
    let raw = birth_raw(
        &alice(),
        vec![attestation("birth", birth_value(&bob(), &[]))],
    );
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // Without a keyring nothing can be learned either.
    expect_with(
        &raw.bytes(),
        &(),
        &CheckOptions::DEFAULT,
        Status::Invalid,
        &[(R::Malformed, NONE), (R::UnknownSigner, at(0))],
    );
}

#[test]
fn malformed_birth_with_a_parent() {
    let p = good();
    let raw = Raw::reply(&alice(), p.id(), p.id(), TS + 1)
        .set("kind", Value::text("birth"))
        .set(
            "attestations",
            Value::Array(vec![attestation("birth", birth_value(&alice(), &[]))]),
        )
        .seal(&alice(), origin_tag("birth"));
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
}

fn manifest(capabilities: Value) -> Raw {
    Raw::genesis(&alice(), TS)
        .set("kind", Value::text("manifest"))
        .set("payload", map(vec![("capabilities", capabilities)]))
        .seal(&alice(), origin_tag("manifest"))
}

#[test]
fn malformed_bad_capability_string() {
    for bad in [
        "Legal/EU",
        "legal//eu",
        "/legal",
        "legal/",
        "",
        "legal research",
        "légal",
        "legal_research",
        "a/b/c/d/e/f/g/h/i",
    ] {
        let raw = manifest(text_array(&[bad]));
        expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    }
    let raw = manifest(Value::Array(vec![Value::Unsigned(1)]));
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    let raw = manifest(Value::text("legal-research/eu"));
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // A manifest may not carry the envelope's own fields (P7).
    for own in ["sigil", "ts", "nonce", "expires"] {
        let raw = Raw::genesis(&alice(), TS)
            .set("kind", Value::text("manifest"))
            .set(
                "payload",
                map(vec![
                    ("capabilities", text_array(&["a"])),
                    (own, Value::Unsigned(1)),
                ]),
            )
            .seal(&alice(), origin_tag("manifest"));
        expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    }
    // Boundaries that are fine: 1 and 8 segments, digits and dashes.
    for good in ["a", "a/b/c/d/e/f/g/h", "legal-research/eu", "0-9/x-1"] {
        let raw = manifest(text_array(&[good]));
        expect(&raw.bytes(), Status::Valid, &[]);
    }
}

#[test]
fn malformed_molt_payload() {
    let new_key = Value::Bytes(bob().public_key().as_bytes().to_vec());
    let nb = Value::Unsigned(TS + 86_400);
    let bad_payloads = [
        Value::Null,
        Value::text("molt"),
        map(vec![("new_key", new_key.clone())]),
        map(vec![("not_before", nb.clone())]),
        map(vec![
            ("new_key", Value::Bytes(vec![1; 31])),
            ("not_before", nb.clone()),
        ]),
        map(vec![
            ("new_key", new_key.clone()),
            ("not_before", Value::Negative(1)),
        ]),
        map(vec![
            ("new_key", new_key.clone()),
            ("not_before", nb.clone()),
            ("why", Value::text("because")),
        ]),
    ];
    for payload in bad_payloads {
        let raw = Raw::genesis(&alice(), TS)
            .set("kind", Value::text("molt"))
            .set("payload", payload.clone())
            .seal(&alice(), origin_tag("molt"));
        let out = expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
        assert!(out.decoded, "a payload shape is not a P3 type error");
    }
    let raw = Raw::genesis(&alice(), TS)
        .set("kind", Value::text("molt"))
        .set(
            "payload",
            map(vec![("new_key", new_key), ("not_before", nb)]),
        )
        .seal(&alice(), origin_tag("molt"));
    expect(&raw.bytes(), Status::Valid, &[]);
}

#[test]
fn malformed_other_lifecycle_payloads() {
    let cases = [
        (
            "deprecation",
            map(vec![("successor", Value::text("sigil:x"))]),
        ),
        ("deprecation", map(vec![("reason", Value::Unsigned(1))])),
        ("deprecation", map(vec![("other", Value::Null)])),
        ("duress", map(vec![("note", Value::Unsigned(1))])),
        ("duress", Value::Null),
    ];
    for (kind, payload) in cases {
        let raw = Raw::genesis(&alice(), TS)
            .set("kind", Value::text(kind))
            .set("payload", payload)
            .seal(&alice(), origin_tag(kind));
        let raw = if kind == "duress" {
            raw.cosign(&bob(), "duress_witness")
        } else {
            raw
        };
        expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    }
}

#[test]
fn malformed_refusal_without_parent() {
    let payload = map(vec![("reason", Value::text("busy"))]);
    let raw = Raw::genesis(&alice(), TS)
        .set("kind", Value::text("refusal"))
        .set("payload", payload.clone())
        .seal(&alice(), origin_tag("refusal"));
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // With a parent it is fine; without `reason` it is not.
    let p = good();
    let reply = |payload: Value| {
        Raw::reply(&bob(), p.id(), p.id(), TS + 1)
            .set("kind", Value::text("refusal"))
            .set("payload", payload)
            .seal(&bob(), origin_tag("refusal"))
    };
    expect(&reply(payload).bytes(), Status::Valid, &[]);
    expect(
        &reply(map(vec![("retry_after", Value::Unsigned(60))])).bytes(),
        Status::Invalid,
        &[(R::Malformed, NONE)],
    );
}

/// An edit of a signature map.
type Edit = fn(&mut herald_core::cbor::Map);

#[test]
fn malformed_signature_map_at_index_one_is_partial() {
    let b = default_sigil(&bob());
    let edits: Vec<(&str, Edit)> = vec![
        ("unknown key", |m| {
            m.insert("note", Value::text("hi"));
        }),
        ("short sig", |m| {
            m.insert("sig", Value::Bytes(vec![0; 63]));
        }),
        ("sig as text", |m| {
            m.insert("sig", Value::text("00"));
        }),
        ("missing alg", |m| {
            m.remove("alg");
        }),
        ("missing by", |m| {
            m.remove("by");
        }),
        ("missing scope", |m| {
            m.remove("scope");
        }),
        ("missing sig", |m| {
            m.remove("sig");
        }),
        ("ts negative", |m| {
            m.insert("ts", Value::Negative(0));
        }),
        ("alg not text", |m| {
            m.insert("alg", Value::Unsigned(1));
        }),
        ("bad by", |m| {
            m.insert("by", Value::text("sigil:BOB"));
        }),
    ];
    for (what, edit) in edits {
        let raw = good()
            .sign_as(&bob(), &b, "human_approval", scope_tag("human_approval"))
            .edit_sig(1, edit);
        let out = expect(&raw.bytes(), Status::Partial, &[(R::Malformed, at(1))]);
        assert!(out.decoded, "{what}");
    }
    // A signature item that is not a map at all.
    let mut raw = good();
    let mut sigs = raw.signatures();
    sigs.push(Value::text("sig"));
    raw.set_signatures(sigs);
    expect(&raw.bytes(), Status::Partial, &[(R::Malformed, at(1))]);
}

#[test]
fn malformed_scope_origin_at_index_one_is_partial() {
    let b = default_sigil(&bob());
    for tag in [MESSAGE_TAG, scope_tag("human_approval")] {
        let raw = good().sign_as(&bob(), &b, "origin", tag);
        expect(&raw.bytes(), Status::Partial, &[(R::Malformed, at(1))]);
    }
    // A stray origin does not count as any scope for a policy.
    let raw = good().sign_as(&bob(), &b, "origin", MESSAGE_TAG);
    let required = [Scope::HumanApproval];
    let opts = CheckOptions {
        required_scopes: &required,
        ..CheckOptions::DEFAULT
    };
    expect_with(
        &raw.bytes(),
        &keyring(),
        &opts,
        Status::Partial,
        &[(R::Malformed, at(1)), (R::RequiredSignatureMissing, NONE)],
    );
}

// ---------------------------------------------------------------------------
// unsupported_version

#[test]
fn unsupported_version() {
    for v in ["herald/0.1", "herald/0.3", "HERALD/0.2", "herald/0.2 ", ""] {
        let raw = good().set("v", Value::text(v)).sealed(&alice());
        let out = expect(
            &raw.bytes(),
            Status::Invalid,
            &[(R::UnsupportedVersion, NONE)],
        );
        assert!(!out.decoded);
    }
}

// ---------------------------------------------------------------------------
// id_mismatch, genesis_trace_mismatch

#[test]
fn id_mismatch() {
    // A reply whose id is off by one bit: the origin is over body(E, 0),
    // which leaves `id` out, so it still verifies.
    let raw = good_reply();
    let mut id = raw.id();
    id[0] ^= 1;
    let raw = raw.set("id", Value::Bytes(id.to_vec()));
    let out = expect(&raw.bytes(), Status::Invalid, &[(R::IdMismatch, NONE)]);
    assert!(out.decoded, "id_mismatch is not a P3 type error");
    assert_ne!(out.computed_id, Some(id));
    // A genesis with `id` and `trace` both wrong (equal): id_mismatch only,
    // since the genesis rule compares trace with the id carried (P13).
    let raw = good()
        .set("id", Value::Bytes(id.to_vec()))
        .set("trace", Value::Bytes(id.to_vec()));
    expect(&raw.bytes(), Status::Invalid, &[(R::IdMismatch, NONE)]);
    // A payload changed after signing: id mismatch and a bad origin.
    let raw = good().set("payload", Value::text("changed"));
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::IdMismatch, NONE), (R::BadSignature, at(0))],
    );
}

#[test]
fn genesis_trace_mismatch() {
    let raw = good().set("trace", Value::Bytes(vec![7; 32]));
    let out = expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::GenesisTraceMismatch, NONE)],
    );
    assert!(out.decoded);
    // The id and trace wrong differently: both reasons.
    let raw = good()
        .set("id", Value::Bytes(vec![6; 32]))
        .set("trace", Value::Bytes(vec![7; 32]));
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::IdMismatch, NONE), (R::GenesisTraceMismatch, NONE)],
    );
    // Not a genesis: trace is in the body and is checked against the parent
    // (check_parent), not against id.
    expect(&good_reply().bytes(), Status::Valid, &[]);
}

// ---------------------------------------------------------------------------
// origin_missing, origin_signer_mismatch

#[test]
fn origin_missing_empty_signatures() {
    let raw = Raw::genesis(&alice(), TS).reid();
    assert!(raw.signatures().is_empty());
    let out = expect(&raw.bytes(), Status::Invalid, &[(R::OriginMissing, NONE)]);
    assert_eq!(out.computed_id, Some(raw.id()));
    assert_eq!(out.key_source, None);
}

#[test]
fn origin_missing_index_zero_not_origin() {
    let a = default_sigil(&alice());
    // Signature 0 in scope human_approval, correctly signed for that scope.
    let raw = Raw::genesis(&alice(), TS).reid().sign_as(
        &alice(),
        &a,
        "human_approval",
        scope_tag("human_approval"),
    );
    expect(&raw.bytes(), Status::Invalid, &[(R::OriginMissing, at(0))]);
    // Every other registered scope at 0 says the same.
    for (scope, tag) in SCOPE_TAGS {
        let raw = Raw::genesis(&alice(), TS)
            .reid()
            .sign_as(&alice(), &a, scope, tag);
        let out = run(&raw.bytes(), &keyring(), &CheckOptions::DEFAULT);
        assert!(out.pairs.contains(&(R::OriginMissing, at(0))), "{scope}");
        assert_eq!(out.status, Status::Invalid);
    }
    // A map at 0 that breaks the P3 shape (an unknown key, a 63-byte sig,
    // no alg) is malformed at 0, not origin_missing (P13 revision 2).
    let raw = good().edit_sig(0, |m| {
        m.insert("extra", Value::Null);
    });
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, at(0))]);
    let raw = good().edit_sig(0, |m| {
        m.insert("sig", Value::Bytes(vec![7; 63]));
    });
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, at(0))]);
    let raw = good().edit_sig(0, |m| {
        m.remove("alg");
    });
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, at(0))]);
    // An origin signature moved to index 1 behind a co-signature.
    let b = default_sigil(&bob());
    let raw = Raw::genesis(&alice(), TS)
        .reid()
        .sign_as(&bob(), &b, "human_approval", scope_tag("human_approval"))
        .sign_as(&alice(), &a, "origin", MESSAGE_TAG);
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[
            (R::OriginMissing, at(0)),
            (R::OriginSignerMismatch, at(0)),
            (R::Malformed, at(1)),
        ],
    );
}

#[test]
fn origin_signer_mismatch_same_key_other_form() {
    // P13: `by` must be the same string as `from`, even when both name the
    // same key; the signature itself verifies.
    for by in [long_sigil(&alice()), short_sigil(&alice())] {
        let raw = Raw::genesis(&alice(), TS)
            .reid()
            .sign_as(&alice(), &by, "origin", MESSAGE_TAG);
        let out = expect(
            &raw.bytes(),
            Status::Invalid,
            &[(R::OriginSignerMismatch, at(0))],
        );
        assert_eq!(out.key_source, Some(KeySource::Keyring));
    }
    // And a different signer entirely.
    let raw = Raw::genesis(&alice(), TS).reid().sign_as(
        &bob(),
        &default_sigil(&bob()),
        "origin",
        MESSAGE_TAG,
    );
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::OriginSignerMismatch, at(0))],
    );
    // The matching long form on both sides is fine.
    let raw = Raw::genesis(&alice(), TS)
        .set("from", Value::text(long_sigil(&alice())))
        .sealed(&alice());
    expect(&raw.bytes(), Status::Valid, &[]);
}

// ---------------------------------------------------------------------------
// bad_signature

#[test]
fn bad_signature_at_zero_is_invalid() {
    let raw = good().corrupt_sig(0);
    let out = expect(&raw.bytes(), Status::Invalid, &[(R::BadSignature, at(0))]);
    assert!(!out.reasons[0].detail.to_string().is_empty());
    assert_eq!(out.key_source, None);
    // Signed by the wrong key under the right name.
    let raw = Raw::genesis(&alice(), TS).reid().sign_as(
        &bob(),
        &default_sigil(&alice()),
        "origin",
        MESSAGE_TAG,
    );
    expect(&raw.bytes(), Status::Invalid, &[(R::BadSignature, at(0))]);
    // A non-canonical S (S + L) is refused by strict verification (P5).
    let raw = good().edit_sig(0, |m| {
        let Some(Value::Bytes(mut sig)) = m.get("sig").cloned() else {
            panic!()
        };
        add_group_order(&mut sig[32..]);
        m.insert("sig", Value::Bytes(sig));
    });
    expect(&raw.bytes(), Status::Invalid, &[(R::BadSignature, at(0))]);
}

/// s += L (little-endian), the Ed25519 group order: same equation, not canonical.
fn add_group_order(s: &mut [u8]) {
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let mut carry = 0u16;
    for (b, l) in s.iter_mut().zip(L) {
        let t = u16::from(*b) + u16::from(l) + carry;
        *b = t as u8;
        carry = t >> 8;
    }
}

#[test]
fn bad_signature_at_one_is_partial() {
    let raw = good().cosign(&bob(), "tool_sandbox").corrupt_sig(1);
    let out = expect(&raw.bytes(), Status::Partial, &[(R::BadSignature, at(1))]);
    assert_eq!(out.key_source, Some(KeySource::Keyring));
    // And at 2, with a good one at 1.
    let raw = good()
        .cosign(&bob(), "tool_sandbox")
        .cosign(&carol(), "conduit_receipt")
        .corrupt_sig(2);
    expect(&raw.bytes(), Status::Partial, &[(R::BadSignature, at(2))]);
    // A co-signature over body(E, 0) instead of body(E, 1).
    let mut raw = good();
    let sig = raw.signature_over(0, &bob(), scope_tag("tool_sandbox"));
    let mut sigs = raw.signatures();
    sigs.push(sig_map(
        "ed25519",
        &default_sigil(&bob()),
        "tool_sandbox",
        &sig,
        None,
    ));
    raw.set_signatures(sigs);
    expect(&raw.bytes(), Status::Partial, &[(R::BadSignature, at(1))]);
}

// ---------------------------------------------------------------------------
// unknown_alg, unknown_scope

#[test]
fn unknown_alg_at_zero_and_at_k() {
    let a = default_sigil(&alice());
    for alg in ["ed448", "Ed25519", "ed25519ph", ""] {
        let raw = Raw::genesis(&alice(), TS).reid().sign_full(
            &alice(),
            alg,
            &a,
            "origin",
            MESSAGE_TAG,
            None,
        );
        expect(&raw.bytes(), Status::Invalid, &[(R::UnknownAlg, at(0))]);
        let raw = good().sign_full(
            &bob(),
            alg,
            &default_sigil(&bob()),
            "tool_sandbox",
            scope_tag("tool_sandbox"),
            None,
        );
        expect(&raw.bytes(), Status::Partial, &[(R::UnknownAlg, at(1))]);
        let raw = good().cosign(&bob(), "tool_sandbox").sign_full(
            &carol(),
            alg,
            &default_sigil(&carol()),
            "human_approval",
            scope_tag("human_approval"),
            None,
        );
        expect(&raw.bytes(), Status::Partial, &[(R::UnknownAlg, at(2))]);
    }
}

#[test]
fn unknown_scope_at_k_is_partial() {
    for scope in ["notary", "Human_Approval", "human-approval", ""] {
        let raw = good().sign_as(
            &bob(),
            &default_sigil(&bob()),
            scope,
            scope_tag("human_approval"),
        );
        expect(&raw.bytes(), Status::Partial, &[(R::UnknownScope, at(1))]);
    }
    // At 0 it is also not origin.
    let raw = Raw::genesis(&alice(), TS).reid().sign_as(
        &alice(),
        &default_sigil(&alice()),
        "notary",
        MESSAGE_TAG,
    );
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::OriginMissing, at(0)), (R::UnknownScope, at(0))],
    );
}

// ---------------------------------------------------------------------------
// duplicate_signer

#[test]
fn duplicate_signer_same_key_other_form() {
    // Alice signs the origin (default form), then co-signs as her long form.
    let raw = good().sign_as(
        &alice(),
        &long_sigil(&alice()),
        "human_approval",
        scope_tag("human_approval"),
    );
    expect(
        &raw.bytes(),
        Status::Partial,
        &[(R::DuplicateSigner, at(1))],
    );
    // Bob twice, default then short: the later index.
    let raw = good().cosign(&bob(), "tool_sandbox").sign_as(
        &bob(),
        &short_sigil(&bob()),
        "conduit_receipt",
        scope_tag("conduit_receipt"),
    );
    expect(
        &raw.bytes(),
        Status::Partial,
        &[(R::DuplicateSigner, at(2))],
    );
    // Same string twice, other signers between.
    let raw = good()
        .cosign(&bob(), "tool_sandbox")
        .cosign(&carol(), "human_approval")
        .cosign(&bob(), "conduit_receipt");
    expect(
        &raw.bytes(),
        Status::Partial,
        &[(R::DuplicateSigner, at(3))],
    );
}

// ---------------------------------------------------------------------------
// unknown_signer

#[test]
fn unknown_signer_at_zero_and_at_k() {
    let out = expect_with(
        &good().bytes(),
        &(),
        &CheckOptions::DEFAULT,
        Status::Invalid,
        &[(R::UnknownSigner, at(0))],
    );
    assert_eq!(out.key_source, None);
    let only_bob = [bob().public_key()];
    expect_with(
        &good().bytes(),
        &only_bob,
        &CheckOptions::DEFAULT,
        Status::Invalid,
        &[(R::UnknownSigner, at(0))],
    );
    let only_alice = [alice().public_key()];
    let raw = good().cosign(&bob(), "tool_sandbox");
    expect_with(
        &raw.bytes(),
        &only_alice,
        &CheckOptions::DEFAULT,
        Status::Partial,
        &[(R::UnknownSigner, at(1))],
    );
}

/// A resolver that answers every sigil with one key, named or not.
struct Liar(PublicKey);

impl KeyResolver for Liar {
    fn resolve(&self, _: &Sigil) -> Option<PublicKey> {
        Some(self.0)
    }
}

#[test]
fn a_resolver_key_the_sigil_does_not_name_is_unresolved() {
    // Bob's key returned for Alice's sigil, on an envelope Bob signed in
    // Alice's name: the check re-checks the hash and refuses.
    let raw = Raw::genesis(&alice(), TS).reid().sign_as(
        &bob(),
        &default_sigil(&alice()),
        "origin",
        MESSAGE_TAG,
    );
    expect_with(
        &raw.bytes(),
        &Liar(bob().public_key()),
        &CheckOptions::DEFAULT,
        Status::Invalid,
        &[(R::UnknownSigner, at(0))],
    );
}

#[test]
fn a_keyring_key_resolves_every_form() {
    for form in SigilForm::ALL {
        let env = EnvelopeBuilder::genesis(TS)
            .from_form(form)
            .sign_with_rng(&alice(), &mut TestRng::new(1))
            .unwrap();
        let cos = env
            .cosign_as(&bob(), bob().sigil(form), Scope::ToolSandbox, None)
            .unwrap();
        expect(cos.as_bytes(), Status::Valid, &[]);
    }
}

// ---------------------------------------------------------------------------
// reserved_sigil

#[test]
fn reserved_sigil_as_from_and_as_by() {
    // from = sigil:none, by = sigil:none: the envelope-level reason only.
    let raw = Raw::genesis(&alice(), TS)
        .set("from", Value::text("sigil:none"))
        .sealed(&alice());
    expect(&raw.bytes(), Status::Invalid, &[(R::ReservedSigil, NONE)]);
    // from reserved, by a real key: also a mismatch.
    let raw = Raw::genesis(&alice(), TS)
        .set("from", Value::text("sigil:dreamer"))
        .reid()
        .sign_as(&alice(), &default_sigil(&alice()), "origin", MESSAGE_TAG);
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::ReservedSigil, NONE), (R::OriginSignerMismatch, at(0))],
    );
    // from a real key, origin `by` a reserved name: both reasons at 0.
    let raw = Raw::genesis(&alice(), TS).reid().sign_as(
        &alice(),
        "sigil:librarian",
        "origin",
        MESSAGE_TAG,
    );
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::OriginSignerMismatch, at(0)), (R::ReservedSigil, at(0))],
    );
    // A reserved name co-signing at k >= 1: partial, for every name.
    for name in [
        "sigil:none",
        "sigil:dreamer",
        "sigil:crier",
        "sigil:confessor",
        "sigil:scribe",
        "sigil:almoner",
        "sigil:mortician",
        "sigil:lighthouse",
        "sigil:dovecote",
        "sigil:seal_keeper",
        "sigil:translator",
        "sigil:librarian",
    ] {
        assert!(Sigil::parse(name).unwrap().is_reserved(), "{name}");
        let raw = good().sign_as(
            &bob(),
            name,
            "conduit_receipt",
            scope_tag("conduit_receipt"),
        );
        expect(&raw.bytes(), Status::Partial, &[(R::ReservedSigil, at(1))]);
    }
    // Two reserved co-signers are not "the same signer".
    let raw = good()
        .sign_as(
            &bob(),
            "sigil:scribe",
            "tool_sandbox",
            scope_tag("tool_sandbox"),
        )
        .sign_as(
            &bob(),
            "sigil:scribe",
            "human_approval",
            scope_tag("human_approval"),
        );
    expect(
        &raw.bytes(),
        Status::Partial,
        &[(R::ReservedSigil, at(1)), (R::ReservedSigil, at(2))],
    );
}

// ---------------------------------------------------------------------------
// short_sigil_misuse

#[test]
fn short_sigil_misuse_herald_endorsement() {
    let raw = good().sign_as(
        &bob(),
        &short_sigil(&bob()),
        "herald_endorsement",
        scope_tag("herald_endorsement"),
    );
    expect(
        &raw.bytes(),
        Status::Partial,
        &[(R::ShortSigilMisuse, at(1))],
    );
    // Short sigils are fine in other scopes.
    let raw = good().sign_as(
        &bob(),
        &short_sigil(&bob()),
        "tool_sandbox",
        scope_tag("tool_sandbox"),
    );
    expect(&raw.bytes(), Status::Valid, &[]);
}

#[test]
fn short_sigil_misuse_lineage_parent() {
    let b = short_sigil(&bob());
    let raw = birth_raw(
        &alice(),
        vec![attestation("birth", birth_value(&alice(), &[&b]))],
    );
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::ShortSigilMisuse, NONE)],
    );
    // The default and long forms are fine parents.
    let raw = birth_raw(
        &alice(),
        vec![attestation(
            "birth",
            birth_value(&alice(), &[&default_sigil(&bob()), &long_sigil(&carol())]),
        )],
    );
    expect(&raw.bytes(), Status::Valid, &[]);
}

#[test]
fn short_sigil_misuse_manifest_subject() {
    let raw = Raw::genesis(&alice(), TS)
        .set("from", Value::text(short_sigil(&alice())))
        .set("kind", Value::text("manifest"))
        .set("payload", map(vec![("capabilities", text_array(&["a/b"]))]))
        .seal(&alice(), origin_tag("manifest"));
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::ShortSigilMisuse, NONE)],
    );
    // A short sigil may send an ordinary message.
    let raw = Raw::genesis(&alice(), TS)
        .set("from", Value::text(short_sigil(&alice())))
        .sealed(&alice());
    expect(&raw.bytes(), Status::Valid, &[]);
}

// ---------------------------------------------------------------------------
// required_signature_missing

#[test]
fn required_signature_missing_by_policy() {
    let required = [Scope::HumanApproval];
    let opts = CheckOptions {
        required_scopes: &required,
        ..CheckOptions::DEFAULT
    };
    let keys = keyring();
    // Absent.
    let raw = good().cosign(&bob(), "tool_sandbox");
    let out = expect_with(
        &raw.bytes(),
        &keys,
        &opts,
        Status::Partial,
        &[(R::RequiredSignatureMissing, NONE)],
    );
    assert_eq!(out.reasons[0].detail, Detail::Note("human_approval"));
    // Present and valid.
    let raw = good().cosign(&bob(), "human_approval");
    expect_with(&raw.bytes(), &keys, &opts, Status::Valid, &[]);
    // Present but invalid: both the bad signature and the missing one.
    let raw = good().cosign(&bob(), "human_approval").corrupt_sig(1);
    expect_with(
        &raw.bytes(),
        &keys,
        &opts,
        Status::Partial,
        &[
            (R::BadSignature, at(1)),
            (R::RequiredSignatureMissing, NONE),
        ],
    );
    // Two required scopes, neither present: two reasons.
    let required = [Scope::HumanApproval, Scope::HeraldEndorsement];
    let opts2 = CheckOptions {
        required_scopes: &required,
        ..CheckOptions::DEFAULT
    };
    expect_with(
        &good().bytes(),
        &keys,
        &opts2,
        Status::Partial,
        &[
            (R::RequiredSignatureMissing, NONE),
            (R::RequiredSignatureMissing, NONE),
        ],
    );
}

#[test]
fn required_signature_missing_duress_without_witness() {
    let duress = Raw::genesis(&alice(), TS)
        .set("kind", Value::text("duress"))
        .set("payload", map(vec![]))
        .seal(&alice(), origin_tag("duress"));
    expect(
        &duress.bytes(),
        Status::Partial,
        &[(R::RequiredSignatureMissing, NONE)],
    );
    // A witness in another scope does not count.
    let raw = duress.clone().cosign(&bob(), "human_approval");
    expect(
        &raw.bytes(),
        Status::Partial,
        &[(R::RequiredSignatureMissing, NONE)],
    );
    // With the witness.
    let raw = duress.cosign(&bob(), "duress_witness");
    expect(&raw.bytes(), Status::Valid, &[]);
}

// ---------------------------------------------------------------------------
// lineage_self

#[test]
fn lineage_self() {
    for own in [default_sigil(&alice()), long_sigil(&alice())] {
        let raw = birth_raw(
            &alice(),
            vec![attestation(
                "birth",
                birth_value(&alice(), &[&default_sigil(&bob()), &own]),
            )],
        );
        expect(&raw.bytes(), Status::Invalid, &[(R::LineageSelf, NONE)]);
    }
    // Its own short sigil: both rules.
    let raw = birth_raw(
        &alice(),
        vec![attestation(
            "birth",
            birth_value(&alice(), &[&short_sigil(&alice())]),
        )],
    );
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[(R::ShortSigilMisuse, NONE), (R::LineageSelf, NONE)],
    );
}

// ---------------------------------------------------------------------------
// expired, future_ts

#[test]
fn expired_at_the_skew_boundary() {
    let now = TS + 10_000;
    let with_expires = |x: u64| {
        Raw::genesis(&alice(), TS)
            .set("expires", Value::Unsigned(x))
            .sealed(&alice())
    };
    let opts = opts_now(now, 300);
    let keys = keyring();
    // Exactly now - skew: not expired.
    expect_with(
        &with_expires(now - 300).bytes(),
        &keys,
        &opts,
        Status::Valid,
        &[],
    );
    // One second past.
    expect_with(
        &with_expires(now - 301).bytes(),
        &keys,
        &opts,
        Status::Invalid,
        &[(R::Expired, NONE)],
    );
    // Skew 0.
    let opts0 = opts_now(now, 0);
    expect_with(
        &with_expires(now).bytes(),
        &keys,
        &opts0,
        Status::Valid,
        &[],
    );
    expect_with(
        &with_expires(now - 1).bytes(),
        &keys,
        &opts0,
        Status::Invalid,
        &[(R::Expired, NONE)],
    );
    // No clock: no time reasons.
    expect_with(
        &with_expires(TS).bytes(),
        &keys,
        &CheckOptions::DEFAULT,
        Status::Valid,
        &[],
    );
    // A clock before the epoch + skew does not underflow.
    expect_with(
        &with_expires(TS).bytes(),
        &keys,
        &opts_now(5, 300),
        Status::Invalid,
        &[(R::FutureTs, NONE)],
    );
    // expires < ts is a P3 error, whatever the clock.
    let raw = Raw::genesis(&alice(), TS)
        .set("expires", Value::Unsigned(TS - 1))
        .sealed(&alice());
    expect(&raw.bytes(), Status::Invalid, &[(R::Malformed, NONE)]);
    // expires == ts is fine.
    expect(&with_expires(TS).bytes(), Status::Valid, &[]);
}

#[test]
fn future_ts_at_the_skew_boundary() {
    let at_ts = |ts: u64| Raw::genesis(&alice(), ts).sealed(&alice());
    let now = TS;
    let keys = keyring();
    let opts = opts_now(now, 300);
    expect_with(&at_ts(now + 300).bytes(), &keys, &opts, Status::Valid, &[]);
    expect_with(
        &at_ts(now + 301).bytes(),
        &keys,
        &opts,
        Status::Invalid,
        &[(R::FutureTs, NONE)],
    );
    let opts0 = opts_now(now, 0);
    expect_with(&at_ts(now).bytes(), &keys, &opts0, Status::Valid, &[]);
    expect_with(
        &at_ts(now + 1).bytes(),
        &keys,
        &opts0,
        Status::Invalid,
        &[(R::FutureTs, NONE)],
    );
    // Old envelopes without `expires` are not stale here (a live-reception
    // rule of herald-verify, P10).
    expect_with(&at_ts(0).bytes(), &keys, &opts, Status::Valid, &[]);
    // A clock near u64::MAX does not overflow.
    expect_with(
        &at_ts(u64::MAX).bytes(),
        &keys,
        &opts_now(u64::MAX - 1, 300),
        Status::Valid,
        &[],
    );
}

// ---------------------------------------------------------------------------
// warnings: unknown_field, attestation_malformed

#[test]
fn unknown_field_is_a_warning() {
    let env = EnvelopeBuilder::genesis(TS)
        .extra_field("x-trace-note", Value::text("hi"))
        .unwrap()
        .sign_with_rng(&alice(), &mut TestRng::new(2))
        .unwrap();
    let out = expect(env.as_bytes(), Status::Valid, &[(R::UnknownField, NONE)]);
    assert!(out.decoded);
    assert_eq!(env.view().unknown_fields(), 1);
    // The detail points at the key's text head in the bytes.
    let Detail::UnknownKey { offset } = out.reasons[0].detail else {
        panic!("{:?}", out.reasons[0].detail)
    };
    assert_eq!(
        env.as_bytes().get(offset..offset + 13),
        Some(&b"\x6cx-trace-note"[..])
    );
    // Every reason has a non-empty detail.
    assert!(!out.reasons[0].detail.to_string().is_empty());
    // Covered by the signature: changing it breaks the origin and the id.
    let raw = Raw::from_bytes(env.as_bytes()).set("x-trace-note", Value::text("ho"));
    expect(
        &raw.bytes(),
        Status::Invalid,
        &[
            (R::UnknownField, NONE),
            (R::IdMismatch, NONE),
            (R::BadSignature, at(0)),
        ],
    );
    // Several unknown fields, each reported; hand-built ones too.
    let raw = good()
        .set("zz", Value::Null)
        .set("a", Value::Unsigned(1))
        .sealed(&alice());
    expect(
        &raw.bytes(),
        Status::Valid,
        &[(R::UnknownField, NONE), (R::UnknownField, NONE)],
    );
}

#[test]
fn attestation_malformed_is_a_warning() {
    let bad = [
        ("temperature", Value::Negative(0)),
        ("temperature", Value::from_f64(-0.5).unwrap()),
        ("temperature", Value::text("hot")),
        ("confidence", Value::from_f64(1.5).unwrap()),
        ("confidence", Value::Negative(0)),
        ("confidence", Value::Unsigned(2)),
        ("tools", Value::text("search")),
        (
            "tools",
            Value::Array(vec![Value::text("search"), Value::Unsigned(1)]),
        ),
        ("model", Value::Unsigned(4)),
        (
            "citation",
            map(vec![
                ("kind", Value::text("originates")),
                ("ref", Value::Bytes(vec![0; 31])),
            ]),
        ),
        ("citation", map(vec![("ref", Value::Bytes(vec![0; 32]))])),
        ("citation", Value::text("originates")),
        ("log_metadata_consent", Value::text("true")),
        // P12 revision 3: a handle is text, a DNS name or name@ a DNS name.
        ("handle", Value::Unsigned(1)),
        ("handle", Value::text("alice@")),
        ("handle", Value::text("alice@acme.com.")),
        ("handle", Value::text("a@b@acme.com")),
        ("handle", Value::text("https://acme.com")),
        ("molt_policy", map(vec![("threshold", Value::Unsigned(1))])),
        (
            "duress_witness",
            map(vec![("sigil", Value::text("sigil:nobody"))]),
        ),
        // A birth attestation on a message is a shape warning, not malformed.
        ("birth", map(vec![("key", Value::Bytes(vec![0; 32]))])),
    ];
    for (ty, value) in bad {
        let raw = good()
            .set(
                "attestations",
                Value::Array(vec![attestation(ty, value.clone())]),
            )
            .sealed(&alice());
        expect(
            &raw.bytes(),
            Status::Valid,
            &[(R::AttestationMalformed, NONE)],
        );
    }
    // Well-shaped, including boundaries; other types are uninterpreted.
    let fine = [
        ("temperature", Value::Unsigned(0)),
        ("temperature", Value::from_f64(0.7).unwrap()),
        ("confidence", Value::Unsigned(0)),
        ("confidence", Value::Unsigned(1)),
        ("confidence", Value::from_f64(0.62).unwrap()),
        ("tools", Value::Array(vec![])),
        ("tools", text_array(&["search", "python"])),
        ("model", Value::text("claude-opus-4-7")),
        ("citation", map(vec![("kind", Value::text("originates"))])),
        (
            "citation",
            map(vec![
                ("kind", Value::text("cites")),
                ("ref", Value::Bytes(vec![0; 32])),
            ]),
        ),
        ("log_metadata_consent", Value::Bool(true)),
        ("handle", Value::text("acme.com")),
        ("handle", Value::text("alice@acme.com")),
        (
            "molt_policy",
            map(vec![
                ("cosigners", text_array(&[&default_sigil(&bob())])),
                ("threshold", Value::Unsigned(1)),
            ]),
        ),
        (
            "duress_witness",
            map(vec![("sigil", Value::text(default_sigil(&carol())))]),
        ),
        ("vibe", Value::text("the answer arrived already grateful")),
        ("temperature-ish", Value::Negative(9)),
    ];
    for (ty, value) in fine {
        let raw = good()
            .set(
                "attestations",
                Value::Array(vec![attestation(ty, value.clone())]),
            )
            .sealed(&alice());
        expect(&raw.bytes(), Status::Valid, &[]);
    }
    // Four malformed at once: four reasons, status still valid.
    let raw = good()
        .set(
            "attestations",
            Value::Array(vec![
                attestation("temperature", Value::Negative(0)),
                attestation("confidence", Value::from_f64(1.5).unwrap()),
                attestation("tools", Value::Array(vec![Value::Unsigned(1)])),
                attestation(
                    "citation",
                    map(vec![
                        ("kind", Value::text("originates")),
                        ("ref", Value::Bytes(vec![0; 31])),
                    ]),
                ),
            ]),
        )
        .sealed(&alice());
    expect(
        &raw.bytes(),
        Status::Valid,
        &[(R::AttestationMalformed, NONE); 4],
    );
}

// ---------------------------------------------------------------------------
// check_parent: trace_mismatch, missing_parent

#[test]
fn check_parent_trace_mismatch_on_cross_trace_replay() {
    let mut rng = TestRng::new(3);
    // Trace A (Alice's genesis) and trace B (Bob's genesis and Carol's reply).
    let ga = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng)
        .unwrap();
    let gb = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&bob(), &mut rng)
        .unwrap();
    let rb = EnvelopeBuilder::reply(&gb.view(), TS + 1)
        .sign_with_rng(&carol(), &mut rng)
        .unwrap();
    check_parent(&rb.view(), &gb.view()).unwrap();
    // A child naming rb as its parent but carrying trace A.
    let child = EnvelopeBuilder::reply_to(rb.id(), *ga.view().trace(), TS + 2)
        .sign_with_rng(&alice(), &mut rng)
        .unwrap();
    // Alone, the child is a fine envelope: the binding needs the parent.
    expect(child.as_bytes(), Status::Valid, &[]);
    let err = check_parent(&child.view(), &rb.view()).unwrap_err();
    assert_eq!(err.code, R::TraceMismatch);
    assert_eq!(err.index, None);
    assert_eq!(err.status(), Status::Invalid);
    // A parent's trace modified by one bit: the same.
    let mut t = *rb.view().trace();
    t[31] ^= 1;
    let child = EnvelopeBuilder::reply_to(rb.id(), t, TS + 2)
        .sign_with_rng(&alice(), &mut rng)
        .unwrap();
    assert_eq!(
        check_parent(&child.view(), &rb.view()).unwrap_err().code,
        R::TraceMismatch
    );
    // Presented with an envelope that is not its parent.
    let err = check_parent(&child.view(), &ga.view()).unwrap_err();
    assert_eq!(err.code, R::MissingParent);
    assert_eq!(err.status(), Status::Invalid);
    // A genesis has no parent.
    assert_eq!(
        check_parent(&ga.view(), &gb.view()).unwrap_err().code,
        R::MissingParent
    );
}

// ---------------------------------------------------------------------------
// Domain separation (P5, P6, P7)

#[test]
fn domain_separation_origin_tag_depends_on_kind() {
    // A molt whose origin was signed with the message tag.
    let molt = |tag: &[u8]| {
        Raw::genesis(&alice(), TS)
            .set("kind", Value::text("molt"))
            .set(
                "payload",
                map(vec![
                    (
                        "new_key",
                        Value::Bytes(bob().public_key().as_bytes().to_vec()),
                    ),
                    ("not_before", Value::Unsigned(TS + 86_400)),
                ]),
            )
            .seal(&alice(), tag)
    };
    expect(
        &molt(MESSAGE_TAG).bytes(),
        Status::Invalid,
        &[(R::BadSignature, at(0))],
    );
    expect(&molt(b"herald.molt.v1").bytes(), Status::Valid, &[]);
    // No tag at all, or the scope-style tag.
    expect(
        &molt(b"").bytes(),
        Status::Invalid,
        &[(R::BadSignature, at(0))],
    );
    expect(
        &molt(b"herald.sig.molt.v1").bytes(),
        Status::Invalid,
        &[(R::BadSignature, at(0))],
    );
    // A message signed under a lifecycle tag.
    let raw = Raw::genesis(&alice(), TS).seal(&alice(), b"herald.molt.v1");
    expect(&raw.bytes(), Status::Invalid, &[(R::BadSignature, at(0))]);
}

#[test]
fn domain_separation_scope_tags() {
    // Every scope's signature under every other scope's tag fails.
    for (scope, _) in SCOPE_TAGS {
        for (other, tag) in SCOPE_TAGS {
            let raw = good().sign_as(&bob(), &default_sigil(&bob()), scope, tag);
            let out = run(&raw.bytes(), &keyring(), &CheckOptions::DEFAULT);
            if scope == other {
                assert_eq!(out.pairs, vec![], "{scope}");
                assert_eq!(out.status, Status::Valid);
            } else {
                assert_eq!(out.pairs, vec![(R::BadSignature, at(1))], "{scope} {other}");
                assert_eq!(out.status, Status::Partial);
            }
        }
        // And under the origin tag.
        let raw = good().sign_as(&bob(), &default_sigil(&bob()), scope, MESSAGE_TAG);
        expect(&raw.bytes(), Status::Partial, &[(R::BadSignature, at(1))]);
    }
    // A human_approval co-signature re-labelled tool_sandbox (the map of
    // the last signature is not covered by any signature, only its tag is).
    let raw = good().cosign(&bob(), "human_approval").edit_sig(1, |m| {
        m.insert("scope", Value::text("tool_sandbox"));
    });
    expect(&raw.bytes(), Status::Partial, &[(R::BadSignature, at(1))]);
    // ... and with a policy requiring human_approval, it is also missing.
    let required = [Scope::HumanApproval];
    let opts = CheckOptions {
        required_scopes: &required,
        ..CheckOptions::DEFAULT
    };
    expect_with(
        &raw.bytes(),
        &keyring(),
        &opts,
        Status::Partial,
        &[
            (R::BadSignature, at(1)),
            (R::RequiredSignatureMissing, NONE),
        ],
    );
}

#[test]
fn domain_separation_every_kind_pair() {
    // For each pair of kinds (X, Y): an envelope of kind Y whose origin is
    // over Y's body with X's tag verifies exactly when the tags are equal
    // (message and posthumous_citation share herald.origin.v1, P7).
    let payload_of = |kind: &str| match kind {
        "molt" => map(vec![
            (
                "new_key",
                Value::Bytes(bob().public_key().as_bytes().to_vec()),
            ),
            ("not_before", Value::Unsigned(TS + 86_400)),
        ]),
        "refusal" => map(vec![("reason", Value::text("no"))]),
        "manifest" => map(vec![("capabilities", text_array(&["legal-research/eu"]))]),
        "certification" => map(vec![
            (
                "subject",
                Value::text(bob().sigil(SigilForm::Default).to_string()),
            ),
            ("claim", Value::text("handle")),
            ("value", Value::text("bob@example.com")),
        ]),
        _ => map(vec![]),
    };
    let p = good();
    for (y, _) in ORIGIN_TAGS {
        for (x, tag_x) in ORIGIN_TAGS {
            let mut raw = if y == "birth" {
                Raw::genesis(&alice(), TS).set(
                    "attestations",
                    Value::Array(vec![attestation("birth", birth_value(&alice(), &[]))]),
                )
            } else {
                Raw::reply(&alice(), p.id(), p.id(), TS)
            };
            raw = raw
                .set("kind", Value::text(y))
                .set("payload", payload_of(y))
                .seal(&alice(), tag_x);
            if y == "duress" {
                raw = raw.cosign(&bob(), "duress_witness");
            }
            let out = run(&raw.bytes(), &keyring(), &CheckOptions::DEFAULT);
            if tag_x == origin_tag(y) {
                assert_eq!(out.pairs, vec![], "{y} signed as {x}");
                assert_eq!(out.status, Status::Valid);
            } else {
                // The duress witness signed body(E, 1), which holds the bad
                // origin map; its own signature is still good.
                assert_eq!(
                    out.pairs,
                    vec![(R::BadSignature, at(0))],
                    "{y} signed as {x}"
                );
                assert_eq!(out.status, Status::Invalid);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Birth key learning (P7)

#[test]
fn birth_keys_are_learned_from_the_birth() {
    let env = EnvelopeBuilder::genesis(TS)
        .kind(Kind::Birth)
        .attest("birth", birth_attestation(&alice().public_key(), "me", &[]))
        .sign_with_rng(&alice(), &mut TestRng::new(4))
        .unwrap();
    let out = expect_with(
        env.as_bytes(),
        &(),
        &CheckOptions::DEFAULT,
        Status::Valid,
        &[],
    );
    assert_eq!(out.key_source, Some(KeySource::Birth));
    // A keyring wins when it knows the key.
    let out = expect(env.as_bytes(), Status::Valid, &[]);
    assert_eq!(out.key_source, Some(KeySource::Keyring));
    // Learning switched off.
    let opts = CheckOptions {
        learn_birth_keys: false,
        ..CheckOptions::DEFAULT
    };
    let out = expect_with(
        env.as_bytes(),
        &(),
        &opts,
        Status::Invalid,
        &[(R::UnknownSigner, at(0))],
    );
    assert_eq!(out.key_source, None);
    // The learned key is for the origin only: a co-signer still needs a channel.
    let cos = env.cosign(&bob(), Scope::LineageConsent, None).unwrap();
    expect_with(
        cos.as_bytes(),
        &(),
        &CheckOptions::DEFAULT,
        Status::Partial,
        &[(R::UnknownSigner, at(1))],
    );
    // A message carrying a birth attestation teaches nothing.
    let msg = EnvelopeBuilder::genesis(TS)
        .attest("birth", birth_attestation(&alice().public_key(), "me", &[]))
        .sign_with_rng(&alice(), &mut TestRng::new(4))
        .unwrap();
    expect_with(
        msg.as_bytes(),
        &(),
        &CheckOptions::DEFAULT,
        Status::Invalid,
        &[(R::UnknownSigner, at(0))],
    );
    // A learned key still has to verify the signature.
    let raw = Raw::from_bytes(env.as_bytes()).corrupt_sig(0);
    let out = expect_with(
        &raw.bytes(),
        &(),
        &CheckOptions::DEFAULT,
        Status::Invalid,
        &[(R::BadSignature, at(0))],
    );
    assert_eq!(out.key_source, None);
}

// ---------------------------------------------------------------------------
// Every reason, never only the first (P11)

#[test]
fn multi_fault_envelope_reports_every_reason() {
    let now = TS + 100_000;
    let raw = Raw::genesis(&alice(), TS)
        .set("v", Value::text("herald/0.1")) // unsupported_version
        .set("expires", Value::Unsigned(TS + 60)) // expired at `now`
        .set("x-extra", Value::Bool(true)) // unknown_field
        .set(
            "attestations",
            Value::Array(vec![attestation("temperature", Value::Negative(0))]), // attestation_malformed
        )
        .sealed(&alice())
        .cosign(&bob(), "tool_sandbox")
        .corrupt_sig(1) // bad_signature[1]
        .sign_as(
            &carol(),
            &default_sigil(&carol()),
            "notary",
            scope_tag("tool_sandbox"),
        ) // unknown_scope[2]
        .sign_full(
            &key(9),
            "ed448",
            &default_sigil(&key(9)),
            "conduit_receipt",
            scope_tag("conduit_receipt"),
            None,
        ) // unknown_alg[3]
        .sign_as(
            &bob(),
            "sigil:crier",
            "human_approval",
            scope_tag("human_approval"),
        ) // reserved_sigil[4]
        .sign_as(
            &alice(),
            &long_sigil(&alice()),
            "herald_endorsement",
            scope_tag("herald_endorsement"),
        ) // duplicate_signer[5]
        .cosign(&key(8), "lineage_consent"); // unknown_signer[6]
    let mut id = raw.id();
    id[5] ^= 0x80;
    let raw = raw
        .set("id", Value::Bytes(id.to_vec())) // id_mismatch
        .set("trace", Value::Bytes(id.to_vec())); // (trace == carried id: no genesis mismatch)
    let required = [Scope::HumanApproval];
    let opts = CheckOptions {
        now: Some(now),
        required_scopes: &required, // required_signature_missing
        ..CheckOptions::DEFAULT
    };
    let out = run(&raw.bytes(), &keyring(), &opts);
    let got: BTreeSet<_> = out.pairs.iter().copied().collect();
    let want: BTreeSet<_> = [
        (R::UnsupportedVersion, NONE),
        (R::IdMismatch, NONE),
        (R::Expired, NONE),
        (R::UnknownField, NONE),
        (R::AttestationMalformed, NONE),
        (R::BadSignature, at(1)),
        (R::UnknownScope, at(2)),
        (R::UnknownAlg, at(3)),
        (R::ReservedSigil, at(4)),
        (R::DuplicateSigner, at(5)),
        (R::UnknownSigner, at(6)),
        (R::RequiredSignatureMissing, NONE),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want, "{:#?}", out.reasons);
    assert_eq!(out.pairs.len(), want.len(), "no reason twice");
    assert_eq!(out.status, Status::Invalid);
}

#[test]
fn multi_fault_partial_only() {
    // Only signature-level faults and a warning: partial, every one reported.
    let raw = good()
        .set("x", Value::Null)
        .sealed(&alice())
        .cosign(&bob(), "tool_sandbox")
        .corrupt_sig(1)
        .sign_as(
            &carol(),
            &default_sigil(&carol()),
            "notary",
            scope_tag("tool_sandbox"),
        )
        .sign_as(
            &key(7),
            &short_sigil(&key(7)),
            "herald_endorsement",
            scope_tag("herald_endorsement"),
        );
    let mut keys = keyring().to_vec();
    keys.push(key(7).public_key());
    expect_with(
        &raw.bytes(),
        &keys.as_slice(),
        &CheckOptions::DEFAULT,
        Status::Partial,
        &[
            (R::UnknownField, NONE),
            (R::BadSignature, at(1)),
            (R::UnknownScope, at(2)),
            (R::ShortSigilMisuse, at(3)),
        ],
    );
}

// ---------------------------------------------------------------------------
// The registry (P11) and the verdict table (P13)

const P11_CODES: [&str; 33] = [
    "malformed",
    "unsupported_version",
    "id_mismatch",
    "genesis_trace_mismatch",
    "trace_mismatch",
    "missing_parent",
    "origin_missing",
    "origin_signer_mismatch",
    "bad_signature",
    "unknown_alg",
    "unknown_scope",
    "duplicate_signer",
    "unknown_signer",
    "reserved_sigil",
    "short_sigil_misuse",
    "required_signature_missing",
    "replayed_nonce",
    "expired",
    "stale",
    "future_ts",
    "deprecated_signer",
    "rotated_key",
    "disputed",
    "molt_cooloff",
    "molt_unproven",
    "molt_cosign_missing",
    "lineage_self",
    "lineage_cycle",
    "lineage_deprecated_parent",
    "signer_under_duress",
    "unknown_field",
    "attestation_malformed",
    "lineage_unproven",
];

/// The backticked names in P11's "Reason codes" paragraph.
fn p11_from_profile(text: &str) -> Vec<String> {
    let start = text.find("## P11.").expect("P11 section");
    let section = &text[start..];
    let end = section[1..].find("\n## ").map_or(section.len(), |i| i + 1);
    let section = &section[..end];
    let para = section
        .find("Reason codes")
        .map(|i| &section[i..])
        .expect("Reason codes paragraph");
    let para = para.split("\n\n").next().unwrap();
    para.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn registry_matches_p11() {
    let names: Vec<&str> = ReasonCode::ALL.iter().map(|c| c.name()).collect();
    // Round trip, uniqueness, snake_case.
    let mut seen = BTreeSet::new();
    for &code in ReasonCode::ALL {
        let name = code.name();
        assert_eq!(ReasonCode::from_name(name), Some(code), "{name}");
        assert_eq!(code.to_string(), name);
        assert!(seen.insert(name), "duplicate name {name}");
        assert!(
            !name.is_empty()
                && !name.starts_with('_')
                && !name.ends_with('_')
                && !name.contains("__")
                && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{name} is not snake_case"
        );
    }
    assert_eq!(ReasonCode::from_name("Malformed"), None);
    assert_eq!(ReasonCode::from_name(""), None);
    assert_eq!(ReasonCode::from_name("valid"), None);
    // The hard-coded P11 list, in order.
    assert_eq!(names, P11_CODES);
    // And the list PROFILE.md itself gives (docs/spec/, in the repository).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/spec/PROFILE.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let parsed = p11_from_profile(&text);
    assert_eq!(parsed, P11_CODES, "PROFILE.md P11 changed");
    assert_eq!(names, parsed);
    // Exactly the four P11 warnings.
    let warnings: Vec<&str> = ReasonCode::ALL
        .iter()
        .filter(|c| c.is_warning())
        .map(|c| c.name())
        .collect();
    assert_eq!(
        warnings,
        [
            "signer_under_duress",
            "unknown_field",
            "attestation_malformed",
            "lineage_unproven"
        ]
    );
}

#[test]
fn verdict_table_of_p13() {
    let s = |code, index| {
        Reason {
            code,
            index,
            detail: Detail::None,
        }
        .status()
    };
    for &code in ReasonCode::ALL {
        if code.is_warning() {
            for i in [NONE, at(0), at(1)] {
                assert_eq!(s(code, i), Status::Valid, "{code}");
            }
        }
    }
    // Signature codes: invalid at 0, partial at k >= 1.
    for code in [
        R::Malformed,
        R::ReservedSigil,
        R::ShortSigilMisuse,
        R::UnknownSigner,
        R::BadSignature,
        R::UnknownAlg,
        R::UnknownScope,
    ] {
        assert_eq!(s(code, at(0)), Status::Invalid, "{code}");
        assert_eq!(s(code, NONE), Status::Invalid, "{code}");
        for k in [1, 2, 31, u32::MAX] {
            assert_eq!(s(code, at(k)), Status::Partial, "{code}[{k}]");
        }
    }
    assert_eq!(s(R::DuplicateSigner, at(1)), Status::Partial);
    assert_eq!(s(R::RequiredSignatureMissing, NONE), Status::Partial);
    // Envelope, chain, replay, time and lifecycle codes are invalid.
    for code in [
        R::UnsupportedVersion,
        R::IdMismatch,
        R::GenesisTraceMismatch,
        R::TraceMismatch,
        R::MissingParent,
        R::OriginMissing,
        R::OriginSignerMismatch,
        R::ReplayedNonce,
        R::Expired,
        R::Stale,
        R::FutureTs,
        R::DeprecatedSigner,
        R::RotatedKey,
        R::Disputed,
        R::MoltCooloff,
        R::MoltUnproven,
        R::MoltCosignMissing,
        R::LineageSelf,
        R::LineageCycle,
        R::LineageDeprecatedParent,
    ] {
        assert_eq!(s(code, NONE), Status::Invalid, "{code}");
    }
    // Origin codes at 0 are invalid.
    assert_eq!(s(R::OriginMissing, at(0)), Status::Invalid);
    assert_eq!(s(R::OriginSignerMismatch, at(0)), Status::Invalid);
    assert!(Status::Valid < Status::Partial && Status::Partial < Status::Invalid);
}

#[test]
fn limits_apply_to_check() {
    // P1/P13 limits, configurable: a smaller max_size refuses the envelope.
    let bytes = good().bytes();
    let opts = CheckOptions {
        limits: Limits {
            max_size: bytes.len() - 1,
            ..Limits::DEFAULT
        },
        ..CheckOptions::DEFAULT
    };
    let out = expect_with(
        &bytes,
        &keyring(),
        &opts,
        Status::Invalid,
        &[(R::Malformed, NONE)],
    );
    assert!(!out.decoded);
    let opts = CheckOptions {
        limits: Limits {
            max_size: bytes.len(),
            ..Limits::DEFAULT
        },
        ..CheckOptions::DEFAULT
    };
    expect_with(&bytes, &keyring(), &opts, Status::Valid, &[]);
    // The decoded view agrees with the hand-built fields.
    let view = EnvelopeRef::decode(&bytes).unwrap();
    assert_eq!(*view.id(), good().id());
    assert_eq!(view.from(), default_sigil(&alice()));
    let _ = PublicKey::from_bytes(alice().public_key().as_bytes()).unwrap();
}
