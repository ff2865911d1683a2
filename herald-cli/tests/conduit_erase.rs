//! Retention and erasure (CONDUIT.md revision 3, spec §11.4) through the
//! real `herald conduit serve` on loopback, on its redb store and on a
//! fleet's PostgreSQL: `DELETE /v1/envelopes/{id}` by the sender erases at
//! once and anyone else changes nothing; what remains is the log leaf, the
//! replay claim and a tombstone signed by the conduit (`410` to a `GET` and
//! to a new `POST` of the id, never stored again; another envelope on the
//! same nonce is `replayed_nonce`); a trace answer skips the erased member;
//! `--retain DAYS` erases old envelopes in the background, each pass in one
//! transaction, so a SIGKILL during the passes leaves every envelope
//! readable with its inbox entry or a tombstone without one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code, unreachable_pub)]
#[path = "../../herald-conduit/tests/support/pg.rs"]
mod pg;
mod support;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, SigilForm, SigningKey};
use support::conduit::{
    Killed, NOTARY, alice, birth, bob, carol, conduit_key, now, post_ok, write_files,
};

const T: Duration = Duration::from_secs(20);
const DAY: u64 = 86_400;

/// A relay + notary conduit over `dir` (keyring: alice, bob, carol), on
/// `store` (a fleet's URL) or its redb store, with `extra` flags.
fn spawn(dir: &Path, store: Option<&str>, extra: &[&str]) -> Killed {
    write_files(dir);
    let line = |k: &SigningKey| herald_verify::key_line(&k.public_key());
    std::fs::write(
        dir.join("keyring"),
        format!("{}\n{}\n{}\n", line(&alice()), line(&bob()), line(&carol())),
    )
    .unwrap();
    let mut args: Vec<&str> = NOTARY.to_vec();
    if let Some(url) = store {
        args.extend(["--store", url]);
    }
    args.extend(extra);
    support::conduit::start(dir, &args)
}

/// Alice's message to bob with nonce number `n`, signed at `ts`.
fn message_at(n: u64, ts: u64) -> Envelope {
    let mut nonce = [0u8; 16];
    nonce[..8].copy_from_slice(&n.to_be_bytes());
    EnvelopeBuilder::genesis(ts)
        .nonce(Nonce(nonce))
        .to(bob().sigil(SigilForm::Default))
        .payload(Value::text("erase me"))
        .sign(&alice())
        .unwrap()
}

fn hex(b: &[u8]) -> String {
    herald_verify::hex(b)
}

async fn post(addr: SocketAddr, bytes: &[u8]) -> client::Response {
    client::post(addr, "/v1/envelopes", bytes, T).await.unwrap()
}

/// The tombstone `body` checked: a refusal signed by the conduit, `parent`
/// = `id`, in `trace`, to alice, payload `{reason: "erased"}`, its `ts`
/// (the time of the erasure) within `at`; that time.
fn tombstone(
    body: &[u8],
    id: &[u8; 32],
    trace: &[u8; 32],
    at: std::ops::RangeInclusive<u64>,
) -> u64 {
    let mut keys = herald_verify::Keyring::new();
    keys.insert(
        conduit_key().public_key(),
        herald_verify::Provenance::Pinned,
    );
    let mut reasons = Vec::new();
    let checked = herald_core::check(body, &keys, &Default::default(), &mut reasons);
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    let env = checked.envelope.unwrap();
    assert_eq!(env.kind(), Kind::Refusal);
    assert_eq!(env.parent(), Some(id));
    assert_eq!(env.trace(), trace);
    let v = Value::decode(body).unwrap();
    let payload = v
        .as_map()
        .unwrap()
        .get("payload")
        .unwrap()
        .as_map()
        .unwrap();
    assert_eq!(payload.get("reason").unwrap().as_text(), Some("erased"));
    assert_eq!(
        env.to().map(|(_, s)| s),
        Some(alice().sigil(SigilForm::Default))
    );
    assert!(at.contains(&env.ts()), "{} not in {at:?}", env.ts());
    env.ts()
}

/// Ids of the envelopes in `owner`'s inbox.
async fn inbox(addr: SocketAddr, owner: &SigningKey) -> HashSet<[u8; 32]> {
    support::conduit::read_inbox(&[addr], owner, T)
        .await
        .0
        .into_iter()
        .collect()
}

/// Ids in the answer to `GET /v1/traces/{trace}` read by `who`.
async fn trace_ids(addr: SocketAddr, trace: &[u8; 32], who: &SigningKey) -> Vec<[u8; 32]> {
    let r = client::get_as(addr, &format!("/v1/traces/{}", hex(trace)), who, T)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    herald_verify::split_sequence(&r.body, 1 << 20, 1000)
        .into_iter()
        .map(|p| match p {
            herald_verify::Piece::Item { bytes, .. } => {
                *herald_core::EnvelopeRef::decode(bytes).unwrap().id()
            }
            _ => panic!("a trace answer is not a CBOR sequence"),
        })
        .collect()
}

