//! The audit log (PROFILE.md P9, CLI.md `herald log`): leaf encoding with
//! and without consent, signed tree heads, inclusion and consistency proof
//! objects (round trip, verification, any tampering fails, split views
//! refuted), the file-backed log (idempotent append, corruption is an error
//! naming the file and offset, a torn tail is recovered, the leaf-file
//! reader on bytes in memory agrees with `open`), and a 100 000-leaf log.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, EnvelopeRef, ReasonCode, SigilForm, SigningKey};
use herald_merkle::{self as merkle, Tree};
use herald_testkit::{key, nonce};
use herald_verify::{
    AuditObject, CHECKPOINT_SLOT, CheckError, ConsistencyProof, EnvelopeMismatch, FormatError,
    InclusionProof, Keyring, LOG_CHECKPOINT_FILE, LOG_DATA_FILE, Leaf, Log, LogError, Provenance,
    SignedTreeHead, SthError, TreeHead,
    internal::{HEADER_LEN, scan_leaf_file},
};
use sha2::{Digest, Sha256};

const T0: u64 = 1_746_432_123;
const TS: u64 = 1_746_500_000;

fn keyring(keys: &[&SigningKey]) -> Keyring {
    let mut k = Keyring::new();
    for key in keys {
        k.insert(key.public_key(), Provenance::Pinned);
    }
    k
}

fn sha(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn genesis(k: &SigningKey, n: u64) -> Envelope {
    EnvelopeBuilder::genesis(T0 + n)
        .nonce(nonce(n))
        .payload(Value::text(format!("genesis {n}")))
        .sign(k)
        .unwrap()
}

fn reply(parent: &Envelope, n: u64) -> EnvelopeBuilder {
    EnvelopeBuilder::reply(&parent.view(), T0 + n)
        .nonce(nonce(n))
        .payload(Value::text(format!("reply {n}")))
}

fn keys_of(bytes: &[u8]) -> Vec<String> {
    herald_core::cbor::decode(bytes)
        .unwrap()
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.to_owned())
        .collect()
}

// ---------------------------------------------------------------- leaves

#[test]
fn minimal_leaf_is_id_hashes_and_bucket() {
    let a = key(1);
    let g = genesis(&a, 0);
    let leaf = Leaf::from_envelope(&g.view());
    let bytes = leaf.encode();

    let mut expected = Map::new();
    expected.insert("id", Value::Bytes(g.id().to_vec()));
    expected.insert("parent_hash", Value::Null);
    expected.insert("trace_hash", Value::Bytes(sha(&g.id()).to_vec()));
    expected.insert("bucket", Value::Unsigned(T0 - T0 % 3600));
    assert_eq!(bytes, Value::Map(expected).to_vec());
    assert_eq!(
        keys_of(&bytes),
        ["id", "bucket", "trace_hash", "parent_hash"]
    );
    assert_eq!(leaf.bucket(), 1_746_432_000);
    assert!(!leaf.has_metadata() && leaf.from().is_none() && leaf.ts().is_none());

    // A reply: parent_hash = sha256(parent id), trace_hash = sha256(trace).
    let r = reply(&g, 1)
        .to(a.sigil(SigilForm::Default))
        .sign(&key(2))
        .unwrap();
    let leaf = Leaf::from_envelope(&r.view());
    assert_eq!(leaf.parent_hash(), Some(&sha(&g.id())));
    assert_eq!(leaf.trace_hash(), &sha(&g.id()));
    // No consent: neither from, to nor ts.
    assert_eq!(
        keys_of(&leaf.encode()),
        ["id", "bucket", "trace_hash", "parent_hash"]
    );
    assert_eq!(Leaf::decode(&leaf.encode()).unwrap(), leaf);
    assert_eq!(leaf.hash(), merkle::leaf_hash(&leaf.encode()));
}

#[test]
fn consent_adds_from_to_and_ts() {
    let (a, b) = (key(1), key(2));
    let g = genesis(&a, 0);
    let r = reply(&g, 3700)
        .to(a.sigil(SigilForm::Long))
        .attest("log_metadata_consent", Value::Bool(true))
        .sign(&b)
        .unwrap();
    let leaf = Leaf::from_envelope(&r.view());
    let bytes = leaf.encode();
    assert_eq!(
        keys_of(&bytes),
        [
            "id",
            "to",
            "ts",
            "from",
            "bucket",
            "trace_hash",
            "parent_hash"
        ]
    );
    let map = herald_core::cbor::decode(&bytes).unwrap().as_map().unwrap();
    assert_eq!(map.get("from").unwrap().as_text(), Some(r.view().from()));
    assert_eq!(
        map.get("to").unwrap().as_text().unwrap(),
        a.sigil(SigilForm::Long).to_string()
    );
    assert_eq!(map.get("ts").unwrap().as_unsigned(), Some(T0 + 3700));
    assert_eq!(leaf.bucket(), (T0 + 3700) - (T0 + 3700) % 3600);
    assert_eq!(Leaf::decode(&bytes).unwrap(), leaf);

    // Consent without `to`: from and ts only.
    let g2 = EnvelopeBuilder::genesis(T0)
        .nonce(nonce(9))
        .attest("log_metadata_consent", Value::Bool(true))
        .sign(&a)
        .unwrap();
    let bytes = Leaf::from_envelope(&g2.view()).encode();
    assert_eq!(
        keys_of(&bytes),
        ["id", "ts", "from", "bucket", "trace_hash", "parent_hash"]
    );

    // Anything but consent everywhere gives the minimal leaf.
    for values in [
        vec![Value::Bool(false)],
        vec![Value::Bool(true), Value::Bool(false)],
        vec![Value::text("yes")],
        vec![Value::Unsigned(1)],
    ] {
        let mut builder = EnvelopeBuilder::genesis(T0).nonce(nonce(10));
        for v in values {
            builder = builder.attest("log_metadata_consent", v);
        }
        let env = builder.sign(&a).unwrap();
        let leaf = Leaf::from_envelope(&env.view());
        assert!(!leaf.has_metadata());
        assert_eq!(keys_of(&leaf.encode()).len(), 4);
    }
}

