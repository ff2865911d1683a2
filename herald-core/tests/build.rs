//! The builder and owned envelopes (spec §3, PROFILE.md P3–P7): genesis and
//! replies, chains and fan-out, co-signing in every scope with body(E, k)
//! checked against an independent implementation (tests/support), serde
//! payloads, refusals of the builder, determinism, size limits, sigil forms
//! and the origin tag of every kind.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{self, Limits, Map, SerdeError, Value};
use herald_core::{
    BuildError, CheckOptions, Envelope, EnvelopeBuilder, EnvelopeRef, KeySource, Kind, Nonce,
    ReasonCode, Scope, SigilForm, SigningKey, Status, check_parent,
};
use serde::{Deserialize, Serialize};
use support::*;

use ReasonCode as R;

fn rng() -> TestRng {
    TestRng::new(0x4845_5241_4c44)
}

fn check_valid(env: &Envelope) {
    let (checked, reasons) = env.check(&keyring(), &CheckOptions::DEFAULT);
    assert_eq!(checked.status, Status::Valid, "{reasons:#?}");
    assert!(reasons.is_empty(), "{reasons:#?}");
    assert!(checked.envelope.is_some());
    assert_eq!(checked.computed_id, Some(env.id()));
}

fn non_origin_scopes() -> Vec<Scope> {
    Scope::ALL
        .into_iter()
        .filter(|s| *s != Scope::Origin)
        .collect()
}

/// body(E, k) as the library builds it, decoded into a map.
fn body_map(view: &EnvelopeRef<'_>, k: usize) -> Map {
    let body = view.body(k).unwrap();
    let bytes = body.to_vec();
    assert_eq!(bytes.len(), body.len());
    match Value::decode(&bytes).unwrap() {
        Value::Map(m) => m,
        other => panic!("body is not a map: {other:?}"),
    }
}

fn signatures_len(m: &Map) -> usize {
    match m.get("signatures") {
        Some(Value::Array(a)) => a.len(),
        other => panic!("signatures: {other:?}"),
    }
}

/// Check body(E, k) for every k: the first k signature maps, no `id`, no
/// `trace` on a genesis; equal to the independent body; and signature k
/// verifying independently over `tag_k || body(E, k)`.
fn assert_bodies(env: &Envelope, tags: &[&[u8]], keys: &[&SigningKey]) {
    let view = env.view();
    let raw = Raw::from_bytes(env.as_bytes());
    let n = view.signature_count();
    assert_eq!(tags.len(), n);
    for k in 0..=n {
        let m = body_map(&view, k);
        assert_eq!(signatures_len(&m), k, "body({k})");
        assert!(m.get("id").is_none(), "body({k}) holds id");
        assert_eq!(
            m.get("trace").is_none(),
            view.is_genesis(),
            "body({k}) and trace"
        );
        assert_eq!(view.body(k).unwrap().to_vec(), raw.body(k), "body({k})");
        // The signatures it holds are the first k of the envelope's.
        let Some(Value::Array(sigs)) = m.get("signatures") else {
            panic!()
        };
        assert_eq!(sigs.as_slice(), &raw.signatures()[..k]);
    }
    assert!(view.body(n + 1).is_none());
    assert_eq!(
        view.body(0).unwrap().sha256(),
        *view.id(),
        "id = sha256(body(E, 0))"
    );
    for (k, sig) in view.signatures().enumerate() {
        let sig = sig.unwrap();
        let mut msg = tags[k].to_vec();
        msg.extend_from_slice(&raw.body(k));
        keys[k].public_key().verify(&msg, sig.sig).unwrap();
        // And under no other tag.
        for other in SCOPE_TAGS
            .iter()
            .map(|t| t.1)
            .chain(ORIGIN_TAGS.iter().map(|t| t.1))
        {
            if other != tags[k] {
                let mut msg = other.to_vec();
                msg.extend_from_slice(&raw.body(k));
                assert!(keys[k].public_key().verify(&msg, sig.sig).is_err());
            }
        }
    }
}

// ---------------------------------------------------------------------------

