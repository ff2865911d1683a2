//! Stable-toolchain replay of the herald-verify fuzz targets
//! (docs/fuzzing.md).
//!
//! The target bodies are `fuzz/src/verify_targets/`, compiled here with
//! `#[path]` (one copy, shared with the libFuzzer binaries). Each test runs
//! one body over every file of `fuzz/corpus/<target>/`, of
//! `fuzz/regressions/<target>/` (committed reproducers) and of any local
//! `fuzz/artifacts/<target>/crash-*`, and asserts none panics.
//!
//! `log_file_open_agrees_with_the_scan` also opens every `log_file` input
//! as a real log directory and compares `Log::open` with the in-memory
//! reader the target fuzzes.
//!
//! `seeds` builds the seed inputs (envelope sequences, keyring lines, the
//! Merkle vectors in the `merkle_proof` layout, leaf files written by
//! `Log`). With `HERALD_WRITE_SEEDS=1` it writes them as
//! `fuzz/corpus/<target>/seed-*`; otherwise it checks that they are there.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[allow(unreachable_pub, dead_code)]
#[path = "../../fuzz/src/verify_targets/mod.rs"]
mod targets;

use std::fs;
use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use herald_core::attestation::birth_attestation;
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, Scope, SigilForm, SigningKey};
use herald_verify::{
    LOG_DATA_FILE, Leaf, Log, LogError,
    internal::{HEADER_LEN, scan_leaf_file},
    key_line,
};
use serde_json::Value as Json;
use sha2::Digest;

use herald_testkit::T0 as TS;
use herald_testkit::corpus::{self, files, fuzz_dir};

/// Run `body` over `target`'s corpus, regressions and crash artifacts.
fn replay(target: &str, body: fn(&[u8])) {
    corpus::replay(
        target,
        "HERALD_WRITE_SEEDS=1 cargo test -p herald-verify --test fuzz_replay seeds",
        body,
    );
}

#[test]
fn replay_trace_audit() {
    replay("trace_audit", targets::trace_audit);
}

#[test]
fn replay_keyring_parse() {
    replay("keyring_parse", targets::keyring_parse);
}

#[test]
fn replay_merkle_proof() {
    replay("merkle_proof", targets::merkle_proof);
}

#[test]
fn replay_sequence_split() {
    replay("sequence_split", targets::sequence_split);
}

#[test]
fn replay_bundle_verify() {
    replay("bundle_verify", targets::bundle_verify);
}

/// The bundle seeds reach both verdicts: the proven molt lets the new key
/// speak (every envelope and the proof valid), one flipped proof byte loses
/// the proof and leaves the new key `molt_unproven`.
#[test]
fn bundle_seeds_reach_both_verdicts() {
    let run = |name: &str| {
        let bytes = fs::read(fuzz_dir().join("corpus/bundle_verify").join(name)).unwrap();
        let opts = herald_verify::AuditOptions {
            now: Some(targets::NOW),
            ..herald_verify::AuditOptions::default()
        };
        let input = herald_verify::Input {
            name: name.into(),
            bytes,
        };
        herald_verify::audit(&[input], targets::fuzz_keyring(), &opts)
    };
    let proven = run("seed-molt-proven");
    assert!(
        proven.all_valid(),
        "{}",
        serde_json::to_string(&proven).unwrap()
    );
    assert_eq!(proven.proofs.len(), 1);
    let flipped = run("seed-proof-flipped");
    assert_eq!(flipped.proofs[0].status, herald_core::Status::Invalid);
    assert!(flipped.envelopes[2].has(herald_core::ReasonCode::MoltUnproven));
}

#[test]
fn replay_proof_object() {
    replay("proof_object", targets::proof_object);
}

