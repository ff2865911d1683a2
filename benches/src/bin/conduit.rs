//! Conduit throughput against the library's own cost
//! (docs/performance.md *(8)*): in one run, (1) the single-envelope verify
//! (`herald_core::check`) + sign (a `conduit_receipt` co-signature) cost,
//! one thread, and (2) a relay + notary conduit on loopback under 50
//! concurrent clients posting pre-signed envelopes. Reports posts/s, the
//! ratio `throughput / (cores × 1 / (verify + sign))`, and p50/p99 latency
//! against `--batch-ms`. It also reports CPU time per post, of the whole
//! process and of the conduit alone (the clients run on their own runtime,
//! whose threads are named `bench-client` and whose CPU time is taken out),
//! and `(verify + sign)` over the conduit's: the target's ratio per core
//! used, which does not depend on the share of the machine the process
//! gets.
//!
//! With `--keep-alive N`, the same run then posts the same number of
//! envelopes again with N clients that each keep one HTTP/1.1 connection
//! open (the load shape of a busy agent or an upstream relay: many posts in
//! flight, no TCP handshake per post), and reports that row too.
//!
//! With a fourth argument, a PostgreSQL URL (the fleet,
//! docs/performance.md *(9)*): the same load, in the same run, on one
//! fleet conduit and on two (clients alternating) sharing that database,
//! with their throughput and p99 as ratios to the redb conduit's.
//!
//! `cargo run --release -p herald-benches --bin conduit [POSTS] [BATCH_MS] [CLIENTS] [POSTGRES_URL] [--keep-alive N]`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use herald_benches::load::{drive, pct, process_cpu, thread_cpu};
use herald_conduit::{Conduit, Config, Roles, client};
use herald_core::cbor::Value;
use herald_core::{CheckOptions, Envelope, EnvelopeBuilder, Nonce, Scope, SigilForm, SigningKey};
use herald_verify::{Keyring, Provenance};

/// Concurrent clients unless the third argument says otherwise
/// (docs/performance.md *(8)*: 50).
const CLIENTS: usize = 50;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn envelopes(key: &SigningKey, to: &SigningKey, n: usize, salt: u8) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut nonce = [salt; 16];
            nonce[..8].copy_from_slice(&(i as u64).to_be_bytes());
            EnvelopeBuilder::genesis(now())
                .nonce(Nonce(nonce))
                .to(to.sigil(SigilForm::Default))
                .payload(Value::text("a conduit benchmark message of ordinary size"))
                .sign(key)
                .unwrap()
                .into_bytes()
        })
        .collect()
}

