//! The audit log (PROFILE P9) in C2SP form (`auditlog::c2sp`): a file log's
//! checkpoint is signed by the log key, its tiles carry its P9 leaf bytes
//! and read back to its own proofs, and a tlog-policy covers a P9 tree head
//! only when a checkpoint is that tree, by that log.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use herald_core::SigilForm;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::log::PublishError;
use herald_tlog::note::{Note, NoteError};
use herald_tlog::policy::Policy;
use herald_tlog::tile::TileId;
use herald_tlog::tiles::{FetchError, TileReader};
use herald_verify::LogPolicy;
use herald_verify::{Leaf, Log, TreeHead, policy_covers};
use sha2::{Digest, Sha256};

const ORIGIN: &str = "example.test/herald/log";

fn leaf(i: u64) -> Leaf {
    let id: [u8; 32] = Sha256::digest(i.to_be_bytes()).into();
    let trace: [u8; 32] = Sha256::digest(b"trace").into();
    Leaf::from_parts(id, None, trace, 1_700_000_000 + i, None)
}

fn log_with(dir: &std::path::Path, n: u64) -> Log {
    let key = herald_testkit::key(1);
    let mut log = Log::create(dir, &key.public_key(), None).unwrap();
    let leaves: Vec<Leaf> = (0..n).map(leaf).collect();
    log.append_leaves(&leaves).unwrap();
    log
}

#[test]
fn a_file_log_exports_its_leaves_as_tiles_under_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let n = 300u64;
    let log = log_with(dir.path(), n);
    let key = herald_testkit::key(1);
    assert!(matches!(
        herald_tlog::log::checkpoint(&log, ORIGIN, &herald_testkit::key(2)),
        Err(PublishError::WrongKey)
    ));
    let cp = herald_tlog::log::checkpoint(&log, ORIGIN, &key).unwrap();
    assert_eq!(cp.checkpoint().size(), n);
    assert_eq!(*cp.checkpoint().root(), log.tree().root());
    let written = herald_tlog::log::export(&log, out.path(), Some(&cp)).unwrap();
    // 1 full + 1 partial level-0 tile, as many entry bundles, 1 level-1.
    assert_eq!(written, 5);

    let root = out.path().to_path_buf();
    let fetch = move |path: &str| {
        std::fs::read(root.join(path)).map_err(|e| FetchError {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    };
    let text = std::fs::read(out.path().join("checkpoint")).unwrap();
    let vkey = herald_tlog::log::verifier_key(&log, ORIGIN).unwrap();
    assert_eq!(vkey.public_key().as_bytes(), log.public_key().as_bytes());
    let (signed, _) = SignedCheckpoint::open(&text, &[vkey]).unwrap();
    let reader = TileReader::new(&fetch, signed.checkpoint()).unwrap();
    for bundle in 0..2 {
        for (k, entry) in reader.entries(bundle).unwrap().iter().enumerate() {
            let i = bundle * 256 + k as u64;
            assert_eq!(entry, &log.leaf_bytes(i).unwrap());
            assert_eq!(entry, &leaf(i).encode());
        }
    }
    for id in TileId::all_for_size(n) {
        let served = herald_tlog::log::tile(&log, &id.path()).unwrap().unwrap();
        assert_eq!(served, std::fs::read(out.path().join(id.path())).unwrap());
    }
    for index in [0, 255, 256, 299] {
        assert_eq!(
            reader.inclusion_proof(index).unwrap(),
            log.tree().inclusion_proof(index, n).unwrap()
        );
    }
}

/// A P9 signed tree head's message is never a note, so the log key may
/// sign both (herald-tlog's crate documentation): the STH message is not
/// UTF-8 text.
#[test]
fn an_sth_message_is_never_a_note() {
    let key = herald_testkit::key(3);
    let sth = TreeHead::new(key.sigil(SigilForm::Default), 5, [1; 32], 1_746_432_000);
    let message = sth.signed_message();
    assert!(message.starts_with(herald_core::STH_TAG));
    assert!(matches!(
        Note::parse(&message),
        Err(NoteError::NotUtf8 { .. } | NoteError::ControlCharacter { .. })
    ));
}

#[test]
fn a_policy_covers_a_tree_head_only_with_its_own_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_with(dir.path(), 7);
    let key = herald_testkit::key(1);
    let vkey = herald_tlog::log::verifier_key(&log, ORIGIN).unwrap();
    let policy = Policy::parse(format!("log {vkey}\nquorum none\n").as_bytes()).unwrap();
    let cp = herald_tlog::log::checkpoint(&log, ORIGIN, &key)
        .unwrap()
        .note()
        .to_text()
        .into_bytes();
    let head = log.tree_head(None, 1_746_432_000).unwrap();
    assert_eq!(
        policy_covers(&policy, &cp, &head).unwrap(),
        "the policy needs no cosignature"
    );
    assert_eq!(
        LogPolicy::covers(&policy, &head, &[&b"junk"[..], &cp[..]]).unwrap(),
        "the policy needs no cosignature"
    );

    // Another size of the same log: not this tree head.
    let older = log.tree_head(Some(6), 1_746_432_000).unwrap();
    let err = policy_covers(&policy, &cp, &older).unwrap_err();
    assert!(err.starts_with("checkpoint of size 7 root "), "{err}");
    // A tree head of another log: not signed by its key.
    let other = TreeHead::new(
        herald_testkit::key(2).sigil(SigilForm::Default),
        7,
        log.tree().root(),
        1_746_432_000,
    );
    let err = policy_covers(&policy, &cp, &other).unwrap_err();
    assert!(
        err.starts_with("checkpoint not signed by the key of log "),
        "{err}"
    );
    assert_eq!(
        LogPolicy::covers(&policy, &head, &[]).unwrap_err(),
        "the bundle carries no checkpoint (herald bundle --checkpoint)"
    );
}
