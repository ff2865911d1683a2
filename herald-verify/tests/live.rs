//! P10 live reception through `Receiver`: replay, `stale`, `expired`,
//! `future_ts`, which envelopes take a cache slot, persistence and retention.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, ReasonCode, Scope, SigningKey, Status};
use herald_verify::{
    CACHE_WINDOW, EnvelopeReport, Keyring, Provenance, Receiver, Store, StoreTxn, Unlisted,
};

/// The owner these tests create their stores for.
const OWNER: &str = "test";

const NOW: u64 = 1_750_000_000;
const DAY: u64 = 86_400;

fn alice() -> SigningKey {
    SigningKey::from_seed(&[0x11; 32])
}

fn bob() -> SigningKey {
    SigningKey::from_seed(&[0x22; 32])
}

fn keyring() -> Keyring {
    let mut k = Keyring::new();
    k.insert(alice().public_key(), Provenance::Pinned);
    k.insert(bob().public_key(), Provenance::Pinned);
    k
}

/// A receiver whose clock reads `clock`.
fn receiver_at(path: &Path, clock: &Arc<AtomicU64>) -> Receiver {
    let clock = Arc::clone(clock);
    Receiver::new(Store::open_or_create(path, OWNER).unwrap(), keyring())
        .with_clock(move || clock.load(Ordering::SeqCst))
}

fn receiver(path: &Path) -> Receiver {
    receiver_at(path, &Arc::new(AtomicU64::new(NOW)))
}

fn envelope(key: &SigningKey, ts: u64, nonce: u8, text: &str) -> Vec<u8> {
    EnvelopeBuilder::genesis(ts)
        .nonce(Nonce([nonce; 16]))
        .payload(Value::text(text))
        .sign(key)
        .unwrap()
        .into_bytes()
}

fn expiring(key: &SigningKey, ts: u64, expires: u64, nonce: u8) -> Vec<u8> {
    EnvelopeBuilder::genesis(ts)
        .nonce(Nonce([nonce; 16]))
        .expires(expires)
        .payload(Value::text("expiring"))
        .sign(key)
        .unwrap()
        .into_bytes()
}

fn codes(r: &EnvelopeReport) -> Vec<&'static str> {
    r.reasons.iter().map(|r| r.code.name()).collect()
}

fn assert_valid(r: &EnvelopeReport) {
    assert_eq!(r.status(), Status::Valid, "{:?}", codes(r));
    assert!(r.reasons.is_empty(), "{:?}", codes(r));
}

fn assert_only(r: &EnvelopeReport, code: ReasonCode) {
    assert_eq!(r.status(), Status::Invalid, "{:?}", codes(r));
    assert_eq!(codes(r), [code.name()]);
}

#[test]
fn valid_then_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let bytes = envelope(&alice(), NOW, 1, "hello");
    let first = rx.receive(&bytes).unwrap();
    assert_valid(&first);
    assert_eq!(first.key_source.map(|k| k.name()), Some("keyring"));
    assert!(first.id.is_some() && first.from.is_some());
    assert_only(&rx.receive(&bytes).unwrap(), ReasonCode::ReplayedNonce);
    assert_eq!(rx.store().len().unwrap(), 1);
}

#[test]
fn any_id_with_the_same_pair_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    assert_valid(&rx.receive(&envelope(&alice(), NOW, 2, "first")).unwrap());
    // Another payload, so another id, from the same key with the same nonce.
    let other = envelope(&alice(), NOW - 5, 2, "second");
    assert_only(&rx.receive(&other).unwrap(), ReasonCode::ReplayedNonce);
    // The same nonce from another key is another pair.
    assert_valid(&rx.receive(&envelope(&bob(), NOW, 2, "first")).unwrap());
    assert_eq!(rx.store().len().unwrap(), 2);
}

