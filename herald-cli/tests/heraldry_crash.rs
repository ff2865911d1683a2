//! `herald heraldry serve` killed with SIGKILL at random moments under
//! load, ten times, restarted each time (PROFILE P14, CONDUIT.md: what a
//! server acknowledged is on disk before the answer): no acknowledged
//! certification is lost — each is still served with a proof — and the
//! log never rolls back — every checkpoint a 201 carried is a prefix of
//! the final log (its root at that size, read from the tiles). Bounded:
//! each request and each run has a timeout.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_conduit::client;
use herald_core::{SigilForm, SigningKey};
use herald_merkle::Hash;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::NoteVerifier;
use herald_tlog::tiles::{FetchError, TileReader};
use herald_tlog::{Policy, TlogProof};
use support::heraldry::{self, item, key_request, log_key, policy_text};

const KILLS: usize = 10;
const CLIENTS: usize = 4;
const T: Duration = Duration::from_secs(10);
const ORIGIN: &str = "crash.example/log";

fn subject(n: u64) -> SigningKey {
    let mut seed = [0x77u8; 32];
    seed[..8].copy_from_slice(&n.to_be_bytes());
    SigningKey::from_seed(&seed)
}

#[derive(Default)]
struct Seen {
    /// subject number → the certification acknowledged.
    acked: BTreeMap<u64, Vec<u8>>,
    /// size → root of every checkpoint a 201 carried.
    roots: BTreeMap<u64, Hash>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_loses_no_acknowledged_certification_and_never_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = SigningKey::from_seed(&[0x54; 32]);
    let vkey = NoteVerifier::parse(&log_key(&key, ORIGIN)).unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let next = Arc::new(AtomicU64::new(1));
    let mut rng = support::conduit::now() | 1;
    for _ in 0..KILLS {
        let mut h = heraldry::serve(
            d,
            "h",
            &key,
            ORIGIN,
            &[],
            &[
                "--batch-ms",
                "20",
                "--rate-unknown",
                "0",
                "--rate-subject",
                "0",
            ],
        );
        let addr = h.addr;
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            let (seen, next, stop, vkey) = (
                Arc::clone(&seen),
                Arc::clone(&next),
                Arc::clone(&stop),
                vkey.clone(),
            );
            let herald = SigningKey::from_seed(&[0x54; 32]);
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let req = key_request(&subject(n), &herald);
                    let Ok(r) = client::post(addr, "/v1/certify", &req, T).await else {
                        continue;
                    };
                    if r.status != 201 {
                        assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
                        continue;
                    }
                    let (cert, proof) = item(&r.body);
                    let proof = TlogProof::parse(&proof).unwrap();
                    let (cp, _) = SignedCheckpoint::open(
                        proof.checkpoint().as_bytes(),
                        std::slice::from_ref(&vkey),
                    )
                    .unwrap();
                    proof.verify_inclusion(&cert, cp.checkpoint()).unwrap();
                    let mut s = seen.lock().unwrap();
                    s.roots
                        .insert(cp.checkpoint().size(), *cp.checkpoint().root());
                    s.acked.insert(n, cert);
                }
            }));
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        tokio::time::sleep(Duration::from_millis(50 + rng % 300)).await;
        h.child.kill().unwrap(); // SIGKILL
        h.child.wait().unwrap();
        stop.store(true, Ordering::SeqCst);
        for t in tasks {
            tokio::time::timeout(T * 2, t).await.unwrap().unwrap();
        }
    }

    let h = heraldry::serve(
        d,
        "h",
        &key,
        ORIGIN,
        &[],
        &[
            "--batch-ms",
            "20",
            "--rate-unknown",
            "0",
            "--rate-subject",
            "0",
        ],
    );
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(
        seen.acked.len() > KILLS,
        "too little acknowledged: {}",
        seen.acked.len()
    );
    // The restarted log publishes a checkpoint covering all it holds.
    let policy = policy_text(&[(log_key(&key, ORIGIN), Some(h.url()))], &[], 0);
    let policy = Policy::parse(policy.as_bytes()).unwrap();
    let largest = *seen.roots.keys().last().unwrap();
    let deadline = std::time::Instant::now() + T;
    let checkpoint = loop {
        let r = client::get(h.addr, "/checkpoint", T).await.unwrap();
        if r.status == 200 {
            let (cp, _) = SignedCheckpoint::open(&r.body, std::slice::from_ref(&vkey)).unwrap();
            if cp.checkpoint().size() >= largest {
                break cp.checkpoint().clone();
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the log rolled back below {largest}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Every checkpoint a 201 carried is a prefix of this log.
    let base = h.url();
    let roots = seen.roots.clone();
    tokio::task::spawn_blocking(move || {
        let fetch = |p: &str| {
            herald_witness::client::get(&format!("{base}/{p}")).map_err(|reason| FetchError {
                path: p.to_owned(),
                reason,
            })
        };
        let reader = TileReader::new(fetch, &checkpoint).unwrap();
        for (size, root) in &roots {
            assert_eq!(
                &reader.root_at(*size).unwrap(),
                root,
                "the log at size {size} changed"
            );
        }
    })
    .await
    .unwrap();
    // Every acknowledged certification is still served, with its proof.
    for (n, cert) in &seen.acked {
        let sigil = subject(*n).sigil(SigilForm::Default);
        let r = client::get(h.addr, &format!("/v1/certifications/{sigil}"), T)
            .await
            .unwrap();
        assert_eq!(r.status, 200);
        let items = herald_verify::CertificationItem::decode_sequence(&r.body, 16).unwrap();
        assert!(
            items.iter().any(|i| &i.certification == cert),
            "acknowledged certification of subject {n} lost"
        );
        let _ = heraldry::check_item(&items[0].encode(), &key, &policy);
    }
}