/// DELETE by the sender, by anyone else, and what remains; `restart` gives
/// the conduit again after a stop (its address).
async fn erase_at_once(addr: SocketAddr, restart: impl FnOnce() -> SocketAddr) {
    let t = now();
    let first = message_at(1, t);
    let id = first.id();
    let trace = *first.view().trace();
    assert_eq!(post(addr, first.as_bytes()).await.status, 201);
    let reply = EnvelopeBuilder::reply(&first.view(), t)
        .nonce(Nonce([0x42; 16]))
        .to(alice().sigil(SigilForm::Default))
        .payload(Value::text("noted"))
        .sign(&bob())
        .unwrap();
    assert_eq!(post(addr, reply.as_bytes()).await.status, 201);
    let path = format!("/v1/envelopes/{}", hex(&id));

    // Anyone but the sender: refused, nothing changed.
    let r = client::delete_as(addr, &path, &bob(), T).await.unwrap();
    assert_eq!(r.status, 403, "the recipient");
    let r = client::delete_as(addr, &path, &carol(), T).await.unwrap();
    assert_eq!(r.status, 401, "a stranger");
    let r = client::request(addr, "DELETE", &path, None, T)
        .await
        .unwrap();
    assert_eq!(r.status, 401, "unsigned");
    let unknown = format!("/v1/envelopes/{}", "ab".repeat(32));
    let r = client::delete_as(addr, &unknown, &alice(), T)
        .await
        .unwrap();
    assert_eq!(r.status, 401, "an unknown id: the same as a stranger's");
    assert_eq!(
        client::get_as(addr, &path, &bob(), T).await.unwrap().status,
        200
    );
    assert!(inbox(addr, &bob()).await.contains(&id));

    // The sender: erased at once, the tombstone as proof.
    let r = client::delete_as(addr, &path, &alice(), T).await.unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let proof = r.body.clone();
    tombstone(&proof, &id, &trace, t..=now());

    // What remains: a 410 with the tombstone to whoever may read it, the
    // 401 of an unknown id to anyone else.
    for who in [alice(), bob()] {
        let r = client::get_as(addr, &path, &who, T).await.unwrap();
        assert_eq!((r.status, &r.body), (410, &proof));
    }
    let r = client::get_as(addr, &path, &carol(), T).await.unwrap();
    assert_eq!(r.status, 401);
    // No inbox entry; the trace skips it; the leaf stays in the log.
    assert!(!inbox(addr, &bob()).await.contains(&id));
    assert_eq!(trace_ids(addr, &trace, &bob()).await, vec![reply.id()]);
    let r = client::get(addr, &format!("/v1/proof/inclusion/{}", hex(&id)), T)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "the leaf's inclusion proof");

    // Posted again: 410, the same tombstone, never stored again; another
    // envelope on its nonce: replayed_nonce; erased again: 410.
    let r = post(addr, first.as_bytes()).await;
    assert_eq!((r.status, &r.body), (410, &proof));
    let same_nonce = EnvelopeBuilder::genesis(t + 1)
        .nonce(Nonce(*first.view().nonce()))
        .to(bob().sigil(SigilForm::Default))
        .payload(Value::text("again"))
        .sign(&alice())
        .unwrap();
    let r = post(addr, same_nonce.as_bytes()).await;
    assert_eq!(r.status, 409, "{}", String::from_utf8_lossy(&r.body));
    let r = client::delete_as(addr, &path, &alice(), T).await.unwrap();
    assert_eq!((r.status, &r.body), (410, &proof));

    // A birth is public key history: never erased.
    let dan = SigningKey::from_seed(&[0x44; 32]);
    let b = birth(&dan, "dan", t);
    post_ok(addr, b.as_bytes()).await;
    let r = client::delete_as(addr, &format!("/v1/envelopes/{}", hex(&b.id())), &dan, T)
        .await
        .unwrap();
    assert_eq!(r.status, 409);

    // Durable: the same after a restart.
    let addr = restart();
    let r = client::get_as(addr, &path, &alice(), T).await.unwrap();
    assert_eq!((r.status, &r.body), (410, &proof));
    let r = post(addr, first.as_bytes()).await;
    assert_eq!((r.status, &r.body), (410, &proof));
    assert!(!inbox(addr, &bob()).await.contains(&id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sender_erases_at_once_and_a_tombstone_remains() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), None, &[]);
    let mut again = None;
    erase_at_once(c.addr, || {
        drop(c);
        let c = spawn(dir.path(), None, &[]);
        let addr = c.addr;
        again = Some(c);
        addr
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_the_sender_erases_at_once_and_a_tombstone_remains() {
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.create_db("erase").await;
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), Some(&url), &[]);
    let mut again = None;
    erase_at_once(c.addr, || {
        drop(c);
        // Another conduit of the fleet, another state directory.
        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        let c = spawn(&other, Some(&url), &[]);
        let addr = c.addr;
        again = Some(c);
        addr
    })
    .await;
}

