//! The `certification` kind (PROFILE P7 row, P14; revision 3): its origin
//! tag, the payload shape checked on decode, and `short_sigil_misuse` for a
//! short subject. What a verifier given Heralds makes of a certification
//! (P14 *When a certification counts*) is not an envelope verdict and has
//! no case here. Generated last, so that every earlier case keeps its
//! bytes.

use herald_core::payload::{Claim, certification};

use super::*;

/// A certification by the `herald` key about `subject` (`to` it), signed
/// by the builder.
fn certify(g: &mut Gen, subject: Sigil, claim: &Claim<'_>, not_after: Option<u64>) -> Envelope {
    let n = g.fresh_nonce();
    g.build(
        "herald",
        EnvelopeBuilder::genesis(T0)
            .kind(Kind::Certification)
            .to(subject)
            .nonce(n)
            .payload(certification(&subject, claim, not_after)),
    )
}

/// `e` with a fresh nonce and its payload edited by `f`, re-sealed by the
/// `herald` key under `tag` (an independent P4/P5, `forge`).
fn reworked(g: &mut Gen, e: &Envelope, tag: &[u8], f: impl FnOnce(&mut Map)) -> Vec<u8> {
    let mut m = forge::map(e.as_bytes());
    m.insert("nonce", Value::Bytes(g.fresh_nonce().0.to_vec()));
    if let Some(Value::Map(mut p)) = m.get("payload").cloned() {
        f(&mut p);
        m.insert("payload", Value::Map(p));
    }
    forge::seal(&mut m, &[Signer::new(g.key("herald"), Scope::Origin, tag)])
}

/// Every case of the kind.
pub(super) fn certification_cases(g: &mut Gen) {
    let keyring = ["alice", "bob", "herald"];
    let alice = g.key("alice").sigil(SigilForm::Default);
    let alice_key = *g.key("alice").public_key().as_bytes();
    let key = certify(g, alice, &Claim::Key(&alice_key), Some(NOW + 86_400));
    let revoked = key.id();
    let revocation = certify(g, alice, &Claim::Revocation(&revoked), None);
    let bob_long = g.key("bob").sigil(SigilForm::Long);
    let model = certify(
        g,
        bob_long,
        &Claim::Model {
            name: "m-1",
            model_hash: None,
        },
        None,
    );
    let odd_value = reworked(g, &model, Kind::Certification.origin_tag(), |p| {
        p.insert("claim", Value::text("key"));
        p.insert("value", Value::Bytes(vec![7; 31]));
    });
    g.verify(
        "certification",
        "certifications by a Herald: a key claim with not_after, its revocation, a model claim \
         about a long sigil, and a key claim whose value is not 32 bytes (P7: value is any \
         value; the claim's shape is a verifier's business, P14), all valid",
        &[
            bytes_of(&key),
            bytes_of(&revocation),
            bytes_of(&model),
            odd_value,
        ],
        &keyring,
        vec![valid(), valid(), valid(), valid()],
    );

    let short = g.key("bob").sigil(SigilForm::Short);
    let handle = certify(g, alice, &Claim::Handle("alice@example.com"), None);
    let short_subject = reworked(g, &handle, Kind::Certification.origin_tag(), |p| {
        p.insert("subject", Value::Text(short.to_string()));
    });
    g.verify(
        "certification_short_subject",
        "a certification whose subject is a short sigil (P2, P14)",
        &[short_subject],
        &keyring,
        vec![invalid(&[(R::ShortSigilMisuse, None)])],
    );

    let tag = Kind::Certification.origin_tag();
    let unknown_key = reworked(g, &handle, tag, |p| {
        p.insert("why", Value::text("because"));
    });
    let no_value = reworked(g, &handle, tag, |p| {
        p.remove("value");
    });
    let short_revokes = reworked(g, &revocation, tag, |p| {
        p.insert("revokes", Value::Bytes(vec![1; 31]));
    });
    let text_not_after = reworked(g, &handle, tag, |p| {
        p.insert("not_after", Value::text("tomorrow"));
    });
    g.verify(
        "certification_malformed",
        "certification payloads of the wrong P7 shape: an unknown key, no value, revokes of \
         31 bytes, not_after as text",
        &[unknown_key, no_value, short_revokes, text_not_after],
        &keyring,
        vec![
            invalid(&[(R::Malformed, None)]),
            invalid(&[(R::Malformed, None)]),
            invalid(&[(R::Malformed, None)]),
            invalid(&[(R::Malformed, None)]),
        ],
    );

    let message_tag = reworked(g, &handle, Kind::Message.origin_tag(), |_| {});
    g.verify(
        "certification_wrong_tag",
        "a certification whose origin signs under herald.origin.v1, not \
         herald.certification.v1 (P5, P7)",
        &[message_tag],
        &keyring,
        vec![invalid(&[(R::BadSignature, Some(0))])],
    );
}