#[test]
fn leaf_decoding_is_strict() {
    let good = {
        let mut m = Map::new();
        m.insert("id", Value::Bytes(vec![1; 32]));
        m.insert("parent_hash", Value::Null);
        m.insert("trace_hash", Value::Bytes(vec![2; 32]));
        m.insert("bucket", Value::Unsigned(7200));
        m
    };
    assert!(Leaf::decode(&Value::Map(good.clone()).to_vec()).is_ok());
    let bad = |edit: &dyn Fn(&mut Map)| {
        let mut m = good.clone();
        edit(&mut m);
        Leaf::decode(&Value::Map(m).to_vec()).unwrap_err()
    };
    let e = bad(&|m| {
        m.insert("extra", Value::Null);
    });
    assert_eq!(e.to_string(), "leaf: unknown field `extra`");
    let e = bad(&|m| {
        m.remove("trace_hash");
    });
    assert_eq!(e.to_string(), "leaf: missing field `trace_hash`");
    let e = bad(&|m| {
        m.insert("id", Value::Bytes(vec![1; 31]));
    });
    assert_eq!(
        e.to_string(),
        "leaf: field `id` must be a 32-byte byte string"
    );
    assert!(matches!(
        bad(&|m| {
            m.insert("bucket", Value::Unsigned(7201));
        }),
        FormatError::FieldValue {
            field: "bucket",
            ..
        }
    ));
    // from/ts together, bucket the bucket of ts, to only with them.
    let from = key(1).sigil(SigilForm::Default).to_string();
    assert!(matches!(
        bad(&|m| {
            m.insert("from", Value::text(from.clone()));
        }),
        FormatError::MissingField { field: "ts", .. }
    ));
    assert!(matches!(
        bad(&|m| {
            m.insert("from", Value::text(from.clone()));
            m.insert("ts", Value::Unsigned(3599));
        }),
        FormatError::FieldValue {
            field: "bucket",
            ..
        }
    ));
    assert!(matches!(
        bad(&|m| {
            m.insert("to", Value::text(from.clone()));
        }),
        FormatError::FieldValue { field: "to", .. }
    ));
    assert!(matches!(
        bad(&|m| {
            m.insert("from", Value::text("sigil:nope"));
            m.insert("ts", Value::Unsigned(7300));
        }),
        FormatError::FieldValue { field: "from", .. }
    ));
    // Not canonical: trailing bytes, and a non-shortest integer head.
    let mut bytes = Value::Map(good.clone()).to_vec();
    bytes.push(0);
    assert!(matches!(
        Leaf::decode(&bytes).unwrap_err(),
        FormatError::Cbor { object: "leaf", .. }
    ));
    assert!(matches!(
        Leaf::decode(&[0x81, 0x00]).unwrap_err(),
        FormatError::NotAMap { .. }
    ));
}

// ------------------------------------------------------- signed tree heads

fn sth(k: &SigningKey, size: u64, root: [u8; 32]) -> SignedTreeHead {
    TreeHead::new(k.sigil(SigilForm::Default), size, root, TS)
        .sign(k)
        .unwrap()
}

/// Re-encode `sth`'s wire map with `field` replaced.
fn edited(sth: &SignedTreeHead, field: &str, value: Value) -> Vec<u8> {
    let Value::Map(mut m) = sth.to_value() else {
        unreachable!()
    };
    m.insert(field, value);
    Value::Map(m).to_vec()
}

#[test]
fn sth_signs_verifies_and_round_trips() {
    let (a, b) = (key(1), key(2));
    let s = sth(&a, 5, [7; 32]);
    let bytes = s.encode();
    assert_eq!(keys_of(&bytes), ["ts", "log", "sig", "root", "size"]);
    assert_eq!(SignedTreeHead::decode(&bytes).unwrap(), s);
    assert_eq!(s.verify(&keyring(&[&a, &b])).unwrap(), a.public_key());
    s.verify_with_key(&a.public_key()).unwrap();

    // The signed message is the tag then the P1 map without `sig`.
    let mut m = Map::new();
    m.insert("log", Value::text(a.sigil(SigilForm::Default).to_string()));
    m.insert("size", Value::Unsigned(5));
    m.insert("root", Value::Bytes(vec![7; 32]));
    m.insert("ts", Value::Unsigned(TS));
    let mut message = b"herald.sth.v1".to_vec();
    message.extend(Value::Map(m).to_vec());
    assert_eq!(s.head().signed_message(), message);
    a.public_key().verify(&message, s.sig()).unwrap();

    // A long-form log sigil is fine.
    let long = TreeHead::new(a.sigil(SigilForm::Long), 5, [7; 32], TS)
        .sign(&a)
        .unwrap();
    long.verify(&keyring(&[&a])).unwrap();

    // JSON display form: byte strings as lowercase hex.
    let json = herald_verify::display_json(herald_core::cbor::decode(&bytes).unwrap());
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed["root"], "07".repeat(32));
    assert_eq!(parsed["size"], 5);
    assert_eq!(parsed["sig"].as_str().unwrap().len(), 128);
}