#[test]
fn stale_without_expires() {
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let old = NOW - 31 * DAY;
    assert_only(
        &rx.receive(&envelope(&alice(), old, 3, "old")).unwrap(),
        ReasonCode::Stale,
    );
    // Exactly 30 days is not older than 30 days.
    assert_valid(
        &rx.receive(&envelope(&alice(), NOW - CACHE_WINDOW, 4, "edge"))
            .unwrap(),
    );
    // An old ts with an expires still ahead is not stale: expiry governs.
    assert_valid(&rx.receive(&expiring(&alice(), old, NOW + DAY, 5)).unwrap());
    // A stale envelope took no cache slot.
    assert_eq!(rx.store().len().unwrap(), 2);
}

#[test]
fn expired_and_future_ts_use_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(AtomicU64::new(NOW));
    let rx = receiver_at(&dir.path().join("replay.redb"), &clock);
    assert_only(
        &rx.receive(&expiring(&alice(), NOW - DAY, NOW - 301, 6))
            .unwrap(),
        ReasonCode::Expired,
    );
    assert_valid(
        &rx.receive(&expiring(&alice(), NOW - DAY, NOW - 300, 7))
            .unwrap(),
    );
    assert_only(
        &rx.receive(&envelope(&alice(), NOW + 301, 8, "early"))
            .unwrap(),
        ReasonCode::FutureTs,
    );
    assert_valid(
        &rx.receive(&envelope(&alice(), NOW + 300, 9, "in skew"))
            .unwrap(),
    );
    // Refused for its time, the envelope took no slot: re-sent in time, it is accepted.
    assert_eq!(rx.store().len().unwrap(), 2);
    let early = envelope(&alice(), NOW + 301, 8, "early");
    clock.store(NOW + 1, Ordering::SeqCst);
    assert_valid(&rx.receive(&early).unwrap());
    // A tighter skew, from the builder.
    let tight = receiver(&dir.path().join("tight.redb")).with_skew(10);
    assert_only(
        &tight
            .receive(&envelope(&alice(), NOW + 11, 8, "x"))
            .unwrap(),
        ReasonCode::FutureTs,
    );
}

#[test]
fn a_tampered_envelope_does_not_take_the_nonce() {
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let genuine = envelope(&alice(), NOW, 10, "pay 10");
    let mut forged = genuine.clone();
    let at = forged.windows(6).position(|w| w == b"pay 10").unwrap();
    forged[at + 4] = b'9';
    let r = rx.receive(&forged).unwrap();
    assert_eq!(r.status(), Status::Invalid);
    assert!(r.has(ReasonCode::BadSignature) && r.has(ReasonCode::IdMismatch));
    assert!(!r.has(ReasonCode::ReplayedNonce));
    assert!(rx.store().is_empty().unwrap());
    // The genuine envelope, afterwards, is still accepted.
    assert_valid(&rx.receive(&genuine).unwrap());
    // The forgery again: every applicable reason, the replay included,
    // found without changing the cache.
    let r = rx.receive(&forged).unwrap();
    assert!(r.has(ReasonCode::BadSignature) && r.has(ReasonCode::ReplayedNonce));
    assert_eq!(rx.store().len().unwrap(), 1);
}

#[test]
fn unknown_signers_and_garbage_take_no_slot() {
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let carol = SigningKey::from_seed(&[0x33; 32]);
    let r = rx.receive(&envelope(&carol, NOW, 11, "who?")).unwrap();
    assert_eq!(r.status(), Status::Invalid);
    assert!(r.has(ReasonCode::UnknownSigner));
    let r = rx.receive(b"\xa1\x61v\x61x").unwrap();
    assert_eq!(r.status(), Status::Invalid);
    assert!(r.id.is_none());
    assert!(rx.store().is_empty().unwrap());
}

