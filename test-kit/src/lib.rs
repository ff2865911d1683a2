//! Test scaffolding shared by the workspace's test suites (`publish =
//! false`): the fixed keys, counted nonces and fixed time the tests build
//! their envelopes from, defined once; the counting allocator ([`alloc`]),
//! the fuzz corpus replay ([`corpus`]), the SIGKILL harness ([`crash`]),
//! the finding (or skipping for want) of programs outside Rust
//! ([`external`]), Heralds with their logs ([`heralds`]), a counting
//! stand-in for a CSPRNG ([`rng`]) and a crate's public surface read from
//! its sources ([`surface`]).
// Only `alloc` has unsafe code (forwarding to `System`), and allows it there.
#![deny(unsafe_code)]
// Scaffolding: a failure here is the calling test failing.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

pub mod alloc;
pub mod corpus;
pub mod crash;
pub mod external;
pub mod heralds;
pub mod protocols;
pub mod rng;
pub mod surface;

use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Nonce, SigningKey};

/// 2025-05-05T08:00:00Z, the tests' fixed `ts`.
pub const T0: u64 = 1_746_432_000;

/// Test key `n`: the RFC 8032 secret seed of 32 bytes `n`.
pub fn key(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n; 32])
}

/// Nonce `n`: `n` big-endian in its first 8 bytes, zeros after.
pub fn nonce(n: u64) -> Nonce {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&n.to_be_bytes());
    Nonce(b)
}

/// A genesis by `k` at `T0 + n` with nonce `n` and the payload
/// `"genesis n"`.
pub fn genesis(k: &SigningKey, n: u64) -> Envelope {
    built(
        EnvelopeBuilder::genesis(T0 + n)
            .nonce(nonce(n))
            .payload(Value::text(format!("genesis {n}")))
            .sign(k),
    )
}

/// A reply to `parent` by `k` at `T0 + n` with nonce `n` and the payload
/// `"reply n"`.
pub fn reply(parent: &Envelope, k: &SigningKey, n: u64) -> Envelope {
    built(
        EnvelopeBuilder::reply(&parent.view(), T0 + n)
            .nonce(nonce(n))
            .payload(Value::text(format!("reply {n}")))
            .sign(k),
    )
}

fn built(result: Result<Envelope, herald_core::BuildError>) -> Envelope {
    match result {
        Ok(e) => e,
        Err(e) => panic!("a test envelope did not build: {e}"),
    }
}
