//! The batch equation (PROFILE.md P5, revision 2, feature `batch`) gives
//! the single verification's verdict: all valid holds, one bad signature
//! among many fails; and it fails closed when the caller's RNG cannot give
//! the coefficients.
#![cfg(feature = "batch")]
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::rand_core::{TryCryptoRng, TryRng};
use herald_core::{Prepared, SigningKey, SysRng, verify_batch};

/// Signatures by three keys over distinct messages, prepared.
fn prepared(n: usize) -> Vec<Prepared> {
    let keys: Vec<SigningKey> = (1..=3).map(herald_testkit::key).collect();
    (0..n)
        .map(|i| {
            let key = &keys[i % keys.len()];
            let message = format!("message {i}");
            let signature = key.sign(message.as_bytes());
            key.public_key()
                .prepare(&signature, |feed| feed(message.as_bytes()))
                .unwrap()
        })
        .collect()
}

#[test]
fn valid_signatures_hold_and_no_items_hold() {
    let items = prepared(40);
    assert!(items.iter().all(|p| p.verify().is_ok()));
    assert!(verify_batch(&items, &mut SysRng));
    assert!(verify_batch(&[], &mut SysRng));
}

#[test]
fn one_signature_over_another_message_fails_the_batch() {
    let mut items = prepared(40);
    let key = herald_testkit::key(2);
    let signature = key.sign(b"what was signed");
    let forged = key
        .public_key()
        .prepare(&signature, |feed| feed(b"what is claimed"))
        .unwrap();
    assert!(forged.verify().is_err());
    items.insert(17, forged);
    assert!(!verify_batch(&items, &mut SysRng));
}

/// An RNG whose every draw fails, as an exhausted or absent entropy
/// source does.
struct NoEntropy;

#[derive(Debug)]
struct Exhausted;

impl core::fmt::Display for Exhausted {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("no entropy")
    }
}

impl core::error::Error for Exhausted {}

impl TryRng for NoEntropy {
    type Error = Exhausted;

    fn try_next_u32(&mut self) -> Result<u32, Exhausted> {
        Err(Exhausted)
    }
    fn try_next_u64(&mut self) -> Result<u64, Exhausted> {
        Err(Exhausted)
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Exhausted> {
        Err(Exhausted)
    }
}

impl TryCryptoRng for NoEntropy {}

#[test]
fn without_randomness_valid_signatures_do_not_hold() {
    let items = prepared(8);
    assert!(verify_batch(&items, &mut SysRng));
    assert!(!verify_batch(&items, &mut NoEntropy));
}