/// PROFILE P10 revision 3: a refused envelope (`partial` under the
/// receiver's policy) claims nothing; once the envelope arrives with what
/// the policy requires, it claims, and the refused form after it is a
/// replay. (Until revision 3 a partial envelope claimed its pair.)
#[test]
fn a_partial_envelope_is_refused_and_claims_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rx =
        receiver(&dir.path().join("replay.redb")).with_required_scopes(vec![Scope::HumanApproval]);
    let bytes = envelope(&alice(), NOW, 12, "needs approval");
    for _ in 0..2 {
        let r = rx.receive(&bytes).unwrap();
        assert_eq!(r.status(), Status::Partial);
        assert_eq!(codes(&r), ["required_signature_missing"]);
    }
    assert!(rx.store().is_empty().unwrap());
    let approved = herald_core::Envelope::from_bytes(bytes.clone())
        .unwrap()
        .cosign(&bob(), Scope::HumanApproval, None)
        .unwrap();
    assert_valid(&rx.receive(approved.as_bytes()).unwrap());
    let r = rx.receive(&bytes).unwrap();
    assert_eq!(r.status(), Status::Invalid);
    assert_eq!(codes(&r), ["required_signature_missing", "replayed_nonce"]);
}

/// `bytes` with a co-signature of 64 junk bytes under the sender's name
/// appended: a copy anyone can make of a real envelope.
fn junk_cosigned(bytes: &[u8]) -> Vec<u8> {
    use herald_core::cbor::Map;
    let Ok(Value::Map(mut map)) = Value::decode(bytes) else {
        panic!("an envelope is a map")
    };
    let Some(Value::Array(mut sigs)) = map.remove("signatures") else {
        panic!("signatures is an array")
    };
    let by = alice().sigil(herald_core::SigilForm::Default).to_string();
    let mut junk = Map::new();
    junk.insert("alg", Value::text("ed25519"));
    junk.insert("by", Value::text(by.as_str()));
    junk.insert("scope", Value::text("human_approval"));
    junk.insert("sig", Value::Bytes(vec![0x5a; 64]));
    sigs.push(Value::Map(junk));
    map.insert("signatures", Value::Array(sigs));
    Value::Map(map).to_vec()
}

/// Attack D6: a copy of a real envelope with a junk co-signature appended
/// (refused: `partial`) sent first must not block the real one, which is
/// accepted and claims; then every copy, junk or not, is a replay.
#[test]
fn a_junk_cosigned_copy_first_does_not_block_the_real_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let genuine = envelope(&alice(), NOW, 13, "the real one");
    let copy = junk_cosigned(&genuine);
    for _ in 0..2 {
        let r = rx.receive(&copy).unwrap();
        assert_eq!(r.status(), Status::Partial, "{:?}", codes(&r));
        assert!(r.has(ReasonCode::BadSignature) && r.has(ReasonCode::DuplicateSigner));
        assert!(!r.has(ReasonCode::ReplayedNonce));
    }
    assert!(rx.store().is_empty().unwrap());
    assert_valid(&rx.receive(&genuine).unwrap());
    assert_eq!(rx.store().len().unwrap(), 1);
    assert_only(&rx.receive(&genuine).unwrap(), ReasonCode::ReplayedNonce);
    let r = rx.receive(&copy).unwrap();
    assert_eq!(r.status(), Status::Invalid);
    assert!(r.has(ReasonCode::ReplayedNonce));
}

#[test]
fn the_cache_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.redb");
    let bytes = envelope(&alice(), NOW, 13, "once");
    let rx = receiver(&path);
    assert_valid(&rx.receive(&bytes).unwrap());
    // Closing: the file is locked while a Store has it open.
    drop(rx.into_store());
    let rx = receiver(&path);
    assert_only(&rx.receive(&bytes).unwrap(), ReasonCode::ReplayedNonce);
    drop(rx);
    let rx = receiver(&path);
    assert_only(&rx.receive(&bytes).unwrap(), ReasonCode::ReplayedNonce);
}