/// The generator's `proof_object` seeds reach the verified branches: every
/// `seed-log-*` object verifies under the target's pinned key, every
/// `seed-bad-*` decodes but does not; of the conformance cases, exactly the
/// ones the manifest calls valid verify (none of them needs another key
/// than `log`; the envelope match is not part of the target).
#[test]
fn proof_object_seeds_reach_both_verdicts() {
    let (_, ring) = targets::proof_keyring();
    let valid: std::collections::HashMap<String, bool> = conformance_proof_cases()
        .into_iter()
        .map(|(name, _, _, valid)| (name, valid))
        .collect();
    let mut counts = [0usize; 3];
    for (name, bytes) in proof_objects() {
        let object = herald_verify::AuditObject::decode(&bytes[1..]);
        let verified = object.as_ref().map(|o| o.verify(ring).is_ok());
        if name.starts_with("log-") {
            assert_eq!(verified, Ok(true), "{name}");
            counts[0] += 1;
        } else if name.starts_with("bad-") {
            assert_eq!(verified, Ok(false), "{name}");
            counts[1] += 1;
        } else if let Some(case) = name.strip_prefix("conformance-") {
            // `matches` (the envelope) is not part of the target: a case
            // that fails only there is a proof that verifies.
            if valid[case] {
                assert_eq!(verified, Ok(true), "{name}");
            }
            counts[2] += 1;
        }
    }
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
}

#[test]
fn replay_log_file() {
    replay("log_file", targets::log_file);
}

/// The `log_file` target reads leaf files in memory with `scan_leaf_file`
/// and models `Log::open`'s repair itself (`log_file_repaired`). Here every
/// corpus and regression input is also opened for real, in a log
/// directory: `open` must accept or refuse it exactly as the scan did (the
/// same error), keep the same leaves and tree, report the recovery the scan
/// predicts, leave on disk exactly the modelled repaired file, and reopen
/// without a repair. Each seed has the outcome its name says.
#[test]
fn log_file_open_agrees_with_the_scan() {
    let root = fuzz_dir();
    let mut inputs = files(&root.join("corpus/log_file"), "");
    inputs.extend(files(&root.join("regressions/log_file"), ""));
    let dir = tempfile::tempdir().unwrap();
    drop(Log::create(dir.path(), &key(0x55).public_key(), None).unwrap());
    let data_path = dir.path().join(LOG_DATA_FILE);
    let expected = [
        ("seed-empty", "intact"),
        ("seed-minimal", "intact"),
        ("seed-consent", "intact"),
        ("seed-raw-consent", "intact"),
        ("seed-unacknowledged", "adopted"),
        ("seed-torn-tail", "adopted and torn"),
        ("seed-flipped-checksum-tail", "adopted and torn"),
        ("seed-zeros-tail", "torn"),
        ("seed-duplicate-id", "torn"),
        ("seed-not-a-leaf", "torn"),
        ("seed-truncated-acknowledged", "corrupted"),
        ("seed-flipped-checksum", "corrupted"),
        ("seed-bad-header-checksum", "corrupted"),
        ("seed-end-inside-header", "corrupted"),
        ("seed-count-mismatch", "corrupted"),
        ("seed-duplicate-id-acknowledged", "corrupted"),
        ("seed-short", "corrupted"),
        ("seed-bad-magic", "not a log"),
    ];
    let mut seen = std::collections::BTreeMap::new();
    for input in &inputs {
        let bytes = targets::log_file_bytes(&fs::read(input).unwrap());
        fs::write(&data_path, &bytes).unwrap();
        let scan = scan_leaf_file(bytes.as_slice(), bytes.len() as u64, &data_path);
        let opened = Log::open(dir.path());
        let name = input.display();
        let outcome = match (&scan, opened) {
            (Ok(scan), Ok(log)) => {
                assert_eq!(log.len(), scan.len(), "{name}");
                assert_eq!(log.tree(), scan.tree(), "{name}");
                let outcome = match log.recovery() {
                    None => {
                        assert!(!scan.needs_repair(), "{name}");
                        "intact"
                    }
                    Some(r) => {
                        assert!(scan.needs_repair(), "{name}");
                        assert_eq!(r.adopted, scan.len() - scan.acknowledged(), "{name}");
                        assert_eq!(r.torn_at, scan.torn().map(|t| t.0), "{name}");
                        assert_eq!(r.torn_problem.as_deref(), scan.torn().map(|t| t.1));
                        assert_eq!(r.torn_bytes, bytes.len() as u64 - scan.end(), "{name}");
                        match (r.adopted > 0, r.torn_at.is_some()) {
                            (true, true) => "adopted and torn",
                            (true, false) => "adopted",
                            _ => "torn",
                        }
                    }
                };
                drop(log);
                assert_eq!(
                    fs::read(&data_path).unwrap(),
                    targets::log_file_repaired(&bytes, scan),
                    "{name}: open left what the target models"
                );
                let again = Log::open(dir.path()).unwrap();
                assert!(again.recovery().is_none(), "{name}");
                assert_eq!(again.tree(), scan.tree(), "{name}");
                outcome
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "{name}");
                match b {
                    LogError::NotALog { .. } => "not a log",
                    _ => "corrupted",
                }
            }
            (a, b) => panic!("{name}: scan {a:?}, open {b:?}"),
        };
        let file_name = input.file_name().unwrap().to_str().unwrap().to_string();
        seen.insert(file_name, outcome);
    }
    for (seed, outcome) in expected {
        assert_eq!(seen.get(seed), Some(&outcome), "{seed}");
    }
}