#[test]
fn sth_refuses_wrong_keys_tampering_and_short_sigils() {
    let (a, b) = (key(1), key(2));
    let s = sth(&a, 5, [7; 32]);

    // Not in the keyring.
    assert_eq!(
        s.verify(&keyring(&[&b])).unwrap_err(),
        SthError::UnknownLog {
            log: a.sigil(SigilForm::Default)
        }
    );
    // Signing with a key the sigil does not name is refused…
    let head = TreeHead::new(a.sigil(SigilForm::Default), 5, [7; 32], TS);
    assert!(matches!(
        head.clone().sign(&b).unwrap_err(),
        SthError::WrongKey { .. }
    ));
    // …and a signature by another key does not verify.
    let forged = SignedTreeHead::from_parts(head.clone(), b.sign(&head.signed_message()));
    assert!(matches!(
        forged.verify(&keyring(&[&a, &b])).unwrap_err(),
        SthError::BadSignature { .. }
    ));
    assert!(forged.verify_with_key(&a.public_key()).is_err());
    assert!(matches!(
        s.verify_with_key(&b.public_key()).unwrap_err(),
        SthError::WrongKey { .. }
    ));

    // Tampered root, size, ts, log, sig: bad signature (or unknown log).
    let ring = keyring(&[&a, &b]);
    for (field, value) in [
        ("root", Value::Bytes(vec![8; 32])),
        ("size", Value::Unsigned(6)),
        ("ts", Value::Unsigned(TS + 1)),
        ("sig", Value::Bytes(vec![0; 64])),
        ("log", Value::text(b.sigil(SigilForm::Default).to_string())),
    ] {
        let t = SignedTreeHead::decode(&edited(&s, field, value)).unwrap();
        assert!(
            matches!(t.verify(&ring).unwrap_err(), SthError::BadSignature { .. }),
            "{field}"
        );
    }

    // A short sigil never signs a tree head (P2: short_sigil_misuse).
    let short = TreeHead::new(a.sigil(SigilForm::Short), 5, [7; 32], TS);
    let e = short.clone().sign(&a).unwrap_err();
    assert!(matches!(e, SthError::ShortSigil { .. }));
    let forged = SignedTreeHead::from_parts(short.clone(), a.sign(&short.signed_message()));
    let e = forged.verify(&ring).unwrap_err();
    assert_eq!(e.code(), ReasonCode::ShortSigilMisuse);
    assert!(e.to_string().starts_with("short_sigil_misuse: "), "{e}");
    // Nor a reserved name.
    let reserved = TreeHead::new(
        herald_core::Sigil::parse("sigil:scribe").unwrap(),
        5,
        [7; 32],
        TS,
    );
    assert!(matches!(
        reserved.sign(&a).unwrap_err(),
        SthError::ReservedSigil { .. }
    ));

    // Strict decoding, naming the field.
    let e = SignedTreeHead::decode(&edited(&s, "sig", Value::Bytes(vec![0; 63]))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "signed tree head: field `sig` must be a 64-byte byte string"
    );
    let e = SignedTreeHead::decode(&edited(&s, "root", Value::Bytes(vec![0; 33]))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "signed tree head: field `root` must be a 32-byte byte string"
    );
    let e = SignedTreeHead::decode(&edited(&s, "extra", Value::Null)).unwrap_err();
    assert!(matches!(e, FormatError::UnknownField { .. }));
    let Value::Map(mut m) = s.to_value() else {
        unreachable!()
    };
    m.remove("sig");
    let e = SignedTreeHead::decode(&Value::Map(m).to_vec()).unwrap_err();
    assert_eq!(e.to_string(), "signed tree head: missing field `sig`");
}

// ---------------------------------------------------------------- proofs

/// A log of `n` envelopes (every third with consent) in `dir`.
fn envelope_log(dir: &Path, log_key: &SigningKey, n: u64) -> (Log, Vec<Envelope>) {
    let mut log = Log::create(dir, &log_key.public_key(), None).unwrap();
    let (a, b) = (key(10), key(11));
    let mut envs = vec![genesis(&a, 0)];
    for i in 1..n {
        let sender = if i % 2 == 0 { &a } else { &b };
        let mut builder = reply(&envs[envs.len() - 1], i * 1000);
        if i % 3 == 0 {
            builder = builder
                .to(a.sigil(SigilForm::Default))
                .attest("log_metadata_consent", Value::Bool(true));
        }
        envs.push(builder.sign(sender).unwrap());
    }
    let views: Vec<EnvelopeRef<'_>> = envs.iter().map(Envelope::view).collect();
    let appended = log.append_envelopes(&views).unwrap();
    for (i, a) in appended.iter().enumerate() {
        assert_eq!((a.index, a.new), (i as u64, true));
    }
    (log, envs)
}

