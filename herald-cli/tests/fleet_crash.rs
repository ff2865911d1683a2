//! A fleet of three `herald conduit serve --store postgres://...` on one
//! throwaway PostgreSQL, SIGKILLed at random under load 21 times — every
//! other kill the log's sequencer (the holder of the advisory lock, found
//! in `pg_locks`) — each restarted (docs/conduit.md *Fleet*). Then:
//! nothing acknowledged is lost (store, inbox, log, its nonce still a
//! replay, through any conduit), the log has no gap and no duplicate,
//! every stored tree head and every head seen in a 201 is consistent with
//! every other, and the load's accounting balances (201 + 503 + cut
//! connections = posts; the database holds every 201 and nothing that was
//! not posted).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code, unreachable_pub)]
#[path = "../../herald-conduit/tests/support/pg.rs"]
mod pg;
mod support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::EnvelopeRef;
use herald_core::cbor::Value;
use herald_verify::{InclusionProof, Keyring, Provenance, SignedTreeHead};
use support::conduit::{bob, conduit_key, message, write_files};

const KILLS: usize = 21;
const CONDUITS: usize = 3;
const CLIENTS: usize = 8;
const T: Duration = Duration::from_secs(10);

fn keys() -> Keyring {
    let mut k = Keyring::new();
    k.insert(conduit_key().public_key(), Provenance::Pinned);
    k
}

/// Start fleet conduit `name` (relay + notary) on `url`.
fn spawn(dir: &Path, url: &str, name: &str) -> (Child, SocketAddr) {
    support::conduit::serve(|cmd| {
        cmd.args(["--roles", "relay,notary", "--batch-ms", "50", "--key"])
            .arg(dir.join("conduit.key"))
            .arg("--state")
            .arg(dir.join(format!("state-{name}")))
            .arg("--keyring")
            .arg(dir.join("keyring"))
            .arg("--store")
            .arg(format!("{url}?application_name={name}"));
    })
}

#[derive(Default)]
struct Tally {
    sent: HashSet<[u8; 32]>,
    acked: HashMap<[u8; 32], u64>,
    refused: u64,
    cut: u64,
    heads: BTreeMap<u64, SignedTreeHead>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_sigkill_under_load_loses_nothing_acknowledged() {
    let started = Instant::now();
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let db = cluster.client(&url).await;
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());

