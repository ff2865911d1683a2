//! The no-alloc [`EnvelopeWriter`] (spec §3.1, PROFILE.md P3–P5): the same
//! bytes as the alloc [`EnvelopeBuilder`] for the same inputs, over every
//! optional field, sigil form and kind; the nonce from the caller's RNG;
//! a too-small buffer refused before anything is signed; a payload that
//! is not one canonical item refused with the decoder's reason.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::cbor::{Limits, Map, Value};
use herald_core::{
    CheckOptions, EnvelopeBuilder, EnvelopeRef, EnvelopeWriter, KeySource, Kind, Nonce, ReasonCode,
    Reasons, SigilForm, Status, WriteError, check,
};
use support::*;

const NONCE: Nonce = Nonce([7; 16]);

fn payload() -> Value {
    let mut m = Map::new();
    m.insert("text", Value::text("hello from a microcontroller"));
    m.insert("n", Value::Unsigned(42));
    m.insert("list", Value::Array(vec![Value::Bool(true), Value::Null]));
    Value::Map(m)
}

/// The writer's result, in a 1 KiB buffer, as an owned copy.
fn written(w: &EnvelopeWriter<'_>) -> Vec<u8> {
    let mut buf = [0u8; 1024];
    let env = w
        .sign_into(&alice(), &mut TestRng::new(1), &mut buf)
        .unwrap();
    env.as_bytes().to_vec()
}