/// Every one-byte change of `bytes` either fails to decode or fails to verify.
fn every_flip_fails(bytes: &[u8], ring: &Keyring) -> usize {
    let mut checked = 0;
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80] {
            let mut t = bytes.to_vec();
            t[i] ^= mask;
            if let Ok(obj) = AuditObject::decode(&t) {
                assert!(
                    obj.verify(ring).is_err(),
                    "flipping bit {mask:#x} of byte {i} still verifies"
                );
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn inclusion_proofs_round_trip_verify_and_fail_on_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let lk = key(50);
    let (log, envs) = envelope_log(dir.path(), &lk, 13);
    let ring = keyring(&[&lk]);
    for size in 1..=13u64 {
        for (i, env) in envs.iter().enumerate().take(size as usize) {
            let p = log.inclusion_proof(&lk, &env.id(), Some(size), TS).unwrap();
            assert_eq!((p.index(), p.size()), (i as u64, size));
            assert_eq!(p.sth().root(), &log.tree().root_at(size).unwrap());
            let bytes = p.encode();
            let back = InclusionProof::decode(&bytes).unwrap();
            assert_eq!(back, p);
            assert_eq!(back.encode(), bytes);
            assert_eq!(
                AuditObject::decode(&bytes).unwrap(),
                AuditObject::Inclusion(p.clone())
            );
            assert_eq!(back.verify(&ring).unwrap(), lk.public_key());
            back.matches(&env.view()).unwrap();
            assert_eq!(back.leaf_bytes(), Leaf::from_envelope(&env.view()).encode());
        }
    }
    let env = &envs[6];
    let p = log.inclusion_proof(&lk, &env.id(), None, TS).unwrap();
    assert_eq!(
        keys_of(&p.encode()),
        ["log", "sth", "leaf", "path", "size", "index"]
    );
    let flips = every_flip_fails(&p.encode(), &ring);
    assert!(flips > 1000);

    // Another envelope is not the leaf's; a forged id is no envelope at all.
    assert_eq!(
        p.matches(&envs[5].view()).unwrap_err(),
        CheckError::Envelope(EnvelopeMismatch::Id)
    );
    let mut forged = env.as_bytes().to_vec();
    let at = forged
        .windows(32)
        .position(|w| w == env.id().as_slice())
        .unwrap();
    forged[at] ^= 1;
    let forged = EnvelopeRef::decode(&forged).unwrap();
    assert_eq!(
        p.matches(&forged).unwrap_err(),
        CheckError::Envelope(EnvelopeMismatch::IdNotBody)
    );

    // A proof checked against a keyring without the log's key.
    assert!(matches!(
        p.verify(&keyring(&[&key(51)])).unwrap_err(),
        CheckError::Sth {
            error: SthError::UnknownLog { .. },
            ..
        }
    ));
    // A proof whose size is not its STH's, re-signed honestly: refused.
    let other = log.signed_tree_head(&lk, Some(12), TS).unwrap();
    let mismatched = InclusionProof::new(6, p.leaf().clone(), p.path().to_vec(), other);
    assert!(mismatched.verify(&ring).is_err());
    // Proof requests the log cannot answer.
    assert!(matches!(
        log.inclusion_proof(&lk, &[9; 32], None, TS).unwrap_err(),
        LogError::UnknownId { .. }
    ));
    assert!(matches!(
        log.inclusion_proof(&lk, &env.id(), Some(3), TS)
            .unwrap_err(),
        LogError::NotInTree { index: 6, size: 3 }
    ));
    assert!(matches!(
        log.inclusion_proof(&lk, &env.id(), Some(14), TS)
            .unwrap_err(),
        LogError::SizeBeyondLog { size: 14, len: 13 }
    ));
    assert!(matches!(
        log.inclusion_proof(&key(51), &env.id(), None, TS)
            .unwrap_err(),
        LogError::Sth(SthError::WrongKey { .. })
    ));
}

#[test]
fn consistency_proofs_verify_and_split_views_are_refuted() {
    let dir = tempfile::tempdir().unwrap();
    let lk = key(60);
    let (log, _) = envelope_log(&dir.path().join("a"), &lk, 11);
    let ring = keyring(&[&lk]);
    for size2 in 1..=11u64 {
        for size1 in 1..=size2 {
            let p = log.consistency_proof(&lk, size1, Some(size2), TS).unwrap();
            let bytes = p.encode();
            let back = ConsistencyProof::decode(&bytes).unwrap();
            assert_eq!(back, p);
            assert_eq!(back.encode(), bytes);
            back.verify(&ring).unwrap();
        }
    }
    assert!(matches!(
        log.consistency_proof(&lk, 0, None, TS).unwrap_err(),
        LogError::Proof(merkle::ProofError::ZeroFirstSize)
    ));
    assert!(log.consistency_proof(&lk, 5, Some(4), TS).is_err());
    let p = log.consistency_proof(&lk, 3, None, TS).unwrap();
    assert_eq!(
        keys_of(&p.encode()),
        ["log", "path", "sth1", "sth2", "size1", "size2"]
    );
    every_flip_fails(&p.encode(), &ring);

    // Split view: the same log key signs a second, diverging tree (the
    // first 3 leaves shared). Each view verifies on its own; no
    // consistency proof joins a head of one to a head of the other.
    let mut fork = Log::create(&dir.path().join("b"), &lk.public_key(), None).unwrap();
    let shared: Vec<Leaf> = (0..3).map(|i| log.leaf(i).unwrap()).collect();
    fork.append_leaves(&shared).unwrap();
    let other: Vec<Leaf> = (0..8)
        .map(|i| Leaf::from_parts([i as u8 + 100; 32], None, [i as u8; 32], T0, None))
        .collect();
    fork.append_leaves(&other).unwrap();
    assert_eq!(fork.len(), 11);
    assert_ne!(fork.tree().root(), log.tree().root());
    let fork_sth = fork.signed_tree_head(&lk, None, TS).unwrap();
    fork_sth.verify(&ring).unwrap();
    for size1 in 1..=10u64 {
        let honest = log.consistency_proof(&lk, size1, None, TS).unwrap();
        let spliced = ConsistencyProof::new(
            honest.path().to_vec(),
            honest.sth1().clone(),
            fork_sth.clone(),
        );
        let fork_path = fork.consistency_proof(&lk, size1, None, TS).unwrap();
        let spliced2 = ConsistencyProof::new(
            fork_path.path().to_vec(),
            honest.sth1().clone(),
            fork_sth.clone(),
        );
        if size1 <= 3 {
            // The shared prefix is consistent with both views.
            spliced2.verify(&ring).unwrap();
        } else {
            assert!(matches!(
                spliced.verify(&ring).unwrap_err(),
                CheckError::Path(_)
            ));
            assert!(matches!(
                spliced2.verify(&ring).unwrap_err(),
                CheckError::Path(_)
            ));
        }
    }

    // Tree heads of two different logs never make a consistency proof.
    let other_key = key(61);
    let (third, _) = envelope_log(&dir.path().join("c"), &other_key, 11);
    let both = keyring(&[&lk, &other_key]);
    let honest = log.consistency_proof(&lk, 4, None, TS).unwrap();
    let foreign = third.signed_tree_head(&other_key, None, TS).unwrap();
    let mixed = ConsistencyProof::new(honest.path().to_vec(), honest.sth1().clone(), foreign);
    assert!(matches!(
        mixed.verify(&both).unwrap_err(),
        CheckError::LogMismatch { which: "sth1", .. }
    ));
}

#[test]
fn audit_objects_are_told_apart() {
    let (a, _) = (key(1), ());
    let s = sth(&a, 0, merkle::empty_root());
    assert_eq!(
        AuditObject::decode(&s.encode()).unwrap(),
        AuditObject::TreeHead(s.clone())
    );
    AuditObject::decode(&s.encode())
        .unwrap()
        .verify(&keyring(&[&a]))
        .unwrap();
    let e = AuditObject::decode(&Value::Map(Map::new()).to_vec()).unwrap_err();
    assert!(
        e.to_string().starts_with("not an audit log object: "),
        "{e}"
    );
    let e = AuditObject::decode(b"\x01").unwrap_err();
    assert!(matches!(e, FormatError::NotAMap { .. }));
}

// ------------------------------------------------------- the file log

#[test]
fn append_is_idempotent_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let lk = key(70);
    let a = key(1);
    let mut log = Log::create(dir.path(), &lk.public_key(), Some(Path::new("/k/log.key"))).unwrap();
    assert!(log.is_empty());
    assert_eq!(log.key_path(), Some(Path::new("/k/log.key")));
    let g = genesis(&a, 0);
    let r = reply(&g, 1).sign(&a).unwrap();
    assert_eq!(log.append(&g.view()).unwrap().index, 0);
    let again = log.append(&g.view()).unwrap();
    assert_eq!((again.index, again.new), (0, false));
    let batch = log
        .append_envelopes(&[r.view(), g.view(), r.view()])
        .unwrap();
    let got: Vec<(u64, bool)> = batch.iter().map(|a| (a.index, a.new)).collect();
    assert_eq!(got, [(1, true), (0, false), (1, false)]);
    // A co-signed copy has the same id, hence the same leaf and index.
    let cosigned = r
        .cosign(&key(3), herald_core::Scope::ConduitReceipt, None)
        .unwrap();
    assert_eq!(cosigned.id(), r.id());
    assert_eq!(log.append(&cosigned.view()).unwrap().index, 1);
    let root = log.tree().root();
    drop(log);

    let mut log = Log::open(dir.path()).unwrap();
    assert!(log.recovery().is_none());
    assert_eq!(log.len(), 2);
    assert_eq!(log.tree().root(), root);
    assert_eq!(log.index_of(&r.id()), Some(1));
    assert_eq!(log.append(&g.view()).unwrap().index, 0);
    assert_eq!(log.append(&r.view()).unwrap().index, 1);
    assert_eq!(log.len(), 2);
    assert_eq!(log.sigil(), lk.sigil(SigilForm::Default));

    // An envelope whose id is not its body's hash is refused, and nothing
    // of the batch is logged.
    let r2 = reply(&r, 2).sign(&a).unwrap();
    let mut forged = r2.as_bytes().to_vec();
    let at = forged
        .windows(32)
        .position(|w| w == r2.id().as_slice())
        .unwrap();
    forged[at] ^= 1;
    let forged = EnvelopeRef::decode(&forged).unwrap();
    let e = log.append_envelopes(&[r2.view(), forged]).unwrap_err();
    assert!(matches!(e, LogError::IdMismatch { position: 1, .. }), "{e}");
    assert_eq!(log.len(), 2);
    // The same id with other contents is a conflict.
    let conflicting = Leaf::from_parts(g.id(), None, [0; 32], T0, None);
    assert!(matches!(
        log.append_leaves(&[conflicting]).unwrap_err(),
        LogError::LeafConflict { index: 0, .. }
    ));
    drop(log);

    // No second log over the first; a directory without one is refused.
    assert!(matches!(
        Log::create(dir.path(), &lk.public_key(), None).unwrap_err(),
        LogError::Exists { .. }
    ));
    let empty = tempfile::tempdir().unwrap();
    let e = Log::open(empty.path()).unwrap_err();
    assert!(matches!(e, LogError::NotALog { .. }), "{e}");
    assert!(e.to_string().contains("log.conf"), "{e}");
}

