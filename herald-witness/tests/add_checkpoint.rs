//! The witness served on 127.0.0.1:0 and driven over HTTP: a consistent
//! sequence is cosigned; a rollback gets 409 (`text/x.tlog.size`) or 400;
//! an inconsistent proof 422; a bad log signature 403; an unknown origin
//! 404; a malformed body 400; and the state survives a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use herald_core::SigningKey;
use herald_merkle::{Tree, leaf_hash};
use herald_tlog::checkpoint::{Checkpoint, SignedCheckpoint};
use herald_tlog::note::{Note, NoteVerifier};
use herald_witness::client::{self, add_checkpoint_body};
use herald_witness::{SIZE_MEDIA_TYPE, Witness};

const ORIGIN: &str = "example.test/witnessed";

fn log_key() -> SigningKey {
    herald_testkit::key(1)
}

fn tree(n: u64, salt: u8) -> Tree {
    Tree::from_leaf_hashes((0..n).map(|i| leaf_hash(&[&i.to_be_bytes()[..], &[salt]].concat())))
}

fn checkpoint(t: &Tree, size: u64, key: &SigningKey) -> SignedCheckpoint {
    let cp = Checkpoint::new(ORIGIN, size, t.root_at(size).unwrap()).unwrap();
    SignedCheckpoint::sign(cp, ORIGIN, key).unwrap()
}

struct Server {
    url: String,
    witness: Arc<Witness>,
    _rt: tokio::runtime::Runtime,
}

