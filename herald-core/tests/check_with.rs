//! `check_with` (PROFILE.md P5, P13): the signature step is pluggable, and
//! `check` is `check_with(…, &mut Strict)`. A verifier is asked about
//! exactly the signatures whose key resolved and whose other checks passed,
//! with the key, the signature, the scope's tag and `body(E, k)`; its answer
//! is the verdict. (`check` staying allocation-free is tests/no_alloc_verify.rs.)

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::{
    Body, CheckOptions, Envelope, EnvelopeBuilder, Kind, Nonce, PublicKey, Reason, ReasonCode,
    Scope, SignatureVerifier, Status, Strict, check, check_with,
};
use support::*;

/// One question asked: key, signature, tag, body.
type Call = ([u8; 32], [u8; 64], Vec<u8>, Vec<u8>);

/// Records every question and answers with `answer(call number)`, or
/// [`Strict`]'s verdict when that is `None`.
struct Recording<F: FnMut(usize) -> Option<bool>> {
    calls: Vec<Call>,
    answer: F,
}

impl<F: FnMut(usize) -> Option<bool>> SignatureVerifier for Recording<F> {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool {
        let n = self.calls.len();
        self.calls
            .push((*key.as_bytes(), *sig, tag.to_vec(), body.to_vec()));
        (self.answer)(n).unwrap_or_else(|| Strict.verify(key, sig, tag, body))
    }
}

fn envelope(kind: Kind) -> Envelope {
    let mut b = EnvelopeBuilder::genesis(TS)
        .kind(kind)
        .nonce(Nonce([9; 16]));
    if kind == Kind::Birth {
        b = b.attest(
            "birth",
            herald_core::attestation::birth_attestation(&alice().public_key(), "alice", &[]),
        );
    }
    b.sign(&alice())
        .unwrap()
        .cosign(&bob(), Scope::ToolSandbox, None)
        .unwrap()
        .cosign(&carol(), Scope::HumanApproval, Some(TS))
        .unwrap()
}

fn run_with(
    bytes: &[u8],
    keys: &[PublicKey],
    v: &mut dyn SignatureVerifier,
) -> (Status, Vec<Reason>, Option<herald_core::KeySource>) {
    let mut reasons = Vec::new();
    let c = check_with(bytes, &keys, &CheckOptions::DEFAULT, &mut reasons, v);
    (c.status, reasons, c.key_source)
}

fn run_check(
    bytes: &[u8],
    keys: &[PublicKey],
) -> (Status, Vec<Reason>, Option<herald_core::KeySource>) {
    let mut reasons = Vec::new();
    let c = check(bytes, &keys, &CheckOptions::DEFAULT, &mut reasons);
    (c.status, reasons, c.key_source)
}

#[test]
fn the_verifier_sees_key_sig_tag_and_body_of_each_signature() {
    for kind in [Kind::Message, Kind::Birth, Kind::Refusal] {
        let env = envelope(kind);
        let view = env.view();
        let mut v = Recording {
            calls: Vec::new(),
            answer: |_| None,
        };
        let keys = keyring();
        let got = run_with(env.as_bytes(), &keys, &mut v);
        assert_eq!(got, run_check(env.as_bytes(), &keys), "{kind:?}");
        assert_eq!(v.calls.len(), 3);
        let signers = [alice(), bob(), carol()];
        let tags: [&[u8]; 3] = [
            kind.origin_tag(),
            Scope::ToolSandbox.tag().unwrap(),
            Scope::HumanApproval.tag().unwrap(),
        ];
        for (k, (key, sig, tag, body)) in v.calls.iter().enumerate() {
            assert_eq!(key, signers[k].public_key().as_bytes());
            let want = view.signatures().nth(k).unwrap().unwrap();
            assert_eq!(sig, want.sig);
            assert_eq!(tag.as_slice(), tags[k]);
            assert_eq!(body, &view.body(k).unwrap().to_vec());
        }
    }
}

#[test]
fn the_verifier_answer_is_the_verdict() {
    let env = envelope(Kind::Message);
    let keys = keyring();
    assert_eq!(run_check(env.as_bytes(), &keys).0, Status::Valid);
    for bad in 0..3usize {
        let mut v = Recording {
            calls: Vec::new(),
            answer: |n| Some(n != bad),
        };
        let (status, reasons, source) = run_with(env.as_bytes(), &keys, &mut v);
        assert_eq!(v.calls.len(), 3);
        let codes: Vec<(ReasonCode, Option<u32>)> =
            reasons.iter().map(|r| (r.code, r.index)).collect();
        assert_eq!(codes, vec![(ReasonCode::BadSignature, Some(bad as u32))]);
        let want = if bad == 0 {
            Status::Invalid
        } else {
            Status::Partial
        };
        assert_eq!(status, want);
        // The origin key source is only given for a verified origin.
        assert_eq!(source.is_some(), bad != 0);
    }
    // Answering true for a signature that does not verify makes it valid:
    // check_with trusts its verifier.
    let mut spoiled = env.as_bytes().to_vec();
    let sig = *env.view().signatures().nth(2).unwrap().unwrap().sig;
    let at = spoiled.windows(64).position(|w| w == sig).unwrap();
    spoiled[at + 40] ^= 1;
    assert_eq!(run_check(&spoiled, &keys).0, Status::Partial);
    let mut yes = Recording {
        calls: Vec::new(),
        answer: |_| Some(true),
    };
    assert_eq!(run_with(&spoiled, &keys, &mut yes).0, Status::Valid);
}

#[test]
fn unresolved_and_refused_signatures_never_reach_the_verifier() {
    let env = envelope(Kind::Message);
    // Only bob is known: alice's origin and carol's signature are unknown_signer.
    let keys = [bob().public_key()];
    let mut v = Recording {
        calls: Vec::new(),
        answer: |_| None,
    };
    let got = run_with(env.as_bytes(), &keys, &mut v);
    assert_eq!(got, run_check(env.as_bytes(), &keys));
    assert_eq!(v.calls.len(), 1);
    assert_eq!(&v.calls[0].0, bob().public_key().as_bytes());
    assert_eq!(
        got.1
            .iter()
            .filter(|r| r.code == ReasonCode::UnknownSigner)
            .count(),
        2
    );
}