// ---- seeds ----------------------------------------------------------------

fn key(seed: u8) -> SigningKey {
    SigningKey::from_seed(&[seed; 32])
}

fn nonce(n: u8) -> Nonce {
    Nonce([n; 16])
}

fn cat(parts: &[&Envelope]) -> Vec<u8> {
    parts.iter().flat_map(|e| e.as_bytes().to_vec()).collect()
}

/// CBOR sequences of envelopes: a chain, a fork, a birth and its child, a
/// replayed nonce, a missing parent, garbage after valid items.
fn sequences() -> Vec<(String, Vec<u8>)> {
    let (a, b, c) = (key(0x11), key(0x22), key(0x33));
    let g = EnvelopeBuilder::genesis(TS)
        .nonce(nonce(1))
        .payload(Value::text("hello"))
        .sign(&a)
        .unwrap();
    let r1 = EnvelopeBuilder::reply(&g.view(), TS + 1)
        .nonce(nonce(2))
        .sign(&b)
        .unwrap()
        .cosign(&a, Scope::ConduitReceipt, Some(TS + 2))
        .unwrap();
    let r2 = EnvelopeBuilder::reply(&r1.view(), TS + 3)
        .nonce(nonce(3))
        .expires(TS + 600)
        .sign(&a)
        .unwrap();
    let fork = EnvelopeBuilder::reply(&g.view(), TS + 4)
        .nonce(nonce(4))
        .sign(&b)
        .unwrap();
    let birth = EnvelopeBuilder::genesis(TS)
        .kind(Kind::Birth)
        .nonce(nonce(5))
        .attest(
            "birth",
            birth_attestation(&c.public_key(), "carol", &[a.sigil(SigilForm::Default)]),
        )
        .sign(&c)
        .unwrap();
    let child = EnvelopeBuilder::reply(&birth.view(), TS + 5)
        .nonce(nonce(6))
        .from_form(SigilForm::Long)
        .sign(&c)
        .unwrap();
    let replayed = EnvelopeBuilder::reply(&g.view(), TS + 6)
        .nonce(nonce(2))
        .sign(&b)
        .unwrap();
    let orphan = EnvelopeBuilder::reply_to([7; 32], [8; 32], TS)
        .nonce(nonce(7))
        .sign(&a)
        .unwrap();
    let mut tail = cat(&[&g, &r1]);
    tail.extend_from_slice(&[0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0]);
    let mut flipped = cat(&[&g, &r1]);
    let at = g.as_bytes().len() + 40;
    flipped[at] ^= 0x80;
    vec![
        ("single".into(), cat(&[&g])),
        ("chain".into(), cat(&[&g, &r1, &r2])),
        ("fork".into(), cat(&[&g, &r1, &fork, &r2])),
        ("birth".into(), cat(&[&birth, &child])),
        ("replay".into(), cat(&[&g, &r1, &replayed, &r1])),
        ("orphan".into(), cat(&[&orphan, &r2])),
        ("garbage-tail".into(), tail),
        ("flipped".into(), flipped),
        ("zeros".into(), vec![0; 16]),
        (
            "indefinite".into(),
            vec![0x9f, 0x01, 0xbf, 0x61, 0x61, 0x02, 0xff, 0xff, 0x00],
        ),
        (
            "tagged".into(),
            vec![0xc1, 0x1a, 0x68, 0x18, 0x6e, 0x00, 0xd8, 0x18, 0x41, 0x00],
        ),
    ]
}

