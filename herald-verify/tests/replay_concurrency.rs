//! P10 with many receivers in one process: threads racing to claim the same
//! `(signer, nonce)` pairs on one shared `Store` — exactly one of them gets
//! `Fresh` for each pair, because a claim reads and writes in one redb write
//! transaction and redb runs those one at a time.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Barrier};

use herald_verify::{Claim, Store};

/// The owner these tests create their stores for.
const OWNER: &str = "test";

const THREADS: usize = 8;
const NONCES: u64 = 500;
const SIGNER: [u8; 32] = [0x33; 32];
const NOW: u64 = 1_700_000_000;

fn nonce(i: u64) -> [u8; 16] {
    u128::from(i).to_be_bytes()
}

#[test]
fn each_nonce_is_fresh_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open_or_create(dir.path().join("replay.redb"), OWNER).unwrap());
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                // Half the threads walk the nonces in step from 0 (racing
                // for the same nonce at the same moment), half from other
                // places (meeting the others on the way).
                let offset = if t % 2 == 0 {
                    0
                } else {
                    t as u64 * NONCES / THREADS as u64
                };
                let mut fresh = Vec::new();
                for k in 0..NONCES {
                    let i = (k + offset) % NONCES;
                    match store.claim(&SIGNER, &nonce(i), NOW + 86_400, NOW).unwrap() {
                        Claim::Fresh => fresh.push(i),
                        Claim::Replayed => {}
                    }
                }
                fresh
            })
        })
        .collect();
    let mut count = [0usize; NONCES as usize];
    for h in handles {
        for i in h.join().unwrap() {
            count[i as usize] += 1;
        }
    }
    for (i, c) in count.iter().enumerate() {
        assert_eq!(*c, 1, "nonce {i} was Fresh {c} times");
    }
    assert_eq!(store.len().unwrap(), NONCES);
    // And it stays claimed.
    for i in 0..NONCES {
        assert_eq!(
            store.claim(&SIGNER, &nonce(i), NOW + 86_400, NOW).unwrap(),
            Claim::Replayed
        );
    }
}

#[test]
fn the_same_nonce_from_another_signer_is_another_pair() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_or_create(dir.path().join("replay.redb"), OWNER).unwrap();
    let n = nonce(7);
    assert_eq!(
        store.claim(&SIGNER, &n, NOW + 10, NOW).unwrap(),
        Claim::Fresh
    );
    assert_eq!(
        store.claim(&[0x44; 32], &n, NOW + 10, NOW).unwrap(),
        Claim::Fresh
    );
    assert_eq!(
        store.claim(&SIGNER, &n, NOW + 10, NOW).unwrap(),
        Claim::Replayed
    );
    // Retained through retain-until inclusive; past it, the slot is reusable.
    assert_eq!(
        store.claim(&SIGNER, &n, NOW + 99, NOW + 10).unwrap(),
        Claim::Replayed
    );
    assert!(store.contains(&SIGNER, &n, NOW + 10).unwrap());
    assert!(!store.contains(&SIGNER, &n, NOW + 11).unwrap());
    assert_eq!(
        store.claim(&SIGNER, &n, NOW + 99, NOW + 11).unwrap(),
        Claim::Fresh
    );
    assert_eq!(
        store.claim(&SIGNER, &n, NOW + 99, NOW + 99).unwrap(),
        Claim::Replayed
    );
    // purge drops only entries past their retention.
    assert_eq!(store.len().unwrap(), 2);
    assert_eq!(store.purge(NOW + 11).unwrap(), 1); // the other signer's (until NOW + 10)
    assert_eq!(store.purge(NOW + 100).unwrap(), 1);
    assert!(store.is_empty().unwrap());
}
