//! `Receiver::with_origin_first` (a conduit's front door, CONDUIT.md
//! revision 3): co-signatures are verified only once the origin verified,
//! alone and in `precheck_all`'s batches, with the verdicts of verifying
//! everything whenever the origin verifies; off, every reason is listed.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::{Envelope, ReasonCode, Scope, SigningKey, Status};
use herald_verify::{EnvelopeReport, Keyring, Provenance, Receiver, Store, StoreTxn};

mod support;

use support::{T0, key, say, sigil};

const NOW: u64 = T0 + 60;

fn receiver(dir: &tempfile::TempDir, name: &str, origin_first: bool) -> Receiver {
    let mut ring = Keyring::new();
    for k in [key(1), key(2)] {
        ring.insert(k.public_key(), Provenance::Pinned);
    }
    Receiver::new(
        Store::open_or_create(dir.path().join(name), "test").unwrap(),
        ring,
    )
    .with_clock(|| NOW)
    .with_origin_first(origin_first)
}

/// `env` with a `human_approval` co-signature by `by` whose `sig` is junk.
fn junk_cosign(env: &Envelope, by: &SigningKey) -> Envelope {
    // A real signature by another key, named as `by`'s: it cannot verify.
    env.cosign_as(&key(9), sigil(by), Scope::HumanApproval, None)
        .unwrap()
}

fn bad_cosignatures(r: &EnvelopeReport) -> usize {
    r.reasons
        .iter()
        .filter(|x| x.code == ReasonCode::BadSignature && x.index.is_some_and(|k| k > 0))
        .count()
}

#[test]
fn co_signatures_wait_for_the_origin() {
    let dir = tempfile::tempdir().unwrap();
    let stranger = key(7);
    let mut unknown = say(&stranger, T0);
    for _ in 0..5 {
        unknown = junk_cosign(&unknown, &key(1));
    }
    // A forged origin: alice's sigil, another key's signature.
    let forged = junk_cosign(&support::say_as(&key(1), &key(8), T0), &key(2));
    let good = say(&key(1), T0)
        .cosign(&key(2), Scope::HumanApproval, None)
        .unwrap();
    let partial = junk_cosign(&say(&key(1), T0), &key(2));
    let posts: Vec<&[u8]> = [&unknown, &forged, &good, &partial]
        .iter()
        .map(|e| e.as_bytes())
        .collect();

    let all = receiver(&dir, "all", false);
    let first = receiver(&dir, "first", true);
    let batch = receiver(&dir, "batch", true);
    let pre = batch.precheck_all(&mut batch.store().reader(), &posts, NOW);
    let txn = batch.store().begin_write("test").unwrap();
    let batched: Vec<EnvelopeReport> = pre
        .into_iter()
        .map(|p| {
            batch
                .finish(&mut StoreTxn::new(batch.store(), &txn), p.unwrap())
                .unwrap()
        })
        .collect();
    txn.commit().unwrap();
    for (i, bytes) in posts.iter().enumerate() {
        let every = all.receive(bytes).unwrap();
        let gated = first.receive(bytes).unwrap();
        assert_eq!(gated.status(), every.status(), "post {i}");
        assert_eq!(batched[i].status(), every.status(), "post {i}");
        assert_eq!(batched[i].reasons, gated.reasons, "post {i}");
        if every.status() == Status::Invalid {
            // Not verified, so not reported bad.
            assert!(bad_cosignatures(&every) > 0, "post {i}");
            assert_eq!(bad_cosignatures(&gated), 0, "post {i}: {:?}", gated.reasons);
        } else {
            assert_eq!(gated.reasons, every.reasons, "post {i}");
        }
    }
    assert_eq!(batched[2].status(), Status::Valid);
    assert_eq!(batched[3].status(), Status::Partial);
    assert_eq!(bad_cosignatures(&batched[3]), 1);
}