/// One process at a time: a second open while a `Log` is held is refused
/// at once with `Locked` (naming the leaf file), and succeeds once the
/// first is dropped.
#[test]
fn a_log_held_open_is_refused_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::create(dir.path(), &key(70).public_key(), None).unwrap();
    let started = Instant::now();
    let e = Log::open(dir.path()).unwrap_err();
    assert!(started.elapsed().as_secs() < 5, "open waited for the lock");
    assert!(matches!(e, LogError::Locked { .. }), "{e}");
    assert!(e.to_string().contains(LOG_DATA_FILE), "{e}");
    assert!(e.to_string().contains("another process"), "{e}");
    drop(log);
    assert!(Log::open(dir.path()).unwrap().is_empty());
}

/// `count` leaves of test log number `seed`.
fn leaves(seed: u8, count: u64) -> Vec<Leaf> {
    (0..count)
        .map(|i| {
            let mut id = [seed; 32];
            id[..8].copy_from_slice(&i.to_be_bytes());
            let consent = (i.is_multiple_of(3)).then(|| (key(1).sigil(SigilForm::Default), None));
            Leaf::from_parts(id, (i > 0).then_some([1; 32]), [2; 32], T0 + i, consent)
        })
        .collect()
}

/// A record of the leaf file: length, leaf, sha256(index ‖ leaf).
fn record(index: u64, leaf: &[u8]) -> Vec<u8> {
    let mut out = (leaf.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(leaf);
    let mut h = Sha256::new();
    h.update(index.to_be_bytes());
    h.update(leaf);
    out.extend_from_slice(&h.finalize());
    out
}

fn ten_leaf_log(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let mut log = Log::create(dir, &key(80).public_key(), None).unwrap();
    log.append_leaves(&leaves(3, 10)).unwrap();
    drop(log);
    let path = dir.join(LOG_DATA_FILE);
    let bytes = std::fs::read(&path).unwrap();
    // The documented layout: header block, then the records.
    let mut expected = Vec::new();
    for (i, leaf) in leaves(3, 10).iter().enumerate() {
        expected.extend(record(i as u64, &leaf.encode()));
    }
    assert_eq!(&bytes[HEADER_LEN as usize..], expected.as_slice());
    (path, bytes)
}

fn append_raw(path: &Path, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn a_flipped_byte_in_acknowledged_data_is_an_error_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = ten_leaf_log(dir.path());
    // Record 4 starts after four records; flip a byte inside its leaf.
    let sizes: Vec<u64> = leaves(3, 10)
        .iter()
        .map(|l| l.encode().len() as u64 + 36)
        .collect();
    let start4 = HEADER_LEN + sizes[..4].iter().sum::<u64>();
    for at in [start4 + 10, start4 + 2, start4 + sizes[4] - 1] {
        let mut damaged = bytes.clone();
        damaged[at as usize] ^= 0x40;
        std::fs::write(&path, &damaged).unwrap();
        let e = Log::open(dir.path()).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, LogError::Corrupted { offset, .. } if offset == start4),
            "{text}"
        );
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(&format!("byte {start4}")), "{text}");
    }
    // The last acknowledged record is acknowledged data too.
    let mut damaged = bytes.clone();
    let last = damaged.len() - 5;
    damaged[last] ^= 1;
    std::fs::write(&path, &damaged).unwrap();
    assert!(matches!(
        Log::open(dir.path()).unwrap_err(),
        LogError::Corrupted { .. }
    ));
    // The header.
    let mut damaged = bytes.clone();
    damaged[20] ^= 1;
    std::fs::write(&path, &damaged).unwrap();
    let e = Log::open(dir.path()).unwrap_err();
    assert!(matches!(e, LogError::Corrupted { offset: 16, .. }), "{e}");
    // Acknowledged records cut off: an error, not a recovery.
    std::fs::write(&path, &bytes[..bytes.len() - 40]).unwrap();
    let e = Log::open(dir.path()).unwrap_err();
    assert!(
        e.to_string().contains("acknowledged leaves are missing"),
        "{e}"
    );
    std::fs::write(&path, &bytes[..100]).unwrap();
    assert!(matches!(
        Log::open(dir.path()).unwrap_err(),
        LogError::Corrupted { .. }
    ));
    // Not a leaf file at all.
    std::fs::write(&path, vec![0xa5u8; 5000]).unwrap();
    assert!(matches!(
        Log::open(dir.path()).unwrap_err(),
        LogError::NotALog { .. }
    ));
    // Intact again: opens.
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(Log::open(dir.path()).unwrap().len(), 10);
}

