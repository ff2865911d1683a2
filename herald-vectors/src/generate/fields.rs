//! Envelope cases: time, shapes, births, several faults at once.

use super::*;

/// Time (P10, audit mode with a given now).
pub(super) fn time(g: &mut Gen) {
    let all = ALL;
    let b = bytes_of;
    let n = g.fresh_nonce();
    let expired = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .expires(NOW - 301)
            .nonce(n)
            .payload(Value::text("too late")),
    );
    let n = g.fresh_nonce();
    let in_skew = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .expires(NOW - 300)
            .nonce(n)
            .payload(Value::text("just in time")),
    );
    let n = g.fresh_nonce();
    let future = g.build(
        "alice",
        EnvelopeBuilder::genesis(NOW + 301)
            .nonce(n)
            .payload(Value::text("from the future")),
    );
    g.verify(
        "expired",
        "expires one second before now - skew, and one exactly at it",
        &[b(&expired), b(&in_skew)],
        &all,
        vec![invalid(&[(R::Expired, None)]), valid()],
    );
    g.verify(
        "future_ts",
        "ts one second after now + skew",
        &[b(&future)],
        &all,
        vec![invalid(&[(R::FutureTs, None)])],
    );
}

/// Shapes (P3, P12).
pub(super) fn shapes(g: &mut Gen, base: &Base) {
    let all = ALL;
    let b = bytes_of;
    let Base { g0, r1, .. } = base;
    let n = g.fresh_nonce();
    let extra = g.build(
        "alice",
        match EnvelopeBuilder::genesis(T0)
            .nonce(n)
            .extra_field("x_note", Value::text("kept and signed"))
        {
            Ok(b) => b,
            Err(e) => {
                generator_bug(&e.to_string());
                return;
            }
        },
    );
    g.verify(
        "unknown_field",
        "a top-level key outside P3: a warning, the envelope stays valid",
        &[b(&extra)],
        &all,
        vec![expect(Status::Valid, &[(R::UnknownField, None)])],
    );
    let n = g.fresh_nonce();
    let shaky = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .nonce(n)
            .attest("confidence", Value::from_f64(1.5).unwrap_or(Value::Null))
            .attest("temperature", Value::Negative(0)),
    );
    g.verify(
        "attestation_malformed",
        "confidence 1.5 and temperature -1 (P12): warnings only",
        &[b(&shaky)],
        &all,
        vec![expect(
            Status::Valid,
            &[
                (R::AttestationMalformed, None),
                (R::AttestationMalformed, None),
            ],
        )],
    );
    let mut m = forge::map(g0.as_bytes());
    m.remove("nonce");
    let no_nonce = forge::seal(&mut m, &[origin(g)]);
    g.verify(
        "missing_nonce",
        "a signed envelope without nonce (P3)",
        &[no_nonce],
        &all,
        vec![invalid(&[(R::Malformed, None)])],
    );
    let noncanonical = vec![0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02];
    g.verify(
        "non_canonical_item",
        "a non-canonical CBOR map between two envelopes",
        &[b(g0), noncanonical, b(r1)],
        &all,
        vec![valid(), invalid(&[(R::Malformed, None)]), valid()],
    );
    let mut m = forge::map(g0.as_bytes());
    let empty_sigs = forge::seal(&mut m, &[]);
    g.verify(
        "no_signatures",
        "signatures: []",
        &[empty_sigs],
        &all,
        vec![invalid(&[(R::OriginMissing, None)])],
    );
}