#[test]
fn retention_and_purge() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(AtomicU64::new(NOW));
    let rx = receiver_at(&dir.path().join("replay.redb"), &clock);
    // No expires: kept until now + 30 days.
    let plain = envelope(&alice(), NOW, 14, "plain");
    // expires 60 days ahead: kept until expires + skew.
    let long = expiring(&alice(), NOW, NOW + 60 * DAY, 15);
    assert_valid(&rx.receive(&plain).unwrap());
    assert_valid(&rx.receive(&long).unwrap());

    clock.store(NOW + CACHE_WINDOW, Ordering::SeqCst);
    assert_eq!(rx.store().purge(NOW + CACHE_WINDOW).unwrap(), 0);
    assert_only(&rx.receive(&plain).unwrap(), ReasonCode::ReplayedNonce);

    // One second past retention: the plain entry goes, and the plain
    // envelope, received again, is stale on its own.
    let later = NOW + CACHE_WINDOW + 1;
    clock.store(later, Ordering::SeqCst);
    assert_eq!(rx.store().purge(later).unwrap(), 1);
    assert_eq!(rx.store().len().unwrap(), 1);
    assert_only(&rx.receive(&plain).unwrap(), ReasonCode::Stale);
    assert_only(&rx.receive(&long).unwrap(), ReasonCode::ReplayedNonce);

    let end = NOW + 60 * DAY + 300;
    assert_eq!(rx.store().purge(end).unwrap(), 0);
    assert_eq!(rx.store().purge(end + 1).unwrap(), 1);
    assert!(rx.store().is_empty().unwrap());
    clock.store(end + 1, Ordering::SeqCst);
    assert_only(&rx.receive(&long).unwrap(), ReasonCode::Expired);
}

/// An envelope whose `ts` is ahead of the receiver's clock (within skew)
/// must stay cached until it is stale, or its replay would be accepted in
/// between: retention counts 30 days from `ts` as well as from reception.
#[test]
fn retention_covers_a_ts_ahead_of_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(AtomicU64::new(NOW));
    let rx = receiver_at(&dir.path().join("replay.redb"), &clock);
    let ahead = envelope(&alice(), NOW + 200, 16, "ahead");
    assert_valid(&rx.receive(&ahead).unwrap());
    // After now + 30 days, before ts + 30 days: not stale, so the cache must answer.
    let between = NOW + CACHE_WINDOW + 100;
    clock.store(between, Ordering::SeqCst);
    assert_eq!(rx.store().purge(between).unwrap(), 0);
    assert_only(&rx.receive(&ahead).unwrap(), ReasonCode::ReplayedNonce);
    clock.store(NOW + 200 + CACHE_WINDOW + 1, Ordering::SeqCst);
    assert_only(&rx.receive(&ahead).unwrap(), ReasonCode::Stale);
}

/// `finish`: a batch of receives in one transaction sees its own claims
/// (the second envelope with a pair is a replay), and nothing of it holds
/// until the caller commits: a dropped transaction claims nothing.
#[test]
fn a_batch_in_one_transaction_sees_its_own_claims_and_commits_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = receiver(&dir.path().join("replay.redb"));
    let first = envelope(&alice(), NOW, 7, "one");
    let again = envelope(&alice(), NOW, 7, "two");
    let receive_in = |txn: &redb::WriteTransaction, bytes: &[u8]| {
        let pre = r.precheck_all(&mut r.store().reader(), &[bytes], NOW);
        let pre = pre.into_iter().next().unwrap().unwrap();
        r.finish(&mut StoreTxn::new(r.store(), txn), pre).unwrap()
    };
    let txn = r.store().begin_write("batch").unwrap();
    assert_valid(&receive_in(&txn, &first));
    assert_only(&receive_in(&txn, &again), ReasonCode::ReplayedNonce);
    drop(txn);
    assert!(r.store().is_empty().unwrap(), "an aborted batch claimed");
    let txn = r.store().begin_write("batch").unwrap();
    assert_valid(&receive_in(&txn, &again));
    txn.commit().unwrap();
    assert_only(&r.receive(&first).unwrap(), ReasonCode::ReplayedNonce);
    assert_eq!(r.store().len().unwrap(), 1);
}