#[test]
fn genesis_round_trips_through_decode() {
    let nonce = Nonce([0xab; 16]);
    let env = EnvelopeBuilder::genesis(TS)
        .to(bob().sigil(SigilForm::Default))
        .expires(TS + 3600)
        .nonce(nonce)
        .lineage_proof([0x42; 32])
        .attest("model", Value::text("claude-opus-4-7"))
        .attest("tools", text_array(&["search", "python"]))
        .payload(map(vec![("text", Value::text("hello, herald"))]))
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    let bytes = env.as_bytes();
    let view = EnvelopeRef::decode(bytes).unwrap();
    assert!(view.is_genesis());
    assert_eq!(view.parent(), None);
    assert_eq!(view.trace(), view.id(), "P4: a genesis carries trace == id");
    assert_eq!(view.computed_id(), *view.id());
    assert_eq!(Raw::from_bytes(bytes).computed_id(), *view.id());
    assert_eq!(view.from(), default_sigil(&alice()));
    assert_eq!(view.from_sigil(), alice().sigil(SigilForm::Default));
    let (to, to_sigil) = view.to().unwrap();
    assert_eq!(to, default_sigil(&bob()));
    assert_eq!(to_sigil, bob().sigil(SigilForm::Default));
    assert_eq!(view.ts(), TS);
    assert_eq!(view.nonce(), &nonce.0);
    assert_eq!(view.expires(), Some(TS + 3600));
    assert_eq!(view.kind(), Kind::Message);
    assert_eq!(view.lineage_proof(), Some(&[0x42; 32]));
    assert_eq!(
        view.attestation("model").unwrap().as_text(),
        Some("claude-opus-4-7")
    );
    assert_eq!(view.attestations().unwrap().len(), 2);
    assert_eq!(
        Value::from(&view.payload()),
        map(vec![("text", Value::text("hello, herald"))])
    );
    assert_eq!(
        view.payload_bytes(),
        map(vec![("text", Value::text("hello, herald"))]).to_vec()
    );
    assert_eq!(view.unknown_fields(), 0);
    assert_eq!(view.signature_count(), 1);
    let sig = view.signatures().next().unwrap().unwrap();
    assert_eq!(sig.alg, "ed25519");
    assert_eq!(sig.by, view.from());
    assert_eq!(sig.scope, "origin");
    assert_eq!(sig.ts, None);
    // A message carries no `kind` key; the map re-encodes to the same bytes.
    let raw = Raw::from_bytes(bytes);
    assert!(raw.get("kind").is_none());
    assert_eq!(raw.bytes(), bytes);
    // Owned round trip.
    let again = Envelope::from_bytes(bytes.to_vec()).unwrap();
    assert_eq!(again, env);
    assert_eq!(again.id(), *view.id());
    assert!(format!("{env:?}").contains("Envelope"));
    check_valid(&env);
    assert_bodies(&env, &[MESSAGE_TAG], &[&alice()]);
}

#[test]
fn genesis_default_payload_is_null() {
    let env = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    assert_eq!(Value::from(&env.view().payload()), Value::Null);
    assert!(env.view().to().is_none());
    assert!(env.view().expires().is_none());
    assert!(env.view().attestations().is_none());
    check_valid(&env);
}

#[test]
fn reply_carries_the_parent_trace() {
    let mut rng = rng();
    let g = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng)
        .unwrap();
    let r = EnvelopeBuilder::reply(&g.view(), TS + 1)
        .sign_with_rng(&bob(), &mut rng)
        .unwrap();
    let v = r.view();
    assert!(!v.is_genesis());
    assert_eq!(v.parent(), Some(g.view().id()));
    assert_eq!(v.trace(), g.view().trace());
    assert_ne!(v.id(), v.trace());
    // The body of a reply keeps `trace`.
    assert!(body_map(&v, 0).get("trace").is_some());
    check_parent(&v, &g.view()).unwrap();
    check_valid(&r);
    // reply_to with the same id and trace gives the same envelope.
    let r2 = EnvelopeBuilder::reply_to(g.id(), *g.view().trace(), TS + 1)
        .nonce(Nonce(*v.nonce()))
        .sign_with_rng(&bob(), &mut TestRng::new(0))
        .unwrap();
    assert_eq!(r2.as_bytes(), r.as_bytes());
}

