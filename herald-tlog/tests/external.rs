//! Cross-implementation: the Go-made test logs of trillian-tessera and
//! serverless-log (`vectors/external/`, vendored with their provenance and
//! licence in its README) read and verified by this crate: every checkpoint
//! signature, every root recomputed from the tiles, every entry's inclusion
//! proof, and every consistency proof between two of their checkpoints.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use herald_merkle::{leaf_hash, root_from_leaves, verify_inclusion};
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::NoteVerifier;
use herald_tlog::policy::{Policy, PolicyVerifyError};
use herald_tlog::tiles::{FetchError, TileReader};

const TESSERA_VKEY: &str =
    "example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx";
const SERVERLESS_VKEY: &str = "astra+cad5a3d2+AZJqeuyE/GnknsCNh1eCtDtwdAwKBddOlS8M2eI1Jt4b";
const ENTRIES: [&str; 15] = [
    "one", "two", "three", "four", "five", "six", "seven", "eit", "nain", "ten", "ileven", "twelf",
    "threeten", "fourten", "fivten",
];

fn external(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vectors/external")
        .join(sub)
}

fn dir_fetch(root: PathBuf) -> impl Fn(&str) -> Result<Vec<u8>, FetchError> {
    move |path: &str| {
        std::fs::read(root.join(path)).map_err(|e| FetchError {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    }
}

#[test]
fn tessera_checkpoints_tiles_and_proofs() {
    let dir = external("tlog-tessera/log");
    let key = NoteVerifier::parse(TESSERA_VKEY).unwrap();
    assert_eq!(key.to_string(), TESSERA_VKEY);
    let mut checkpoints = Vec::new();
    for n in 0..=15u64 {
        let bytes = std::fs::read(dir.join(format!("checkpoint.{n}"))).unwrap();
        let (signed, verified) =
            SignedCheckpoint::open(&bytes, std::slice::from_ref(&key)).unwrap();
        assert_eq!(verified.len(), 1);
        // Verified over the bytes received: re-rendering changes nothing.
        assert_eq!(signed.note().to_text().as_bytes(), &bytes[..]);
        let cp = signed.checkpoint().clone();
        assert_eq!(cp.origin(), "example.com/log/testdata");
        assert_eq!(cp.size(), n);
        let leaves: Vec<_> = ENTRIES[..n as usize]
            .iter()
            .map(|e| leaf_hash(e.as_bytes()))
            .collect();
        assert_eq!(*cp.root(), root_from_leaves(&leaves), "size {n}");
        checkpoints.push(cp);
    }
    let latest = std::fs::read(dir.join("checkpoint")).unwrap();
    assert_eq!(latest, std::fs::read(dir.join("checkpoint.15")).unwrap());

    for cp in checkpoints.iter().skip(1) {
        // The root is rebuilt from the tiles of that size alone.
        let reader = TileReader::new(dir_fetch(dir.clone()), cp).unwrap();
        let entries = reader.entries(0).unwrap();
        let want: Vec<&[u8]> = ENTRIES[..cp.size() as usize]
            .iter()
            .map(|e| e.as_bytes())
            .collect();
        assert_eq!(entries, want);
        for index in 0..cp.size() {
            let path = reader.inclusion_proof(index).unwrap();
            let leaf = leaf_hash(ENTRIES[index as usize].as_bytes());
            verify_inclusion(&leaf, index, cp.size(), &path, cp.root()).unwrap();
        }
        for older in checkpoints.iter().skip(1).take(cp.size() as usize) {
            reader.consistency_proof(older).unwrap();
        }
    }
}

#[test]
fn tessera_tampered_tile_is_refused() {
    let dir = external("tlog-tessera/log");
    let bytes = std::fs::read(dir.join("checkpoint.15")).unwrap();
    let key = NoteVerifier::parse(TESSERA_VKEY).unwrap();
    let (signed, _) = SignedCheckpoint::open(&bytes, &[key]).unwrap();
    let inner = dir_fetch(dir);
    let flipped = move |path: &str| {
        let mut b = inner(path)?;
        if path == "tile/0/000.p/15" {
            b[40] ^= 1;
        }
        Ok(b)
    };
    assert!(TileReader::new(flipped, signed.checkpoint()).is_err());
}

#[test]
fn serverless_checkpoints_and_entries() {
    let dir = external("tlog-serverless-log/log");
    let key = NoteVerifier::parse(SERVERLESS_VKEY).unwrap();
    assert_eq!(key.to_string(), SERVERLESS_VKEY);
    let tessera = NoteVerifier::parse(TESSERA_VKEY).unwrap();
    for n in 0..=15u64 {
        let bytes = std::fs::read(dir.join(format!("checkpoint.{n}"))).unwrap();
        let (signed, _) = SignedCheckpoint::open(&bytes, std::slice::from_ref(&key)).unwrap();
        let cp = signed.checkpoint();
        assert_eq!(cp.origin(), "example.com/testdata");
        let leaves: Vec<_> = (0..n)
            .map(|i| {
                let e = std::fs::read(dir.join(format!("seq/00/00/00/00/{i:02x}"))).unwrap();
                assert_eq!(e, ENTRIES[i as usize].as_bytes());
                leaf_hash(&e)
            })
            .collect();
        assert_eq!(*cp.root(), root_from_leaves(&leaves));
        // A key that did not sign it: no known signature.
        assert!(SignedCheckpoint::open(&bytes, std::slice::from_ref(&tessera)).is_err());
    }
    // The key name "astra" is not the origin: a policy (whose log key name
    // MUST be the origin) refuses it.
    let policy = Policy::parse(format!("log {SERVERLESS_VKEY}\nquorum none\n").as_bytes()).unwrap();
    let bytes = std::fs::read(dir.join("checkpoint")).unwrap();
    assert!(matches!(
        policy.verify_checkpoint(&bytes),
        Err(PolicyVerifyError::OriginMismatch { .. })
    ));
}

#[test]
fn tessera_signature_tampering_is_refused() {
    let dir = external("tlog-tessera/log");
    let key = NoteVerifier::parse(TESSERA_VKEY).unwrap();
    let mut bytes = std::fs::read(dir.join("checkpoint.7")).unwrap();
    // Change the size line's digit: the signature no longer verifies.
    let pos = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes[pos] = b'8';
    assert!(SignedCheckpoint::open(&bytes, &[key]).is_err());
}