#[test]
fn a_torn_tail_is_recovered_without_losing_acknowledged_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = ten_leaf_log(dir.path());
    let root = Tree::from_leaf_hashes(leaves(3, 10).iter().map(Leaf::hash)).root();
    let next = leaves(3, 12);
    let rec10 = record(10, &next[10].encode());
    let rec11 = record(11, &next[11].encode());
    let end = bytes.len() as u64;

    // A partial record after the last acknowledged one (a crash mid-write).
    for cut in [1, 3, 4, 20, rec10.len() - 1] {
        std::fs::write(&path, &bytes).unwrap();
        append_raw(&path, &rec10[..cut]);
        let log = Log::open(dir.path()).unwrap();
        let r = log.recovery().expect("recovered");
        assert_eq!(
            (r.torn_at, r.torn_bytes, r.adopted),
            (Some(end), cut as u64, 0)
        );
        assert!(r.to_string().contains("unacknowledged"), "{r}");
        assert_eq!(log.len(), 10);
        assert_eq!(log.tree().root(), root);
        drop(log);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), end);
        assert!(Log::open(dir.path()).unwrap().recovery().is_none());
    }

    // A size extension whose data never reached the disk (zeros).
    std::fs::write(&path, &bytes).unwrap();
    append_raw(&path, &[0u8; 4096]);
    let log = Log::open(dir.path()).unwrap();
    assert_eq!(log.recovery().unwrap().torn_bytes, 4096);
    assert_eq!(log.len(), 10);
    drop(log);

    // Complete records written but not acknowledged (killed after the sync,
    // before the header moved): kept, and then a torn one cut.
    std::fs::write(&path, &bytes).unwrap();
    append_raw(&path, &rec10);
    append_raw(&path, &rec11[..rec11.len() / 2]);
    let mut log = Log::open(dir.path()).unwrap();
    let r = log.recovery().unwrap().clone();
    assert_eq!(r.adopted, 1);
    assert_eq!(r.torn_at, Some(end + rec10.len() as u64));
    assert_eq!(log.len(), 11);
    // Appending it again is idempotent: the same index back.
    let again = log.append_leaves(&next[10..]).unwrap();
    assert_eq!(
        again.iter().map(|a| (a.index, a.new)).collect::<Vec<_>>(),
        [(10, false), (11, true)]
    );
    drop(log);
    let log = Log::open(dir.path()).unwrap();
    assert!(log.recovery().is_none());
    assert_eq!(log.len(), 12);
    for (i, leaf) in next.iter().enumerate() {
        assert_eq!(log.index_of(leaf.id()), Some(i as u64));
        assert_eq!(&log.leaf(i as u64).unwrap(), leaf);
    }
    drop(log);

    // A record with the wrong index (a copy of record 9 at position 10) is
    // not a leaf of position 10: cut as unacknowledged.
    std::fs::write(&path, &bytes).unwrap();
    append_raw(&path, &record(9, &next[9].encode()));
    let log = Log::open(dir.path()).unwrap();
    assert_eq!(log.len(), 10);
    assert!(
        log.recovery()
            .unwrap()
            .torn_problem
            .as_deref()
            .unwrap()
            .contains("checksum")
    );
}

