//! Signed notes, cosignatures, tile paths, entry bundles and policies:
//! the rules of each C2SP format, each with a case that must fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use data_encoding::BASE64;
use herald_merkle::empty_root;
use herald_tlog::checkpoint::{Checkpoint, CheckpointError, SignedCheckpoint};
use herald_tlog::cosignature;
use herald_tlog::note::{Note, NoteError, NoteVerifier, VerifierKeyError};
use herald_tlog::policy::{Policy, PolicyVerifyError};
use herald_tlog::tile::{TileId, TileKind, decode_bundle, encode_bundle};

const ORIGIN: &str = "example.test/log";

fn signed(size: u64) -> SignedCheckpoint {
    let cp = Checkpoint::new(ORIGIN, size, [size as u8; 32]).unwrap();
    SignedCheckpoint::sign(cp, ORIGIN, &herald_testkit::key(1)).unwrap()
}

fn log_vkey() -> NoteVerifier {
    NoteVerifier::ed25519(ORIGIN, herald_testkit::key(1).public_key()).unwrap()
}

fn witness_vkey(n: u8) -> NoteVerifier {
    NoteVerifier::cosigner(
        &format!("w{n}.example"),
        herald_testkit::key(10 + n).public_key(),
    )
    .unwrap()
}

#[test]
fn note_parse_rules() {
    let text = signed(3).note().to_text();
    assert_eq!(Note::parse(text.as_bytes()).unwrap().to_text(), text);
    type Case<'a> = (&'a [u8], fn(&NoteError) -> bool);
    let cases: [Case<'_>; 6] = [
        (b"a\n\n\xff\n", |e| {
            matches!(e, NoteError::NotUtf8 { offset: 3 })
        }),
        (b"a\tb\n\n", |e| {
            matches!(e, NoteError::ControlCharacter { offset: 1, byte: 9 })
        }),
        (b"a\nb\n", |e| matches!(e, NoteError::NoSignatures)),
        (b"a\n\n", |e| matches!(e, NoteError::NoSignatures)),
        (b"a\n\n- k AAAAAAA=\n", |e| {
            matches!(e, NoteError::BadSignatureLine { offset: 3, .. })
        }),
        ("a\n\n\u{2014} k AAAAAAA=".as_bytes(), |e| {
            matches!(e, NoteError::BadSignatureLine { .. })
        }),
    ];
    for (bytes, want) in cases {
        let e = Note::parse(bytes).unwrap_err();
        assert!(want(&e), "{e}");
    }
    // Key id only (4 bytes), no signature.
    assert!(Note::parse("a\n\n\u{2014} k AAAAAA==\n".as_bytes()).is_err());
    // A name with '+'.
    assert!(Note::parse("a\n\n\u{2014} k+x AAAAAAA=\n".as_bytes()).is_err());
    assert!(Note::new("no newline").is_err());
    assert!(Note::new("a\u{1}\n").is_err());
}

#[test]
fn unknown_keys_ignored_known_bad_key_rejects() {
    let mut note = signed(5);
    // A signature by another key with the same name: ignored.
    note.note_mut()
        .sign(ORIGIN, &herald_testkit::key(2))
        .unwrap();
    let text = note.note().to_text();
    assert_eq!(
        Note::parse(text.as_bytes())
            .unwrap()
            .verify(&[log_vkey()])
            .unwrap()
            .len(),
        1
    );
    // Known name and id, wrong signature: the whole note is refused.
    let good = signed(5).note().to_text();
    let line = good.lines().last().unwrap();
    let b64 = line.rsplit(' ').next().unwrap();
    let mut raw = BASE64.decode(b64.as_bytes()).unwrap();
    raw[10] ^= 1;
    let forged = good.replace(b64, &BASE64.encode(&raw));
    let note = Note::parse(forged.as_bytes()).unwrap();
    assert!(matches!(
        note.verify(&[log_vkey()]),
        Err(NoteError::InvalidSignature { .. })
    ));
    // No known key at all.
    assert_eq!(
        Note::parse(good.as_bytes())
            .unwrap()
            .verify(&[witness_vkey(1)]),
        Err(NoteError::NoKnownSignature)
    );
}

