//! A conduit fleet on one real PostgreSQL (docs/conduit.md *Fleet*): a
//! throwaway cluster started here (support/pg.rs), conduits on
//! 127.0.0.1:0 sharing it with `--store postgres://...`, sharing the
//! conduit key.
//!
//! - the same envelope posted to three conduits at once is acknowledged
//!   identically; a replay through another conduit is 409; inboxes read the
//!   same, dense, through every conduit; proofs and tiles from any conduit;
//! - two molts racing through two conduits end `disputed`;
//! - the sequencer stops, another takes over, and every pair of stored
//!   tree heads is consistent;
//! - a newer schema, or a database of another key, is refused at start;
//! - a batch whose rules read deep into the witnessed lifecycle (a
//!   lineage four births deep, replays, strangers) is judged as one redb
//!   conduit judges it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use herald_conduit::Config;
use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Kind, Nonce, SigilForm, SigningKey};
use herald_verify::{InclusionProof, SignedTreeHead};
use support::pg::Cluster;
use support::*;

async fn fleet_conduit(url: &str, tune: impl FnOnce(&mut Config)) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = url.to_owned();
    let r = start_at(dir.path().join("state"), move |c| {
        c.store = Some(url);
        c.batch = Duration::from_millis(50);
        tune(c);
    })
    .await;
    (r, dir)
}