#[test]
fn the_leaf_file_reader_reads_bytes_as_open_reads_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = ten_leaf_log(dir.path());
    let scan = |b: &[u8]| scan_leaf_file(b, b.len() as u64, &path);
    let intact = scan(&bytes).unwrap();
    let log = Log::open(dir.path()).unwrap();
    assert_eq!(
        (intact.len(), intact.acknowledged(), intact.end()),
        (10, 10, bytes.len() as u64)
    );
    assert_eq!(intact.tree(), log.tree());
    assert!(!intact.needs_repair() && intact.torn().is_none());
    for (i, leaf) in leaves(3, 10).iter().enumerate() {
        assert_eq!(intact.index_of(leaf.id()), Some(i as u64));
    }
    drop(log);

    // A torn tail after a complete unacknowledged record: reported, not
    // repaired (the bytes are not touched; `open` would cut and adopt).
    let next = leaves(3, 12);
    let rec10 = record(10, &next[10].encode());
    let mut torn = bytes.clone();
    torn.extend_from_slice(&rec10);
    torn.extend_from_slice(&record(11, &next[11].encode())[..7]);
    let s = scan(&torn).unwrap();
    let cut = bytes.len() as u64 + rec10.len() as u64;
    assert_eq!((s.len(), s.acknowledged(), s.end()), (11, 10, cut));
    assert_eq!(s.torn().map(|t| t.0), Some(cut));
    assert!(s.needs_repair());
    std::fs::write(&path, &torn).unwrap();
    let log = Log::open(dir.path()).unwrap();
    let r = log.recovery().unwrap();
    assert_eq!((r.torn_at, r.adopted), (Some(cut), 1));
    assert_eq!(log.tree(), s.tree());
    drop(log);

    // Damaged acknowledged data: the same error as `open`'s.
    let mut damaged = bytes.clone();
    damaged[HEADER_LEN as usize + 50] ^= 1;
    let e = scan(&damaged).unwrap_err();
    assert!(
        matches!(e, LogError::Corrupted { offset, .. } if offset == HEADER_LEN),
        "{e}"
    );
    std::fs::write(&path, &damaged).unwrap();
    assert_eq!(
        Log::open(dir.path()).unwrap_err().to_string(),
        e.to_string()
    );

    // A reader holding fewer bytes than it was said to: an I/O error, not
    // a judgement on the data.
    let e = scan_leaf_file(&bytes[..5000], bytes.len() as u64, &path).unwrap_err();
    assert!(matches!(e, LogError::Io(_)), "{e}");
}