#[test]
fn five_hop_chain_across_three_agents() {
    let mut rng = rng();
    let agents = [alice(), bob(), carol()];
    let genesis = EnvelopeBuilder::genesis(TS)
        .to(bob().sigil(SigilForm::Default))
        .payload(Value::text("hop 0"))
        .sign_with_rng(&agents[0], &mut rng)
        .unwrap();
    let mut chain = vec![genesis];
    for hop in 1..=5u64 {
        let parent = chain.last().unwrap();
        let from = &agents[hop as usize % 3];
        let to = &agents[(hop as usize + 1) % 3];
        let env = EnvelopeBuilder::reply(&parent.view(), TS + hop * 60)
            .to(to.sigil(SigilForm::Default))
            .payload(Value::text(format!("hop {hop}")))
            .sign_with_rng(from, &mut rng)
            .unwrap();
        chain.push(env);
    }
    assert_eq!(chain.len(), 6);
    let trace = *chain[0].view().id();
    for (i, env) in chain.iter().enumerate() {
        check_valid(env);
        let v = env.view();
        assert_eq!(v.trace(), &trace, "hop {i}");
        assert_eq!(v.from(), default_sigil(&agents[i % 3]));
        if i > 0 {
            check_parent(&v, &chain[i - 1].view()).unwrap();
            // Not the grandparent.
            if i > 1 {
                assert_eq!(
                    check_parent(&v, &chain[i - 2].view()).unwrap_err().code,
                    R::MissingParent
                );
            }
        }
    }
    // Every id distinct.
    let mut ids: Vec<_> = chain.iter().map(Envelope::id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
}

#[test]
fn fan_out_two_replies_to_one_parent() {
    let mut rng = rng();
    let p = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng)
        .unwrap();
    let a = EnvelopeBuilder::reply(&p.view(), TS + 1)
        .payload(Value::text("a"))
        .sign_with_rng(&bob(), &mut rng)
        .unwrap();
    let b = EnvelopeBuilder::reply(&p.view(), TS + 1)
        .payload(Value::text("b"))
        .sign_with_rng(&carol(), &mut rng)
        .unwrap();
    for r in [&a, &b] {
        check_valid(r);
        check_parent(&r.view(), &p.view()).unwrap();
        assert_eq!(r.view().parent(), Some(p.view().id()));
        assert_eq!(r.view().trace(), p.view().trace());
    }
    assert_ne!(a.id(), b.id());
    // The same signer fanning out twice with the same content still gets
    // two envelopes (fresh nonces).
    let c = EnvelopeBuilder::reply(&p.view(), TS + 1)
        .payload(Value::text("a"))
        .sign_with_rng(&bob(), &mut rng)
        .unwrap();
    assert_ne!(a.id(), c.id());
    assert_ne!(a.view().nonce(), c.view().nonce());
}

#[test]
fn cosign_in_every_non_origin_scope() {
    let mut rng = rng();
    let g = EnvelopeBuilder::genesis(TS)
        .payload(Value::text("approve me"))
        .sign_with_rng(&alice(), &mut rng)
        .unwrap();
    let r = EnvelopeBuilder::reply(&g.view(), TS + 1)
        .sign_with_rng(&carol(), &mut rng)
        .unwrap();
    let origin_key = [alice(), carol()];
    for (base, origin) in [(&g, &origin_key[0]), (&r, &origin_key[1])] {
        for scope in non_origin_scopes() {
            let cos = base.cosign(&bob(), scope, None).unwrap();
            check_valid(&cos);
            let v = cos.view();
            assert_eq!(v.signature_count(), 2);
            assert_eq!(v.id(), base.view().id(), "co-signing keeps the id");
            let s = v.signatures().nth(1).unwrap().unwrap();
            assert_eq!(s.scope, scope.name());
            assert_eq!(s.registered_scope(), Some(scope));
            assert_eq!(s.by, default_sigil(&bob()));
            assert_eq!(s.alg, "ed25519");
            assert_bodies(
                &cos,
                &[MESSAGE_TAG, scope_tag(scope.name())],
                &[origin, &bob()],
            );
            // The original bytes are untouched apart from the array.
            let mut raw = Raw::from_bytes(cos.as_bytes());
            let mut sigs = raw.signatures();
            sigs.pop();
            raw.set_signatures(sigs);
            assert_eq!(raw.bytes(), base.as_bytes());
        }
    }
}

