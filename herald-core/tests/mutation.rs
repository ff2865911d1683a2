//! Every single-byte mutation, deletion and insertion, and every truncation,
//! of a signed genesis and a co-signed reply: `check` never calls the result
//! `valid` under the original id, and never panics (PROFILE.md P1, P4, P5).

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use herald_core::cbor::{Map, Value};
use herald_core::{
    CheckOptions, EnvelopeBuilder, EnvelopeRef, Nonce, PublicKey, Reasons, Scope, SigilForm,
    SigningKey, Status, check,
};

const TS: u64 = 1_746_432_000;

struct Keys {
    alice: SigningKey,
    bob: SigningKey,
    carol: SigningKey,
}

impl Keys {
    fn new() -> Self {
        Self {
            alice: SigningKey::from_seed(&[0xa1; 32]),
            bob: SigningKey::from_seed(&[0xb0; 32]),
            carol: SigningKey::from_seed(&[0xc0; 32]),
        }
    }

    fn resolver(&self) -> [PublicKey; 3] {
        [
            self.alice.public_key(),
            self.bob.public_key(),
            self.carol.public_key(),
        ]
    }
}

/// A genesis from alice to bob with `to`, `expires`, the three attestations
/// and a ~300-byte map payload; and bob's reply, co-signed by carol in
/// `human_approval` (with `claimed_ts` as the co-signature's `ts`, if any).
fn envelopes(keys: &Keys, claimed_ts: Option<u64>) -> (Vec<u8>, Vec<u8>) {
    let mut payload = Map::new();
    payload.insert("subject", Value::text("quarterly inventory reconciliation"));
    payload.insert(
        "body",
        Value::text(
            "Please reconcile the warehouse counts against the ledger before Friday. \
             The discrepancies flagged last week in bins 14 through 22 are still open, \
             and the auditors asked for a signed summary of every adjustment made, \
             with the reason and the person who approved it. Thank you.",
        ),
    );
    payload.insert("priority", Value::Unsigned(2));
    let genesis = EnvelopeBuilder::genesis(TS)
        .to(keys.bob.sigil(SigilForm::Default))
        .expires(TS + 86_400)
        .nonce(Nonce([0x5a; 16]))
        .attest("model", Value::text("claude-opus-4-7"))
        .attest(
            "tools",
            Value::Array(vec![Value::text("search"), Value::text("python")]),
        )
        .attest("temperature", Value::from_f64(0.7).unwrap())
        .payload(Value::Map(payload))
        .sign(&keys.alice)
        .unwrap();
    let payload_len = genesis.view().payload_bytes().len();
    assert!(
        (280..=360).contains(&payload_len),
        "payload is {payload_len} bytes"
    );
    let reply = EnvelopeBuilder::reply(&genesis.view(), TS + 60)
        .to(keys.alice.sigil(SigilForm::Default))
        .nonce(Nonce([0xa5; 16]))
        .payload(Value::text("reconciled; summary attached"))
        .sign(&keys.bob)
        .unwrap()
        .cosign(&keys.carol, Scope::HumanApproval, claimed_ts)
        .unwrap();
    (genesis.into_bytes(), reply.into_bytes())
}

#[derive(Clone, Copy, Debug)]
enum Mutation {
    Xor(usize, u8),
    Set(usize, u8),
    Delete(usize),
    Insert(usize, u8),
    Truncate(usize),
}

impl Mutation {
    fn apply(self, original: &[u8]) -> Option<Vec<u8>> {
        let mut b = original.to_vec();
        match self {
            Self::Xor(i, x) => b[i] ^= x,
            Self::Set(i, v) => {
                if b[i] == v {
                    return None; // not a mutation
                }
                b[i] = v;
            }
            Self::Delete(i) => {
                b.remove(i);
            }
            Self::Insert(i, v) => b.insert(i, v),
            Self::Truncate(n) => b.truncate(n),
        }
        Some(b)
    }

