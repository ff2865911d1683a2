//! Cross-implementation: the Go-made test logs of trillian-tessera and
//! serverless-log (../shared/vectors/external/tlog-*, README there) read by
//! this code: every checkpoint signature verifies with the published
//! verifier key, every root is the RFC 6962 root of the first N entries
//! recomputed from the tiles and entry bundles, and our own notes,
//! checkpoints and tile paths are what the Go tools write.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

use herald_core::SigningKey;
use herald_tlog::note::{self, Note, NoteError, Verifier};
use herald_tlog::tiles::{self, TileError};
use herald_tlog::{Checkpoint, CheckpointError};
use herald_verify::merkle::{Tree, leaf_hash};

fn external() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/vectors/external")
}

const TESSERA_KEY: &str =
    "example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx";
const SERVERLESS_KEY: &str = "astra+cad5a3d2+AZJqeuyE/GnknsCNh1eCtDtwdAwKBddOlS8M2eI1Jt4b";
const ENTRIES: [&str; 15] = [
    "one", "two", "three", "four", "five", "six", "seven", "eit", "nain", "ten", "ileven", "twelf",
    "threeten", "fourten", "fivten",
];

fn read(p: PathBuf) -> Vec<u8> {
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every checkpoint of a Go log, verified and checked against `roots`.
fn checkpoints(log: &Path, key: &str, origin: &str, tree: &Tree) {
    let verifier = Verifier::parse(key).unwrap();
    assert_eq!(verifier.to_text(), key, "the verifier key text round-trips");
    for n in 0..=15u64 {
        let bytes = read(log.join(format!("checkpoint.{n}")));
        let note = Note::parse(&bytes).unwrap();
        let signers = note.verify(std::slice::from_ref(&verifier)).unwrap();
        assert_eq!(signers, [&verifier]);
        let cp = Checkpoint::parse(note.text()).unwrap();
        assert_eq!(cp.origin, origin);
        assert_eq!(cp.size, n);
        assert_eq!(cp.root, tree.root_at(n).unwrap(), "root of size {n}");
        assert_eq!(cp.to_text(), note.text(), "the checkpoint text round-trips");
        // One flipped byte in the signed text: the signature fails, closed.
        let mut bad = bytes.clone();
        bad[0] ^= 0x01;
        if let Ok(tampered) = Note::parse(&bad) {
            assert!(matches!(
                tampered.verify(std::slice::from_ref(&verifier)),
                Err(NoteError::BadSignature { .. })
            ));
        }
    }
    let latest = read(log.join("checkpoint"));
    assert_eq!(latest, read(log.join("checkpoint.15")));
}

#[test]
fn tessera_checkpoints_tiles_and_entries() {
    let log = external().join("tlog-tessera/log");
    // The tree from the tiles alone (the partial tile of width 15).
    let tree = tiles::tree_from_tiles::<TileError>(15, |path| Ok(read(log.join(path)))).unwrap();
    // The entry bundle holds the 15 entries, whose leaf hashes are the tile's.
    let bundle = read(log.join(tiles::entries_path(0, 15)));
    let entries = tiles::entries(&bundle).unwrap();
    assert_eq!(entries, ENTRIES.map(str::as_bytes));
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(Some(leaf_hash(e)), tree.leaf(i as u64));
    }
    // Every partial tile of every width is the prefix of the next.
    for w in 1..=15u64 {
        let tile = tiles::hashes(&read(log.join(tiles::tile_path(0, 0, w)))).unwrap();
        assert_eq!(tile.len() as u64, w);
        let bundle = read(log.join(tiles::entries_path(0, w)));
        assert_eq!(tiles::entries(&bundle).unwrap().len() as u64, w);
    }
    checkpoints(&log, TESSERA_KEY, "example.com/log/testdata", &tree);
    // Our tiles for the same entries are byte for byte the Go ones.
    for (path, bytes) in tiles::level0_tiles(&ENTRIES.map(str::as_bytes)).unwrap() {
        assert_eq!(bytes, read(log.join(&path)), "{path}");
    }
}

#[test]
fn serverless_checkpoints_and_entries() {
    let log = external().join("tlog-serverless-log/log");
    let leaves: Vec<[u8; 32]> = (0..15)
        .map(|i| leaf_hash(&read(log.join(format!("seq/00/00/00/00/{i:02x}")))))
        .collect();
    let tree = Tree::from_leaf_hashes(leaves);
    // The key is named "astra", not after the origin: C2SP says SHOULD.
    checkpoints(&log, SERVERLESS_KEY, "example.com/testdata", &tree);
}

