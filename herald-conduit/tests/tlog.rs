//! The notary's log in C2SP form against a real server on loopback: a
//! client that reads only `GET /checkpoint` and `GET /tile/...` (herald-tlog's
//! tile reader) rebuilds the root of the notary's signed tree head and
//! proves every posted envelope included; tiles beyond the tree are 404;
//! content types and caching headers; a tlog-witness witness
//! (herald-witness) cosigns the checkpoint, then a later one consistent
//! with it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;

use herald_core::{EnvelopeRef, SigilForm, SigningKey};
use herald_merkle::verify_inclusion;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::tiles::{FetchError, TileReader};
use herald_tlog::{Note, NoteVerifier};
use herald_verify::{Leaf, SignedTreeHead};
use support::*;

/// A blocking GET of `path` from the conduit: the body of a 200, else the
/// status as the error (what a tlog-tiles client sees).
fn fetcher(addr: std::net::SocketAddr) -> impl Fn(&str) -> Result<Vec<u8>, FetchError> {
    move |path: &str| {
        let r = herald_witness::client::request("GET", &format!("http://{addr}/{path}"), None)
            .map_err(|reason| FetchError {
                path: path.to_owned(),
                reason,
            })?;
        if r.status == 200 {
            Ok(r.body)
        } else {
            Err(FetchError {
                path: path.to_owned(),
                reason: format!("HTTP {}", r.status),
            })
        }
    }
}

fn log_verifier(origin: &str) -> NoteVerifier {
    NoteVerifier::ed25519(origin, conduit_key().public_key()).unwrap()
}

async fn sth(c: &Running) -> SignedTreeHead {
    let r = c.get("/v1/sth").await;
    assert_eq!(r.status, 200);
    SignedTreeHead::decode(&r.body).unwrap()
}

