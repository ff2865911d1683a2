//! Test helper for the P8 live-lifecycle crash test
//! (`tests/lifecycle_crash.rs`), not a user tool: for identities `start,
//! start + 1, …` it has a [`Receiver`] on the store at `path` witness a
//! birth, then a lifecycle fact — a deprecation for an even index, a molt
//! for an odd one — and prints `deprecated <index>` or `molted <index>` on
//! its own line (flushed) only after `receive` accepted the fact: an
//! acknowledgement the store must keep even if this process is killed the
//! next instant (PROFILE.md P8 in live mode, P10).
//!
//! Usage: `herald-lifecycle-writer <store path> <start index>`.
//!
//! Identity `i` signs with the key of seed `seed(i)`; every envelope is
//! built deterministically (fixed `ts` and nonces), so re-sending one is
//! an exact replay. A fact answered `replayed_nonce` is printed as
//! `replayed <index>`: expected only for `start`, when the previous writer
//! was killed after its commit and before its acknowledgement.

use std::process::ExitCode;

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{
    Envelope, EnvelopeBuilder, Kind, Nonce, ReasonCode, SigilForm, SigningKey, Status,
};
use herald_testkit::crash;
use herald_verify::{Keyring, Receiver, Store};

/// The births' `ts`; the receiver's clock is a few days later.
const T0: u64 = 1_746_432_000;
const NOW: u64 = T0 + 3 * 86_400;

/// The seed of identity `index`'s key (`molt`: the key it molts to).
fn seed(index: u64, molt: bool) -> [u8; 32] {
    let mut s = [if molt { 0x4d } else { 0x1d }; 32];
    s[..8].copy_from_slice(&index.to_le_bytes());
    s
}

/// The nonce of step `step` of identity `index`.
fn nonce(index: u64, step: u8) -> Nonce {
    let mut n = [step; 16];
    n[..8].copy_from_slice(&index.to_be_bytes());
    Nonce(n)
}

fn birth(k: &SigningKey, index: u64) -> Option<Envelope> {
    EnvelopeBuilder::genesis(T0)
        .kind(Kind::Birth)
        .nonce(nonce(index, 1))
        .attest(
            "birth",
            birth_attestation(&k.public_key(), "crash test", &[]),
        )
        .sign(k)
        .ok()
}

/// The lifecycle fact of identity `index`.
fn fact(k: &SigningKey, index: u64) -> Option<Envelope> {
    let builder = if index.is_multiple_of(2) {
        EnvelopeBuilder::genesis(T0 + 10)
            .kind(Kind::Deprecation)
            .payload(Value::Map(Map::new()))
    } else {
        let new = SigningKey::from_seed(&seed(index, true));
        let mut p = Map::new();
        p.insert(
            "new_key",
            Value::Bytes(new.public_key().as_bytes().to_vec()),
        );
        p.insert("not_before", Value::Unsigned(T0 + 86_400));
        EnvelopeBuilder::genesis(T0 + 20)
            .kind(Kind::Molt)
            .from_sigil(k.sigil(SigilForm::Default))
            .payload(Value::Map(p))
    };
    builder.nonce(nonce(index, 2)).sign(k).ok()
}

fn main() -> ExitCode {
    crash::writer("herald-lifecycle-writer", "store path", |path| {
        let store = Store::open_or_create(path, "crash-test").map_err(|e| e.to_string())?;
        let rx = Receiver::new(store, Keyring::new()).with_clock(|| NOW);
        Ok(move |index: u64| {
            let key = SigningKey::from_seed(&seed(index, false));
            let (Some(birth), Some(fact)) = (birth(&key, index), fact(&key, index)) else {
                return Err("cannot build the envelopes".into());
            };
            // The birth may have been committed by a writer killed before the fact.
            match rx.receive(birth.as_bytes()) {
                Ok(r) if r.status() == Status::Valid || r.has(ReasonCode::ReplayedNonce) => {}
                Ok(r) => return Err(format!("birth {index} refused: {:?}", r.reasons)),
                Err(e) => return Err(e.to_string()),
            }
            let word = if index.is_multiple_of(2) {
                "deprecated"
            } else {
                "molted"
            };
            let line = match rx.receive(fact.as_bytes()) {
                Ok(r) if r.status() == Status::Valid => format!("{word} {index}\n"),
                Ok(r) if r.has(ReasonCode::ReplayedNonce) => format!("replayed {index}\n"),
                Ok(r) => return Err(format!("{word} {index} refused: {:?}", r.reasons)),
                Err(e) => return Err(e.to_string()),
            };
            Ok((line, index + 1))
        })
    })
}
