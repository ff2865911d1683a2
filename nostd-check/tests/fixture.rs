//! The embedded fixture cannot rot: rebuild `src/envelope.bin` from the
//! fixed seed and a deterministic RNG, and compare; then run the no_std
//! check under std (the binary runs the same code without it).
//!
//! After a deliberate change to the envelope format, regenerate with
//! `HERALD_REGENERATE_FIXTURE=1 cargo test -p herald-nostd-check --test fixture`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, SigningKey};
use herald_nostd_check::{ENVELOPE, PAYLOAD, PUBLIC_KEY, TS};
// A counter, not a CSPRNG: only so the nonce (hence the fixture) is fixed.
use herald_testkit::rng::CountingRng;

fn key() -> SigningKey {
    SigningKey::from_seed(&[1u8; 32])
}

fn generate() -> Vec<u8> {
    EnvelopeBuilder::genesis(TS)
        .attest("model", Value::text("claude-opus-4-7"))
        .payload(Value::text(PAYLOAD))
        .sign_with_rng(&key(), &mut CountingRng(0))
        .expect("the fixture envelope builds")
        .into_bytes()
}

fn rust_array(bytes: &[u8]) -> String {
    let mut s = String::from("[\n");
    for row in bytes.chunks(16) {
        s.push_str("    ");
        for b in row {
            s.push_str(&format!("0x{b:02x}, "));
        }
        s.push('\n');
    }
    s.push(']');
    s
}

#[test]
fn public_key_is_the_seed_key() {
    let public = *key().public_key().as_bytes();
    assert_eq!(
        public,
        PUBLIC_KEY,
        "PUBLIC_KEY in src/lib.rs should be {}",
        rust_array(&public)
    );
}

#[test]
fn envelope_bin_is_reproducible() {
    let fresh = generate();
    // Signing is deterministic (RFC 8032) and the encoding canonical (P1).
    assert_eq!(fresh, generate());
    if std::env::var_os("HERALD_REGENERATE_FIXTURE").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/envelope.bin");
        std::fs::write(path, &fresh).unwrap();
        eprintln!("wrote {path} ({} bytes)", fresh.len());
        return;
    }
    assert!(
        ENVELOPE == fresh.as_slice(),
        "src/envelope.bin is stale; regenerate it with \
         HERALD_REGENERATE_FIXTURE=1 cargo test -p herald-nostd-check --test fixture\n\
         fresh bytes ({}): {}",
        fresh.len(),
        rust_array(&fresh)
    );
}

#[test]
fn the_no_std_check_passes() {
    assert_eq!(herald_nostd_check::verify(), Ok(()));
    assert_eq!(herald_nostd_check::run(), 0);
}

#[test]
fn no_single_bit_flip_checks_valid() {
    // One bit per byte (rotating), every byte: all eight bits of all bytes
    // would take ~15 s unoptimised for little more assurance.
    let keys = [herald_core::PublicKey::from_bytes(&PUBLIC_KEY).unwrap()];
    for at in 0..ENVELOPE.len() {
        let bit = at % 8;
        let mut copy = ENVELOPE.to_vec();
        copy[at] ^= 1 << bit;
        let mut reasons = Vec::new();
        let checked = herald_core::check(
            &copy,
            &keys,
            &herald_core::CheckOptions::DEFAULT,
            &mut reasons,
        );
        assert_ne!(
            checked.status,
            herald_core::Status::Valid,
            "byte {at} bit {bit} flipped still checks valid: {reasons:?}"
        );
    }
}