#[test]
fn cosign_stack_of_every_scope() {
    // Six co-signers, one per non-origin scope, in order: body(E, k) grows
    // by one map each time and every signature verifies.
    let signers = [bob(), carol(), key(4), key(5), key(6), key(7)];
    let mut keys = keyring().to_vec();
    keys.extend(signers[2..].iter().map(SigningKey::public_key));
    let mut env = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    let scopes = non_origin_scopes();
    for (scope, signer) in scopes.iter().zip(&signers) {
        env = env.cosign(signer, *scope, Some(TS + 5)).unwrap();
        let (checked, reasons) = env.check(&keys.as_slice(), &CheckOptions::DEFAULT);
        assert_eq!(checked.status, Status::Valid, "{reasons:#?}");
        assert!(reasons.is_empty());
    }
    assert_eq!(env.view().signature_count(), 7);
    let mut tags: Vec<&[u8]> = vec![MESSAGE_TAG];
    tags.extend(scopes.iter().map(|s| scope_tag(s.name())));
    let a = alice();
    let mut who: Vec<&SigningKey> = vec![&a];
    who.extend(signers.iter());
    assert_bodies(&env, &tags, &who);
    // A policy requiring all of them is met.
    let opts = CheckOptions {
        required_scopes: &scopes,
        ..CheckOptions::DEFAULT
    };
    let (checked, reasons) = env.check(&keys.as_slice(), &opts);
    assert_eq!(checked.status, Status::Valid, "{reasons:#?}");
    // Breaking signature 3 leaves 0..=2 valid; 4..=6 fail too, since
    // body(E, 4..) holds signature 3's map, `sig` bytes included.
    let raw = Raw::from_bytes(env.as_bytes()).corrupt_sig(3);
    let out = run(&raw.bytes(), &keys.as_slice(), &CheckOptions::DEFAULT);
    assert_eq!(
        out.pairs,
        vec![
            (R::BadSignature, Some(3)),
            (R::BadSignature, Some(4)),
            (R::BadSignature, Some(5)),
            (R::BadSignature, Some(6)),
        ]
    );
    assert_eq!(out.status, Status::Partial);
}

#[test]
fn cosign_with_scope_origin_is_refused() {
    let env = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    assert_eq!(
        env.cosign(&bob(), Scope::Origin, None).unwrap_err(),
        BuildError::OriginScope
    );
    assert_eq!(
        env.cosign_as(
            &alice(),
            alice().sigil(SigilForm::Long),
            Scope::Origin,
            None
        )
        .unwrap_err(),
        BuildError::OriginScope
    );
    assert!(!BuildError::OriginScope.to_string().is_empty());
}