/// Post alice's messages to bob numbered `range`, signed two days ago, on
/// 8 kept-alive connections; their ids.
async fn post_old(addr: SocketAddr, range: std::ops::Range<u64>) -> Vec<[u8; 32]> {
    let ts = now() - 2 * DAY;
    let envelopes: Vec<Envelope> = range.map(|n| message_at(n, ts)).collect();
    let ids = envelopes.iter().map(Envelope::id).collect();
    let chunk = envelopes.len().div_ceil(8).max(1);
    let mut tasks = Vec::new();
    for part in envelopes.chunks(chunk) {
        let part: Vec<Vec<u8>> = part.iter().map(|e| e.as_bytes().to_vec()).collect();
        tasks.push(tokio::spawn(async move {
            let mut c = client::Connection::connect(addr).await.unwrap();
            for b in part {
                let r = c.post("/v1/envelopes", &b, T).await.unwrap();
                assert_eq!(r.status, 201);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    ids
}

/// `herald_conduit_erased_total` of `/metrics` (0 until shown).
async fn erased_total(addr: SocketAddr) -> u64 {
    let r = client::get(addr, "/metrics", T).await.unwrap();
    String::from_utf8_lossy(&r.body)
        .lines()
        .find_map(|l| l.strip_prefix("herald_conduit_erased_total "))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// `--retain 1`: the old are erased in the background, the fresh and the
/// births stay.
async fn retention(addr: SocketAddr, old: &[[u8; 32]], fresh: [u8; 32]) {
    let until = Instant::now() + Duration::from_secs(30);
    // No signal tells a test a pass ran but /metrics: poll it.
    while erased_total(addr).await < old.len() as u64 {
        assert!(Instant::now() < until, "retention did not erase in 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left = inbox(addr, &bob()).await;
    assert!(left.contains(&fresh));
    for id in old {
        assert!(!left.contains(id));
        let path = format!("/v1/envelopes/{}", hex(id));
        let r = client::get_as(addr, &path, &bob(), T).await.unwrap();
        assert_eq!(r.status, 410);
    }
    let r = client::get_as(addr, &format!("/v1/envelopes/{}", hex(&fresh)), &bob(), T)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_erases_the_old_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), None, &["--retain", "1"]);
    let old = post_old(c.addr, 1..6).await;
    let fresh = message_at(100, now());
    post_ok(c.addr, fresh.as_bytes()).await;
    retention(c.addr, &old, fresh.id()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_retention_erases_the_old_in_the_background() {
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.create_db("retain").await;
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), Some(&url), &["--retain", "1"]);
    let old = post_old(c.addr, 1..6).await;
    let fresh = message_at(100, now());
    post_ok(c.addr, fresh.as_bytes()).await;
    retention(c.addr, &old, fresh.id()).await;
}

/// Old envelopes on a conduit without retention; then with `--retain 1`,
/// killed (SIGKILL) once the passes have begun; then, without retention,
/// every envelope is readable with its inbox entry or a tombstone without
/// one, and the erased are whole passes.
async fn killed_during_retention(start: impl Fn(&[&str]) -> Killed) {
    const N: u64 = 1500;
    let c = start(&[]);
    let ids = post_old(c.addr, 0..N).await;
    drop(c);
    let c = start(&["--retain", "1"]);
    let until = Instant::now() + Duration::from_secs(30);
    while erased_total(c.addr).await == 0 {
        assert!(Instant::now() < until, "no retention pass in 30 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Into the next pass (one a second), at a moment that varies.
    tokio::time::sleep(Duration::from_millis(900 + u64::from(now() as u8 % 200))).await;
    drop(c); // SIGKILL
    let c = start(&[]);
    let in_inbox = inbox(c.addr, &bob()).await;
    let mut erased = 0u64;
    for id in &ids {
        let path = format!("/v1/envelopes/{}", hex(id));
        let r = client::get_as(c.addr, &path, &bob(), T).await.unwrap();
        match r.status {
            200 => assert!(in_inbox.contains(id), "readable without its inbox entry"),
            410 => {
                assert!(!in_inbox.contains(id), "a tombstone with an inbox entry");
                erased += 1;
            }
            s => panic!("{s}"),
        }
    }
    assert_eq!(in_inbox.len() as u64 + erased, N);
    assert!(erased > 0 && erased < N, "{erased} of {N} erased");
    assert_eq!(erased % 256, 0, "{erased}: not whole passes of 256");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_during_retention_leaves_nothing_half_erased() {
    let dir = tempfile::tempdir().unwrap();
    killed_during_retention(|extra| spawn(dir.path(), None, extra)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_a_sigkill_during_retention_leaves_nothing_half_erased() {
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.create_db("retain_kill").await;
    let dir = tempfile::tempdir().unwrap();
    killed_during_retention(|extra| spawn(dir.path(), Some(&url), extra)).await;
}
