//! Proof that herald-core decodes and verifies an envelope with neither
//! `std` nor an allocator.
//!
//! The check itself is [`run`], kept in this `#![no_std]` library so that an
//! ordinary workspace build, clippy and `tests/fixture.rs` all see it. The
//! binary (`src/main.rs`, feature `bin`, profile `nostd`) is `#![no_main]`,
//! has no global allocator, and only calls [`run`]: it links at all only if
//! nothing in herald-core's no-default-features graph needs `std` or `alloc`.
#![no_std]

use herald_core::{
    CheckOptions, EnvelopeRef, KeySource, PublicKey, ReasonCode, Reasons, Status, check,
};

/// A genesis envelope signed by `SigningKey::from_seed(&[1; 32])`, payload
/// [`PAYLOAD`]. `tests/fixture.rs` rebuilds it and fails if it differs.
pub const ENVELOPE: &[u8] = include_bytes!("envelope.bin");

/// The public key of `SigningKey::from_seed(&[1; 32])` (checked by `tests/fixture.rs`).
pub const PUBLIC_KEY: [u8; 32] = [
    0x8a, 0x88, 0xe3, 0xdd, 0x74, 0x09, 0xf1, 0x95, 0xfd, 0x52, 0xdb, 0x2d, 0x3c, 0xba, 0x5d, 0x72,
    0xca, 0x67, 0x09, 0xbf, 0x1d, 0x94, 0x12, 0x1b, 0xf3, 0x74, 0x88, 0x01, 0xb4, 0x0f, 0x6f, 0x5c,
];

/// The text payload of [`ENVELOPE`].
pub const PAYLOAD: &str = "hello from no_std";

/// The Unix time [`ENVELOPE`] was signed at.
pub const TS: u64 = 1_746_432_000;

const LEN: usize = ENVELOPE.len();

/// Which part of the proof failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// [`PUBLIC_KEY`] did not load.
    Key,
    /// [`ENVELOPE`] did not decode.
    Decode,
    /// The decoded fields are not the ones signed.
    Fields,
    /// The check did not say `valid` with no reasons, keyring-resolved.
    NotValid,
    /// The carried id is not the computed one.
    IdMismatch,
    /// A copy with a flipped signature byte was not `invalid` with `bad_signature`.
    TamperedSignatureAccepted,
    /// A copy with a flipped payload byte was not `invalid` with `id_mismatch`.
    TamperedPayloadAccepted,
}

/// Decode and verify [`ENVELOPE`], then two tampered stack copies of it.
pub fn verify() -> Result<(), Failure> {
    let key = PublicKey::from_bytes(&PUBLIC_KEY).map_err(|_| Failure::Key)?;
    let keys = [key];

    let view = EnvelopeRef::decode(ENVELOPE).map_err(|_| Failure::Decode)?;
    if !view.is_genesis()
        || view.trace() != view.id()
        || view.ts() != TS
        || view.payload().as_text() != Some(PAYLOAD)
    {
        return Err(Failure::Fields);
    }
    if *view.id() != view.computed_id() {
        return Err(Failure::IdMismatch);
    }

    // The key must come from the resolver, not the envelope.
    let opts = CheckOptions {
        learn_birth_keys: false,
        ..CheckOptions::DEFAULT
    };
    let mut reasons = Reasons::<8>::new();
    let checked = check(ENVELOPE, &keys, &opts, &mut reasons);
    if checked.status != Status::Valid
        || reasons.status() != Status::Valid
        || !reasons.as_slice().is_empty()
        || reasons.dropped() != 0
        || checked.key_source != Some(KeySource::Keyring)
    {
        return Err(Failure::NotValid);
    }
    if checked.computed_id != Some(*view.id()) {
        return Err(Failure::IdMismatch);
    }

    // A byte inside the origin signature: strict Ed25519 refuses it.
    let sig = match view.signatures().next() {
        Some(Ok(sig)) => sig.sig,
        _ => return Err(Failure::Fields),
    };
    let at = position(sig).ok_or(Failure::Fields)?;
    if !rejected(&keys, &opts, at + 32, ReasonCode::BadSignature) {
        return Err(Failure::TamperedSignatureAccepted);
    }
    // A byte of the payload text: the body no longer hashes to the id.
    let at = position(PAYLOAD.as_bytes()).ok_or(Failure::Fields)?;
    if !rejected(&keys, &opts, at, ReasonCode::IdMismatch) {
        return Err(Failure::TamperedPayloadAccepted);
    }
    Ok(())
}

/// Where `needle` first occurs in [`ENVELOPE`].
fn position(needle: &[u8]) -> Option<usize> {
    ENVELOPE.windows(needle.len()).position(|w| w == needle)
}

/// Whether a stack copy of [`ENVELOPE`] with byte `at` flipped checks
/// `invalid`, with `code` among the reasons.
fn rejected(keys: &[PublicKey; 1], opts: &CheckOptions<'_>, at: usize, code: ReasonCode) -> bool {
    let mut copy = [0u8; LEN];
    copy.copy_from_slice(ENVELOPE);
    let Some(byte) = copy.get_mut(at) else {
        return false;
    };
    *byte ^= 0x01;
    let mut reasons = Reasons::<8>::new();
    let checked = check(&copy, keys, opts, &mut reasons);
    checked.status == Status::Invalid
        && reasons.status() == Status::Invalid
        && reasons.contains(code)
}

/// The process exit status: 0 when [`verify`] passes, 1 otherwise.
pub fn run() -> i32 {
    match verify() {
        Ok(()) => 0,
        Err(_) => 1,
    }
}