#[test]
fn conduit_receipt_carries_a_ts_claim() {
    let env = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    let relayed = env
        .cosign(&bob(), Scope::ConduitReceipt, Some(TS + 7))
        .unwrap();
    check_valid(&relayed);
    let s = relayed.view().signatures().nth(1).unwrap().unwrap();
    assert_eq!(s.scope, "conduit_receipt");
    assert_eq!(s.ts, Some(TS + 7));
    assert_bodies(
        &relayed,
        &[MESSAGE_TAG, scope_tag("conduit_receipt")],
        &[&alice(), &bob()],
    );
    // P5: a signature map's own fields other than `sig` are covered only by
    // later signatures. Changing the claim of the last one goes unnoticed
    // (it is a claim) ...
    let edited = Raw::from_bytes(relayed.as_bytes()).edit_sig(1, |m| {
        m.insert("ts", Value::Unsigned(TS + 9999));
    });
    expect(&edited.bytes(), Status::Valid, &[]);
    // ... and breaks every later signature.
    let two = relayed.cosign(&carol(), Scope::ToolSandbox, None).unwrap();
    check_valid(&two);
    let edited = Raw::from_bytes(two.as_bytes()).edit_sig(1, |m| {
        m.insert("ts", Value::Unsigned(TS + 9999));
    });
    expect(
        &edited.bytes(),
        Status::Partial,
        &[(R::BadSignature, Some(2))],
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Order {
    item: String,
    qty: u32,
    price: f64,
    discount: i64,
    tags: Vec<String>,
    note: Option<String>,
    urgent: bool,
    lines: Vec<Line>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Line {
    sku: String,
    n: u8,
}

fn order() -> Order {
    Order {
        item: "quill".into(),
        qty: 3,
        price: 2.5,
        discount: -4,
        tags: vec!["ink".into(), "feather".into()],
        note: None,
        urgent: true,
        lines: vec![
            Line {
                sku: "q-1".into(),
                n: 2,
            },
            Line {
                sku: "q-2".into(),
                n: 1,
            },
        ],
    }
}

#[test]
fn payload_serde_round_trips() {
    let o = order();
    let env = EnvelopeBuilder::genesis(TS)
        .payload_serde(&o)
        .unwrap()
        .attest_serde("tools", &["search", "python"])
        .unwrap()
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    check_valid(&env);
    let view = env.view();
    let back: Order = cbor::from_value(&Value::from(&view.payload())).unwrap();
    assert_eq!(back, o);
    // The payload is a canonical map (keys in P1 order).
    let payload = view.payload();
    let m = payload.as_map().unwrap();
    let keys: Vec<&str> = m.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "qty", "item", "note", "tags", "lines", "price", "urgent", "discount"
        ]
    );
}

/// P1 numeric reduction turns an integral f64 into an integer; reading it
/// back into an `f64` field must still work for `payload_serde` and
/// `from_value` to round-trip.
///
/// Fails today: `cbor::from_value` (src/cbor/serde.rs, through
/// `to_ciborium(..).deserialized()`) hands ciborium an integer where the
/// type asks for an `f64`, and ciborium refuses: `invalid type: integer
/// `3`, expected f64`. Any serde type with an integral float (1.0, 0.0, …)
/// builds and verifies but cannot be read back.
#[test]
fn payload_serde_integral_float_reads_back() {
    let o = Order {
        price: 3.0,
        ..order()
    };
    let env = EnvelopeBuilder::genesis(TS)
        .payload_serde(&o)
        .unwrap()
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    let view = env.view();
    assert_eq!(
        view.payload().as_map().unwrap().get("price"),
        Some(cbor::ValueRef::Unsigned(3))
    );
    let back: Order = cbor::from_value(&Value::from(&view.payload())).unwrap();
    assert_eq!(back, o);
}

#[test]
fn unencodable_payload_is_a_serde_error() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0] {
        let o = Order {
            price: bad,
            ..order()
        };
        let err = EnvelopeBuilder::genesis(TS).payload_serde(&o).unwrap_err();
        assert!(
            matches!(err, BuildError::Serde(SerdeError::Float(_))),
            "{bad}: {err:?}"
        );
        assert!(!err.to_string().is_empty());
        let err = EnvelopeBuilder::genesis(TS)
            .attest_serde("temperature", &bad)
            .unwrap_err();
        assert!(matches!(err, BuildError::Serde(_)), "{bad}: {err:?}");
    }
    // Non-text map keys.
    let mut m = std::collections::BTreeMap::new();
    m.insert(1u8, "one");
    let err = EnvelopeBuilder::genesis(TS).payload_serde(&m).unwrap_err();
    assert_eq!(err, BuildError::Serde(SerdeError::NonTextKey));
}

#[test]
fn extra_field_with_a_p3_key_is_refused() {
    for key in [
        "v",
        "id",
        "from",
        "to",
        "parent",
        "trace",
        "ts",
        "nonce",
        "expires",
        "kind",
        "lineage_proof",
        "attestations",
        "payload",
        "signatures",
    ] {
        let err = EnvelopeBuilder::genesis(TS)
            .extra_field(key, Value::Null)
            .unwrap_err();
        assert_eq!(err, BuildError::ReservedKey(key.into()));
    }
    // Any other key is carried, covered by the signature, and warned about.
    let env = EnvelopeBuilder::genesis(TS)
        .extra_field("x-note", Value::text("hi"))
        .unwrap()
        .extra_field("sig", Value::Unsigned(1))
        .unwrap()
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    let (checked, reasons) = env.check(&keyring(), &CheckOptions::DEFAULT);
    assert_eq!(checked.status, Status::Valid);
    let codes: Vec<_> = reasons.iter().map(|r| (r.code, r.index)).collect();
    assert_eq!(codes, [(R::UnknownField, None), (R::UnknownField, None)]);
    assert_eq!(env.view().unknown_fields(), 2);
    assert!(Raw::from_bytes(env.as_bytes()).get("x-note").is_some());
}