/// An envelope of 3 000 unknown fields (one `unknown_field` warning
/// each, seven bytes apiece, naming no signature) lists the first 16 and
/// counts the rest (CLI.md `verify --json`); it is still valid, claims
/// its nonce and is a replay the second time.
#[test]
fn repeated_reasons_are_listed_to_a_cap_and_counted() {
    const FIELDS: usize = 3000;
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let mut b = EnvelopeBuilder::genesis(NOW).nonce(Nonce([13; 16]));
    for k in 0..FIELDS {
        b = b
            .extra_field(&format!("zz{k:04x}"), Value::Unsigned(0))
            .unwrap();
    }
    let bytes = b.sign(&alice()).unwrap().into_bytes();
    let r = rx.receive(&bytes).unwrap();
    assert_eq!(r.status(), Status::Valid);
    assert_eq!(r.reasons.len(), herald_verify::LISTED_PER_CODE as usize);
    assert!(r.reasons.iter().all(|r| r.code == ReasonCode::UnknownField));
    let unlisted = &r.unlisted_reasons;
    assert_eq!(unlisted.len(), 1);
    assert_eq!(unlisted[0].code, ReasonCode::UnknownField);
    assert_eq!(r.reasons.len() + unlisted[0].count as usize, FIELDS);
    assert!(r.signature_verified(0));
    let again = rx.receive(&bytes).unwrap();
    assert_eq!(again.status(), Status::Invalid);
    assert!(
        codes(&again).contains(&"replayed_nonce"),
        "{:?}",
        codes(&again)
    );
}

/// PROFILE P11 revision 3: every reason that names a signature is listed,
/// so whether signature k verified is read from the listed reasons alone;
/// counted reasons name none and hide nothing.
#[test]
fn counted_reasons_leave_every_signature_verdict_exact() {
    let at = |code, index| {
        let mut r = herald_verify::ReportReason::new(code, "");
        r.index = index;
        r
    };
    let mut r = EnvelopeReport::default();
    r.reasons = vec![at(ReasonCode::BadSignature, Some(2))];
    assert!(r.signature_verified(1) && !r.signature_verified(2));
    r.unlisted_reasons = vec![Unlisted::new(ReasonCode::Malformed, 5)];
    assert!(r.signature_verified(0) && r.signature_verified(1) && r.signature_verified(3));
    assert!(!r.signature_verified(2));
}

/// Every one of 1 000 bad co-signatures is listed with its index, none
/// counted (PROFILE P11 revision 3).
#[test]
fn every_bad_cosignature_is_listed_live() {
    use herald_core::cbor::Map;
    let dir = tempfile::tempdir().unwrap();
    let rx = receiver(&dir.path().join("replay.redb"));
    let bytes = envelope(&alice(), NOW, 14, "many");
    let Ok(Value::Map(mut map)) = Value::decode(&bytes) else {
        panic!("an envelope is a map")
    };
    let Some(Value::Array(mut sigs)) = map.remove("signatures") else {
        panic!("signatures is an array")
    };
    let by = bob().sigil(herald_core::SigilForm::Default).to_string();
    for i in 0..1000u32 {
        let mut junk = Map::new();
        junk.insert("alg", Value::text("ed25519"));
        junk.insert("by", Value::text(by.as_str()));
        junk.insert("scope", Value::text("human_approval"));
        let mut sig = vec![0u8; 64];
        sig[..4].copy_from_slice(&i.to_be_bytes());
        junk.insert("sig", Value::Bytes(sig));
        sigs.push(Value::Map(junk));
    }
    map.insert("signatures", Value::Array(sigs));
    let r = rx.receive(&Value::Map(map).to_vec()).unwrap();
    assert_eq!(r.status(), Status::Partial);
    assert!(r.unlisted_reasons.is_empty(), "{:?}", r.unlisted_reasons);
    let bad: Vec<u32> = r
        .reasons
        .iter()
        .filter(|r| r.code == ReasonCode::BadSignature)
        .filter_map(|r| r.index)
        .collect();
    assert_eq!(bad, (1..=1000).collect::<Vec<_>>());
    // The second and later carry the same signer: duplicate_signer each.
    let dup = r
        .reasons
        .iter()
        .filter(|r| r.code == ReasonCode::DuplicateSigner)
        .count();
    assert_eq!(dup, 999);
    assert!(rx.store().is_empty().unwrap(), "refused: claims nothing");
}