fn keyrings() -> Vec<(String, Vec<u8>)> {
    let (a, b) = (key(0x11).public_key(), key(0x22).public_key());
    let la = key_line(&a);
    let lb = key_line(&b);
    let long = format!(
        "{} ed25519 {}",
        a.sigil(SigilForm::Long),
        la.rsplit(' ').next().unwrap()
    );
    let mismatch = format!(
        "{} ed25519 {}",
        b.sigil(SigilForm::Default),
        la.rsplit(' ').next().unwrap()
    );
    let texts = [
        ("two", format!("# pinned\n{la}\n\n{lb}\n")),
        ("long-form", format!("{long}\r\n   {lb}   \n")),
        ("duplicate", format!("{la}\n{la}\n")),
        ("mismatch", format!("{mismatch}\n")),
        ("upper-hex", la.to_uppercase().replace("SIGIL:", "sigil:")),
        ("reserved", "sigil:none ed25519 00\n".into()),
        ("not-ed25519", la.replace("ed25519", "x25519")),
        (
            "small-order",
            format!(
                "{} ed25519 {}\n",
                a.sigil(SigilForm::Default),
                "00".repeat(32)
            ),
        ),
        ("extra-field", format!("{la} extra\n")),
    ];
    texts
        .into_iter()
        .map(|(n, t)| (n.to_string(), t.into_bytes()))
        .collect()
}

fn b64(v: &Json) -> Vec<u8> {
    BASE64.decode(v.as_str().unwrap().as_bytes()).unwrap()
}

fn b64_list(v: &Json) -> Vec<Vec<u8>> {
    v.as_array()
        .map(|a| a.iter().map(b64).collect())
        .unwrap_or_default()
}

/// One `merkle_proof` input: mode, two u64 (LE), then 32-byte hashes.
fn merkle_input(mode: u8, a: u64, b: u64, hashes: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![mode];
    out.extend_from_slice(&a.to_le_bytes());
    out.extend_from_slice(&b.to_le_bytes());
    for h in hashes {
        out.extend_from_slice(h);
    }
    out
}

/// The Merkle vectors (vectors/external, README section 5) in the
/// `merkle_proof` layout: rgdd/CCTV's valid sets and the
/// transparency-dev happy paths, plus own-tree round trips.
fn merkle_seeds() -> Vec<(String, Vec<u8>)> {
    let ext = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/external");
    let read = |p: PathBuf| -> Json { serde_json::from_slice(&fs::read(p).unwrap()).unwrap() };
    let mut out = Vec::new();
    let inc = read(ext.join("merkle-cctv-rgdd/inclusion-valid.json"));
    for (i, t) in inc.as_array().unwrap().iter().enumerate().take(8) {
        let mut hashes = vec![b64(&t["leaf_hash"]), b64(&t["root_hash"])];
        hashes.extend(b64_list(&t["inclusion_path"]));
        let (index, size) = (
            t["leaf_index"].as_u64().unwrap(),
            t["tree_size"].as_u64().unwrap(),
        );
        out.push((
            format!("rgdd-inclusion-{i}"),
            merkle_input(0, index, size, &hashes),
        ));
    }
    let cons = read(ext.join("merkle-cctv-rgdd/consistency-valid.json"));
    for (i, t) in cons.as_array().unwrap().iter().enumerate().take(12) {
        let mut hashes = vec![b64(&t["old_root"]), b64(&t["new_root"])];
        hashes.extend(b64_list(&t["consistency_path"]));
        let (s1, s2) = (
            t["old_size"].as_u64().unwrap(),
            t["new_size"].as_u64().unwrap(),
        );
        out.push((
            format!("rgdd-consistency-{i}"),
            merkle_input(1, s1, s2, &hashes),
        ));
    }
    let td = ext.join("merkle-transparency-dev");
    for sub in ["1", "2", "3", "4"] {
        let dir = td.join("inclusion").join(sub);
        if let Some(p) = files(&dir, "happy-path").first() {
            let t = read(p.clone());
            let mut hashes = vec![b64(&t["leafHash"]), b64(&t["root"])];
            hashes.extend(b64_list(&t["proof"]));
            let (i, n) = (
                t["leafIdx"].as_u64().unwrap(),
                t["treeSize"].as_u64().unwrap(),
            );
            out.push((
                format!("td-inclusion-{sub}"),
                merkle_input(0, i, n, &hashes),
            ));
        }
        let dir = td.join("consistency").join(sub);
        if let Some(p) = files(&dir, "happy-path").first() {
            let t = read(p.clone());
            let mut hashes = vec![b64(&t["root1"]), b64(&t["root2"])];
            hashes.extend(b64_list(&t["proof"]));
            let (s1, s2) = (t["size1"].as_u64().unwrap(), t["size2"].as_u64().unwrap());
            out.push((
                format!("td-consistency-{sub}"),
                merkle_input(1, s1, s2, &hashes),
            ));
        }
    }
    // Own-tree round trips (mode bit 3), small sizes (bit 2), odd hash lengths (bit 1).
    out.push((
        "own-tree".into(),
        merkle_input(0x0c | 0x50, 37 | (5 << 16), 29 | (3 << 16), &[]),
    ));
    out.push((
        "own-tree-consistency".into(),
        merkle_input(0x0d, 299, 1 << 20, &[]),
    ));
    out.push(("odd-lengths".into(), {
        let mut v = merkle_input(0x06, 3, 7, &[]);
        v.extend_from_slice(&[31, 1, 2, 3]);
        v.extend_from_slice(&[32; 33]);
        v
    }));
    out.push((
        "max-sizes".into(),
        merkle_input(0, u64::MAX - 1, u64::MAX, &vec![vec![0; 32]; 66]),
    ));
    out
}