#[test]
fn same_rng_seed_gives_identical_bytes() {
    let build = |seed: u64| {
        EnvelopeBuilder::genesis(TS)
            .to(bob().sigil(SigilForm::Default))
            .attest("model", Value::text("m"))
            .payload(Value::text("determinism"))
            .sign_with_rng(&alice(), &mut TestRng::new(seed))
            .unwrap()
    };
    let a = build(7);
    let b = build(7);
    assert_eq!(a.as_bytes(), b.as_bytes());
    assert_eq!(a, b);
    // Co-signing is deterministic too (Ed25519 is).
    assert_eq!(
        a.cosign(&carol(), Scope::HumanApproval, None).unwrap(),
        b.cosign(&carol(), Scope::HumanApproval, None).unwrap()
    );
    // Another seed: another nonce, another id.
    let c = build(8);
    assert_ne!(a.view().nonce(), c.view().nonce());
    assert_ne!(a.id(), c.id());
    // The nonce is the RNG's first 16 bytes.
    let mut expected = [0u8; 16];
    herald_core::rand_core::Rng::fill_bytes(&mut TestRng::new(7), &mut expected);
    assert_eq!(a.view().nonce(), &expected);
    // An explicit nonce does not draw from the RNG.
    let mut r1 = TestRng::new(1);
    let d = EnvelopeBuilder::genesis(TS)
        .nonce(Nonce([3; 16]))
        .sign_with_rng(&alice(), &mut r1)
        .unwrap();
    assert_eq!(d.view().nonce(), &[3; 16]);
    assert_eq!(
        herald_core::rand_core::Rng::next_u64(&mut r1),
        herald_core::rand_core::Rng::next_u64(&mut TestRng::new(1))
    );
}

#[test]
fn os_rng_signing_draws_fresh_nonces() {
    let a = EnvelopeBuilder::genesis(TS).sign(&alice()).unwrap();
    let b = EnvelopeBuilder::genesis(TS).sign(&alice()).unwrap();
    assert_ne!(a.view().nonce(), b.view().nonce());
    check_valid(&a);
    check_valid(&b);
}

#[test]
fn envelope_above_the_size_limit_is_too_large() {
    // Default limit: 1 MiB (P1).
    let err = EnvelopeBuilder::genesis(TS)
        .payload(Value::Bytes(vec![0; 1 << 20]))
        .sign_with_rng(&alice(), &mut rng())
        .unwrap_err();
    match err {
        BuildError::TooLarge { size, limit } => {
            assert_eq!(limit, 1 << 20);
            assert!(size > limit);
        }
        other => panic!("{other:?}"),
    }
    // A chosen limit, exactly at and one byte under the size.
    let small = EnvelopeBuilder::genesis(TS)
        .payload(Value::Bytes(vec![0; 100]))
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    let size = small.as_bytes().len();
    let with_limit = |max_size: usize| {
        EnvelopeBuilder::genesis(TS)
            .payload(Value::Bytes(vec![0; 100]))
            .limits(Limits {
                max_size,
                ..Limits::DEFAULT
            })
            .sign_with_rng(&alice(), &mut rng())
    };
    assert_eq!(with_limit(size).unwrap().as_bytes(), small.as_bytes());
    assert_eq!(
        with_limit(size - 1).unwrap_err(),
        BuildError::TooLarge {
            size,
            limit: size - 1
        }
    );
    // Co-signing past the envelope's limit.
    let tight = with_limit(size).unwrap();
    match tight.cosign(&bob(), Scope::ToolSandbox, None).unwrap_err() {
        BuildError::TooLarge { limit, .. } => assert_eq!(limit, size),
        other => panic!("{other:?}"),
    }
}

#[test]
fn builder_refuses_what_does_not_decode() {
    // expires < ts is a P3 error: the builder's result would not decode.
    let err = EnvelopeBuilder::genesis(TS)
        .expires(TS - 1)
        .sign_with_rng(&alice(), &mut rng())
        .unwrap_err();
    assert!(matches!(err, BuildError::Invalid(_)), "{err:?}");
    // expires == ts is fine.
    let env = EnvelopeBuilder::genesis(TS)
        .expires(TS)
        .sign_with_rng(&alice(), &mut rng())
        .unwrap();
    check_valid(&env);
    // Envelope::from_bytes is the strict decoder.
    let mut bytes = env.as_bytes().to_vec();
    bytes.push(0);
    assert!(Envelope::from_bytes(bytes).is_err());
    assert!(Envelope::from_bytes(b"not cbor".to_vec()).is_err());
}

