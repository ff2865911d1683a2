//! `herald heraldry serve` throughput (PROFILE P14; issue target: at least
//! 500 certifications a second sustained with witnesses cosigning every
//! second). In one run: (1) the single-thread cost of what a `key`
//! certification needs (verify the request's origin, sign the
//! certification), and (2) a Herald on loopback with two tlog-witnesses
//! (in process, each its own herald-http server) cosigning a checkpoint
//! every `BATCH_MS` (default 1000), under `CLIENTS` concurrent clients
//! (default 1000) posting pre-signed `key` requests from distinct subjects
//! for `SECONDS` (default 10). Every 201 waits for the next cosigned
//! checkpoint, so throughput needs that many requests in flight.
//!
//! Reports certifications/s sustained, the checkpoints cosigned by both
//! witnesses, p50/p99 latency, and the ratio of throughput to one core's
//! `1 / (verify + sign)`.
//!
//! `cargo run --release -p herald-benches --bin heraldry [SECONDS] [CLIENTS] [BATCH_MS]`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use herald_conduit::client;
use herald_core::cbor::{Map, Value};
use herald_core::{CheckOptions, EnvelopeBuilder, SigilForm, SigningKey};
use herald_heraldry::{Certification, Config, Herald};
use herald_tlog::note::NoteVerifier;
use herald_verify::{Keyring, Provenance};
use herald_witness::Witness;
use herald_witness::client::WitnessTarget;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn subject(n: u64) -> SigningKey {
    let mut seed = [0x5au8; 32];
    seed[..8].copy_from_slice(&n.to_be_bytes());
    SigningKey::from_seed(&seed)
}

fn request(who: &SigningKey, herald: &SigningKey) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("certify", Value::text("key"));
    m.insert("value", Value::from(who.public_key().as_bytes().to_vec()));
    EnvelopeBuilder::genesis(now())
        .to(herald.sigil(SigilForm::Default))
        .payload(Value::Map(m))
        .sign(who)
        .unwrap()
        .into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let seconds = arg(1, 10);
    let clients = arg(2, 1000);
    let batch_ms = arg(3, 1000);
    let herald_key = SigningKey::from_seed(&[0x48; 32]);
    let origin = "bench.example/log";

    // (1) One core: verify a request's origin, sign a certification.
    let reqs: Vec<Vec<u8>> = (0..2000)
        .map(|n| request(&subject(n), &herald_key))
        .collect();
    let started = Instant::now();
    for (n, r) in reqs.iter().enumerate() {
        let who = subject(n as u64);
        let mut k = Keyring::new();
        k.insert(who.public_key(), Provenance::Pinned);
        let mut reasons = Vec::new();
        let c = herald_core::check(r, &k, &CheckOptions::DEFAULT, &mut reasons);
        assert_eq!(c.status, herald_core::Status::Valid);
        let cert = Certification {
            subject: who.sigil(SigilForm::Default),
            claim: "key".into(),
            value: Value::from(who.public_key().as_bytes().to_vec()),
            not_after: None,
            revokes: None,
        };
        std::hint::black_box(cert.issue(&herald_key, None, now()).unwrap());
    }
    let per = started.elapsed().as_secs_f64() / reqs.len() as f64;
    drop(reqs);

    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let log_vkey = NoteVerifier::ed25519(origin, herald_key.public_key()).unwrap();
    let mut witnesses = Vec::new();
    for i in 0..2u8 {
        let wkey = SigningKey::from_seed(&[0x70 + i; 32]);
        let name = format!("w{i}.example");
        let cosigner = NoteVerifier::cosigner(&name, wkey.public_key()).unwrap();
        let w = Witness::open(
            &name,
            wkey,
            vec![(origin.to_owned(), log_vkey.clone())],
            &dir.path().join(format!("w{i}")),
        )
        .unwrap();
        let listener = rt
            .block_on(async { herald_http::server::listen("127.0.0.1:0".parse().unwrap()) })
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        rt.spawn(herald_witness::server::serve(
            listener,
            Arc::new(w),
            std::future::pending(),
        ));
        witnesses.push(WitnessTarget::parse(&format!("{cosigner}={url}")).unwrap());
    }
    let mut config = Config::new(origin);
    config.witnesses = witnesses;
    config.batch = Duration::from_millis(batch_ms);
    // Every request is a fresh key: measured without the rate limits.
    config.rate_unknown = 0;
    config.rate_subject = 0;
    let herald = Arc::new(
        Herald::open(
            SigningKey::from_seed(&[0x48; 32]),
            &dir.path().join("h"),
            config,
        )
        .unwrap(),
    );
    let listener = rt
        .block_on(async { herald_http::server::listen("127.0.0.1:0".parse().unwrap()) })
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(herald_heraldry::http::serve(
        listener,
        herald,
        std::future::pending(),
    ));

    // (2) Clients on their own runtime, requests signed before the clock.
    let per_client = (seconds as usize) * 2000 / clients as usize + 2;
    let prepared: Vec<Vec<Vec<u8>>> = (0..clients)
        .map(|c| {
            (0..per_client as u64)
                .map(|i| request(&subject(1_000_000 + c * 100_000 + i), &herald_key))
                .collect()
        })
        .collect();
    let crt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bench-client")
        .enable_all()
        .build()
        .unwrap();
    let done = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let lat = Arc::new(std::sync::Mutex::new(Vec::<Duration>::new()));
    // Warm up one batch, then measure.
    let start = Instant::now();
    let mut tasks = Vec::new();
    for reqs in prepared {
        let (done, refused, stop, lat) = (
            Arc::clone(&done),
            Arc::clone(&refused),
            Arc::clone(&stop),
            Arc::clone(&lat),
        );
        tasks.push(crt.spawn(async move {
            for r in reqs {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let t = Instant::now();
                match client::post(addr, "/v1/certify", &r, Duration::from_secs(30)).await {
                    Ok(a) if a.status == 201 => {
                        done.fetch_add(1, Ordering::Relaxed);
                        lat.lock().unwrap().push(t.elapsed());
                    }
                    _ => {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    crt.block_on(async { tokio::time::sleep(Duration::from_millis(batch_ms * 2)).await });
    let (d0, t0) = (done.load(Ordering::Relaxed), Instant::now());
    crt.block_on(async { tokio::time::sleep(Duration::from_secs(seconds)).await });
    let (d1, t1) = (done.load(Ordering::Relaxed), Instant::now());
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = crt.block_on(t);
    }
    let rate = (d1 - d0) as f64 / (t1 - t0).as_secs_f64();
    let cp = rt
        .block_on(client::get(addr, "/checkpoint", Duration::from_secs(5)))
        .unwrap();
    let cosigs = String::from_utf8_lossy(&cp.body)
        .lines()
        .filter(|l| l.starts_with("— w"))
        .count();
    let mut l = lat.lock().unwrap().clone();
    l.sort();
    let q = |p: f64| {
        l.get(((l.len() as f64) * p) as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "heraldry serve: {rate:.0} certifications/s sustained over {seconds} s ({} clients, checkpoint every {batch_ms} ms, \
         {cosigs} of 2 witnesses on the last checkpoint); p50 {:?}, p99 {:?}; {} refused; \
         verify+sign {:.1} µs one core -> ratio throughput / (1/(verify+sign)) = {:.2}; total {:?}",
        clients,
        q(0.5),
        q(0.99),
        refused.load(Ordering::Relaxed),
        per * 1e6,
        rate * per,
        start.elapsed(),
    );
}
