//! Hostile posts to the real `herald conduit serve` on loopback
//! (docs/conduit.md *Hostile posts*, CONDUIT.md revision 3), each bounded
//! in time and count:
//!
//! - an envelope from an unknown key with thousands of co-signatures naming
//!   a keyring sigil is refused `413 too_many_signatures` before anything is
//!   verified, one at the cap costs the conduit a few single verifications
//!   of its size (its CPU time from `/proc/PID/stat`, against a single
//!   verification measured in this process), and a flood of them leaves a
//!   keyring sender's posts answered `201`;
//! - unsigned junk naming a sender's `from` never spends that sender's
//!   `--rate` tokens;
//! - births from fresh keys are held to `--rate-unknown`, refused signed
//!   `429 rate_limited`, while a keyring sender's posts get `201`;
//! - a relay refuses `413 too_large` an envelope its receipt would push
//!   past P1's limit, and accepts one at the `max_body` it advertises;
//! - `Herald-Reasons` is bounded however many faults an envelope holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::conduit::{Killed, alice, bob, message, now, write_files};

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeBuilder, Kind, Nonce, SigilForm, SigningKey};

const T: Duration = Duration::from_secs(20);

/// A conduit over `dir` (keyring: alice, bob) with `extra` flags.
fn spawn(dir: &Path, extra: &[&str]) -> Killed {
    support::conduit::start(dir, extra)
}

/// A small deterministic generator (the bytes only need to be arbitrary).
struct Bytes(u64);

impl Bytes {
    fn fill(&mut self, out: &mut [u8]) {
        for b in out {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            *b = self.0 as u8;
        }
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        self.fill(&mut a);
        a
    }
}

/// `bytes` with `n` signature maps appended, each `by` the sigil `by` in
/// scope `human_approval`, with arbitrary `sig` bytes.
fn with_cosignatures(bytes: &[u8], by: &str, n: usize, rng: &mut Bytes) -> Vec<u8> {
    let Value::Map(mut env) = Value::decode(bytes).unwrap() else {
        panic!("an envelope is a map");
    };
    let Some(Value::Array(mut sigs)) = env.remove("signatures") else {
        panic!("an envelope has signatures");
    };
    for _ in 0..n {
        let mut m = Map::new();
        m.insert("alg", Value::text("ed25519"));
        m.insert("by", Value::text(by));
        m.insert("scope", Value::text("human_approval"));
        m.insert("sig", Value::Bytes(rng.array::<64>().to_vec()));
        sigs.push(Value::Map(m));
    }
    env.insert("signatures", Value::Array(sigs));
    Value::Map(env).to_vec()
}

/// A message by `key` to bob with a payload of `pad` bytes of text.
fn padded(key: &SigningKey, n: u64, pad: usize) -> Vec<u8> {
    let mut nonce = [0x5a; 16];
    nonce[..8].copy_from_slice(&n.to_be_bytes());
    EnvelopeBuilder::genesis(now())
        .nonce(Nonce(nonce))
        .to(bob().sigil(SigilForm::Default))
        .payload(Value::text("p".repeat(pad)))
        .sign(key)
        .unwrap()
        .into_bytes()
}

/// A fresh key's birth (P7: self-certified).
fn birth(k: &SigningKey) -> Vec<u8> {
    support::conduit::birth(k, "flood", now()).into_bytes()
}

/// The `reason` of a refusal body, after checking it is a refusal signed
/// by the conduit.
fn reason(body: &[u8]) -> String {
    let conduit = support::conduit::conduit_key().public_key();
    let mut keys = herald_verify::Keyring::new();
    keys.insert(conduit, herald_verify::Provenance::Pinned);
    let mut reasons = Vec::new();
    let checked = herald_core::check(body, &keys, &Default::default(), &mut reasons);
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    let env = checked.envelope.unwrap();
    assert_eq!(env.kind(), Kind::Refusal);
    let v = Value::decode(body).unwrap();
    let payload = v.as_map().unwrap().get("payload").unwrap();
    payload
        .as_map()
        .unwrap()
        .get("reason")
        .unwrap()
        .as_text()
        .unwrap()
        .to_owned()
}