#[test]
fn from_form_long_and_short() {
    for (form, expected) in [
        (SigilForm::Long, long_sigil(&alice())),
        (SigilForm::Short, short_sigil(&alice())),
        (SigilForm::Default, default_sigil(&alice())),
    ] {
        let env = EnvelopeBuilder::genesis(TS)
            .from_form(form)
            .sign_with_rng(&alice(), &mut rng())
            .unwrap();
        let v = env.view();
        assert_eq!(v.from(), expected);
        assert!(v.from().starts_with(form.prefix()));
        assert_eq!(v.from_sigil().form(), Some(form));
        assert_eq!(v.signatures().next().unwrap().unwrap().by, expected);
        check_valid(&env);
        // The same key in another form is a different envelope.
        assert_eq!(Raw::from_bytes(env.as_bytes()).computed_id(), env.id());
    }
}

/// A valid envelope of `kind`, with the payload and signatures it needs.
fn of_kind(kind: Kind, parent: &Envelope) -> Envelope {
    let mut rng = rng();
    let a = alice();
    let b = match kind {
        Kind::Birth => EnvelopeBuilder::genesis(TS)
            .attest("birth", birth_attestation(&a.public_key(), "alice", &[])),
        _ => EnvelopeBuilder::reply(&parent.view(), TS + 1),
    };
    let payload = match kind {
        Kind::Molt => map(vec![
            (
                "new_key",
                Value::Bytes(bob().public_key().as_bytes().to_vec()),
            ),
            ("not_before", Value::Unsigned(TS + 86_400)),
        ]),
        Kind::Deprecation | Kind::Duress => map(vec![]),
        Kind::Refusal => map(vec![("reason", Value::text("over quota"))]),
        Kind::Manifest => map(vec![("capabilities", text_array(&["legal-research/eu"]))]),
        Kind::Certification => map(vec![
            (
                "subject",
                Value::text(carol().sigil(SigilForm::Default).to_string()),
            ),
            ("claim", Value::text("model")),
            ("value", map(vec![("name", Value::text("m-1"))])),
        ]),
        _ => Value::text("hello"),
    };
    let b = match kind {
        Kind::PosthumousCitation | Kind::Certification => b.to(carol().sigil(SigilForm::Default)),
        _ => b,
    };
    let env = b
        .kind(kind)
        .payload(payload)
        .sign_with_rng(&a, &mut rng)
        .unwrap();
    match kind {
        Kind::Duress => env.cosign(&carol(), Scope::DuressWitness, None).unwrap(),
        _ => env,
    }
}

#[test]
fn every_kind_signs_under_its_origin_tag() {
    let parent = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&bob(), &mut rng())
        .unwrap();
    for kind in Kind::ALL {
        let env = of_kind(kind, &parent);
        check_valid(&env);
        let v = env.view();
        assert_eq!(v.kind(), kind);
        let raw = Raw::from_bytes(env.as_bytes());
        match kind {
            Kind::Message => assert!(raw.get("kind").is_none()),
            _ => assert_eq!(raw.get("kind"), Some(&Value::text(kind.name()))),
        }
        let mut tags: Vec<&[u8]> = vec![origin_tag(kind.name())];
        let mut who = vec![alice()];
        if kind == Kind::Duress {
            tags.push(scope_tag("duress_witness"));
            who.push(carol());
        }
        let who: Vec<&SigningKey> = who.iter().collect();
        assert_bodies_kind(&env, &tags, &who, kind);
        if kind == Kind::Birth {
            let (checked, _) = env.check(&(), &CheckOptions::DEFAULT);
            assert_eq!(checked.status, Status::Valid);
            assert_eq!(checked.key_source, Some(KeySource::Birth));
        } else {
            check_parent(&v, &parent.view()).unwrap();
        }
    }
}