#[test]
fn verifier_key_rules() {
    let v = log_vkey();
    assert_eq!(NoteVerifier::parse(&v.to_string()).unwrap(), v);
    let s = v.to_string();
    let (name, rest) = s.split_once('+').unwrap();
    let wrong_id = format!("{name}+00000000+{}", rest.split_once('+').unwrap().1);
    assert!(matches!(
        NoteVerifier::parse(&wrong_id),
        Err(VerifierKeyError::KeyIdMismatch { .. })
    ));
    assert_eq!(NoteVerifier::parse("a+b"), Err(VerifierKeyError::Shape));
    let ecdsa = format!("{name}+00000000+{}", BASE64.encode(&[2u8; 33]));
    assert_eq!(
        NoteVerifier::parse(&ecdsa),
        Err(VerifierKeyError::UnsupportedType(2))
    );
}

#[test]
fn checkpoint_rules() {
    let root = BASE64.encode(&[1u8; 32]);
    assert!(Checkpoint::parse(&format!("o\n7\n{root}\next one\n")).is_ok());
    for (text, line) in [
        (format!("\n7\n{root}\n"), 1),
        (format!("o\n07\n{root}\n"), 2),
        (format!("o\n-1\n{root}\n"), 2),
        (format!("o\n18446744073709551616\n{root}\n"), 2),
        ("o\n7\nAAAA\n".to_owned(), 3),
        (format!("o\n7\n{root}\n\n"), 4),
    ] {
        match Checkpoint::parse(&text) {
            Err(CheckpointError::Line { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
    assert_eq!(
        Checkpoint::parse(&format!("o\n0\n{root}\n")),
        Err(CheckpointError::EmptyTreeRoot)
    );
    let empty = BASE64.encode(&empty_root());
    assert_eq!(
        Checkpoint::parse(&format!("o\n0\n{empty}\n"))
            .unwrap()
            .size(),
        0
    );
}

#[test]
fn cosignature_message_and_field() {
    let cp = signed(9);
    let w = herald_testkit::key(11);
    let line =
        cosignature::sign("w1.example", &w, 1_700_000_000, cp.note().text().as_bytes()).unwrap();
    assert_eq!(line.signature().len(), cosignature::SIGNATURE_LEN);
    assert_eq!(&line.signature()[..8], &1_700_000_000u64.to_be_bytes());
    // The signed message, built by hand, verifies with plain Ed25519.
    let msg = format!("cosignature/v1\ntime 1700000000\n{}", cp.note().text());
    let sig: [u8; 64] = line.signature()[8..].try_into().unwrap();
    w.public_key().verify(msg.as_bytes(), &sig).unwrap();
    let mut note = cp.note().clone();
    note.push(line).unwrap();
    let verified = note.verify(&[witness_vkey(1)]).unwrap();
    assert_eq!(verified[0].time, Some(1_700_000_000));
    // A cosignature key is not a log key: type 0x04 gives another key id.
    assert_ne!(
        witness_vkey(1).key_id(),
        NoteVerifier::ed25519("w1.example", w.public_key())
            .unwrap()
            .key_id()
    );
    assert!(cosignature::sign("w", &w, 0, b"x\n").is_err());
    assert!(cosignature::sign("w", &w, 1 << 63, b"x\n").is_err());
}

#[test]
fn tile_paths() {
    let id = TileId::new(TileKind::Hash(0), 1_234_067, 256).unwrap();
    assert_eq!(id.path(), "tile/0/x001/x234/067");
    let id = TileId::new(TileKind::Entries, 5, 7).unwrap();
    assert_eq!(id.path(), "tile/entries/005.p/7");
    assert_eq!(TileId::parse("tile/entries/005.p/7").unwrap(), id);
    for bad in [
        "tile/0/5",
        "tile/0/005.p/256",
        "tile/0/005.p/07",
        "tile/8/000",
        "tile/0/x000/001",
        "tile/0/001/002",
        "tile/x/000",
        "tile/0/000.p/0",
    ] {
        assert!(TileId::parse(bad).is_err(), "{bad}");
    }
    // tlog-tiles' example: size 70000 = 273 full level-0 tiles, partial 112,
    // one full level-1 tile, partial level-1 of 17, partial level-2 of 1.
    let tiles: Vec<_> = TileId::all_for_size(70_000)
        .into_iter()
        .filter(|t| t.kind() != TileKind::Entries)
        .collect();
    assert_eq!(tiles.len(), 273 + 1 + 1 + 1 + 1);
    assert!(tiles.contains(&TileId::new(TileKind::Hash(0), 273, 112).unwrap()));
    assert!(tiles.contains(&TileId::new(TileKind::Hash(1), 1, 17).unwrap()));
    assert!(tiles.contains(&TileId::new(TileKind::Hash(2), 0, 1).unwrap()));
}

#[test]
fn entry_bundles() {
    let entries: Vec<&[u8]> = vec![b"one", b"", &[7u8; 300]];
    let bundle = encode_bundle(entries.iter().copied()).unwrap();
    assert_eq!(&bundle[..5], b"\x00\x03one");
    assert_eq!(decode_bundle(&bundle).unwrap(), entries);
    assert!(decode_bundle(&bundle[..bundle.len() - 1]).is_err());
    assert!(decode_bundle(b"\x00").is_err());
    let big = vec![0u8; 65_536];
    assert!(encode_bundle([big.as_slice()]).is_err());
}

fn policy_text(group: &str) -> String {
    let mut p = format!("# test\nlog {}\n", log_vkey());
    for n in 1..=3 {
        p.push_str(&format!(
            "witness W{n} {} http://127.0.0.1:1/\n",
            witness_vkey(n)
        ));
    }
    p.push_str(group);
    p
}

fn cosigned(by: &[u8]) -> Vec<u8> {
    let mut cp = signed(4);
    for &n in by {
        let line = cosignature::sign(
            &format!("w{n}.example"),
            &herald_testkit::key(10 + n),
            1_700_000_000,
            cp.note().text().as_bytes(),
        )
        .unwrap();
        cp.note_mut().push(line).unwrap();
    }
    cp.note().to_text().into_bytes()
}

#[test]
fn policy_quorum() {
    let p =
        Policy::parse(policy_text("group two 2 W1 W2 W3\n\tquorum   two  \n").as_bytes()).unwrap();
    assert!(p.verify_checkpoint(&cosigned(&[1, 3])).is_ok());
    let (_, names) = p.verify_checkpoint(&cosigned(&[1, 2, 3])).unwrap();
    assert_eq!(names, ["W1", "W2", "W3"]);
    assert!(matches!(
        p.verify_checkpoint(&cosigned(&[2])),
        Err(PolicyVerifyError::Quorum { .. })
    ));
    let nested = "group a all W1 W2\ngroup b any W3\ngroup ab all a b\nquorum ab\n";
    let p = Policy::parse(policy_text(nested).as_bytes()).unwrap();
    assert!(p.verify_checkpoint(&cosigned(&[1, 2, 3])).is_ok());
    assert!(p.verify_checkpoint(&cosigned(&[1, 3])).is_err());
    let none = Policy::parse(policy_text("quorum none\n").as_bytes()).unwrap();
    assert!(none.verify_checkpoint(&cosigned(&[])).is_ok());
    let single = Policy::parse(policy_text("quorum W2\n").as_bytes()).unwrap();
    assert!(single.verify_checkpoint(&cosigned(&[2])).is_ok());
    assert!(single.verify_checkpoint(&cosigned(&[1])).is_err());
}

#[test]
fn policy_syntax_errors() {
    for (group, line) in [
        ("quorum X\n", 6),
        ("group g 4 W1 W2 W3\nquorum g\n", 6),
        ("group g 0 W1\nquorum g\n", 6),
        ("group g any W1 W1\nquorum g\n", 6),
        ("group g any\nquorum g\n", 6),
        ("group W1 any W2\nquorum W1\n", 6),
        ("quorum none\nquorum none\n", 7),
        ("frob\nquorum none\n", 6),
        (&format!("witness W9 {}\nquorum none\n", witness_vkey(1)), 6),
        (&format!("witness W9 {}\nquorum none\n", log_vkey()), 6),
    ] {
        let e = Policy::parse(policy_text(group).as_bytes()).unwrap_err();
        assert_eq!(e.line, line, "{group:?}: {e}");
    }
    assert_eq!(
        Policy::parse(policy_text("").as_bytes()).unwrap_err().line,
        0
    );
    assert_eq!(Policy::parse(b"quorum none\x01\n").unwrap_err().line, 0);
}

#[test]
fn split_view_evidence() {
    use herald_merkle::{Tree, leaf_hash};
    use herald_tlog::evidence::{EvidenceError, SplitView};
    let honest = Tree::from_leaf_hashes((0..9u8).map(|i| leaf_hash(&[i])));
    let fork = Tree::from_leaf_hashes((0..9u8).map(|i| leaf_hash(&[i, 1])));
    let key = herald_testkit::key(1);
    let note = |t: &Tree, size: u64| {
        let cp = Checkpoint::new(ORIGIN, size, t.root_at(size).unwrap()).unwrap();
        SignedCheckpoint::sign(cp, ORIGIN, &key)
            .unwrap()
            .note()
            .to_text()
            .into_bytes()
    };
    // Same size, different roots.
    let same = SplitView::new(log_vkey(), &note(&honest, 5), &note(&fork, 5), None);
    let parsed = SplitView::parse(&same.to_bytes()).unwrap();
    assert_eq!(parsed, same);
    assert_eq!(parsed.verify().unwrap().sizes, (5, 5));
    // Sizes differ: the fork's root at 4 and its proof to 9.
    let prefix = (
        fork.root_at(4).unwrap(),
        fork.consistency_proof(4, 9).unwrap(),
    );
    let differ = SplitView::new(log_vkey(), &note(&honest, 4), &note(&fork, 9), Some(prefix));
    assert!(
        SplitView::parse(&differ.to_bytes())
            .unwrap()
            .verify()
            .is_ok()
    );
    // Consistent checkpoints are no evidence.
    let prefix = (
        honest.root_at(4).unwrap(),
        honest.consistency_proof(4, 9).unwrap(),
    );
    let fine = SplitView::new(
        log_vkey(),
        &note(&honest, 4),
        &note(&honest, 9),
        Some(prefix),
    );
    assert_eq!(fine.verify(), Err(EvidenceError::Consistent));
    // A prefix root the larger tree does not prove.
    let wrong = (
        honest.root_at(4).unwrap(),
        fork.consistency_proof(4, 9).unwrap(),
    );
    let lie = SplitView::new(log_vkey(), &note(&honest, 4), &note(&fork, 9), Some(wrong));
    assert_eq!(lie.verify(), Err(EvidenceError::Proof));
    // Another key: not the log's signatures.
    let other = NoteVerifier::ed25519(ORIGIN, herald_testkit::key(3).public_key()).unwrap();
    let foreign = SplitView::new(other, &note(&honest, 5), &note(&fork, 5), None);
    assert!(matches!(
        foreign.verify(),
        Err(EvidenceError::Checkpoint { which: 1, .. })
    ));
    // Sizes differ without a proof; trailing bytes.
    let bare = SplitView::new(log_vkey(), &note(&honest, 4), &note(&fork, 9), None);
    assert_eq!(bare.verify(), Err(EvidenceError::Shape));
    let mut extra = same.to_bytes();
    extra.push(b'x');
    assert!(SplitView::parse(&extra).is_err());
}
