//! The Rust crates `signed_note` and `tlog_tiles` (cloudflare/azul) as
//! oracles: our notes verify with theirs and theirs with ours, our verifier
//! keys are theirs, our checkpoints parse with theirs, and our tile paths
//! and contents match theirs for the same tree. The tiles a log exports
//! are then read back by our reader, and its proofs are the log's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use data_encoding::{BASE64, HEXLOWER};
use herald_core::PublicKey;
use herald_merkle::{Tree, leaf_hash};
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::log::TiledLog;
use herald_tlog::note::{Note, NoteVerifier, key_id};
use herald_tlog::tile::{TileId, TileKind};
use herald_tlog::tiles::{FetchError, TileReader, hash_tile};
use sha2::{Digest, Sha256};
use signed_note::{Note as TheirNote, StandardSigner, StandardVerifier, VerifierList};

const ORIGIN: &str = "example.test/herald/log";

/// A log held in memory: its entries, their tree, and its key.
struct MemLog {
    key: PublicKey,
    entries: Vec<Vec<u8>>,
    tree: Tree,
}

/// An entry that is not in the log.
#[derive(Debug)]
struct NoEntry(u64);

impl std::fmt::Display for NoEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no entry {}", self.0)
    }
}

impl std::error::Error for NoEntry {}

impl TiledLog for MemLog {
    type Error = NoEntry;

    fn public_key(&self) -> PublicKey {
        self.key
    }

    fn tree(&self) -> &Tree {
        &self.tree
    }

    fn entry(&self, index: u64) -> Result<Vec<u8>, NoEntry> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.entries.get(i))
            .cloned()
            .ok_or(NoEntry(index))
    }
}

/// `n` entries of differing lengths, each the digest of its index.
fn log_with(n: u64) -> MemLog {
    let entries: Vec<Vec<u8>> = (0..n)
        .map(|i| Sha256::digest(i.to_be_bytes())[..(i % 32) as usize + 1].to_vec())
        .collect();
    MemLog {
        key: herald_testkit::key(1).public_key(),
        tree: Tree::from_leaf_hashes(entries.iter().map(|e| leaf_hash(e))),
        entries,
    }
}

fn their_verifiers(vkey: &str) -> VerifierList {
    VerifierList::new(vec![Box::new(StandardVerifier::new(vkey).unwrap())])
}

#[test]
fn our_checkpoint_verifies_with_signed_note_and_parses_with_tlog_tiles() {
    let log = log_with(300);
    let key = herald_testkit::key(1);
    let cp = herald_tlog::log::checkpoint(&log, ORIGIN, &key).unwrap();
    let vkey = herald_tlog::log::verifier_key(&log, ORIGIN)
        .unwrap()
        .to_string();
    let dalek = ed25519_dalek::VerifyingKey::from_bytes(log.key.as_bytes()).unwrap();
    assert_eq!(vkey, signed_note::new_ed25519_verifier_key(ORIGIN, &dalek));

    let text = cp.note().to_text();
    let theirs = TheirNote::from_bytes(text.as_bytes()).unwrap();
    let (verified, unverified) = theirs.verify(&their_verifiers(&vkey)).unwrap();
    assert_eq!((verified.len(), unverified.len()), (1, 0));
    assert_eq!(theirs.text(), cp.note().text().as_bytes());

    let parsed = tlog_tiles::Checkpoint::from_bytes(theirs.text()).unwrap();
    assert_eq!(parsed.origin(), ORIGIN);
    assert_eq!(parsed.size(), 300);
    assert_eq!(parsed.hash().0, log.tree().root());

    // A flipped byte in the text fails with theirs too.
    let bad = text.replacen("300", "301", 1);
    let theirs = TheirNote::from_bytes(bad.as_bytes()).unwrap();
    assert!(theirs.verify(&their_verifiers(&vkey)).is_err());
}

#[test]
fn their_note_verifies_with_ours() {
    let key = herald_testkit::key(7);
    let name = "oracle.example/log";
    let pk = key.public_key();
    let id = key_id(name, 0x01, pk.as_bytes());
    let mut material = vec![0x01];
    material.extend_from_slice(&key.to_seed()[..]);
    let skey = format!(
        "PRIVATE+KEY+{name}+{}+{}",
        HEXLOWER.encode(&id.to_be_bytes()),
        BASE64.encode(&material)
    );
    let signer = StandardSigner::new(&skey).unwrap();
    let text = format!("{name}\n42\n{}\n", BASE64.encode(&[7u8; 32]));
    let mut theirs = TheirNote::new(text.as_bytes(), &[]).unwrap();
    theirs.add_sigs(&[&signer]).unwrap();
    let bytes = theirs.to_bytes();

    let ours = NoteVerifier::ed25519(name, pk).unwrap();
    let note = Note::parse(&bytes).unwrap();
    assert_eq!(note.verify(std::slice::from_ref(&ours)).unwrap().len(), 1);
    // Same key, same text: Ed25519 is deterministic, so our line is theirs.
    let mut mine = Note::new(&text).unwrap();
    mine.sign(name, &key).unwrap();
    assert_eq!(mine.to_text().as_bytes(), &bytes[..]);
    let (cp, _) = SignedCheckpoint::open(&bytes, &[ours]).unwrap();
    assert_eq!(cp.checkpoint().size(), 42);
}

/// `tlog_tiles` over our tree: stored-hash index → (level, n) → node.
struct OurHashes<'a>(&'a Tree);