/// As [`assert_bodies`], except that message and posthumous citation share
/// one origin tag, so the "no other tag" check skips that pair.
fn assert_bodies_kind(env: &Envelope, tags: &[&[u8]], keys: &[&SigningKey], kind: Kind) {
    let raw = Raw::from_bytes(env.as_bytes());
    let view = env.view();
    for (k, sig) in view.signatures().enumerate() {
        let sig = sig.unwrap();
        let mut msg = tags[k].to_vec();
        msg.extend_from_slice(&raw.body(k));
        keys[k].public_key().verify(&msg, sig.sig).unwrap();
        if k == 0 {
            for (other_kind, other) in ORIGIN_TAGS {
                let mut msg = other.to_vec();
                msg.extend_from_slice(&raw.body(0));
                let verifies = keys[0].public_key().verify(&msg, sig.sig).is_ok();
                assert_eq!(
                    verifies,
                    other == tags[0],
                    "{kind} origin under the {other_kind} tag"
                );
            }
        }
        assert_eq!(view.body(k).unwrap().to_vec(), raw.body(k));
    }
}

#[test]
fn changing_the_kind_and_re_iding_breaks_the_origin() {
    let parent = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&bob(), &mut rng())
        .unwrap();
    for x in Kind::ALL {
        let env = of_kind(x, &parent);
        for y in Kind::ALL.into_iter().filter(|y| *y != x) {
            let raw = Raw::from_bytes(env.as_bytes());
            let raw = match y {
                Kind::Message => raw.remove("kind"),
                _ => raw.set("kind", Value::text(y.name())),
            };
            // Re-id (and a genesis's trace): only the origin can notice.
            let raw = raw.reid();
            let out = run(&raw.bytes(), &keyring(), &CheckOptions::DEFAULT);
            assert!(
                out.pairs.contains(&(R::BadSignature, Some(0))),
                "{x} -> {y}: {:?}",
                out.pairs
            );
            assert!(!out.pairs.contains(&(R::IdMismatch, None)), "{x} -> {y}");
            assert!(
                !out.pairs.contains(&(R::GenesisTraceMismatch, None)),
                "{x} -> {y}"
            );
            assert_eq!(out.status, Status::Invalid, "{x} -> {y}");
            // Re-signed under y's tag, the origin verifies again.
            let resigned = {
                let mut r = raw.clone();
                let mut sigs = r.signatures();
                let by = default_sigil(&alice());
                let sig = r.signature_over(0, &alice(), origin_tag(y.name()));
                sigs[0] = sig_map("ed25519", &by, "origin", &sig, None);
                sigs.truncate(1);
                r.set_signatures(sigs);
                r
            };
            let out = run(&resigned.bytes(), &keyring(), &CheckOptions::DEFAULT);
            assert!(
                !out.pairs
                    .iter()
                    .any(|(c, i)| *c == R::BadSignature && *i == Some(0)),
                "{x} -> {y} re-signed: {:?}",
                out.pairs
            );
        }
    }
}

#[test]
fn birth_with_lineage_and_consent() {
    let lineage = [
        bob().sigil(SigilForm::Long),
        carol().sigil(SigilForm::Default),
    ];
    let env = EnvelopeBuilder::genesis(TS)
        .kind(Kind::Birth)
        .attest(
            "birth",
            birth_attestation(&alice().public_key(), "a scribe", &lineage),
        )
        .sign_with_rng(&alice(), &mut rng())
        .unwrap()
        .cosign_as(
            &bob(),
            bob().sigil(SigilForm::Long),
            Scope::LineageConsent,
            None,
        )
        .unwrap()
        .cosign(&carol(), Scope::LineageConsent, None)
        .unwrap();
    check_valid(&env);
    let (checked, reasons) = env.check(&keyring(), &CheckOptions::DEFAULT);
    assert_eq!(checked.key_source, Some(KeySource::Keyring));
    assert!(reasons.is_empty());
    let birth = env.view().attestation("birth").unwrap();
    let m = birth.as_map().unwrap();
    assert_eq!(
        m.get("key").unwrap().as_bytes(),
        Some(&alice().public_key().as_bytes()[..])
    );
    assert_eq!(m.get("lineage").unwrap().as_array().unwrap().len(), 2);
    assert_bodies(
        &env,
        &[
            origin_tag("birth"),
            scope_tag("lineage_consent"),
            scope_tag("lineage_consent"),
        ],
        &[&alice(), &bob(), &carol()],
    );
}