// ------------------------------------------------------- 100 000 leaves

#[test]
fn a_hundred_thousand_leaves() {
    const N: u64 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let lk = key(90);
    let all = leaves(7, N);
    let mut log = Log::create(dir.path(), &lk.public_key(), None).unwrap();

    // A few single appends, each synced before it returns.
    let started = Instant::now();
    for leaf in &all[..100] {
        log.append_leaves(std::slice::from_ref(leaf)).unwrap();
    }
    let single = started.elapsed();
    // The rest in batches of 1000 (one sync each).
    let started = Instant::now();
    for chunk in all[100..].chunks(1000) {
        log.append_leaves(chunk).unwrap();
    }
    let batched = started.elapsed();
    let root = log.tree().root();
    drop(log);
    let file_len = std::fs::metadata(dir.path().join(LOG_DATA_FILE))
        .unwrap()
        .len();

    let started = Instant::now();
    let log = Log::open(dir.path()).unwrap();
    let open = started.elapsed();

    assert_eq!(log.len(), N);
    assert!(log.recovery().is_none());
    assert_eq!(log.tree().root(), root);

    // The tree is built once, by `open`: proofs are answered through `&Log`
    // while this shared borrow of its tree is alive, so none can rebuild it.
    let tree: &Tree = log.tree();
    let ring = keyring(&[&lk]);
    let started = Instant::now();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut proofs = Vec::new();
    for _ in 0..1000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let index = x % N;
        let p = log
            .inclusion_proof(&lk, all[index as usize].id(), None, TS)
            .unwrap();
        assert_eq!(p.index(), index);
        proofs.push(p);
    }
    let prove = started.elapsed();
    assert!(std::ptr::eq(tree, log.tree()));
    assert_eq!(tree.root(), root);
    let started = Instant::now();
    for p in &proofs {
        p.verify(&ring).unwrap();
    }
    let verify = started.elapsed();
    let c = log.consistency_proof(&lk, 65_537, None, TS).unwrap();
    c.verify(&ring).unwrap();
    eprintln!(
        "auditlog 100k: {N} leaves, leaves.dat {file_len} bytes; 100 single appends {single:?} \
         ({:?} each, fsync'd); {} appends in batches of 1000 {batched:?}; open (scan + rebuild) \
         {open:?}; 1000 inclusion proofs {prove:?} ({:?} each, incl. signing the STH); \
         verifying them {verify:?}",
        single / 100,
        N - 100,
        prove / 1000
    );
}

/// The checkpoint's two slots (docs/audit-log.md, "What a local writer
/// cannot do"): a larger head goes over the older slot, a smaller one
/// changes nothing; a spoiled latest slot (a write torn by a crash) leaves
/// the head before; with neither slot valid the log is refused; the first
/// form of the file (one bare head) is read and replaced by two slots.
#[test]
fn the_checkpoint_has_two_slots_and_a_torn_one_leaves_the_head_before() {
    let dir = tempfile::tempdir().unwrap();
    let lk = key(20);
    let path = dir.path().join(LOG_CHECKPOINT_FILE);
    let (log, _) = envelope_log(dir.path(), &lk, 6);
    assert!(!path.exists());
    let three = log.signed_tree_head(&lk, Some(3), TS).unwrap();
    let first = std::fs::read(&path).unwrap();
    assert_eq!(first.len(), 2 * CHECKPOINT_SLOT);
    assert_eq!(first[..2], (three.encode().len() as u16).to_be_bytes());
    assert!(first[CHECKPOINT_SLOT..].iter().all(|b| *b == 0));
    log.signed_tree_head(&lk, Some(5), TS).unwrap();
    let second = std::fs::read(&path).unwrap();
    assert_eq!(
        second[..CHECKPOINT_SLOT],
        first[..CHECKPOINT_SLOT],
        "the older slot is overwritten"
    );
    log.signed_tree_head(&lk, Some(4), TS).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), second);
    drop(log);
    assert_eq!(Log::open(dir.path()).unwrap().signed_size(), 5);

    let mut torn = second.clone();
    torn[CHECKPOINT_SLOT + 40..].fill(0);
    std::fs::write(&path, &torn).unwrap();
    let log = Log::open(dir.path()).unwrap();
    assert_eq!(log.signed_size(), 3);
    // Signing past it again goes over the torn slot.
    log.signed_tree_head(&lk, None, TS).unwrap();
    drop(log);
    assert_eq!(Log::open(dir.path()).unwrap().signed_size(), 6);

    torn[10] ^= 1;
    std::fs::write(&path, &torn).unwrap();
    let err = Log::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("slot 0") && err.contains("slot 1"), "{err}");

    std::fs::write(&path, three.encode()).unwrap();
    let log = Log::open(dir.path()).unwrap();
    assert_eq!(log.signed_size(), 3);
    log.signed_tree_head(&lk, Some(4), TS).unwrap();
    assert_eq!(std::fs::read(&path).unwrap().len(), 2 * CHECKPOINT_SLOT);
    drop(log);
    assert_eq!(Log::open(dir.path()).unwrap().signed_size(), 4);
}