/// Post `n` messages from alice (nonces from `first`); the forwarded bytes
/// and their indices.
async fn post_many(c: &Running, first: u64, n: u64) -> Vec<(Vec<u8>, u64)> {
    let mut out = Vec::new();
    for i in first..first + n {
        let r = c
            .post(&message(&alice(), &bob(), i, &format!("m{i}")))
            .await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let made = created(&r.body);
        out.push((made.envelope, made.index.unwrap()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tile_client_rebuilds_the_notary_root_and_proves_every_envelope() {
    let c = start(|_| {}).await;
    // The default origin is the conduit's sigil.
    let origin = conduit_key()
        .public_key()
        .sigil(SigilForm::Default)
        .to_string();
    let wk = c.get("/.well-known/herald-conduit").await;
    let wk: serde_json::Value = serde_json::from_slice(&wk.body).unwrap();
    assert_eq!(wk["origin"], origin.as_str());

    // An empty log: a checkpoint of size 0, and no tile at all.
    let r = c.get("/checkpoint").await;
    assert_eq!(r.status, 200);
    let (cp0, _) = SignedCheckpoint::open(&r.body, &[log_verifier(&origin)]).unwrap();
    assert_eq!(cp0.checkpoint().size(), 0);
    assert_eq!(c.get("/tile/0/000").await.status, 404);

    // 300 envelopes: one full tile of 256 and a partial one of 44.
    let posted = post_many(&c, 1, 300).await;
    let head = sth(&c).await;
    assert_eq!(head.head().size(), 300);

    let r = c.get("/checkpoint").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    let (cp, _) = SignedCheckpoint::open(&r.body, &[log_verifier(&origin)]).unwrap();
    assert_eq!(cp.checkpoint().origin(), origin);
    // Signed by the conduit key only: a note by another key fails closed.
    let stranger = NoteVerifier::ed25519(&origin, SigningKey::from_seed(&[9; 32]).public_key());
    assert!(SignedCheckpoint::open(&r.body, &[stranger.unwrap()]).is_err());

    let addr = c.addr;
    let checkpoint = cp.checkpoint().clone();
    let head_root = *head.head().root();
    let leaves: Vec<(Leaf, u64)> = posted
        .iter()
        .map(|(b, i)| (Leaf::from_envelope(&EnvelopeRef::decode(b).unwrap()), *i))
        .collect();
    tokio::task::spawn_blocking(move || {
        let reader = TileReader::new(fetcher(addr), &checkpoint).unwrap();
        // The tiles' root is the notary's signed tree head's root.
        assert_eq!(reader.size(), 300);
        assert_eq!(*reader.root(), head_root);
        for (leaf, index) in &leaves {
            let path = reader.inclusion_proof(*index).unwrap();
            assert_eq!(reader.leaf_hash(*index).unwrap(), leaf.hash());
            verify_inclusion(&leaf.hash(), *index, 300, &path, &head_root).unwrap();
        }
        // The entry bundles hold the P9 leaf bytes, in order.
        let mut entries = reader.entries(0).unwrap();
        entries.extend(reader.entries(1).unwrap());
        assert_eq!(entries.len(), 300);
        for (leaf, index) in &leaves {
            assert_eq!(entries[usize::try_from(*index).unwrap()], leaf.encode());
        }
    })
    .await
    .unwrap();

    // Headers: tiles are immutable opaque bytes, full and partial.
    for path in [
        "/tile/0/000",
        "/tile/0/001.p/44",
        "/tile/1/000.p/1",
        "/tile/entries/001.p/44",
    ] {
        let r = c.get(path).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some("application/octet-stream"));
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=31536000, immutable")
        );
    }
    assert_eq!(c.get("/tile/0/000").await.body.len(), 256 * 32);
    assert_eq!(c.get("/tile/0/001.p/44").await.body.len(), 44 * 32);
    // Narrower partial tiles of a grown tile never change: still served.
    assert_eq!(c.get("/tile/0/001.p/3").await.status, 200);

    // Beyond the tree: 404, never cached; and malformed paths.
    for path in [
        "/tile/0/001",
        "/tile/0/001.p/45",
        "/tile/0/002.p/1",
        "/tile/entries/001",
        "/tile/1/000",
        "/tile/2/000.p/1",
        "/tile/0/x",
        "/tile/9/000",
    ] {
        let r = c.get(path).await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("cache-control"), Some("no-store"), "{path}");
    }
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_cosigns_the_conduit_checkpoint_and_its_growth() {
    let origin = "herald.example/conduit-test";
    let c = start(|cfg| cfg.origin = Some(origin.to_owned())).await;
    post_many(&c, 1, 5).await;

    let dir = tempfile::tempdir().unwrap();
    let witness_key = SigningKey::from_seed(&[0x77; 32]);
    let witness = herald_witness::Witness::open(
        "witness.example/w1",
        witness_key,
        vec![(origin.to_owned(), log_verifier(origin))],
        dir.path(),
    )
    .unwrap();
    let wverifier = witness.verifier().clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let waddr = listener.local_addr().unwrap();
    let served = tokio::spawn(
        axum::serve(listener, herald_witness::server::router(Arc::new(witness))).into_future(),
    );

    let addr = c.addr;
    let cosign = move |older: Option<herald_tlog::Checkpoint>| {
        let bytes = fetcher(addr)("checkpoint").unwrap();
        let (cp, _) = SignedCheckpoint::open(&bytes, &[log_verifier(origin)]).unwrap();
        let reader = TileReader::new(fetcher(addr), cp.checkpoint()).unwrap();
        // The consistency proof the witness asks for comes from tiles.
        let proof = |old: u64| {
            reader
                .prefix_proof(old)
                .map(|(_, p)| p)
                .map_err(|e| e.to_string())
        };
        let lines =
            herald_witness::client::add_checkpoint(&format!("http://{waddr}"), &cp, proof).unwrap();
        assert_eq!(lines.len(), 1);
        let mut note = Note::parse(&bytes).unwrap();
        note.push(lines[0].clone()).unwrap();
        // Both the log's signature and the witness's cosignature verify.
        let verified = note
            .verify(&[log_verifier(origin), wverifier.clone()])
            .unwrap();
        assert_eq!(verified.len(), 2);
        if let Some(older) = older {
            reader.consistency_proof(&older).unwrap();
        }
        cp.checkpoint().clone()
    };
    let first = tokio::task::spawn_blocking({
        let cosign = cosign.clone();
        move || cosign(None)
    })
    .await
    .unwrap();
    assert_eq!(first.size(), 5);

    // The log grows; the witness cosigns the next checkpoint only with a
    // consistency proof from the size it last cosigned (409, then retry).
    post_many(&c, 6, 7).await;
    let second = tokio::task::spawn_blocking(move || cosign(Some(first)))
        .await
        .unwrap();
    assert_eq!(second.size(), 12);
    served.abort();
    c.stop().await;
}
