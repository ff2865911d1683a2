//! Envelope builders the lifecycle, live-lifecycle and bundle tests share:
//! fixed keys, fresh nonces, births, messages, molts and envelopes a
//! molted-in key signs for its identity.
// Test helpers: a failed unwrap is the test failing. Not every test file
// uses every helper.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, Sigil, SigilForm, SigningKey};

/// 2025-05-05T08:00:00Z, the tests' fixed `ts`.
pub const T0: u64 = 1_746_432_000;
/// One day, seconds.
pub const DAY: u64 = 86_400;

/// The key of seed `[n; 32]`.
pub fn key(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n; 32])
}

/// A nonce never returned before in this process.
pub fn nonce() -> Nonce {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&N.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    Nonce(b)
}

/// The default-form sigil of `k`.
pub fn sigil(k: &SigningKey) -> Sigil {
    k.sigil(SigilForm::Default)
}

/// `k`'s birth at `ts` naming `lineage`, with whatever `extra` adds.
pub fn birth_with(
    k: &SigningKey,
    ts: u64,
    lineage: &[Sigil],
    extra: impl FnOnce(EnvelopeBuilder) -> EnvelopeBuilder,
) -> Envelope {
    let b = EnvelopeBuilder::genesis(ts)
        .kind(Kind::Birth)
        .nonce(nonce())
        .attest(
            "birth",
            birth_attestation(&k.public_key(), "test agent", lineage),
        );
    extra(b).sign(k).unwrap()
}

/// `k`'s plain birth at `ts`.
pub fn birth(k: &SigningKey, ts: u64) -> Envelope {
    birth_with(k, ts, &[], |b| b)
}

/// A message by `k` at `ts`.
pub fn say(k: &SigningKey, ts: u64) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .nonce(nonce())
        .payload(Value::text("words"))
        .sign(k)
        .unwrap()
}

/// The payload of a molt to `new` (P7).
pub fn molt_payload(new: &SigningKey, not_before: u64) -> Value {
    let mut p = Map::new();
    p.insert(
        "new_key",
        Value::Bytes(new.public_key().as_bytes().to_vec()),
    );
    p.insert("not_before", Value::Unsigned(not_before));
    Value::Map(p)
}

/// `old`'s molt to `new` at `ts`, effective at `not_before`.
pub fn molt(old: &SigningKey, new: &SigningKey, ts: u64, not_before: u64) -> Envelope {
    molt_as(old, old, new, ts, not_before)
}

/// A molt for `identity`'s sigil signed by `signer`, its current key.
pub fn molt_as(
    identity: &SigningKey,
    signer: &SigningKey,
    new: &SigningKey,
    ts: u64,
    not_before: u64,
) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Molt)
        .from_sigil(sigil(identity))
        .nonce(nonce())
        .payload(molt_payload(new, not_before))
        .sign(signer)
        .unwrap()
}

/// An envelope for `identity`'s sigil signed by `signer` (a molted-in key).
pub fn say_as(identity: &SigningKey, signer: &SigningKey, ts: u64) -> Envelope {
    EnvelopeBuilder::genesis(ts)
        .from_sigil(sigil(identity))
        .nonce(nonce())
        .payload(Value::text("new key speaking"))
        .sign(signer)
        .unwrap()
}
