//! Signed reads against unsigned ones (CONDUIT.md *Who may read what*):
//! what the signature check (parse, keys, Ed25519 verification, the
//! replay window) costs a conduit's reads on kept-alive connections.
//!
//! One in-process conduit (`--public`, pass-through) holds a trace of
//! [`ENVELOPES`] envelopes from alice to bob, so bob's inbox and the trace
//! are the same envelopes in the same order: `GET /v1/inbox/{bob}` signed
//! by bob (an inbox is always its owner's) and `GET /v1/traces/{trace}`
//! unsigned (`--public`) plan the same page and stream the same bytes; the
//! difference is the signature check. Every request is built and signed
//! before the clock starts (distinct by an ignored `r` query parameter,
//! so no two share a signature), so the clients' signing is not measured.
//! Rounds alternate, signed and unsigned, in the same run; the report is
//! each round's reads/s and the ratio of the medians (target ≥ 0.9), and
//! the process's CPU time per read (user + system, all threads, from
//! `/proc/self/stat`): on a machine others load too, throughput follows
//! the CPU the process is given, while CPU per read does not, so the ratio
//! of CPU per read (unsigned ÷ signed) is the steadier figure of the two.
//!
//! `cargo run --release -p herald-benches --bin reads [READS_PER_ROUND] [CONNECTIONS] [ROUNDS] [ENVELOPES]`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use herald_conduit::{Conduit, Config, client};
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Nonce, SigilForm, SigningKey};
use herald_http::client::{Client, Limits, Request, Url};
use herald_verify::{Keyring, Provenance};

/// Envelopes in the trace (and bob's inbox) unless the fourth argument
/// says otherwise.
const ENVELOPES: u64 = 10;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Send every request of `work` over `connections` kept-alive connections;
/// the time it took and the bytes answered.
async fn run(addr: std::net::SocketAddr, work: Arc<Vec<Request>>, connections: usize) -> Duration {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (work, next) = (Arc::clone(&work), Arc::clone(&next));
        tasks.push(tokio::spawn(async move {
            let mut c = Client::new(Limits::default())
                .connect(&Url::for_addr(addr, "/").unwrap())
                .await
                .unwrap();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(r) = work.get(i) else { break };
                let answer = c.send(r).await.unwrap();
                assert_eq!(
                    answer.status,
                    200,
                    "{}",
                    String::from_utf8_lossy(&answer.body)
                );
                assert!(!answer.body.is_empty());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    start.elapsed()
}

/// CPU time of this process so far, user + system, all threads
/// (`/proc/self/stat` fields 14 and 15, in clock ticks of 10 ms); `None`
/// where there is no such file.
fn cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((user + system) * 10))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let reads = arg(1, 20_000);
    let connections = arg(2, 8);
    let rounds = arg(3, 3);
    let envelopes = u64::try_from(arg(4, ENVELOPES as usize)).unwrap();
    let (alice, bob) = (
        SigningKey::from_seed(&[1; 32]),
        SigningKey::from_seed(&[2; 32]),
    );
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path().join("state"));
    config.public = true;
    config.rate_unknown = 0;
    let mut keyring = Keyring::new();
    for k in [&alice, &bob] {
        keyring.insert(k.public_key(), Provenance::Pinned);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let conduit = rt
        .block_on(Conduit::open(
            config,
            SigningKey::from_seed(&[3; 32]),
            keyring,
        ))
        .unwrap();
    let listener = rt
        .block_on(async { tokio::net::TcpListener::bind("127.0.0.1:0").await })
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = rt.spawn(herald_conduit::serve(conduit, listener, async {
        let _ = stopped.await;
    }));

    // The trace: a genesis and replies, all from alice to bob.
    let t = now();
    let to_bob = |b: EnvelopeBuilder| {
        b.to(bob.sigil(SigilForm::Default))
            .payload(Value::text("a conduit benchmark message of ordinary size"))
            .sign(&alice)
            .unwrap()
    };
    let genesis: Envelope = to_bob(EnvelopeBuilder::genesis(t).nonce(Nonce([0; 16])));
    let mut all = vec![genesis.clone()];
    for n in 1..envelopes {
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&n.to_be_bytes());
        all.push(to_bob(
            EnvelopeBuilder::reply(&genesis.view(), t).nonce(Nonce(nonce)),
        ));
    }
    rt.block_on(async {
        for e in &all {
            let r = client::post(addr, "/v1/envelopes", e.as_bytes(), Duration::from_secs(10))
                .await
                .unwrap();
            assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        }
    });
    let bob_sigil = bob.sigil(SigilForm::Default).to_string();
    let trace = herald_verify::hex(genesis.view().trace());

    let mut signed_rates = Vec::new();
    let mut unsigned_rates = Vec::new();
    let (mut signed_cpu, mut unsigned_cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for signed in [true, false] {
            let created = now();
            let work: Vec<Request> = (0..reads)
                .map(|i| {
                    let (path, sign) = if signed {
                        (format!("/v1/inbox/{bob_sigil}?after=0&r={round}-{i}"), true)
                    } else {
                        (format!("/v1/traces/{trace}?after=0&r={round}-{i}"), false)
                    };
                    let r = Request::get(Url::for_addr(addr, &path).unwrap());
                    if sign {
                        r.signed(&bob, &bob_sigil, created)
                    } else {
                        r
                    }
                })
                .collect();
            let cpu_before = cpu();
            let took = rt.block_on(run(addr, Arc::new(work), connections));
            let rate = reads as f64 / took.as_secs_f64();
            let per_read = cpu_before
                .zip(cpu())
                .map(|(a, b)| (b - a).as_secs_f64() * 1e6 / reads as f64);
            println!(
                "round {round} {:<8} {reads} reads over {connections} kept-alive connections: {:.0} reads/s, {} µs CPU/read",
                if signed { "signed" } else { "unsigned" },
                rate,
                per_read.map_or("?".into(), |c| format!("{c:.1}")),
            );
            if signed {
                signed_rates.push(rate);
                signed_cpu.extend(per_read);
            } else {
                unsigned_rates.push(rate);
                unsigned_cpu.extend(per_read);
            }
        }
    }
    let (s, u) = (median(signed_rates), median(unsigned_rates));
    println!(
        "median signed {s:.0} reads/s, unsigned {u:.0} reads/s: ratio {:.3} (target >= 0.9)",
        s / u
    );
    if !signed_cpu.is_empty() && !unsigned_cpu.is_empty() {
        let (s, u) = (median(signed_cpu), median(unsigned_cpu));
        println!(
            "median CPU per read: signed {s:.1} µs, unsigned {u:.1} µs: ratio (unsigned/signed) {:.3}",
            u / s
        );
    }
    let _ = stop.send(());
    rt.block_on(server).unwrap().unwrap();
}