async fn sth_of(c: &Running) -> SignedTreeHead {
    let r = c.get("/v1/sth").await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    SignedTreeHead::decode(&r.body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_three_conduits_share_replay_inboxes_and_the_log() {
    let Some(pg) = Cluster::start() else {
        return;
    };
    let url = pg.create_db("fleet").await;
    let mut conduits = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..3 {
        let (c, d) = fleet_conduit(&url, |_| {}).await;
        conduits.push(c);
        dirs.push(d);
    }
    let (a, b, c) = (&conduits[0], &conduits[1], &conduits[2]);

    // The same envelope to all three at once: one acceptance, three
    // identical answers.
    let first = message(&alice(), &bob(), 1, "to everyone at once");
    let (ra, rb, rc) = tokio::join!(a.post(&first), b.post(&first), c.post(&first));
    for r in [&ra, &rb, &rc] {
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    }
    assert_eq!(ra.body, rb.body);
    assert_eq!(rb.body, rc.body);
    let made = created(&ra.body);
    assert_eq!(made.index, Some(0));
    assert_receipt(&made.envelope);
    assert_proof(&made.proof.unwrap(), &made.envelope);

    // A replay of its (from key, nonce) through another conduit: 409.
    let replay = message(&alice(), &bob(), 1, "the same nonce, other words");
    for conduit in [b, c] {
        let r = conduit.post(&replay).await;
        assert_eq!(r.status, 409);
        assert_refusal(&r.body, &replay, "replayed_nonce");
    }

    // 60 messages, 20 through each conduit concurrently, alice and bob to
    // each other: no lost or duplicated inbox positions.
    let mut tasks = Vec::new();
    for i in 0..60u64 {
        let (from, to) = if i % 2 == 0 {
            (alice(), bob())
        } else {
            (bob(), alice())
        };
        let bytes = message(&from, &to, 100 + i, &format!("m{i}"));
        let addr = conduits[usize::try_from(i % 3).unwrap()].addr;
        tasks.push(tokio::spawn(async move {
            let r = herald_conduit::client::post(addr, "/v1/envelopes", &bytes, T)
                .await
                .unwrap();
            assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
            created(&r.body)
        }));
    }
    let mut made = Vec::new();
    for t in tasks {
        made.push(t.await.unwrap());
    }
    // Leaf indices: dense 0..61, each once.
    let mut indices: Vec<u64> = made.iter().map(|m| m.index.unwrap()).collect();
    indices.sort_unstable();
    assert_eq!(indices, (1..61).collect::<Vec<_>>());

    let bob_sigil = bob().sigil(SigilForm::Default).to_string();
    let alice_sigil = alice().sigil(SigilForm::Default).to_string();
    for (who, key, n) in [(&bob_sigil, bob(), 31), (&alice_sigil, alice(), 30)] {
        let mut seen = Vec::new();
        for conduit in [a, b, c] {
            let r = conduit
                .get_as(&format!("/v1/inbox/{who}?after=0"), &key)
                .await;
            assert_eq!(r.status, 200);
            assert_eq!(r.header("herald-cursor"), Some(n.to_string().as_str()));
            let got = items(&r.body);
            assert_eq!(got.len(), n);
            seen.push(got);
        }
        assert_eq!(seen[0], seen[1]);
        assert_eq!(seen[1], seen[2]);
        // Paging after a cursor through another conduit continues exactly.
        let r = b.get_as(&format!("/v1/inbox/{who}?after=10"), &key).await;
        assert_eq!(items(&r.body), seen[0][10..]);
    }

    // A long poll on one conduit wakes for a post through another.
    // Carol's birth, taken by one conduit, teaches every conduit of the
    // fleet her key: she signs her reads (CONDUIT.md *Who may read what*).
    let carol = SigningKey::from_seed(&[0x33; 32]);
    assert_eq!(b.post(&born(&carol, now())).await.status, 201);
    let waiting = {
        let addr = c.addr;
        let reader = SigningKey::from_seed(&[0x33; 32]);
        let path = format!(
            "/v1/inbox/{}?after=0&wait=20",
            carol.sigil(SigilForm::Default)
        );
        tokio::spawn(async move {
            let t = Instant::now();
            let r = herald_conduit::client::get_as(addr, &path, &reader, T)
                .await
                .unwrap();
            (r, t.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let to_carol = message(&alice(), &carol, 500, "are you there?");
    assert_eq!(a.post(&to_carol).await.status, 201);
    let (r, waited) = waiting.await.unwrap();
    assert_eq!(r.header("herald-cursor"), Some("1"));
    assert_eq!(items(&r.body).len(), 1);
    assert!(
        waited < Duration::from_secs(5),
        "the long poll slept {waited:?}"
    );

    // One signed read, as a load balancer in front of the fleet passes it
    // (one Host for all): accepted by one conduit, refused as a replay by
    // every other (CONDUIT.md *Who may read what*: each signature once).
    let path = format!("/v1/inbox/{bob_sigil}?after=0");
    let host = "fleet.invalid";
    let uri = herald_http::signature::target_uri(host, &path);
    let s = herald_http::signature::sign(&bob(), &bob_sigil, "GET", &uri, now() - 3);
    let fields = [("Signature-Input", s.input), ("Signature", s.signature)];
    assert_eq!(raw_get(a.addr, host, &path, &fields).await, 200);
    for conduit in [a, b, c] {
        assert_eq!(raw_get(conduit.addr, host, &path, &fields).await, 401);
    }

    // Proofs from any conduit, against one log.
    let head = sth_of(c).await;
    assert_eq!(head.size(), 63, "61 messages, carol's birth, one to her");
    for m in &made {
        let id = herald_core::EnvelopeRef::decode(&m.envelope)
            .unwrap()
            .id()
            .to_owned();
        let via = &conduits[usize::try_from(m.index.unwrap() % 3).unwrap()];
        let r = via
            .get(&format!("/v1/proof/inclusion/{}", herald_verify::hex(&id)))
            .await;
        assert_eq!(r.status, 200);
        let p = InclusionProof::decode(&r.body).unwrap();
        p.verify(&published()).unwrap();
        assert_eq!(p.index(), m.index.unwrap());
    }
    // The C2SP tiles of another conduit rebuild the same root.
    let addr = b.addr;
    let root = *head.head().root();
    tokio::task::spawn_blocking(move || {
        let get = |path: &str| {
            herald_witness::client::get(&format!("http://{addr}/{path}")).map_err(|reason| {
                herald_tlog::tiles::FetchError {
                    path: path.to_owned(),
                    reason,
                }
            })
        };
        let text = get("checkpoint").unwrap();
        let origin = conduit_key()
            .public_key()
            .sigil(SigilForm::Default)
            .to_string();
        let vkey = herald_tlog::NoteVerifier::ed25519(&origin, conduit_key().public_key()).unwrap();
        let (cp, _) = herald_tlog::checkpoint::SignedCheckpoint::open(&text, &[vkey]).unwrap();
        assert_eq!(cp.checkpoint().size(), 63);
        let reader = herald_tlog::tiles::TileReader::new(get, cp.checkpoint()).unwrap();
        assert_eq!(*reader.root(), root);
    })
    .await
    .unwrap();

    for c in conduits {
        c.stop().await;
    }
}

/// The status of `GET path` sent to `addr` with `Host: host` and `fields`.
async fn raw_get(
    addr: std::net::SocketAddr,
    host: &str,
    path: &str,
    fields: &[(&str, String)],
) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (n, v) in fields {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(T, s.read_exact(&mut head))
        .await
        .unwrap()
        .unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

/// A fresh key's birth, some days ago (P7: self-certified).
fn born(k: &SigningKey, ts: u64) -> Vec<u8> {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Birth)
        .attest(
            "birth",
            herald_core::attestation::birth_attestation(&k.public_key(), "racer", &[]),
        )
        .sign(k)
        .unwrap()
        .into_bytes()
}

fn molt(old: &SigningKey, new: &SigningKey, ts: u64, n: u8) -> Vec<u8> {
    let mut p = herald_core::cbor::Map::new();
    p.insert(
        "new_key",
        Value::Bytes(new.public_key().as_bytes().to_vec()),
    );
    p.insert("not_before", Value::Unsigned(ts + 86_400));
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Molt)
        .nonce(Nonce([n; 16]))
        .payload(Value::Map(p))
        .sign(old)
        .unwrap()
        .into_bytes()
}

/// A message by the disputed `k` at `ts` (nonce `[n; 16]`) is refused
/// `disputed` by `conduit`.
async fn assert_disputed(conduit: &Running, k: &SigningKey, ts: u64, n: u8) {
    let say = EnvelopeBuilder::genesis(ts)
        .nonce(Nonce([n; 16]))
        .payload(Value::text("still me"))
        .sign(k)
        .unwrap()
        .into_bytes();
    let r = conduit.post(&say).await;
    assert_eq!(r.status, 422);
    assert!(r.header("herald-reasons").unwrap().contains("disputed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_molts_racing_through_two_conduits_end_disputed() {
    let Some(pg) = Cluster::start() else {
        return;
    };
    let url = pg.create_db("molts").await;
    let (a, _da) = fleet_conduit(&url, |_| {}).await;
    let (b, _db) = fleet_conduit(&url, |_| {}).await;
    for round in 0..3u8 {
        let racer = SigningKey::from_seed(&[0x40 + round; 32]);
        let t = now();
        let r = a.post(&born(&racer, t - 5 * 86_400)).await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let m1 = molt(
            &racer,
            &SigningKey::from_seed(&[0x50 + round; 32]),
            t - 60,
            1,
        );
        let m2 = molt(
            &racer,
            &SigningKey::from_seed(&[0x60 + round; 32]),
            t - 50,
            2,
        );
        let (r1, r2) = tokio::join!(a.post(&m1), b.post(&m2));
        // One molt is witnessed first (201); the other overlaps it: the
        // sigil is disputed (P8 rule 5), exactly as through one conduit.
        let mut statuses = [r1.status, r2.status];
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 422], "round {round}");
        let refused = if r1.status == 422 { &r1 } else { &r2 };
        assert!(
            refused
                .header("herald-reasons")
                .unwrap()
                .contains("disputed"),
            "{:?}",
            refused.header("herald-reasons")
        );
        // From now on, through either conduit, the sigil is disputed.
        for (i, conduit) in [&a, &b].into_iter().enumerate() {
            assert_disputed(conduit, &racer, t - 10, 10 + u8::try_from(i).unwrap()).await;
        }
    }
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_sequencer_takeover_keeps_every_tree_head_consistent() {
    let Some(pg) = Cluster::start() else {
        return;
    };
    let url = pg.create_db("takeover").await;
    // The first conduit up becomes the sequencer.
    let (a, _da) = fleet_conduit(&url, |_| {}).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (b, _db) = fleet_conduit(&url, |_| {}).await;
    let mut n = 0u64;
    for round in 0..3 {
        for conduit in [&a, &b] {
            for _ in 0..5 {
                n += 1;
                let r = conduit
                    .post(&message(&alice(), &bob(), 1000 + n, "x"))
                    .await;
                assert_eq!(r.status, 201, "round {round}");
            }
        }
    }
    // The sequencer goes away (its connections close: PostgreSQL frees the
    // advisory lock); B takes over and keeps answering 201 with proofs.
    a.stop().await;
    let started = Instant::now();
    for _ in 0..10 {
        n += 1;
        let r = b.post(&message(&alice(), &bob(), 1000 + n, "after")).await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let m = created(&r.body);
        assert_proof(&m.proof.unwrap(), &m.envelope);
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // A new conduit joins and is not the sequencer: its posts still get
    // heads (from B).
    let (c, _dc) = fleet_conduit(&url, |_| {}).await;
    for _ in 0..5 {
        n += 1;
        let r = c.post(&message(&bob(), &alice(), 1000 + n, "late")).await;
        assert_eq!(r.status, 201);
    }

    // Every stored head verifies and is consistent with every other.
    let client = pg.client(&url).await;
    let (tree, ids) = support::pg::stored_log(&client).await;
    assert_eq!(ids.len(), usize::try_from(n).unwrap());
    let heads = support::pg::stored_heads(&client).await;
    assert!(heads.len() >= 3, "{} heads", heads.len());
    support::pg::assert_one_tree(&tree, &heads, &conduit_key().public_key());
    b.stop().await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_refuses_a_newer_schema_and_another_key() {
    let Some(pg) = Cluster::start() else {
        return;
    };
    let url = pg.create_db("schema").await;
    let (a, _da) = fleet_conduit(&url, |_| {}).await;
    a.stop().await;

    // Another key than the fleet's: refused.
    let open = |key: SigningKey, url: String| {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("state"));
        config.store = Some(url);
        async move {
            let r = herald_conduit::Conduit::open(config, key, published())
                .await
                .map(|_| ());
            (r, dir)
        }
    };
    let u = url.clone();
    let (r, _d) = open(SigningKey::from_seed(&[0x01; 32]), u).await;
    let e = r.unwrap_err().to_string();
    assert!(e.contains("another key"), "{e}");

    // A schema newer than this conduit knows: refused, nothing written.
    let client = pg.client(&url).await;
    client
        .execute("INSERT INTO schema_migrations (version) VALUES (99)", &[])
        .await
        .unwrap();
    let u = url.clone();
    let (r, _d) = open(conduit_key(), u).await;
    let e = r.unwrap_err().to_string();
    assert!(e.contains("version 99, newer"), "{e}");
    // The migrations were applied once.
    let versions: Vec<i32> = client
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3, 4, 99]);
}

/// The reference for the race above: one redb conduit, the two molts in
/// turn. The refused molt's dispute is committed although nothing of its
/// batch was accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_redb_conduit_disputes_overlapping_molts() {
    let c = start(|_| {}).await;
    let racer = SigningKey::from_seed(&[0x71; 32]);
    let t = now();
    assert_eq!(c.post(&born(&racer, t - 5 * 86_400)).await.status, 201);
    let m1 = molt(&racer, &SigningKey::from_seed(&[0x72; 32]), t - 60, 1);
    let m2 = molt(&racer, &SigningKey::from_seed(&[0x73; 32]), t - 50, 2);
    assert_eq!(c.post(&m1).await.status, 201);
    let r = c.post(&m2).await;
    assert_eq!(r.status, 422);
    assert!(r.header("herald-reasons").unwrap().contains("disputed"));
    assert_disputed(&c, &racer, t - 10, 10).await;
    c.stop().await;
}

/// A birth of `k` at `ts` naming `parents` as its lineage (no consent:
/// recorded, not required).
fn born_of(k: &SigningKey, ts: u64, parents: &[&SigningKey]) -> Vec<u8> {
    let lineage: Vec<_> = parents
        .iter()
        .map(|p| p.public_key().sigil(SigilForm::Default))
        .collect();
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Birth)
        .attest(
            "birth",
            herald_core::attestation::birth_attestation(&k.public_key(), "kin", &lineage),
        )
        .sign(k)
        .unwrap()
        .into_bytes()
}

/// What `c` answers to `posts`, sent together (one batch of the writer):
/// each status and `herald-reasons`.
async fn burst(c: &Running, posts: &[Vec<u8>]) -> Vec<(u16, Option<String>)> {
    let answers = posts.iter().map(|p| async move {
        let r = c.post(p).await;
        (r.status, r.header("herald-reasons").map(str::to_owned))
    });
    join_all(answers.collect()).await
}

/// Await `futures` concurrently, results in order.
async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, o) in pinned.iter_mut().zip(out.iter_mut()) {
            if o.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *o = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}

/// The fleet reads what the rules need ahead of them and runs them again
/// when they read further (a lineage, a claim): the answers are the redb
/// conduit's, post for post.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_judges_a_deep_batch_as_one_redb_conduit_does() {
    let Some(pg) = Cluster::start() else {
        return;
    };
    let url = pg.create_db("parity").await;
    let (fleet, _df) = fleet_conduit(&url, |c| c.batch = Duration::from_millis(300)).await;
    let redb = start(|c| c.batch = Duration::from_millis(300)).await;
    let t = now();
    let kin: Vec<SigningKey> = (0..6u8)
        .map(|i| SigningKey::from_seed(&[0x90 + i; 32]))
        .collect();
    // A line of births, one at a time: each walks the lineage before it.
    let mut setup = Vec::new();
    for i in 0..4usize {
        let parents: Vec<&SigningKey> = kin.get(i.saturating_sub(1)..i).unwrap().iter().collect();
        setup.push(born_of(
            &kin[i],
            t - 9 * 86_400 + u64::try_from(i).unwrap(),
            &parents,
        ));
    }
    setup.push(message(&kin[0], &kin[1], 1, "first"));
    // Then one batch: a birth four generations deep, messages from every
    // generation, a replay of the first message's pair, a stranger.
    let replay = message(&kin[0], &kin[2], 1, "again");
    let stranger = SigningKey::from_seed(&[0x9f; 32]);
    let mut posts = vec![born_of(&kin[4], t - 86_400, &[&kin[3], &kin[1]])];
    posts.extend((0..4).map(|i| message(&kin[i], &kin[0], 2, "hello")));
    posts.push(replay);
    posts.push(message(&stranger, &kin[0], 3, "who?"));
    posts.push(setup[2].clone());
    let mut answers = Vec::new();
    for c in [&redb, &fleet] {
        for p in &setup {
            let r = c.post(p).await;
            assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        }
        answers.push(burst(c, &posts).await);
    }
    let statuses: Vec<u16> = answers[0].iter().map(|a| a.0).collect();
    assert_eq!(statuses, [201, 201, 201, 201, 201, 409, 422, 201]);
    assert_eq!(answers[1], answers[0]);
    fleet.stop().await;
    redb.stop().await;
}