/// CPU seconds (user + system) of the process `pid`, or of this thread
/// with `None`, from procfs (USER_HZ is 100 on Linux).
fn cpu_seconds(pid: Option<u32>) -> f64 {
    let path = match pid {
        Some(p) => format!("/proc/{p}/stat"),
        None => "/proc/thread-self/stat".to_owned(),
    };
    let stat = std::fs::read_to_string(path).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// CPU seconds of one single verification of `bytes` (one signature, a
/// keyring key), in this process: repeated until 0.5 s of CPU is spent.
fn single_verification(bytes: &[u8]) -> f64 {
    let mut keys = herald_verify::Keyring::new();
    keys.insert(alice().public_key(), herald_verify::Provenance::Pinned);
    let start = cpu_seconds(None);
    let mut n = 0u32;
    while cpu_seconds(None) - start < 0.5 || n < 3 {
        let mut reasons = Vec::new();
        let c = herald_core::check(bytes, &keys, &Default::default(), &mut reasons);
        assert_eq!(c.status, herald_core::Status::Valid, "{reasons:?}");
        n += 1;
    }
    (cpu_seconds(None) - start) / f64::from(n)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn co_signature_floods_cost_a_few_verifications() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let mut conduit = spawn(dir.path(), &[]);
    let (addr, pid) = (conduit.addr, conduit.child.id());
    let mut rng = Bytes(0x9e37_79b9_7f4a_7c15);
    let alice_sigil = alice().sigil(SigilForm::Default).to_string();
    let stranger = SigningKey::from_seed(&rng.array());

    // 7 000 co-signatures naming a keyring sigil, from an unknown key.
    let huge = with_cosignatures(&padded(&stranger, 1, 64), &alice_sigil, 7_000, &mut rng);
    assert!(
        huge.len() > 900_000 && huge.len() < 1 << 20,
        "{}",
        huge.len()
    );
    // At the cap: the origin and 31 co-signatures, padded to the same size.
    let capped = with_cosignatures(
        &padded(&stranger, 2, huge.len() - 5_000),
        &alice_sigil,
        31,
        &mut rng,
    );
    let genuine_same_size = padded(&alice(), 3, huge.len() - 1_000);
    let one = single_verification(&genuine_same_size);

    for (bytes, status, why, posts) in [
        (&huge, 413, "too_many_signatures", 3u32),
        (&capped, 422, "unknown_signer", 5),
    ] {
        let before = cpu_seconds(Some(pid));
        for _ in 0..posts {
            let r = client::post(addr, "/v1/envelopes", bytes, T).await.unwrap();
            assert_eq!(r.status, status, "{why}");
            assert_eq!(reason(&r.body), why);
        }
        let per_post = (cpu_seconds(Some(pid)) - before) / f64::from(posts);
        let ratio = per_post / one;
        eprintln!(
            "{why}: {} bytes, {per_post:.4} s of conduit CPU per post = {ratio:.2} single verifications ({one:.4} s)",
            bytes.len()
        );
        // The goal is at most 10; 7 000 co-signatures cost hundreds before.
        assert!(ratio < 10.0, "{why}: {ratio:.2} single verifications");
    }

    // Six posters of the huge envelope at once: a keyring sender's posts
    // are still answered 201.
    let stop = Arc::new(AtomicBool::new(false));
    let hostile = Arc::new(AtomicUsize::new(0));
    let huge = Arc::new(huge);
    let flood: Vec<_> = (0..6)
        .map(|_| {
            let (stop, hostile, huge) =
                (Arc::clone(&stop), Arc::clone(&hostile), Arc::clone(&huge));
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let r = client::post(addr, "/v1/envelopes", &huge, T).await.unwrap();
                    assert_eq!(r.status, 413);
                    hostile.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let mut created = 0;
    for n in 0..20 {
        let r = client::post(addr, "/v1/envelopes", &message(100 + n, "hi"), T)
            .await
            .unwrap();
        created += usize::from(r.status == 201);
    }
    stop.store(true, Ordering::SeqCst);
    for f in flood {
        f.await.unwrap();
    }
    eprintln!(
        "during {} hostile posts: {created} of 20 genuine posts answered 201",
        hostile.load(Ordering::SeqCst)
    );
    assert_eq!(created, 20);
    assert!(hostile.load(Ordering::SeqCst) >= 6);
    conduit.child.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsigned_junk_spends_nobody_s_rate() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let conduit = spawn(dir.path(), &["--rate", "5", "--burst", "5"]);
    let addr = conduit.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let junk_sent = Arc::new(AtomicUsize::new(0));
    let attacker = {
        let (stop, junk_sent) = (Arc::clone(&stop), Arc::clone(&junk_sent));
        tokio::spawn(async move {
            let mut rng = Bytes(7);
            while !stop.load(Ordering::SeqCst) {
                // `{id, from: alice, trace}`: no signature at all.
                let mut m = Map::new();
                m.insert("id", Value::Bytes(rng.array::<32>().to_vec()));
                m.insert(
                    "from",
                    Value::text(alice().sigil(SigilForm::Default).to_string()),
                );
                m.insert("trace", Value::Bytes(rng.array::<32>().to_vec()));
                let r = client::post(addr, "/v1/envelopes", &Value::Map(m).to_vec(), T)
                    .await
                    .unwrap();
                assert_eq!(r.status, 422, "junk is refused for what it is");
                junk_sent.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    // Alice posts 4 a second, under her rate of 5.
    let mut created = 0;
    for n in 0..16 {
        let at = Instant::now();
        let r = client::post(addr, "/v1/envelopes", &message(n + 1, "hi"), T)
            .await
            .unwrap();
        created += usize::from(r.status == 201);
        tokio::time::sleep(Duration::from_millis(250).saturating_sub(at.elapsed())).await;
    }
    stop.store(true, Ordering::SeqCst);
    attacker.await.unwrap();
    let junk = junk_sent.load(Ordering::SeqCst);
    eprintln!("during {junk} unsigned posts naming alice: {created} of 16 of hers answered 201");
    assert!(junk >= 40, "the attacker sent {junk}");
    assert_eq!(created, 16);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn births_from_fresh_keys_are_held_to_the_unknown_rate() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let conduit = spawn(dir.path(), &["--rate", "5", "--rate-unknown", "10"]);
    let addr = conduit.addr;
    let births: Vec<Vec<u8>> = (0..400u32)
        .map(|i| {
            let mut seed = [0x77; 32];
            seed[..4].copy_from_slice(&i.to_be_bytes());
            birth(&SigningKey::from_seed(&seed))
        })
        .collect();
    let births = Arc::new(births);
    let next = Arc::new(AtomicUsize::new(0));
    let accepted = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let flood: Vec<_> = (0..4)
        .map(|_| {
            let (births, next, accepted) = (
                Arc::clone(&births),
                Arc::clone(&next),
                Arc::clone(&accepted),
            );
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(b) = births.get(i) else { break };
                    let r = client::post(addr, "/v1/envelopes", b, T).await.unwrap();
                    match r.status {
                        201 => {
                            accepted.fetch_add(1, Ordering::SeqCst);
                        }
                        429 => {
                            assert_eq!(reason(&r.body), "rate_limited");
                            assert!(r.header("retry-after").is_some());
                        }
                        s => panic!("a birth answered {s}"),
                    }
                }
            })
        })
        .collect();
    let mut created = 0;
    for n in 0..10 {
        let r = client::post(addr, "/v1/envelopes", &message(n + 1, "hi"), T)
            .await
            .unwrap();
        created += usize::from(r.status == 201);
        tokio::time::sleep(Duration::from_millis(210)).await;
    }
    for f in flood {
        f.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let accepted = accepted.load(Ordering::SeqCst);
    eprintln!(
        "400 births in {secs:.2} s: {accepted} accepted under --rate-unknown 10; {created} of 10 genuine posts answered 201"
    );
    // A burst of 10, then 10 a second (a second of slack for the clock).
    assert!(
        accepted as f64 <= 10.0 + 10.0 * (secs + 1.0),
        "{accepted} births in {secs:.2} s"
    );
    assert!(accepted >= 10, "{accepted}");
    assert_eq!(created, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_leaves_room_for_its_receipt() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let conduit = spawn(dir.path(), &["--roles", "relay"]);
    let addr = conduit.addr;
    let wk = client::get(addr, "/.well-known/herald-conduit", T)
        .await
        .unwrap();
    let wk: serde_json::Value = serde_json::from_slice(&wk.body).unwrap();
    let max = usize::try_from(wk["max_body"].as_u64().unwrap()).unwrap();
    let p1 = 1usize << 20;
    assert!(max < p1 && max > p1 - 512, "advertised max_body {max}");
    // An envelope of exactly `len` bytes (a long text's head is 5 bytes
    // whatever its length past 64 KiB).
    let sized = |n: u64, len: usize| {
        let overhead = padded(&alice(), n, 100_000).len() - 100_000;
        let e = padded(&alice(), n, len - overhead);
        assert_eq!(e.len(), len);
        e
    };
    // A few hundred bytes under P1's limit: refused up front, not 422.
    let over = sized(1, p1 - 100);
    let r = client::post(addr, "/v1/envelopes", &over, T).await.unwrap();
    assert_eq!(r.status, 413);
    assert_eq!(reason(&r.body), "too_large");
    let over = sized(2, max + 1);
    let r = client::post(addr, "/v1/envelopes", &over, T).await.unwrap();
    assert_eq!(r.status, 413);
    // At the advertised limit: stored and forwarded with the receipt.
    let at = sized(3, max);
    let r = client::post(addr, "/v1/envelopes", &at, T).await.unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = herald_core::EnvelopeRef::decode(&at)
        .unwrap()
        .id()
        .to_owned();
    let path = format!("/v1/envelopes/{}", herald_verify::hex(&id));
    let stored = client::get_as(addr, &path, &alice(), T).await.unwrap();
    assert_eq!(stored.status, 200);
    let fwd = herald_core::EnvelopeRef::decode(&stored.body).unwrap();
    assert_eq!(fwd.signature_count(), 2);
    assert!(stored.body.len() <= p1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn herald_reasons_stays_short() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let conduit = spawn(dir.path(), &["--max-signatures", "400"]);
    let addr = conduit.addr;
    let mut rng = Bytes(3);
    // Alice's own sigil 300 times again: each one `bad_signature` and
    // `duplicate_signer`, alternating.
    let alice_sigil = alice().sigil(SigilForm::Default).to_string();
    let bytes = with_cosignatures(&message(1, "hi"), &alice_sigil, 300, &mut rng);
    let r = client::post(addr, "/v1/envelopes", &bytes, T)
        .await
        .unwrap();
    assert_eq!(r.status, 422);
    let header = r.header("herald-reasons").unwrap();
    eprintln!("Herald-Reasons: {header}");
    assert!(header.len() <= 1024, "{} bytes", header.len());
    let codes: Vec<&str> = header.split(',').collect();
    assert_eq!(codes.first().copied(), Some(reason(&r.body).as_str()));
    let mut distinct = codes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), codes.len(), "{header}");
    assert!(codes.contains(&"bad_signature") && codes.contains(&"duplicate_signer"));
}
