//! The notary's witnesses (`Config::witnesses`, witnesses.rs) in process on
//! loopback: a cosignature is published only when it verifies under the
//! key the witness was configured with, so an answer under another key is
//! dropped while the checkpoint is still published (after the round's
//! patience) with the cosignatures that did verify.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_core::SigningKey;
use herald_tlog::NoteVerifier;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_witness::client::WitnessTarget;
use support::*;

const ORIGIN: &str = "herald.example/witnessed";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_cosignatures_under_the_configured_key_are_published() {
    let log = NoteVerifier::ed25519(ORIGIN, conduit_key().public_key()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let witness = herald_witness::Witness::open(
        "w.example",
        SigningKey::from_seed(&[0x77; 32]),
        vec![(ORIGIN.to_owned(), log.clone())],
        dir.path(),
    )
    .unwrap();
    let right = witness.verifier().clone();
    // The same name, another key: what a misconfigured (or impersonated)
    // witness looks like.
    let wrong =
        NoteVerifier::cosigner("w.example", SigningKey::from_seed(&[0x78; 32]).public_key())
            .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = tokio::spawn(
        axum::serve(listener, herald_witness::server::router(Arc::new(witness))).into_future(),
    );

    let c = start(|cfg| {
        cfg.origin = Some(ORIGIN.to_owned());
        cfg.witnesses = vec![
            WitnessTarget {
                key: Some(right.clone()),
                url: url.clone(),
            },
            WitnessTarget {
                key: Some(wrong.clone()),
                url: url.clone(),
            },
        ];
    })
    .await;
    let r = c.post(&message(&alice(), &bob(), 1, "hello")).await;
    assert_eq!(r.status, 201);

    // Not complete (the second never verifies): published after the
    // round's patience (5 s) with the one cosignature that verified.
    let started = Instant::now();
    let cp = loop {
        let r = c.get("/checkpoint").await;
        assert_eq!(r.status, 200);
        let (cp, _) = SignedCheckpoint::open(&r.body, std::slice::from_ref(&log)).unwrap();
        let lines = cp.note().signatures().len();
        assert!(lines <= 2, "{}", String::from_utf8_lossy(&r.body));
        if lines == 2 {
            break cp;
        }
        assert!(
            started.elapsed() < T,
            "never published with its cosignature"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "published before the round's patience"
    );
    assert_eq!(cp.checkpoint().size(), 1);
    let found = cp.note().verify(&[right]).unwrap();
    assert_eq!(found.len(), 1);
    assert!(found[0].time.is_some());
    // Nothing verifies under the wrong key.
    assert!(cp.note().verify(&[wrong]).is_err());

    c.stop().await;
    served.abort();
}