    let mut generation = 0usize;
    let mut slots: Vec<(Child, SocketAddr, String)> = Vec::new();
    for _ in 0..CONDUITS {
        generation += 1;
        let name = format!("c{generation}");
        let (child, addr) = spawn(dir.path(), &url, &name);
        slots.push((child, addr, name));
    }
    let live = Arc::new(Mutex::new(slots.iter().map(|s| s.1).collect::<Vec<_>>()));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let next = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (live, tally, next, stop) = (
            Arc::clone(&live),
            Arc::clone(&tally),
            Arc::clone(&next),
            Arc::clone(&stop),
        );
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let n = next.fetch_add(1, Ordering::SeqCst);
                let addr = {
                    let l = live.lock().unwrap();
                    l[usize::try_from(n).unwrap() % l.len()]
                };
                let m = message(n, "fleet crash test");
                let id = *EnvelopeRef::decode(&m).unwrap().id();
                tally.lock().unwrap().sent.insert(id);
                let r = match client::post(addr, "/v1/envelopes", &m, T).await {
                    Ok(r) => r,
                    Err(_) => {
                        tally.lock().unwrap().cut += 1;
                        continue;
                    }
                };
                match r.status {
                    201 => {
                        let body = Value::decode(&r.body).unwrap();
                        let p = body.as_map().and_then(|m| m.get("proof")).unwrap();
                        let proof = InclusionProof::decode(&p.to_vec()).unwrap();
                        proof.verify(&keys()).unwrap();
                        let mut t = tally.lock().unwrap();
                        t.heads.insert(proof.size(), proof.sth().clone());
                        assert!(t.acked.insert(id, n).is_none(), "acknowledged twice");
                    }
                    503 => tally.lock().unwrap().refused += 1,
                    s => panic!("status {s}: {}", String::from_utf8_lossy(&r.body)),
                }
            }
        }));
    }

    let mut rng = support::conduit::now() | 1;
    let mut sequencer_kills = 0;
    for kill in 0..KILLS {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        tokio::time::sleep(Duration::from_millis(30 + rng % 300)).await;
        // Every other kill: the sequencer, as PostgreSQL sees it.
        let holder: Option<String> = db
            .query_opt(
                "SELECT a.application_name FROM pg_locks l \
                 JOIN pg_stat_activity a ON a.pid = l.pid \
                 WHERE l.locktype = 'advisory' AND l.granted LIMIT 1",
                &[],
            )
            .await
            .unwrap()
            .map(|r| r.get(0));
        let by_name = holder
            .as_ref()
            .and_then(|h| slots.iter().position(|s| &s.2 == h));
        let victim = match by_name {
            Some(i) if kill % 2 == 0 => {
                sequencer_kills += 1;
                i
            }
            _ => usize::try_from(rng % CONDUITS as u64).unwrap(),
        };
        let (mut child, addr, _) = slots.remove(victim);
        live.lock().unwrap().retain(|a| *a != addr);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        generation += 1;
        let name = format!("c{generation}");
        let (child, addr) = spawn(dir.path(), &url, &name);
        live.lock().unwrap().push(addr);
        slots.push((child, addr, name));
    }
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        tokio::time::timeout(T * 2, t).await.unwrap().unwrap();
    }
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    let posted = next.load(Ordering::SeqCst) - 1;
    assert!(
        sequencer_kills >= KILLS / 2 - 1,
        "{sequencer_kills} sequencer kills"
    );

    // The accounting balances.
    let acked = u64::try_from(tally.acked.len()).unwrap();
    assert_eq!(acked + tally.refused + tally.cut, posted);
    assert!(acked > 100, "too little was acknowledged: {acked}");

    // The log: dense, no duplicate, the same count as the envelopes; and
    // nothing stored that was not posted.
    let (tree, logged) = pg::stored_log(&db).await;
    let stored: i64 = db
        .query_one("SELECT count(*) FROM envelopes", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(i64::try_from(logged.len()).unwrap(), stored);
    let ids: HashSet<[u8; 32]> = logged.into_iter().collect();
    for id in tally.acked.keys() {
        assert!(
            ids.contains(id),
            "an acknowledged envelope is not in the log"
        );
    }
    assert!(
        ids.is_subset(&tally.sent),
        "the log holds what nobody posted"
    );

    // Every head stored and every head seen in a 201: one tree.
    let mut heads = pg::stored_heads(&db).await;
    heads.extend(tally.heads.values().cloned());
    heads.sort_by_key(SignedTreeHead::size);
    pg::assert_one_tree(&tree, &heads, &conduit_key().public_key());

    // Through the surviving conduits: every acknowledged envelope stored,
    // in bob's inbox, proven in the log, its nonce a replay.
    let addrs: Vec<SocketAddr> = slots.iter().map(|s| s.1).collect();
    let (inbox, cursor) = support::conduit::read_inbox(&addrs, &bob(), T).await;
    assert_eq!(
        u64::try_from(inbox.len()).unwrap(),
        cursor,
        "inbox positions not dense"
    );
    let in_inbox: HashSet<_> = inbox.iter().copied().collect();
    assert_eq!(in_inbox.len(), inbox.len(), "an inbox duplicate");
    assert_eq!(i64::try_from(inbox.len()).unwrap(), stored);
    for (k, (id, n)) in tally.acked.iter().enumerate() {
        let via = addrs[k % addrs.len()];
        let hex = herald_verify::hex(id);
        assert!(
            in_inbox.contains(id),
            "acknowledged {hex} lost from the inbox"
        );
        let got = client::get_as(via, &format!("/v1/envelopes/{hex}"), &bob(), T)
            .await
            .unwrap();
        assert_eq!(got.status, 200, "acknowledged {hex} lost from the store");
        if k % 10 == 0 {
            let p = client::get(via, &format!("/v1/proof/inclusion/{hex}"), T)
                .await
                .unwrap();
            assert_eq!(p.status, 200);
            InclusionProof::decode(&p.body)
                .unwrap()
                .verify(&keys())
                .unwrap();
            let replay = client::post(via, "/v1/envelopes", &message(*n, "replayed"), T)
                .await
                .unwrap();
            assert_eq!(
                replay.status, 409,
                "the nonce of {hex} is no longer a replay"
            );
        }
    }
    for (mut child, _, _) in slots {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    println!(
        "{KILLS} SIGKILLs ({sequencer_kills} of the sequencer), {posted} posts: {acked} 201, \
         {} 503, {} cut; {stored} stored; {} tree heads; {:.1} s",
        tally.refused,
        tally.cut,
        heads.len(),
        started.elapsed().as_secs_f64()
    );
}