/// The leaves of the seed logs: a chain of `n` genesis-and-replies, every
/// third one without consent (minimal), the others with `from` and `ts`,
/// every third with a `to` as well; or all minimal.
fn log_leaves(n: u8, consent: bool) -> Vec<Leaf> {
    let (a, b) = (key(0x11), key(0x22));
    (0..n)
        .map(|i| {
            let id = [0x40 + i; 32];
            let parent = (i > 0).then_some([0x40 + i - 1; 32]);
            let metadata = match i % 3 {
                _ if !consent => None,
                0 => None,
                1 => Some((a.sigil(SigilForm::Default), None)),
                _ => Some((a.sigil(SigilForm::Default), Some(b.sigil(SigilForm::Short)))),
            };
            Leaf::from_parts(id, parent, [0x40; 32], TS + 1000 * u64::from(i), metadata)
        })
        .collect()
}

/// `leaves.dat` of a new log, then after appending each batch in turn, as
/// `Log` writes it.
fn log_snapshots(batches: &[&[Leaf]]) -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(dir.path(), &key(0x55).public_key(), None).unwrap();
    let path = log.data_path().to_path_buf();
    let mut out = vec![fs::read(&path).unwrap()];
    for batch in batches {
        log.append_leaves(batch).unwrap();
        out.push(fs::read(&path).unwrap());
    }
    out
}

/// A `log_file` input in compact mode (mode bits as given, bit 0 set): the
/// header's mark, then the records.
fn compact(mode: u8, file: &[u8]) -> Vec<u8> {
    let mut out = vec![mode | 1];
    out.extend_from_slice(&file[..64]);
    out.extend_from_slice(&file[HEADER_LEN as usize..]);
    out
}

/// A `log_file` input in raw mode: the file as it is.
fn raw(file: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(file);
    out
}

/// `file` with its header's acknowledged end and count replaced (the
/// checksum is left stale: seal it with mode bit 1).
fn with_mark(file: &[u8], end: u64, count: u64) -> Vec<u8> {
    let mut out = file.to_vec();
    out[16..24].copy_from_slice(&end.to_be_bytes());
    out[24..32].copy_from_slice(&count.to_be_bytes());
    out
}