#[test]
fn same_bytes_as_the_builder_for_every_shape() {
    let encoded = payload().to_vec();
    let parent = EnvelopeBuilder::genesis(TS)
        .nonce(Nonce([1; 16]))
        .sign(&bob())
        .unwrap();
    let parent = parent.view();
    let mut cases = 0;
    for genesis in [true, false] {
        for to in [None, Some(bob().sigil(SigilForm::Long))] {
            for expires in [None, Some(TS + 600)] {
                for kind in [Kind::Message, Kind::Refusal, Kind::PosthumousCitation] {
                    for form in [SigilForm::Default, SigilForm::Long, SigilForm::Short] {
                        for lineage in [None, Some([9u8; 32])] {
                            let (mut w, mut b) = if genesis {
                                (EnvelopeWriter::genesis(TS), EnvelopeBuilder::genesis(TS))
                            } else {
                                (
                                    EnvelopeWriter::reply(&parent, TS + 1),
                                    EnvelopeBuilder::reply(&parent, TS + 1),
                                )
                            };
                            w = w.nonce(NONCE).kind(kind).from_form(form);
                            b = b.nonce(NONCE).kind(kind).from_form(form);
                            if let Some(to) = to {
                                w = w.to(to);
                                b = b.to(to);
                            }
                            if let Some(x) = expires {
                                w = w.expires(x);
                                b = b.expires(x);
                            }
                            if let Some(l) = lineage {
                                w = w.lineage_proof(l);
                                b = b.lineage_proof(l);
                            }
                            let w = w.payload_cbor(&encoded);
                            let b = b.payload(payload()).sign(&alice()).unwrap();
                            let bytes = written(&w);
                            assert_eq!(
                                bytes,
                                b.as_bytes(),
                                "genesis {genesis} kind {kind:?} form {form:?}"
                            );
                            assert_eq!(w.size(&alice()), bytes.len());
                            cases += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(cases, 2 * 2 * 2 * 3 * 3 * 2);
}

#[test]
fn default_payload_is_null_like_the_builder() {
    let w = EnvelopeWriter::genesis(TS).nonce(NONCE);
    let b = EnvelopeBuilder::genesis(TS)
        .nonce(NONCE)
        .sign(&alice())
        .unwrap();
    assert_eq!(written(&w), b.as_bytes());
}

#[test]
fn result_verifies_and_nonce_comes_from_the_rng() {
    let mut rng = TestRng::new(99);
    let mut expected = [0u8; 16];
    rand_core::Rng::fill_bytes(&mut TestRng::new(99), &mut expected);
    let mut buf = [0u8; 512];
    let env = EnvelopeWriter::genesis(TS)
        .sign_into(&alice(), &mut rng, &mut buf)
        .unwrap();
    assert_eq!(env.nonce(), &expected);
    let mut reasons = Reasons::<8>::new();
    let checked = check(
        env.as_bytes(),
        &keyring(),
        &CheckOptions::DEFAULT,
        &mut reasons,
    );
    assert_eq!(checked.status, Status::Valid, "{reasons:?}");
    assert!(matches!(checked.key_source, Some(KeySource::Keyring)));
    // Two signings with one RNG draw two nonces.
    let mut buf2 = [0u8; 512];
    let again = EnvelopeWriter::genesis(TS)
        .sign_into(&alice(), &mut rng, &mut buf2)
        .unwrap();
    assert_ne!(again.nonce(), env.nonce());
}

#[test]
fn too_small_buffer_is_refused_with_the_size_needed() {
    let encoded = payload().to_vec();
    let w = EnvelopeWriter::genesis(TS)
        .nonce(NONCE)
        .payload_cbor(&encoded);
    let needed = w.size(&alice());
    let mut buf = vec![0xAAu8; needed - 1];
    let err = w
        .sign_into(&alice(), &mut TestRng::new(1), &mut buf)
        .unwrap_err();
    assert_eq!(
        err,
        WriteError::BufferTooSmall {
            needed,
            available: needed - 1
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the envelope needs {needed} bytes but the buffer has {}",
            needed - 1
        )
    );
    // Nothing was written.
    assert!(buf.iter().all(|b| *b == 0xAA));
    let mut exact = vec![0u8; needed];
    let env = w
        .sign_into(&alice(), &mut TestRng::new(1), &mut exact)
        .unwrap();
    assert_eq!(env.as_bytes().len(), needed);
    // An empty buffer too.
    assert!(matches!(
        w.sign_into(&alice(), &mut TestRng::new(1), &mut []),
        Err(WriteError::BufferTooSmall { available: 0, .. })
    ));
}

#[test]
fn bad_payload_and_limits_are_refused() {
    let mut buf = [0u8; 1024];
    // Two items, a non-shortest head, a truncated string: none is one P1 item.
    for bad in [&[0x01, 0x02][..], &[0x18, 0x01], &[0x62, b'a']] {
        let err = EnvelopeWriter::genesis(TS)
            .payload_cbor(bad)
            .sign_into(&alice(), &mut TestRng::new(1), &mut buf)
            .unwrap_err();
        assert!(matches!(err, WriteError::Invalid(_)), "{bad:?}: {err:?}");
    }
    let err = EnvelopeWriter::genesis(TS)
        .expires(TS - 1)
        .sign_into(&alice(), &mut TestRng::new(1), &mut buf)
        .unwrap_err();
    match err {
        WriteError::Invalid(e) => assert_eq!(e.0.code, ReasonCode::Malformed),
        other => panic!("{other:?}"),
    }
    let limits = Limits {
        max_size: 100,
        ..Limits::DEFAULT
    };
    let err = EnvelopeWriter::genesis(TS)
        .limits(limits)
        .sign_into(&alice(), &mut TestRng::new(1), &mut buf)
        .unwrap_err();
    assert!(
        matches!(err, WriteError::TooLarge { limit: 100, .. }),
        "{err:?}"
    );
}

#[test]
fn reply_binds_to_its_parent() {
    let mut pbuf = [0u8; 512];
    let parent = EnvelopeWriter::genesis(TS)
        .sign_into(&bob(), &mut TestRng::new(2), &mut pbuf)
        .unwrap();
    let mut buf = [0u8; 512];
    let reply = EnvelopeWriter::reply(&parent, TS + 5)
        .to(bob().sigil(SigilForm::Default))
        .sign_into(&alice(), &mut TestRng::new(3), &mut buf)
        .unwrap();
    assert_eq!(reply.parent(), Some(parent.id()));
    assert_eq!(reply.trace(), parent.trace());
    herald_core::check_parent(&reply, &parent).unwrap();
    let _: EnvelopeRef<'_> = reply;
}
