//! `herald conduit serve` killed with SIGKILL at random moments under load,
//! at least 20 times, restarted each time (docs/conduit.md *The durability
//! promise*): nothing acknowledged is lost — every acknowledged id is in
//! the store, the inbox and the log, its nonce is still a replay — and
//! every tree head seen is consistent with every later one (neighbours and
//! a sample of pairs proven, the rest by transitivity). Bounded: each run
//! and each request has a timeout.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::conduit::{bob, conduit_key, message, now, write_files};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::EnvelopeRef;
use herald_core::cbor::Value;
use herald_verify::{ConsistencyProof, InclusionProof, Keyring, Provenance, SignedTreeHead};

const KILLS: usize = 24;
const CLIENTS: usize = 8;
const T: Duration = Duration::from_secs(10);

/// Start the conduit (relay + notary) over the state in `dir`.
fn spawn(dir: &Path) -> (Child, SocketAddr) {
    support::conduit::serve(|cmd| {
        cmd.args(["--roles", "relay,notary", "--batch-ms", "50", "--key"])
            .arg(dir.join("conduit.key"))
            .arg("--state")
            .arg(dir.join("state"))
            .arg("--keyring")
            .arg(dir.join("keyring"));
    })
}

#[derive(Default)]
struct Seen {
    /// id → (nonce number, the 201 body).
    acked: HashMap<[u8; 32], (u64, Vec<u8>)>,
    /// size → tree head, from the proofs of 201s.
    heads: BTreeMap<u64, SignedTreeHead>,
}

fn keys() -> Keyring {
    let mut k = Keyring::new();
    k.insert(conduit_key().public_key(), Provenance::Pinned);
    k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_loses_nothing_acknowledged() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let next = Arc::new(std::sync::atomic::AtomicU64::new(1));
    let mut rng = now() | 1;
    let mut kills = 0;
    while kills < KILLS {
        let (mut child, addr) = spawn(dir.path());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            let (seen, next, stop) = (Arc::clone(&seen), Arc::clone(&next), Arc::clone(&stop));
            tasks.push(tokio::spawn(async move {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let m = message(n, "crash test");
                    let Ok(r) = client::post(addr, "/v1/envelopes", &m, T).await else {
                        continue;
                    };
                    if r.status != 201 {
                        // Only a refusal of our own making is acceptable.
                        assert!(matches!(r.status, 503), "status {}", r.status);
                        continue;
                    }
                    let id = *EnvelopeRef::decode(&m).unwrap().id();
                    let body = Value::decode(&r.body).unwrap();
                    let proof = match body.as_map().and_then(|m| m.get("proof")) {
                        Some(p) => InclusionProof::decode(&p.to_vec()).unwrap(),
                        None => panic!("a notary's 201 without a proof"),
                    };
                    proof.verify(&keys()).unwrap();
                    let mut s = seen.lock().unwrap();
                    s.heads.insert(proof.size(), proof.sth().clone());
                    s.acked.insert(id, (n, r.body));
                }
            }));
        }
        // xorshift: a kill 30..330 ms into the load.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        tokio::time::sleep(Duration::from_millis(30 + rng % 300)).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        for t in tasks {
            tokio::time::timeout(T * 2, t).await.unwrap().unwrap();
        }
    }

    // Restart once more and check everything acknowledged.
    let (mut child, addr) = spawn(dir.path());
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(
        seen.acked.len() > KILLS,
        "too little was acknowledged: {}",
        seen.acked.len()
    );
    let (inbox, _) = support::conduit::read_inbox(&[addr], &bob(), T).await;
    let inbox: std::collections::HashSet<_> = inbox.into_iter().collect();
    for (id, (n, body)) in seen.acked.iter() {
        let hex = herald_verify::hex(id);
        let stored = client::get_as(addr, &format!("/v1/envelopes/{hex}"), &bob(), T)
            .await
            .unwrap();
        assert_eq!(stored.status, 200, "acknowledged {hex} lost from the store");
        assert!(inbox.contains(id), "acknowledged {hex} lost from the inbox");
        let p = client::get(addr, &format!("/v1/proof/inclusion/{hex}"), T)
            .await
            .unwrap();
        assert_eq!(p.status, 200, "acknowledged {hex} lost from the log");
        let p = InclusionProof::decode(&p.body).unwrap();
        p.verify(&keys()).unwrap();
        p.matches(&EnvelopeRef::decode(&stored.body).unwrap())
            .unwrap();
        let replay = client::post(addr, "/v1/envelopes", &message(*n, "replayed"), T)
            .await
            .unwrap();
        assert_eq!(
            replay.status, 409,
            "the nonce of {hex} is no longer a replay"
        );
        // Idempotent across crashes: the same envelope, the same answer's
        // envelope and index.
        let again = Value::decode(body).unwrap();
        assert!(again.as_map().unwrap().get("index").is_some());
    }
    // Every tree head seen is consistent with every later one. A verified
    // consistency proof shows the smaller tree is a prefix of the larger, so
    // proofs between neighbours prove every pair by transitivity; each head
    // against the last, and every pair among up to 40 heads spread over the
    // run, are proven directly as well. (The pipelined writer signs a head
    // every few posts on an idle machine: thousands of heads, and all their
    // pairs over HTTP would take many minutes.)
    let heads: Vec<_> = seen.heads.values().cloned().collect();
    let mut pairs = BTreeSet::new();
    for i in 1..heads.len() {
        pairs.insert((i - 1, i));
        pairs.insert((i - 1, heads.len() - 1));
    }
    let sample: Vec<usize> = (0..heads.len())
        .step_by(heads.len().div_ceil(40).max(1))
        .collect();
    for (k, &i) in sample.iter().enumerate() {
        for &j in &sample[k + 1..] {
            pairs.insert((i, j));
        }
    }
    for &(i, j) in &pairs {
        let (a, b) = (&heads[i], &heads[j]);
        let path = format!("/v1/proof/consistency?from={}&to={}", a.size(), b.size());
        let r = client::get(addr, &path, T).await.unwrap();
        assert_eq!(r.status, 200, "{path}");
        let cp = ConsistencyProof::decode(&r.body).unwrap();
        cp.verify(&keys()).unwrap();
        assert_eq!(cp.sth1().root(), a.root(), "{path}: the log forked");
        assert_eq!(cp.sth2().root(), b.root(), "{path}: the log forked");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    println!(
        "{KILLS} SIGKILLs, {} acknowledged, {} tree heads ({} pairs proven), {:.1} s",
        seen.acked.len(),
        heads.len(),
        pairs.len(),
        started.elapsed().as_secs_f64()
    );
}