fn start(dir: &std::path::Path) -> Server {
    let logs = vec![(
        ORIGIN.to_owned(),
        NoteVerifier::ed25519(ORIGIN, log_key().public_key()).unwrap(),
    )];
    let witness =
        Arc::new(Witness::open("w.example/1", herald_testkit::key(9), logs, dir).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let w = witness.clone();
    rt.spawn(async move { axum::serve(listener, herald_witness::server::router(w)).await });
    Server {
        url,
        witness,
        _rt: rt,
    }
}

fn post(s: &Server, old: u64, proof: &[[u8; 32]], cp: &str) -> client::Response {
    let body = add_checkpoint_body(old, proof, cp);
    client::request(
        "POST",
        &format!("{}/add-checkpoint", s.url),
        Some(("text/plain", &body)),
    )
    .unwrap()
}

#[test]
fn consistent_sequence_is_cosigned() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let t = tree(40, 0);
    let key = log_key();
    for size in [1u64, 5, 5, 17, 40] {
        let cp = checkpoint(&t, size, &key);
        let lines = client::add_checkpoint(&s.url, &cp, |old| {
            t.consistency_proof(old, size).map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(lines.len(), 1);
        let mut note = cp.note().clone();
        note.push(lines[0].clone()).unwrap();
        let v = note
            .verify(std::slice::from_ref(s.witness.verifier()))
            .unwrap();
        assert!(v[0].time.unwrap() > 1_700_000_000);
        assert_eq!(s.witness.latest(ORIGIN).unwrap().size, size);
    }
    // Size 0 with the empty root is cosigned from a fresh state.
    let dir2 = tempfile::tempdir().unwrap();
    let s2 = start(dir2.path());
    let r = post(&s2, 0, &[], &checkpoint(&t, 0, &key).note().to_text());
    assert_eq!(r.status, 200);
    assert!(r.body.starts_with("\u{2014} w.example/1 ".as_bytes()));
    // A recorded size 0 is the empty tree: the sequence goes on from it.
    let cp = checkpoint(&t, 3, &key);
    assert_eq!(post(&s2, 0, &[], &cp.note().to_text()).status, 200);
}

#[test]
fn rollback_conflict_inconsistent_forbidden_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let t = tree(30, 0);
    let key = log_key();
    assert_eq!(
        post(&s, 0, &[], &checkpoint(&t, 20, &key).note().to_text()).status,
        200
    );

    // Rollback: a smaller tree. From the right old size it is 400 (old >
    // size); from any other, 409 with the latest size.
    let small = checkpoint(&t, 10, &key).note().to_text();
    let r = post(&s, 0, &[], &small);
    assert_eq!(r.status, 409);
    assert_eq!(r.content_type(), Some(SIZE_MEDIA_TYPE));
    assert_eq!(r.body, b"20\n");
    assert_eq!(post(&s, 20, &[], &small).status, 400);
    let err =
        client::add_checkpoint(&s.url, &checkpoint(&t, 10, &key), |_| Ok(vec![])).unwrap_err();
    assert!(err.contains("larger tree"), "{err}");

    // Inconsistent: a fork of the log at size 25 proves against its own
    // first 20 leaves, not the cosigned ones.
    let fork = tree(25, 1);
    let proof = fork.consistency_proof(20, 25).unwrap();
    let r = post(
        &s,
        20,
        &proof,
        &checkpoint(&fork, 25, &key).note().to_text(),
    );
    assert_eq!(r.status, 422);
    // Same size, different root.
    assert_eq!(
        post(&s, 20, &[], &checkpoint(&fork, 20, &key).note().to_text()).status,
        422
    );
    // A proof with a flipped hash.
    let mut bad = t.consistency_proof(20, 30).unwrap();
    bad[0][0] ^= 1;
    assert_eq!(
        post(&s, 20, &bad, &checkpoint(&t, 30, &key).note().to_text()).status,
        422
    );
    assert_eq!(s.witness.latest(ORIGIN).unwrap().size, 20);

    // Bad log signature: signed by another key under the origin's name.
    let forged = checkpoint(&t, 30, &herald_testkit::key(2)).note().to_text();
    let proof = t.consistency_proof(20, 30).unwrap();
    assert_eq!(post(&s, 20, &proof, &forged).status, 403);
    // A known key's signature that fails: 403 too.
    let good = checkpoint(&t, 30, &key).note().to_text();
    let tampered = good.replacen("\n30\n", "\n31\n", 1);
    assert_eq!(post(&s, 20, &proof, &tampered).status, 403);

    // Unknown origin.
    let other = Checkpoint::new("example.test/other", 1, t.root_at(1).unwrap()).unwrap();
    let other = SignedCheckpoint::sign(other, "example.test/other", &key).unwrap();
    assert_eq!(post(&s, 0, &[], &other.note().to_text()).status, 404);

    // Malformed bodies.
    for body in [
        &b"old 01\n\nx"[..],
        b"new 0\n\n",
        b"old 0\nnot-base64\n\n",
        b"old 0\n\nnot a note",
    ] {
        let r = client::request(
            "POST",
            &format!("{}/add-checkpoint", s.url),
            Some(("text/plain", body)),
        )
        .unwrap();
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(body));
    }
    // Size 0 with a root that is not the empty tree's.
    let zero = format!(
        "{ORIGIN}\n0\n{}\n",
        data_encoding::BASE64.encode(&[1u8; 32])
    );
    let mut n = Note::new(&zero).unwrap();
    n.sign(ORIGIN, &key).unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    assert_eq!(post(&start(dir2.path()), 0, &[], &n.to_text()).status, 422);

    // The consistent next step still works, and the state outlives the server.
    assert_eq!(post(&s, 20, &proof, &good).status, 200);
    drop(s);
    let s = start(dir.path());
    assert_eq!(s.witness.latest(ORIGIN).unwrap().size, 30);
    let r = post(&s, 0, &[], &good);
    assert_eq!((r.status, r.body), (409, b"30\n".to_vec()));
}

#[test]
fn corrupt_state_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(herald_witness::state::STATE_FILE),
        "garbage\n",
    )
    .unwrap();
    let logs = vec![(
        ORIGIN.to_owned(),
        NoteVerifier::ed25519(ORIGIN, log_key().public_key()).unwrap(),
    )];
    let e = Witness::open("w", herald_testkit::key(9), logs, dir.path()).unwrap_err();
    assert!(e.to_string().contains("refusing to start"), "{e}");
}

#[test]
fn a_state_that_cannot_be_stored_is_a_500_naming_no_path() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    // The temporary file's place taken by a directory that is not empty:
    // the update cannot write its state.
    let tmp = dir
        .path()
        .join(format!("{}.tmp", herald_witness::state::STATE_FILE));
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(tmp.join("x"), b"x").unwrap();
    let t = tree(3, 0);
    let cp = checkpoint(&t, 3, &log_key()).note().to_text();
    let r = post(&s, 0, &[], &cp);
    assert_eq!(r.status, 500);
    let body = String::from_utf8_lossy(&r.body);
    assert_eq!(body, "storing the checkpoint failed\n");
    let dir_name = dir.path().display().to_string();
    assert!(!body.contains(&dir_name), "{body}");
    // Nothing was cosigned, and the witness still answers once it can.
    assert_eq!(s.witness.latest(ORIGIN), None);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert_eq!(post(&s, 0, &[], &cp).status, 200);
}
