//! Stable-toolchain replay of the herald-verify fuzz targets
//! (docs/fuzzing.md).
//!
//! The target bodies are `fuzz/src/verify_targets.rs`, compiled here with
//! `#[path]` (one copy, shared with the libFuzzer binaries). Each test runs
//! one body over every file of `fuzz/corpus/<target>/`, of
//! `fuzz/regressions/<target>/` (committed reproducers) and of any local
//! `fuzz/artifacts/<target>/crash-*`, and asserts none panics.
//!
//! `seeds` builds the seed inputs (envelope sequences, keyring lines, the
//! Merkle vectors in the `merkle_proof` layout). With
//! `HERALD_WRITE_SEEDS=1` it writes them as `fuzz/corpus/<target>/seed-*`;
//! otherwise it checks that they are there.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[allow(unreachable_pub, dead_code)]
#[path = "../../fuzz/src/verify_targets.rs"]
mod targets;

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use herald_core::cbor::Value;
use herald_core::envelope::birth_attestation;
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, Scope, SigilForm, SigningKey};
use herald_verify::keyring::key_line;
use serde_json::Value as Json;

/// 2025-05-05T08:00:00Z, the tests' fixed `ts`.
const TS: u64 = 1_746_432_000;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Every file directly under `dir` whose name starts with `prefix`, sorted.
fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && !n.starts_with('.'))
        })
        .collect();
    out.sort();
    out
}

/// Run `body` over the corpus, the regressions and local crash artifacts.
fn replay(target: &str, body: fn(&[u8])) {
    let root = fuzz_dir();
    let corpus = files(&root.join("corpus").join(target), "");
    assert!(
        !corpus.is_empty(),
        "fuzz/corpus/{target} is empty: run `HERALD_WRITE_SEEDS=1 cargo test -p herald-verify --test fuzz_replay seeds`"
    );
    let mut all = corpus;
    all.extend(files(&root.join("regressions").join(target), ""));
    all.extend(files(&root.join("artifacts").join(target), "crash-"));
    let mut failed = Vec::new();
    for path in &all {
        let bytes = fs::read(path).unwrap();
        if catch_unwind(AssertUnwindSafe(|| body(&bytes))).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{target} panicked on: {failed:#?}");
    eprintln!("{target}: {} inputs replayed", all.len());
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
