//! `herald verify` of the 10 000-envelope bench trace (one trace, three
//! signers, 40-byte payloads; docs/performance.md's whole-process set)
//! with the three signers resolved through DNS (PROFILE P15: a local Knot
//! DNS on loopback, `--resolve dns --dns 127.0.0.1:PORT`) against the same
//! verify with a keyring. Both verify the same file: the trace, and one
//! envelope per signer claiming its handle (`handle` attestation, P12).
//! Target: at most 1.2× (docs/performance.md, row 17: what resolution may add).
//!
//! Needs the release `herald` (`cargo build --release -p herald-cli`; or
//! `$HERALD_BIN`) and `knotd` (`apt-get install knot`); says so and
//! measures nothing without them. Run: `cargo bench -p herald-benches
//! --bench resolve` (with `$HERALD_BENCH_DIR`, the trace, keyring and
//! zone are written there and kept).

// Benchmarks unwrap their fixtures: a failure there is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use herald_benches::{T0, TraceSet};
use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigilForm};

const N: usize = 10_000;

fn herald_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("HERALD_BIN") {
        return p.into();
    }
    // target/release/deps/resolve-… → target/release/herald
    let me = std::env::current_exe().unwrap();
    me.parent().and_then(Path::parent).unwrap().join("herald")
}

fn knotd() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join("knotd"))
        .find(|p| p.is_file())
}

/// knotd serving `zone` (unsigned) for `bench.test` on a free loopback
/// port, once it says it started.
fn start_knot(knotd: &Path, dir: &Path, zone: &str) -> (Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::create_dir_all(dir.join("db")).unwrap();
    std::fs::write(dir.join("bench.test.zone"), zone).unwrap();
    let conf = format!(
        "server:\n    listen: 127.0.0.1@{port}\n    rundir: {d}\n\
         log:\n  - target: stderr\n    any: info\n\
         database:\n    storage: {d}/db\n\
         template:\n  - id: default\n    storage: {d}\n    file: \"%s.zone\"\n\
         zone:\n  - domain: bench.test\n",
        d = dir.display()
    );
    std::fs::write(dir.join("knot.conf"), conf).unwrap();
    let mut child = Command::new(knotd)
        .arg("-c")
        .arg(dir.join("knot.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("knotd exited").unwrap();
        if line.contains("server started") {
            break;
        }
    }
    // Keep draining its log so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, port)
}

fn resolve(c: &mut Criterion) {
    let herald = herald_bin();
    let Some(knotd) = knotd() else {
        eprintln!("resolve bench: needs knotd (apt-get install knot); nothing measured");
        return;
    };
    if !herald.exists() {
        eprintln!(
            "resolve bench: {} not found (cargo build --release -p herald-cli); nothing measured",
            herald.display()
        );
        return;
    }
    let set = TraceSet::with_payload(N, 1, 3, 40);
    // With $HERALD_BENCH_DIR the files are written there and kept (to
    // profile `herald verify` on them).
    let keep = std::env::var_os("HERALD_BENCH_DIR");
    let dir = keep.clone().map_or_else(
        || std::env::temp_dir().join(format!("herald-resolve-bench-{}", std::process::id())),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = set.sequence();
    let (mut keyring, mut zone) = (String::new(), String::new());
    zone.push_str("$ORIGIN bench.test.\n$TTL 3600\n@ SOA ns admin 1 3600 600 86400 300\n@ NS ns\nns A 127.0.0.1\n");
    for (i, key) in set.keys.iter().enumerate() {
        let pk = key.public_key();
        let (sigil, hex) = (
            pk.sigil(SigilForm::Default),
            data_encoding::HEXLOWER.encode(pk.as_bytes()),
        );
        keyring.push_str(&format!("{sigil} ed25519 {hex}\n"));
        zone.push_str(&format!(
            "agent{i}._herald TXT \"v=herald1; sigil={sigil}; key={hex}\"\n"
        ));
        let mut nonce = [0xee; 16];
        nonce[0] = i as u8;
        let claim = EnvelopeBuilder::genesis(T0)
            .nonce(Nonce(nonce))
            .attest("handle", Value::text(format!("agent{i}@bench.test")))
            .sign(key)
            .unwrap();
        bytes.extend_from_slice(claim.as_bytes());
    }
    let trace = dir.join("trace.cbor");
    std::fs::write(&trace, bytes).unwrap();
    std::fs::write(dir.join("keyring"), keyring).unwrap();
    let (mut knot, port) = start_knot(&knotd, &dir, &zone);
    let now = (T0 + N as u64).to_string();
    let dns = format!("127.0.0.1:{port}");

    let verify = |extra: &[&str]| {
        let out = Command::new(&herald)
            .arg("verify")
            .arg(&trace)
            .args(["--now", &now, "--json"])
            .args(extra)
            .stderr(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "herald verify failed: {}", out.status);
        out.stdout
    };
    // Every envelope valid, and through DNS every signer's key from DNS.
    let resolved = String::from_utf8(verify(&["--resolve", "dns", "--dns", &dns])).unwrap();
    assert_eq!(resolved.matches("\"key_source\":\"dns\"").count(), N + 3);

    let mut g = c.benchmark_group("verify 10 003 envelopes, 3 signers");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("keyring", |b| {
        b.iter(|| verify(&["--keyring", dir.join("keyring").to_str().unwrap()]));
    });
    g.bench_function("resolved through DNS", |b| {
        b.iter(|| verify(&["--resolve", "dns", "--dns", &dns]));
    });
    g.finish();
    let _ = knot.kill();
    let _ = knot.wait();
    if keep.is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
}

criterion_group!(benches, resolve);
criterion_main!(benches);