/// A record as the file holds it: length, leaf, sha256(index ‖ leaf).
fn log_record(index: u64, leaf: &[u8]) -> Vec<u8> {
    let mut out = (leaf.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(leaf);
    out.extend_from_slice(&sha2::Sha256::digest(
        [&index.to_be_bytes()[..], leaf].concat(),
    ));
    out
}

/// Leaf files for `log_file`: intact logs (empty, minimal leaves, leaves
/// with consent metadata), complete unacknowledged records, torn tails,
/// zeros after the last record, truncated acknowledged data, flipped
/// checksum bytes (acknowledged and not), bad headers, a repeated id and a
/// record that is not a leaf (with sealed checksums), a file shorter than
/// its header.
fn log_files() -> Vec<(String, Vec<u8>)> {
    let mixed = log_leaves(5, true);
    let minimal = log_leaves(3, false);
    let snaps = log_snapshots(&[&mixed[..2], &mixed[2..]]);
    let (empty, two, five) = (&snaps[0], &snaps[1], &snaps[2]);
    let minimal_file = log_snapshots(&[&minimal]).pop().unwrap();
    let sizes: Vec<usize> = mixed.iter().map(|l| l.encode().len() + 36).collect();
    let start = |i: usize| HEADER_LEN as usize + sizes[..i].iter().sum::<usize>();

    // The header of two leaves over the records of five: three complete,
    // unacknowledged records.
    let mut unacknowledged = five.clone();
    unacknowledged[..64].copy_from_slice(&two[..64]);
    let torn = unacknowledged[..unacknowledged.len() - 20].to_vec();
    let mut flipped_tail = unacknowledged.clone();
    flipped_tail[start(4) - 1] ^= 0x01;
    let mut flipped = five.clone();
    flipped[start(2) - 1] ^= 0x01;
    let mut zeros = five.clone();
    zeros.extend_from_slice(&[0; 100]);
    let mut bad_magic = five.clone();
    bad_magic[0] = b'H';
    let mut bad_check = five.clone();
    bad_check[40] ^= 0x80;
    // Record 5 repeats record 0's leaf (checksum for position 5).
    let mut duplicate = five.clone();
    duplicate.extend(log_record(5, &mixed[0].encode()));
    let duplicate_acknowledged = with_mark(&duplicate, duplicate.len() as u64, 6);
    let mut not_a_leaf = five.clone();
    not_a_leaf.extend(log_record(5, &[0xa0]));
    let end = five.len() as u64;
    vec![
        ("empty".into(), compact(0, empty)),
        ("minimal".into(), compact(0, &minimal_file)),
        ("consent".into(), compact(0, five)),
        ("raw-consent".into(), raw(five)),
        ("unacknowledged".into(), compact(0, &unacknowledged)),
        ("torn-tail".into(), compact(0, &torn)),
        ("flipped-checksum-tail".into(), compact(0, &flipped_tail)),
        ("zeros-tail".into(), compact(0, &zeros)),
        (
            "truncated-acknowledged".into(),
            compact(0, &five[..five.len() - 10]),
        ),
        ("flipped-checksum".into(), compact(0, &flipped)),
        ("bad-magic".into(), compact(0, &bad_magic)),
        ("bad-header-checksum".into(), compact(0, &bad_check)),
        (
            "end-inside-header".into(),
            compact(2, &with_mark(five, 100, 0)),
        ),
        (
            "count-mismatch".into(),
            compact(2, &with_mark(five, end, 4)),
        ),
        ("duplicate-id".into(), compact(4, &duplicate)),
        (
            "duplicate-id-acknowledged".into(),
            compact(6, &duplicate_acknowledged),
        ),
        ("not-a-leaf".into(), compact(4, &not_a_leaf)),
        ("short".into(), raw(&five[..100])),
    ]
}

/// Proof bundles: a molt proven in a log keyed by Bob's (pinned) key, the
/// same with a flipped proof byte, with keys, without proofs; containers
/// that are not in the format (each error once), and a bad envelope inside.
fn bundles() -> Vec<(String, Vec<u8>)> {
    let (alice, next, bob) = (key(0x11), key(0x55), key(0x22));
    // Days before the target's clock (TS + 1 h), so nothing is future_ts.
    let day = 86_400;
    let birth = EnvelopeBuilder::genesis(TS - 3 * day)
        .kind(Kind::Birth)
        .nonce(nonce(20))
        .attest(
            "birth",
            birth_attestation(&alice.public_key(), "alice", &[]),
        )
        .sign(&alice)
        .unwrap();
    let mut payload = herald_core::cbor::Map::new();
    payload.insert(
        "new_key",
        Value::Bytes(next.public_key().as_bytes().to_vec()),
    );
    payload.insert("not_before", Value::Unsigned(TS - day));
    let molt = EnvelopeBuilder::reply(&birth.view(), TS - 2 * day)
        .kind(Kind::Molt)
        .nonce(nonce(21))
        .payload(Value::Map(payload))
        .sign(&alice)
        .unwrap();
    let after = EnvelopeBuilder::reply(&molt.view(), TS)
        .from_sigil(alice.sigil(SigilForm::Default))
        .nonce(nonce(22))
        .payload(Value::text("new key"))
        .sign(&next)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(dir.path(), &bob.public_key(), None).unwrap();
    log.append_envelopes(&[birth.view(), molt.view()]).unwrap();
    let proof = log
        .inclusion_proof(&bob, &molt.id(), None, TS - day)
        .unwrap()
        .encode();
    let mut flipped = proof.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x01;
    let envs = [birth.as_bytes(), molt.as_bytes(), after.as_bytes()];
    let with = |fields: &[(&str, Value)]| {
        let mut m = herald_core::cbor::Map::new();
        m.insert("format", Value::text(herald_verify::BUNDLE_FORMAT));
        m.insert(
            "envelopes",
            Value::Array(vec![Value::Bytes(birth.as_bytes().to_vec())]),
        );
        m.insert("proofs", Value::Array(Vec::new()));
        for (k, v) in fields {
            m.insert(*k, v.clone());
        }
        Value::Map(m).to_vec()
    };
    let mut truncated = birth.as_bytes().to_vec();
    truncated.truncate(truncated.len() / 2);
    vec![
        (
            "molt-proven".into(),
            herald_verify::encode_bundle(&envs, &[&proof], &[]),
        ),
        (
            "proof-flipped".into(),
            herald_verify::encode_bundle(&envs, &[&flipped], &[]),
        ),
        (
            "keys".into(),
            herald_verify::encode_bundle(
                &envs,
                &[&proof],
                &[next.public_key(), key(0x33).public_key()],
            ),
        ),
        (
            "no-proofs".into(),
            herald_verify::encode_bundle(&envs, &[], &[]),
        ),
        ("minimal".into(), with(&[])),
        (
            "bad-format".into(),
            with(&[("format", Value::text("herald-bundle-v0"))]),
        ),
        ("unknown-field".into(), with(&[("extra", Value::Null)])),
        (
            "no-envelopes".into(),
            with(&[("envelopes", Value::Array(Vec::new()))]),
        ),
        (
            "not-bytes".into(),
            with(&[("proofs", Value::Array(vec![Value::Null]))]),
        ),
        (
            "bad-key".into(),
            with(&[(
                "keys",
                Value::Array(vec![Value::text("sigil:none ed25519 00")]),
            )]),
        ),
        (
            "truncated-envelope".into(),
            herald_verify::encode_bundle(&[&truncated, after.as_bytes()], &[b"x"], &[]),
        ),
    ]
}

/// The `proof` cases of vectors/conformance (vectors/README.md): name,
/// `proof_object` kind byte (0 inclusion, 1 consistency), the object's
/// bytes, and whether the manifest calls the case valid.
fn conformance_proof_cases() -> Vec<(String, u8, Vec<u8>, bool)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance");
    let manifest: Json =
        serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    manifest["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "proof")
        .map(|c| {
            let kind = match c["object"].as_str().unwrap() {
                "inclusion" => 0,
                "consistency" => 1,
                other => panic!("unknown proof object {other}"),
            };
            (
                c["name"].as_str().unwrap().to_string(),
                kind,
                fs::read(dir.join(c["input"].as_str().unwrap())).unwrap(),
                c["expect"]["valid"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// `proof_object` inputs (kind byte, then the object): from a real `Log`
/// of seven leaves keyed by the target's pinned key (the conformance `log`
/// key), inclusion proofs at several indexes and sizes, consistency proofs
/// (equal sizes included), signed tree heads (the empty tree, a long-form
/// `log` sigil), a few as kind 3 (told apart by their keys); objects that
/// decode but do not verify (a flipped path hash, a flipped signature, an
/// index past the size, another key's head); and the conformance `proof`
/// cases.
fn proof_objects() -> Vec<(String, Vec<u8>)> {
    let lk = SigningKey::from_seed(&targets::proof_log_seed());
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(dir.path(), &lk.public_key(), None).unwrap();
    let leaves = log_leaves(7, true);
    log.append_leaves(&leaves).unwrap();
    let with = |kind: u8, bytes: Vec<u8>| {
        let mut out = vec![kind];
        out.extend(bytes);
        out
    };
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    for (index, size) in [(0, 1), (0, 7), (3, 7), (6, 7), (4, 5), (2, 4)] {
        let id = *leaves[index as usize].id();
        let p = log.inclusion_proof(&lk, &id, Some(size), TS).unwrap();
        out.push((
            format!("log-inclusion-{index}-of-{size}"),
            with(0, p.encode()),
        ));
    }
    for (size1, size2) in [(1, 7), (3, 7), (4, 7), (7, 7), (2, 5), (1, 1)] {
        let p = log.consistency_proof(&lk, size1, Some(size2), TS).unwrap();
        out.push((
            format!("log-consistency-{size1}-to-{size2}"),
            with(1, p.encode()),
        ));
    }
    for size in [0, 1, 7] {
        let sth = log.signed_tree_head(&lk, Some(size), TS).unwrap();
        out.push((format!("log-sth-{size}"), with(2, sth.encode())));
    }
    let long = herald_verify::TreeHead::new(lk.sigil(SigilForm::Long), 7, log.tree().root(), TS)
        .sign(&lk)
        .unwrap();
    out.push(("log-sth-long-sigil".into(), with(2, long.encode())));
    let inclusion = log
        .inclusion_proof(&lk, leaves[5].id(), None, TS)
        .unwrap()
        .encode();
    let consistency = log.consistency_proof(&lk, 3, None, TS).unwrap().encode();
    let sth = log.signed_tree_head(&lk, None, TS).unwrap();
    out.push(("log-any-inclusion".into(), with(3, inclusion.clone())));
    out.push(("log-any-consistency".into(), with(3, consistency.clone())));
    out.push(("log-any-sth".into(), with(3, sth.encode())));

    // Decode, do not verify. A path hash is the last byte string before
    // the `sth` map in neither object, so flip a byte inside the path: find
    // the first path hash (0x58 0x20 after the `path` key).
    let flip_path = |bytes: &[u8]| {
        let key = b"dpath";
        let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        let mut out = bytes.to_vec();
        assert_eq!(&out[at + 1..at + 3], &[0x58, 0x20]);
        out[at + 3] ^= 0x01;
        out
    };
    out.push(("bad-inclusion-path".into(), with(0, flip_path(&inclusion))));
    out.push((
        "bad-consistency-path".into(),
        with(1, flip_path(&consistency)),
    ));
    let mut sig = *sth.sig();
    sig[0] ^= 0x01;
    let flipped = herald_verify::SignedTreeHead::from_parts(sth.head().clone(), sig);
    out.push(("bad-sth-signature".into(), with(2, flipped.encode())));
    let other = key(0x22);
    let foreign =
        herald_verify::TreeHead::new(other.sigil(SigilForm::Default), 7, log.tree().root(), TS)
            .sign(&other)
            .unwrap();
    out.push(("bad-sth-other-key".into(), with(2, foreign.encode())));
    let past = herald_verify::InclusionProof::new(7, leaves[6].clone(), Vec::new(), sth.clone());
    out.push((
        "bad-inclusion-index-past-size".into(),
        with(0, past.encode()),
    ));

    for (name, kind, bytes, _) in conformance_proof_cases() {
        out.push((format!("conformance-{name}"), with(kind, bytes)));
    }
    out
}

fn all_seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut seeds = Vec::new();
    for (name, bytes) in sequences() {
        seeds.push(("trace_audit", name.clone(), bytes.clone()));
        seeds.push(("sequence_split", name, bytes));
    }
    for (name, bytes) in keyrings() {
        seeds.push(("keyring_parse", name, bytes));
    }
    for (name, bytes) in merkle_seeds() {
        seeds.push(("merkle_proof", name, bytes));
    }
    for (name, bytes) in log_files() {
        seeds.push(("log_file", name, bytes));
    }
    for (name, bytes) in bundles() {
        seeds.push(("bundle_verify", name, bytes));
    }
    for (name, bytes) in proof_objects() {
        seeds.push(("proof_object", name, bytes));
    }
    seeds
}

#[test]
fn seeds() {
    let write = std::env::var("HERALD_WRITE_SEEDS").is_ok_and(|v| v == "1");
    let corpus = fuzz_dir().join("corpus");
    let mut missing = Vec::new();
    for (target, name, bytes) in all_seeds() {
        let path = corpus.join(target).join(format!("seed-{name}"));
        if write {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &bytes).unwrap();
        } else {
            match fs::read(&path) {
                Ok(found) if found == bytes => {}
                // Still a useful input; the generator has moved on.
                Ok(_) => eprintln!("{} differs from the generator", path.display()),
                Err(_) => missing.push(path.display().to_string()),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "seeds missing (HERALD_WRITE_SEEDS=1 to write them): {missing:#?}"
    );
}