    /// The byte offset of the original the mutation touches.
    fn offset(self) -> usize {
        match self {
            Self::Xor(i, _)
            | Self::Set(i, _)
            | Self::Delete(i)
            | Self::Insert(i, _)
            | Self::Truncate(i) => i,
        }
    }
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Every mutation of `len` bytes: four per byte, every deletion, insertions
/// of several byte values at every position, every truncation.
fn mutations(original: &[u8]) -> Vec<Mutation> {
    let len = original.len();
    let mut m = Vec::new();
    for i in 0..len {
        m.push(Mutation::Xor(i, 0x01));
        m.push(Mutation::Xor(i, 0x80));
        m.push(Mutation::Set(i, 0x00));
        m.push(Mutation::Set(i, 0xff));
        m.push(Mutation::Delete(i));
    }
    for i in 0..=len {
        // 0x00: an integer 0 or a NUL; 0x60/0x40: an empty text/byte string;
        // 0xa0/0x80: an empty map/array; 0xf6: null; 0xff: a break; and a
        // copy of the neighbouring byte.
        for v in [0x00, 0x40, 0x60, 0x80, 0xa0, 0xf6, 0xff] {
            m.push(Mutation::Insert(i, v));
        }
        if i > 0 {
            m.push(Mutation::Insert(i, original[i - 1]));
        }
    }
    for n in 0..len {
        m.push(Mutation::Truncate(n));
    }
    m
}

/// What checking one mutated input gave.
struct Outcome {
    mutation: Mutation,
    status: Status,
    same_id: bool,
}

struct Sweep {
    checked: usize,
    panics: Vec<Mutation>,
    /// Mutations that came back `valid`.
    valid: Vec<Outcome>,
}

fn sweep(original: &[u8], keys: &[PublicKey; 3]) -> Sweep {
    let original_id = *EnvelopeRef::decode(original).unwrap().id();
    let mut s = Sweep {
        checked: 0,
        panics: Vec::new(),
        valid: Vec::new(),
    };
    for mutation in mutations(original) {
        let Some(bytes) = mutation.apply(original) else {
            continue;
        };
        assert_ne!(bytes, original);
        s.checked += 1;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let mut reasons = Reasons::<16>::new();
            let checked = check(&bytes, keys, &CheckOptions::DEFAULT, &mut reasons);
            // The sink's view of the status agrees with the check's.
            assert_eq!(checked.status, reasons.status(), "{mutation}");
            if checked.status != Status::Valid {
                assert!(
                    reasons.as_slice().len() + reasons.dropped() > 0,
                    "{mutation}: {} with no reason",
                    checked.status
                );
            }
            let same_id = checked.computed_id == Some(original_id)
                || checked
                    .envelope
                    .as_ref()
                    .is_some_and(|e| *e.id() == original_id);
            (checked.status, same_id)
        }));
        match result {
            Err(_) => s.panics.push(mutation),
            Ok((status, same_id)) if status == Status::Valid => s.valid.push(Outcome {
                mutation,
                status,
                same_id,
            }),
            Ok(_) => {}
        }
    }
    s
}

fn assert_original_valid(bytes: &[u8], keys: &[PublicKey; 3], signatures: usize) {
    let mut reasons = Vec::new();
    let checked = check(bytes, keys, &CheckOptions::DEFAULT, &mut reasons);
    assert_eq!(checked.status, Status::Valid, "{reasons:?}");
    assert!(reasons.is_empty(), "{reasons:?}");
    let view = checked.envelope.unwrap();
    assert_eq!(checked.computed_id, Some(*view.id()));
    assert_eq!(view.signature_count(), signatures);
}

fn report(name: &str, s: &Sweep) -> String {
    let valid: Vec<String> = s
        .valid
        .iter()
        .take(20)
        .map(|o| format!("{} ({}, same id: {})", o.mutation, o.status, o.same_id))
        .collect();
    format!(
        "{name}: {} mutants checked, {} panics (first: {:?}), {} valid (first: {valid:?})",
        s.checked,
        s.panics.len(),
        s.panics.first(),
        s.valid.len()
    )
}

#[test]
fn originals_are_valid() {
    let keys = Keys::new();
    let resolver = keys.resolver();
    let (genesis, reply) = envelopes(&keys, None);
    assert_original_valid(&genesis, &resolver, 1);
    assert_original_valid(&reply, &resolver, 2);
    let (_, reply_ts) = envelopes(&keys, Some(TS + 61));
    assert_original_valid(&reply_ts, &resolver, 2);
}

