//! Load (docs/performance.md *(8)*): 50 concurrent clients post 20 000
//! envelopes — valid ones, exact repeats, replays, forgeries, oversize and
//! garbage mixed. Every valid envelope is acknowledged exactly once, every
//! other post gets its refusal or 400, and afterwards the log, the inbox
//! and `/v1/traces` hold exactly the acknowledged set and every proof
//! verifies. `HERALD_LOAD_POSTS` changes the total.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use herald_core::{EnvelopeRef, SigilForm};
use support::*;

const CLIENTS: u64 = 50;
const MAX_BODY: usize = 16 << 10;

#[derive(Default)]
struct Tally {
    acked: HashMap<[u8; 32], Vec<u8>>,
    statuses: HashMap<(&'static str, u16), u64>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clients_mixed_posts() {
    let total: u64 = std::env::var("HERALD_LOAD_POSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let c = Arc::new(start(|cfg| cfg.max_body = MAX_BODY).await);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let c = Arc::clone(&c);
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            let mut mine: Vec<(u64, Vec<u8>, Vec<u8>)> = Vec::new();
            let share = total / CLIENTS + u64::from(client < total % CLIENTS);
            for i in 0..share {
                let n = client << 32 | i;
                let (what, body, expect) = match i % 20 {
                    // An exact repeat of one of ours: the same 201 body.
                    5 | 15 if !mine.is_empty() => {
                        let (_, bytes, first) = &mine[(i as usize) % mine.len()];
                        let r = c.post(bytes).await;
                        assert_eq!((r.status, &r.body), (201, first), "repeat");
                        *tally.statuses.entry(("repeat", 201)).or_default() += 1;
                        continue;
                    }
                    // A replay: another envelope with one of our nonces.
                    6 | 16 if !mine.is_empty() => {
                        let (nonce, _, _) = &mine[(i as usize) % mine.len()];
                        ("replay", message(&alice(), &bob(), *nonce, "replayed"), 409)
                    }
                    7 => {
                        let mut f = message(&alice(), &bob(), n, "forged text");
                        let at = f.windows(6).position(|w| w == b"forged").unwrap();
                        f[at] ^= 0x20;
                        ("forged", f, 422)
                    }
                    8 => (
                        "oversize",
                        message(&alice(), &bob(), n, &"o".repeat(MAX_BODY)),
                        413,
                    ),
                    9 | 19 => ("garbage", format!("garbage {n}").into_bytes(), 400),
                    _ => ("valid", message(&alice(), &bob(), n, "load"), 201),
                };
                let r = c.post(&body).await;
                assert_eq!(
                    r.status,
                    expect,
                    "{what}: {}",
                    String::from_utf8_lossy(&r.body)
                );
                *tally.statuses.entry((what, r.status)).or_default() += 1;
                match what {
                    "valid" => {
                        let id = *EnvelopeRef::decode(&body).unwrap().id();
                        assert!(tally.acked.insert(id, r.body.clone()).is_none());
                        mine.push((n, body, r.body));
                    }
                    "garbage" => {}
                    _ => assert_refusal(
                        &r.body,
                        &body,
                        match what {
                            "replay" => "replayed_nonce",
                            "forged" => "id_mismatch",
                            _ => "too_large",
                        },
                    ),
                }
            }
            tally
        }));
    }
    let mut acked: HashMap<[u8; 32], Vec<u8>> = HashMap::new();
    let mut statuses: HashMap<(&'static str, u16), u64> = HashMap::new();
    for t in tasks {
        let tally = t.await.unwrap();
        for (id, body) in tally.acked {
            assert!(acked.insert(id, body).is_none(), "acknowledged twice");
        }
        for (k, v) in tally.statuses {
            *statuses.entry(k).or_default() += v;
        }
    }
    let took = started.elapsed();
    let posts: u64 = statuses.values().sum();
    assert_eq!(posts, total);

    // Every 201 carries a proof that verifies and covers its envelope.
    let mut indices = HashSet::new();
    for body in acked.values() {
        let made = created(body);
        assert_receipt(&made.envelope);
        let p = assert_proof(&made.proof.unwrap(), &made.envelope);
        assert!(indices.insert(p.index()));
    }
    // The log holds exactly the acknowledged set: as many leaves, dense.
    let sth = herald_verify::SignedTreeHead::decode(&c.get("/v1/sth").await.body).unwrap();
    assert_eq!(sth.size(), acked.len() as u64);
    assert_eq!(indices, (0..acked.len() as u64).collect());
    // The inbox holds exactly the acknowledged set.
    let bob_sigil = bob().sigil(SigilForm::Default).to_string();
    let mut inbox = HashSet::new();
    let mut cursor = 0u64;
    loop {
        let r = c
            .get_as(&format!("/v1/inbox/{bob_sigil}?after={cursor}"), &bob())
            .await;
        let next: u64 = r.header("herald-cursor").unwrap().parse().unwrap();
        if next == cursor {
            break;
        }
        for e in items(&r.body) {
            assert!(inbox.insert(*EnvelopeRef::decode(&e).unwrap().id()));
        }
        cursor = next;
    }
    assert_eq!(inbox, acked.keys().copied().collect());
    // Each acknowledged genesis is its own trace, holding exactly it.
    for (id, body) in &acked {
        let r = c
            .get_as(&format!("/v1/traces/{}", herald_verify::hex(id)), &bob())
            .await;
        assert_eq!(items(&r.body), vec![created(body).envelope]);
    }
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let mut counts: Vec<_> = statuses.into_iter().collect();
    counts.sort();
    println!(
        "{posts} posts by {CLIENTS} clients in {:.2} s ({:.0} posts/s), {} acknowledged; {counts:?}; peak {rss}",
        took.as_secs_f64(),
        posts as f64 / took.as_secs_f64(),
        acked.len()
    );
    Arc::into_inner(c).unwrap().stop().await;
}