/// Seconds per envelope of check + receipt signature, best of 5 rounds.
fn verify_plus_sign(envs: &[Vec<u8>], keyring: &Keyring, conduit: &SigningKey) -> f64 {
    let opts = CheckOptions {
        now: Some(now()),
        ..CheckOptions::default()
    };
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for bytes in envs {
            let mut reasons = Vec::new();
            let checked = herald_core::check(bytes, keyring, &opts, &mut reasons);
            assert_eq!(checked.status, herald_core::Status::Valid);
            let e = Envelope::from_bytes(bytes.clone()).unwrap();
            std::hint::black_box(
                e.cosign(conduit, Scope::ConduitReceipt, Some(now()))
                    .unwrap(),
            );
        }
        best = best.min(t.elapsed().as_secs_f64() / envs.len() as f64);
    }
    best
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let keep_alive: Option<usize> = args.iter().position(|a| a == "--keep-alive").map(|i| {
        let n = args.get(i + 1).and_then(|v| v.parse().ok());
        args.drain(i..(i + 2).min(args.len()));
        n.expect("--keep-alive N: a number of clients")
    });
    let mut args = args.into_iter();
    let posts: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let batch_ms: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let clients: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(CLIENTS);
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let bob = SigningKey::from_seed(&[0x22; 32]);
    let conduit_key = SigningKey::from_seed(&[0xc0; 32]);
    let mut keyring = Keyring::new();
    keyring.insert(alice.public_key(), Provenance::Pinned);
    keyring.insert(bob.public_key(), Provenance::Pinned);

    let sample = envelopes(&alice, &bob, 2000, 0xbb);
    let unit = verify_plus_sign(&sample, &keyring, &conduit_key);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // The load generator, on threads of its own so that its CPU time can
    // be told apart from the conduit's.
    let clients_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(CLIENT_THREAD)
        .build()
        .unwrap();
    let rts = Runtimes {
        conduit: &runtime,
        clients: &clients_rt,
    };
    let config = |state: &str, store: Option<&String>| {
        let mut config = Config::new(dir.path().join(state));
        config.roles = Roles {
            relay: true,
            notary: true,
        };
        config.batch = Duration::from_millis(batch_ms);
        config.max_inflight = config
            .max_inflight
            .max(clients.max(keep_alive.unwrap_or(0)) * 2);
        config.store = store.cloned();
        config
    };
    let open = |state: &str, store: Option<&String>| {
        rts.conduit
            .block_on(Conduit::open(
                config(state, store),
                SigningKey::from_seed(&[0xc0; 32]),
                keyring.clone(),
            ))
            .unwrap()
    };
    let redb = vec![open("state", None)];
    let work = Arc::new(envelopes(&alice, &bob, posts, 0xaa));
    let (took, latencies, cpu) = load(&rts, redb, &work, clients, false);
    let throughput = posts as f64 / took.as_secs_f64();
    let ceiling = cores as f64 / unit;
    println!(
        "verify + sign, one envelope, one thread: {:.1} µs",
        unit * 1e6
    );
    println!("cores: {cores}; ceiling cores / (verify + sign): {ceiling:.0} posts/s");
    println!(
        "conduit relay+notary, {clients} clients, {posts} posts: {:.2} s, {throughput:.0} posts/s",
        took.as_secs_f64()
    );
    println!(
        "ratio throughput / ceiling: {:.3} (target >= 0.5)",
        throughput / ceiling
    );
    println!(
        "process CPU during the load: {:.2} s of {:.2} s wall on {cores} cores ({:.0}% of them); {:.0} µs per post, (verify + sign) / that {:.3}",
        cpu.total,
        took.as_secs_f64(),
        100.0 * cpu.total / (took.as_secs_f64() * cores as f64),
        cpu.total / posts as f64 * 1e6,
        unit * posts as f64 / cpu.total
    );
    println!(
        "conduit CPU (clients' {:.2} s taken out): {:.2} s, {:.0} µs per post; ratio per core used, (verify + sign) / that: {:.3} (target >= 0.5)",
        cpu.clients,
        cpu.conduit(),
        cpu.conduit() / posts as f64 * 1e6,
        unit * posts as f64 / cpu.conduit()
    );
    let p99 = pct(&latencies, 0.99);
    println!(
        "latency p50 {:.1} ms, p99 {p99:.1} ms, max {:.1} ms; --batch-ms {batch_ms}, p99 / batch-ms {:.2} (target <= 2)",
        pct(&latencies, 0.50),
        pct(&latencies, 1.0),
        p99 / batch_ms as f64
    );
    if let Some(kept) = keep_alive {
        let work = Arc::new(envelopes(&alice, &bob, posts, 0xab));
        let (took, lat, cpu) = load(&rts, vec![open("kept", None)], &work, kept, true);
        let t = posts as f64 / took.as_secs_f64();
        let q = pct(&lat, 0.99);
        println!(
            "keep-alive, {kept} clients, {posts} posts: {:.2} s, {t:.0} posts/s, ratio {:.3}, process CPU {:.0}% of {cores} cores ({:.0} µs per post, (verify + sign) / that {:.3}), conduit CPU {:.0} µs per post, ratio per core used {:.3}, p50 {:.1} ms, p99 {q:.1} ms, p99 / batch-ms {:.2}",
            took.as_secs_f64(),
            t / ceiling,
            100.0 * cpu.total / (took.as_secs_f64() * cores as f64),
            cpu.total / posts as f64 * 1e6,
            unit * posts as f64 / cpu.total,
            cpu.conduit() / posts as f64 * 1e6,
            unit * posts as f64 / cpu.conduit(),
            pct(&lat, 0.5),
            q / batch_ms as f64
        );
    }
    let Some(url) = args.next() else {
        return;
    };
    // The fleet, same load, same run: 1 then 2 conduits on one database.
    for (n, salt) in [(1usize, 0xa1u8), (2, 0xa2)] {
        let conduits = (0..n)
            .map(|i| open(&format!("fleet-{n}-{i}"), Some(&url)))
            .collect();
        let work = Arc::new(envelopes(&alice, &bob, posts, salt));
        let (took, lat, cpu) = load(&rts, conduits, &work, clients, false);
        let t = posts as f64 / took.as_secs_f64();
        let q = pct(&lat, 0.99);
        println!(
            "fleet of {n} on PostgreSQL: {t:.0} posts/s ({:.2} x redb), p50 {:.1} ms, p99 {q:.1} ms ({:.2} x redb), process CPU {:.0}% of {cores} cores",
            t / throughput,
            pct(&lat, 0.5),
            q / p99,
            100.0 * cpu.total / (took.as_secs_f64() * cores as f64)
        );
    }
}

