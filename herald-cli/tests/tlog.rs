//! The audit log in C2SP forms, through the real binary (issue 17):
//! `herald log key` prints a verifier key, `log checkpoint` a
//! tlog-checkpoint note that verifies under it, and `log tiles` a static
//! tile tree from which the same root is rebuilt, entry by entry the log's
//! P9 leaves. (herald-tlog's own tests hold the formats to the Go-made
//! logs of trillian-tessera and serverless-log.)
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_tlog::Checkpoint;
use herald_tlog::note::{Note, Verifier};
use herald_tlog::tiles::{self, TileError};
use herald_verify::Log;
use support::{herald, keygen};

const ORIGIN: &str = "herald.example/audit";

#[test]
fn checkpoint_key_and_tiles_of_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(d, "notary");
    keygen(d, "alice");
    herald(d, &["log", "init", "audit", "--key", "notary.key"]).expect(0);
    for i in 0..5u64 {
        let ts = (1_746_500_000 + i).to_string();
        let out = format!("m{i}.cbor");
        herald(d, &["new", "--key", "alice.key", "--ts", &ts, "-o", &out]).expect(0);
        herald(d, &["log", "append", "audit", &out]).expect(0);
    }

    let key = herald(d, &["log", "key", "audit", "--origin", ORIGIN]);
    key.expect(0);
    let verifier = Verifier::parse(key.out().trim_end()).unwrap();
    assert_eq!(verifier.name(), ORIGIN);

    let run = herald(d, &["log", "checkpoint", "audit", "--origin", ORIGIN]);
    run.expect(0);
    let note = Note::parse(&run.stdout).unwrap();
    note.verify(std::slice::from_ref(&verifier)).unwrap();
    let cp = Checkpoint::parse(note.text()).unwrap();
    // The log's own reading (closed again before the next command: a log
    // has one writer at a time, and `log tiles` waits for it).
    let (root, leaves) = {
        let log = Log::open(&d.join("audit")).unwrap();
        let leaves: Vec<Vec<u8>> = (0..log.len()).map(|i| log.leaf_bytes(i).unwrap()).collect();
        (log.tree().root(), leaves)
    };
    assert_eq!((cp.origin.as_str(), cp.size), (ORIGIN, 5));
    assert_eq!(cp.root, root);

    herald(d, &["log", "tiles", "audit", "web", "--origin", ORIGIN]).expect(0);
    let web = d.join("web");
    let served = std::fs::read(web.join("checkpoint")).unwrap();
    let served = Note::parse(&served).unwrap();
    served.verify(std::slice::from_ref(&verifier)).unwrap();
    let served = Checkpoint::parse(served.text()).unwrap();
    let tree = tiles::tree_from_tiles::<TileError>(served.size, |p| {
        Ok(std::fs::read(web.join(p)).unwrap())
    })
    .unwrap();
    assert_eq!(tree.root(), served.root);
    let bundle = std::fs::read(web.join(tiles::entries_path(0, 5))).unwrap();
    let entries = tiles::entries(&bundle).unwrap();
    assert_eq!(
        entries,
        leaves.iter().map(Vec::as_slice).collect::<Vec<_>>()
    );

    // Tiles already there are kept unless --force; the origin is one line.
    herald(d, &["log", "tiles", "audit", "web", "--origin", ORIGIN]).expect(2);
    herald(
        d,
        &[
            "log", "tiles", "audit", "web", "--origin", ORIGIN, "--force",
        ],
    )
    .expect(0);
    herald(d, &["log", "checkpoint", "audit", "--origin", "two\nlines"]).expect(2);
    herald(d, &["log", "key", "audit", "--origin", "has space"]).expect(2);
}