/// Births (P7) and the lineage rules decidable from one envelope.
pub(super) fn births(g: &mut Gen) {
    let all = ALL;
    let b = bytes_of;
    let alice_key = g.key("alice").public_key();
    let birth = g.birth(
        "alice",
        &alice_key,
        "a test agent",
        T0,
        &[g.key("bob").sigil(SigilForm::Long)],
        Vec::new(),
    );
    g.verify(
        "birth_self_certified",
        "a birth verified by the key it carries, with no keyring (P7)",
        &[b(&birth)],
        &[],
        vec![valid()],
    );
    let self_lineage = g.birth(
        "alice",
        &alice_key,
        "its own ancestor",
        T0,
        &[g.key("alice").sigil(SigilForm::Long)],
        Vec::new(),
    );
    g.verify(
        "lineage_self",
        "a birth naming its own sigil as a parent (spec §2.3)",
        &[b(&self_lineage)],
        &all,
        vec![invalid(&[(R::LineageSelf, None)])],
    );
    let short_parent = g.birth(
        "alice",
        &alice_key,
        "short parent",
        T0,
        &[g.key("bob").sigil(SigilForm::Short)],
        Vec::new(),
    );
    g.verify(
        "lineage_short_parent",
        "a short sigil as a lineage parent (P2)",
        &[b(&short_parent)],
        &all,
        vec![invalid(&[(R::ShortSigilMisuse, None)])],
    );
    let bob_key = g.key("bob").public_key();
    let n = g.fresh_nonce();
    let wrong_key = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .kind(Kind::Birth)
            .nonce(n)
            .attest("birth", birth_attestation(&bob_key, "not my key", &[])),
    );
    g.verify(
        "birth_key_not_from",
        "a birth whose key does not hash to from (P7)",
        &[b(&wrong_key)],
        &all,
        vec![invalid(&[(R::Malformed, None)])],
    );
    let n = g.fresh_nonce();
    let duress = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .kind(Kind::Duress)
            .nonce(n)
            .payload(Value::Map(Map::new())),
    );
    g.verify(
        "duress_without_witness",
        "a duress envelope lacking its duress_witness signature (P7)",
        &[b(&duress)],
        &all,
        vec![partial(&[(R::RequiredSignatureMissing, None)])],
    );
}

/// Several faults at once: every one is reported (spec §6).
pub(super) fn faults(g: &mut Gen, base: &Base) {
    let Base { g0, .. } = base;
    let mut m = forge::map(g0.as_bytes());
    m.insert("v", Value::text("herald/0.3"));
    m.insert("x_extra", Value::Bool(true));
    m.insert("expires", Value::Unsigned(NOW - 1000));
    let mut t = Map::new();
    t.insert("type", Value::text("temperature"));
    t.insert("value", Value::Negative(0));
    m.insert("attestations", Value::Array(vec![Value::Map(t)]));
    let sealed = forge::seal(
        &mut m,
        &[
            origin(g),
            Signer::new(g.key("human"), Scope::HumanApproval, b""),
            Signer {
                scope: "bribe".into(),
                tag: b"herald.sig.bribe.v1".to_vec(),
                ..Signer::new(g.key("sandbox"), Scope::ToolSandbox, b"")
            },
        ],
    );
    let many = forge::edit(&sealed, |m| {
        m.insert("id", Value::Bytes(vec![1; 32]));
        if let Some(Value::Array(mut sigs)) = m.get("signatures").cloned() {
            if let Some(Value::Map(s)) = sigs.get_mut(1) {
                s.insert("sig", Value::Bytes(vec![0x55; 64]));
            }
            m.insert("signatures", Value::Array(sigs));
        }
    });
    g.verify(
        "several_faults",
        "wrong version, forged id, expired, unknown field, malformed attestation, a bad co-signature and an unknown scope",
        &[many],
        &["alice", "human", "sandbox"],
        vec![invalid(&[
            (R::UnsupportedVersion, None),
            (R::IdMismatch, None),
            (R::GenesisTraceMismatch, None),
            (R::Expired, None),
            (R::UnknownField, None),
            (R::AttestationMalformed, None),
            (R::BadSignature, Some(1)),
            (R::UnknownScope, Some(2)),
        ])],
    );
}

/// The `handle` attestation (P12 revision 3, P15): text, a DNS name or
/// `name@` a DNS name; anything else is `attestation_malformed` (a
/// warning). Generated last, so that every earlier case keeps its bytes.
pub(super) fn handles(g: &mut Gen) {
    let n = g.fresh_nonce();
    let named = g.build(
        "alice",
        EnvelopeBuilder::genesis(T0)
            .nonce(n)
            .attest("handle", Value::text("alice@example.com")),
    );
    let n = g.fresh_nonce();
    let misnamed = g.build(
        "bob",
        EnvelopeBuilder::genesis(T0)
            .nonce(n)
            .attest("handle", Value::text("https://example.com/bob")),
    );
    g.verify(
        "attestation_handle",
        "a handle attestation: alice@example.com is well-shaped; a URL is not a handle (P12 revision 3)",
        &[bytes_of(&named), bytes_of(&misnamed)],
        &ALL,
        vec![
            expect(Status::Valid, &[]),
            expect(Status::Valid, &[(ReasonCode::AttestationMalformed, None)]),
        ],
    );
}
