//! `Receiver::precheck_all` (a conduit's batch of posts, CONDUIT.md): its
//! signatures verified in batch equations, every report the same as
//! receiving the envelopes one at a time. The inputs mix what changes a
//! verdict: forgeries inside a batch chunk, births and molts whose keys
//! later envelopes of the same batch need (prechecked before they were
//! recorded), and every envelope of the conformance cases.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

use herald_core::{Envelope, SigningKey};
use herald_verify::{
    EnvelopeReport, Keyring, PRECHECK_CHUNK, Piece, Provenance, Receiver, Store, StoreTxn,
    split_sequence,
};

mod support;

use support::{DAY, T0, birth, key, molt, say, say_as};

const OWNER: &str = "test";
const NOW: u64 = T0 + 20 * DAY;

fn receiver(path: &Path, pinned: &[&SigningKey]) -> Receiver {
    let mut ring = Keyring::new();
    for k in pinned {
        ring.insert(k.public_key(), Provenance::Pinned);
    }
    let conformance = conformance_dir().join("keys");
    for entry in std::fs::read_dir(conformance).unwrap() {
        ring.load(&entry.unwrap().path()).unwrap();
    }
    Receiver::new(Store::open_or_create(path, OWNER).unwrap(), ring).with_clock(|| NOW)
}

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance")
}

/// Every envelope of the conformance `verify` and `receive` cases, in
/// file-name order.
fn conformance_envelopes() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for case in ["verify", "receive"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(conformance_dir().join("cases").join(case))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cbor"))
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            for piece in split_sequence(&bytes, 1 << 20, 64) {
                if let Piece::Item { bytes, .. } = piece {
                    out.push(bytes.to_vec());
                }
            }
        }
    }
    assert!(out.len() > 100, "the conformance cases were not found");
    out
}

/// `e` with one byte of its origin signature changed.
fn forged(e: &Envelope) -> Vec<u8> {
    let mut bytes = e.as_bytes().to_vec();
    let sig = *e.view().signatures().next().unwrap().unwrap().sig;
    let at = bytes
        .windows(sig.len())
        .position(|w| w == sig)
        .expect("the signature is in the bytes");
    bytes[at + 10] ^= 0x01;
    bytes
}

/// The reports of receiving `posts` one at a time, each checked alone.
fn one_at_a_time(rx: &Receiver, posts: &[Vec<u8>]) -> Vec<EnvelopeReport> {
    let txn = rx.store().begin_write("one at a time").unwrap();
    let reports = posts
        .iter()
        .map(|p| {
            let pre = rx.precheck_all(&mut rx.store().reader(), &[p], NOW);
            let pre = pre.into_iter().next().unwrap().unwrap();
            rx.finish(&mut StoreTxn::new(rx.store(), &txn), pre)
                .unwrap()
        })
        .collect();
    txn.commit().unwrap();
    reports
}

/// The reports of prechecking `posts` together, then receiving them.
fn all_at_once(rx: &Receiver, posts: &[Vec<u8>]) -> Vec<EnvelopeReport> {
    let refs: Vec<&[u8]> = posts.iter().map(Vec::as_slice).collect();
    let prechecked = rx.precheck_all(&mut rx.store().reader(), &refs, NOW);
    assert_eq!(prechecked.len(), posts.len());
    let txn = rx.store().begin_write("all at once").unwrap();
    let reports = prechecked
        .into_iter()
        .map(|p| {
            rx.finish(&mut StoreTxn::new(rx.store(), &txn), p.unwrap())
                .unwrap()
        })
        .collect();
    txn.commit().unwrap();
    reports
}

#[test]
fn a_batch_gets_the_reports_of_single_verification() {
    let (a, a2, b, pinned) = (key(1), key(2), key(3), key(4));
    let not_before = T0 + 100 + DAY;
    let mut posts: Vec<Vec<u8>> = vec![birth(&a, T0).into_bytes()];
    // More than one chunk of good envelopes with forgeries among them, by a
    // pinned key (so nothing else of the batch decides them): a failed
    // equation must not fail its good neighbours.
    for i in 0..(2 * PRECHECK_CHUNK as u64 + 7) {
        let e = say(&pinned, T0 + 1 + i);
        posts.push(if i % 41 == 5 {
            forged(&e)
        } else {
            e.into_bytes()
        });
    }
    // A molt, then envelopes signed by the new key: prechecked before the
    // molt was recorded, so only a check under the write lock finds it.
    posts.push(molt(&a, &a2, T0 + 200, not_before).into_bytes());
    posts.push(say_as(&a, &a2, not_before + 10).into_bytes());
    posts.push(say(&a, not_before + 20).into_bytes());
    // A sender known only by its birth, later in the same batch.
    posts.push(say(&b, T0 + 300).into_bytes());
    posts.push(birth(&b, T0 + 290).into_bytes());
    posts.push(say(&b, T0 + 310).into_bytes());
    posts.extend(conformance_envelopes());
    // And the whole list again: every pair is now a replay.
    let again = posts.clone();
    posts.extend(again);

    let dir = tempfile::tempdir().unwrap();
    let single = receiver(&dir.path().join("single.redb"), &[&pinned]);
    let batched = receiver(&dir.path().join("batched.redb"), &[&pinned]);
    let expected = one_at_a_time(&single, &posts);
    let got = all_at_once(&batched, &posts);
    for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
        assert_eq!(e, g, "post {i}");
    }
    // The inputs did exercise what they are meant to.
    let valid = |r: &&EnvelopeReport| r.status() == herald_core::Status::Valid;
    assert!(expected.iter().filter(valid).count() > 2 * PRECHECK_CHUNK);
    let codes = |code: &str| {
        expected
            .iter()
            .filter(|r| r.reasons.iter().any(|x| x.code.name() == code))
            .count()
    };
    assert!(codes("bad_signature") >= 3, "forgeries");
    assert!(codes("replayed_nonce") > 2 * PRECHECK_CHUNK, "replays");
    let molted = expected
        .iter()
        .filter(|r| r.key_source == Some(herald_verify::KeyOrigin::Molt))
        .count();
    assert!(molted >= 1, "an envelope by a molted-in key");
}