/// The name of the client runtime's threads.
const CLIENT_THREAD: &str = "bench-client";

/// The conduits' runtime and the clients'.
struct Runtimes<'r> {
    conduit: &'r tokio::runtime::Runtime,
    clients: &'r tokio::runtime::Runtime,
}

/// CPU seconds during a load: the process's, and its client threads'.
struct Cpu {
    total: f64,
    clients: f64,
}

impl Cpu {
    /// The conduit's: every thread but the clients' (its writer threads
    /// and blocking pool included, ended ones too).
    fn conduit(&self) -> f64 {
        self.total - self.clients
    }
}

/// Serve `conduits` on loopback and post `work` through them with
/// `clients` concurrent clients (post `i` to conduit `i mod n`), each post
/// on a new connection or (`keep_alive`) on the client's kept-alive one:
/// the wall time, the sorted latencies, and the CPU seconds.
fn load(
    rts: &Runtimes<'_>,
    conduits: Vec<Conduit>,
    work: &Arc<Vec<Vec<u8>>>,
    clients: usize,
    keep_alive: bool,
) -> (Duration, Vec<Duration>, Cpu) {
    let work = Arc::clone(work);
    let mut addrs = Vec::new();
    let mut servers = Vec::new();
    for conduit in conduits {
        let listener = rts
            .conduit
            .block_on(async { herald_conduit::listen(([127, 0, 0, 1], 0).into()) })
            .unwrap();
        addrs.push(listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = rts
            .conduit
            .spawn(herald_conduit::serve(conduit, listener, async move {
                let _ = stopped.await;
            }));
        servers.push((stop, server));
    }
    let addrs = Arc::new(addrs);
    let cpu_before = process_cpu();
    let clients_before = thread_cpu(CLIENT_THREAD);
    let (took, latencies) = rts.clients.block_on(drive(clients, work.len(), |claim| {
        let (work, addrs) = (Arc::clone(&work), Arc::clone(&addrs));
        async move {
            let mut lat = Vec::new();
            let mut kept: Vec<Option<client::Connection>> = addrs.iter().map(|_| None).collect();
            while let Some(i) = claim.next() {
                let body = &work[i];
                let addr = addrs[i % addrs.len()];
                let t = Instant::now();
                let timeout = Duration::from_secs(30);
                let r = if keep_alive {
                    let slot = &mut kept[i % addrs.len()];
                    if slot.is_none() {
                        *slot = Some(client::Connection::connect(addr).await.unwrap());
                    }
                    let c = slot.as_mut().unwrap();
                    c.post("/v1/envelopes", body, timeout).await.unwrap()
                } else {
                    client::post(addr, "/v1/envelopes", body, timeout)
                        .await
                        .unwrap()
                };
                assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                lat.push(t.elapsed());
            }
            lat
        }
    }));
    let cpu = Cpu {
        total: process_cpu() - cpu_before,
        clients: thread_cpu(CLIENT_THREAD) - clients_before,
    };
    for (stop, server) in servers {
        let _ = stop.send(());
        rts.conduit.block_on(server).unwrap().unwrap();
    }
    (took, latencies, cpu)
}