#[test]
fn tile_paths_follow_c2sp() {
    assert_eq!(tiles::index_path(0), "000");
    assert_eq!(tiles::index_path(7), "007");
    assert_eq!(tiles::index_path(1234), "x001/234");
    assert_eq!(tiles::index_path(1_234_067), "x001/x234/067");
    assert_eq!(tiles::tile_path(0, 0, 15), "tile/0/000.p/15");
    assert_eq!(tiles::tile_path(2, 1_234_067, 256), "tile/2/x001/x234/067");
    assert_eq!(tiles::entries_path(1, 256), "tile/entries/001");
    let widths: Vec<(u64, u64)> = tiles::level0_widths(600).collect();
    assert_eq!(widths, [(0, 256), (1, 256), (2, 88)]);
}

#[test]
fn our_notes_verify_and_refuse_what_they_must() {
    let key = SigningKey::from_seed(&[7; 32]);
    let verifier = Verifier::new("herald.example/log", key.public_key()).unwrap();
    let parsed = Verifier::parse(&verifier.to_text()).unwrap();
    assert_eq!(parsed, verifier);
    let cp = Checkpoint {
        origin: "herald.example/log".into(),
        size: 3,
        root: [9; 32],
        extensions: vec![],
    };
    let signed = note::sign(&cp.to_text(), "herald.example/log", &key).unwrap();
    let n = Note::parse(signed.as_bytes()).unwrap();
    assert_eq!(
        n.verify(std::slice::from_ref(&verifier)).unwrap(),
        [&verifier]
    );
    assert_eq!(Checkpoint::parse(n.text()).unwrap(), cp);
    // A second signature by a key nobody knows is ignored.
    let other = SigningKey::from_seed(&[8; 32]);
    let cosigned = format!(
        "{signed}{}",
        note::signature_line(n.text(), "witness", &other).unwrap()
    );
    let n2 = Note::parse(cosigned.as_bytes()).unwrap();
    assert_eq!(n2.signatures().len(), 2);
    assert_eq!(
        n2.verify(std::slice::from_ref(&verifier)).unwrap(),
        [&verifier]
    );
    // Nobody known: refused.
    let stranger = Verifier::new("stranger", other.public_key()).unwrap();
    assert_eq!(
        Note::parse(signed.as_bytes()).unwrap().verify(&[stranger]),
        Err(NoteError::Unverified)
    );
    // A key id that does not match its name and key is refused.
    let text = verifier.to_text();
    let mut parts = text.splitn(3, '+');
    let (name, _, key) = (parts.next().unwrap(), parts.next(), parts.next().unwrap());
    assert!(matches!(
        Verifier::parse(&format!("{name}+00000000+{key}")),
        Err(NoteError::BadVerifier(_))
    ));
    // Not text, no signatures, bad lines.
    assert_eq!(Note::parse(b"a\x00b\n\n"), Err(NoteError::NotText));
    assert_eq!(Note::parse(b"just text\n"), Err(NoteError::NoSignatures));
    assert!(matches!(
        Note::parse("t\n\n- x AAAA\n".as_bytes()),
        Err(NoteError::BadSignatureLine { line: 1 })
    ));
    // Checkpoint bodies: sizes without leading zeros, 32-byte roots.
    assert_eq!(
        Checkpoint::parse("o\n01\nAAAA\n"),
        Err(CheckpointError::Size)
    );
    assert_eq!(
        Checkpoint::parse("o\n1\nAAAA\n"),
        Err(CheckpointError::Root)
    );
    assert_eq!(Checkpoint::parse("o\n1\n"), Err(CheckpointError::Lines));
}

/// A P9 signed tree head's message is never a note: the log key may sign
/// both (lib.rs, note.rs).
#[test]
fn an_sth_message_is_never_a_note() {
    let key = SigningKey::from_seed(&[3; 32]);
    let sth = herald_verify::TreeHead::new(
        key.sigil(herald_core::SigilForm::Default),
        5,
        [1; 32],
        1_746_432_000,
    );
    let message = sth.signed_message();
    assert!(message.starts_with(herald_core::STH_TAG));
    assert!(std::str::from_utf8(&message).is_err());
    assert_eq!(Note::parse(&message), Err(NoteError::NotText));
}