impl tlog_tiles::HashReader for OurHashes<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|&i| {
                let (level, n) = tlog_tiles::split_stored_hash_index(i);
                self.0
                    .node(u32::from(level), n)
                    .map(tlog_tiles::Hash)
                    .ok_or(tlog_tiles::Error::IndexesNotInTree)
            })
            .collect()
    }
}

#[test]
fn tile_paths_and_contents_match_tlog_tiles() {
    let max = 70_000u64;
    let tree = Tree::from_leaf_hashes((0..max).map(|i| leaf_hash(&i.to_be_bytes())));
    for size in [
        1u64, 2, 255, 256, 257, 511, 512, 600, 65_535, 65_536, 65_537, max,
    ] {
        let ours: Vec<TileId> = TileId::all_for_size(size)
            .into_iter()
            .filter(|t| t.kind() != TileKind::Entries)
            .collect();
        let theirs = tlog_tiles::Tile::new_tiles(8, 0, size);
        assert_eq!(ours.len(), theirs.len(), "size {size}");
        let prefix = Tree::from_leaf_hashes((0..size).map(|i| leaf_hash(&i.to_be_bytes())));
        for (o, t) in ours.iter().zip(&theirs) {
            // tlog_tiles writes Go sumdb paths, with the height: tile/8/L/N.
            let their_path = t.path().replacen("tile/8/", "tile/", 1);
            assert_eq!(o.path(), their_path, "size {size}");
            assert_eq!(TileId::parse(&their_path).unwrap(), *o);
            let data = t.read_data(&OurHashes(&prefix)).unwrap();
            assert_eq!(hash_tile(&prefix, *o).unwrap(), data, "{their_path}");
            // The big tree serves the same bytes for the same tile.
            assert_eq!(hash_tile(&tree, *o).unwrap(), data);
        }
    }
}

#[test]
fn exported_log_reads_back_from_tiles() {
    let out = tempfile::tempdir().unwrap();
    let n = 600u64;
    let log = log_with(n);
    let key = herald_testkit::key(1);
    let cp = herald_tlog::log::checkpoint(&log, ORIGIN, &key).unwrap();
    let written = herald_tlog::log::export(&log, out.path(), Some(&cp)).unwrap();
    // 2 full + 1 partial level-0 tiles, as many entry bundles, 1 level-1.
    assert_eq!(written, 7);
    let root = out.path().to_path_buf();
    let fetch = move |path: &str| {
        std::fs::read(root.join(path)).map_err(|e| FetchError {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    };
    let text = std::fs::read(out.path().join("checkpoint")).unwrap();
    let vkey = herald_tlog::log::verifier_key(&log, ORIGIN).unwrap();
    let (signed, _) = SignedCheckpoint::open(&text, &[vkey]).unwrap();
    let reader = TileReader::new(&fetch, signed.checkpoint()).unwrap();
    for bundle in 0..3 {
        for (k, entry) in reader.entries(bundle).unwrap().iter().enumerate() {
            assert_eq!(entry, &log.entry(bundle * 256 + k as u64).unwrap());
        }
    }
    // Each tile served from the log is the exported file.
    for id in TileId::all_for_size(n) {
        let served = herald_tlog::log::tile(&log, &id.path()).unwrap().unwrap();
        assert_eq!(served, std::fs::read(out.path().join(id.path())).unwrap());
    }
    for index in [0, 1, 255, 256, 300, 511, 512, 599] {
        assert_eq!(
            reader.inclusion_proof(index).unwrap(),
            log.tree().inclusion_proof(index, n).unwrap()
        );
    }
    for size1 in [1, 2, 255, 256, 257, 512, 599, 600] {
        let older = herald_tlog::Checkpoint::new(ORIGIN, size1, log.tree().root_at(size1).unwrap())
            .unwrap();
        assert_eq!(
            reader.consistency_proof(&older).unwrap(),
            log.tree().consistency_proof(size1, n).unwrap()
        );
        assert_eq!(reader.root_at(size1).unwrap(), *older.root());
    }
    // A wrong older root is refused.
    let wrong = herald_tlog::Checkpoint::new(ORIGIN, 5, [9; 32]).unwrap();
    assert!(reader.consistency_proof(&wrong).is_err());
    // Paths a server must not answer.
    for path in [
        "tile/0/003",
        "tile/0/002.p/89",
        "tile/1/000",
        "tile/entries/x000/000",
        "tile/9/000",
        "checkpoint",
        "tile/0/000.p/0",
    ] {
        assert_eq!(herald_tlog::log::tile(&log, path).unwrap(), None, "{path}");
    }
    // A narrower partial tile than the current one is served.
    assert_eq!(
        herald_tlog::log::tile(&log, "tile/0/002.p/3")
            .unwrap()
            .unwrap()
            .len(),
        3 * 32
    );
}

#[test]
fn an_export_that_cannot_be_written_names_the_file_and_the_operation() {
    let dir = tempfile::tempdir().unwrap();
    // The export directory's place taken by a file.
    let out = dir.path().join("out");
    std::fs::write(&out, b"").unwrap();
    let log = log_with(3);
    let err = herald_tlog::log::export(&log, &out, None).unwrap_err();
    let text = err.to_string();
    let tiles = out.join("tile");
    assert!(
        text.starts_with(&tiles.display().to_string())
            && text.contains(": cannot create directory: "),
        "{text}"
    );
}