#[test]
fn no_mutation_of_the_genesis_is_valid() {
    let keys = Keys::new();
    let resolver = keys.resolver();
    let (genesis, _) = envelopes(&keys, None);
    let s = sweep(&genesis, &resolver);
    let summary = report("genesis", &s);
    println!("{summary}");
    assert!(s.panics.is_empty(), "{summary}");
    assert!(s.valid.is_empty(), "{summary}");
    // Stronger than "valid under the original id": nothing is valid at all.
    assert!(!s.valid.iter().any(|o| o.same_id), "{summary}");
}

#[test]
fn no_mutation_of_the_cosigned_reply_is_valid() {
    let keys = Keys::new();
    let resolver = keys.resolver();
    let (_, reply) = envelopes(&keys, None);
    let s = sweep(&reply, &resolver);
    let summary = report("co-signed reply", &s);
    println!("{summary}");
    assert!(s.panics.is_empty(), "{summary}");
    assert!(s.valid.is_empty(), "{summary}");
}

/// P5: "A signature map's own fields other than `sig` are covered only by
/// later signatures." The last signature's claimed `ts` is covered by no
/// signature and not by the id, so it can be changed without detection.
/// This pins down that this is the ONLY such malleability: every mutation
/// that stays `valid` touches that `ts` value and nothing else.
#[test]
fn only_the_last_cosignature_ts_claim_is_malleable() {
    let keys = Keys::new();
    let resolver = keys.resolver();
    let claimed = TS + 61; // 0x1a + 4 bytes
    let (_, reply) = envelopes(&keys, Some(claimed));
    // Where the claim sits: the `ts` key (0x62 't' 's') then 0x1a and 4
    // bytes. The top-level `ts` is TS + 60, so this byte run is unique.
    let view = EnvelopeRef::decode(&reply).unwrap();
    let cosig = view.signatures().nth(1).unwrap().unwrap();
    assert_eq!(cosig.ts, Some(claimed));
    let mut needle = vec![0x62, b't', b's', 0x1a];
    needle.extend_from_slice(&u32::try_from(claimed).unwrap().to_be_bytes());
    let hits: Vec<usize> = reply
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_slice())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1);
    let claim_key = hits[0];
    // It lies after the origin signature, in the co-signature's map.
    let origin_sig = view.signatures().next().unwrap().unwrap().sig;
    let origin_at = reply
        .windows(64)
        .position(|w| w == origin_sig.as_slice())
        .unwrap();
    assert!(claim_key > origin_at + 64);
    // The 4 bytes after the 0x1a head (the head itself cannot change: every
    // other head is another type or a non-shortest integer).
    let claim_value = claim_key + 4..claim_key + 8;

    let s = sweep(&reply, &resolver);
    let summary = report("co-signed reply with a ts claim", &s);
    println!("{summary}");
    assert!(s.panics.is_empty(), "{summary}");
    // 4 value bytes x {xor 0x01, xor 0x80, set 0x00, set 0xff}: all still a
    // 4-byte-shortest unsigned integer, all covered by no signature.
    assert_eq!(
        s.valid.len(),
        16,
        "the unsigned ts claim was expected to be malleable (P5): {summary}"
    );
    for o in &s.valid {
        assert!(
            o.same_id,
            "{}: valid under another id (a forgery)",
            o.mutation
        );
        let at = o.mutation.offset();
        assert!(
            matches!(o.mutation, Mutation::Xor(..) | Mutation::Set(..))
                && claim_value.contains(&at),
            "{}: valid, outside the ts claim at {claim_value:?}",
            o.mutation
        );
        // The claim reads differently, and the check still calls it valid.
        let bytes = o.mutation.apply(&reply).unwrap();
        let v = EnvelopeRef::decode(&bytes).unwrap();
        let ts = v.signatures().nth(1).unwrap().unwrap().ts;
        assert!(ts.is_some() && ts != Some(claimed));
    }
}

#[test]
fn no_truncation_is_valid() {
    let keys = Keys::new();
    let resolver = keys.resolver();
    let (genesis, reply) = envelopes(&keys, Some(TS + 61));
    for original in [&genesis, &reply] {
        for n in 0..original.len() {
            let mut reasons = Reasons::<16>::new();
            let checked = check(
                &original[..n],
                &resolver,
                &CheckOptions::DEFAULT,
                &mut reasons,
            );
            assert_eq!(checked.status, Status::Invalid, "truncated to {n}");
            assert!(checked.envelope.is_none(), "truncated to {n} decodes");
        }
    }
}
