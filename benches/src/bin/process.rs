//! The whole-process target of docs/performance.md (PROFILE revision 2):
//! `herald verify` of one 10 000-envelope trace (three agents, short
//! payloads, one keyring), as a separate process, against a sequential
//! loop of SHA-256 + ed25519-dalek `verify_strict` over the same envelopes
//! and signatures, on this thread. The two are measured alternately in one
//! run; the medians of the rounds give the ratio. Goals (docs/performance.md):
//! at most 0.30 (row 5p), at most 0.16 (row 26).
//!
//! Usage: `cargo build --release -p herald-cli && cargo run --release -p
//! herald-benches --bin process [ROUNDS]` (default 7 rounds). The `herald`
//! binary is taken from `$HERALD_BIN`, else from beside this one. With
//! `$HERALD_BENCH_DIR` set, the trace and keyring are written there and
//! kept (to profile `herald verify` on them), else in a temporary folder.

// A benchmark driver: a failure is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ed25519_dalek::{Signature, VerifyingKey};
use herald_benches::{OwnedItem, PROCESS_N as N, ProcessTrace};
use sha2::{Digest, Sha256};

fn herald_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("HERALD_BIN") {
        return p.into();
    }
    let me = std::env::current_exe().unwrap();
    me.with_file_name("herald")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(7, |a| a.parse().expect("ROUNDS is a number"));
    let herald = herald_bin();
    assert!(
        herald.exists(),
        "{} not found: cargo build --release -p herald-cli",
        herald.display()
    );

    // One trace (every envelope answers an earlier one), three signers,
    // 40-byte payloads.
    let dir = tempfile_dir();
    let input = ProcessTrace::write(&dir).unwrap();
    let (set, seq, keyring) = (&input.set, &input.trace, &input.keyring);

    let owned: Vec<OwnedItem> = set.origin_items();
    let dalek: Vec<(VerifyingKey, Signature, &[u8])> =
        owned.iter().map(|o| o.dalek().unwrap()).collect();

    let run_herald = || {
        let start = Instant::now();
        let status = Command::new(&herald)
            .arg("verify")
            .arg(seq)
            .arg("--keyring")
            .arg(keyring)
            .arg("--now")
            .arg(input.now.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        let took = start.elapsed();
        assert!(status.success(), "herald verify failed: {status}");
        took
    };
    let run_loop = || {
        let start = Instant::now();
        let mut ok = 0usize;
        for (e, (k, s, m)) in set.envelopes.iter().zip(&dalek) {
            black_box(Sha256::digest(black_box(e.as_bytes())));
            ok += usize::from(k.verify_strict(black_box(m), s).is_ok());
        }
        let took = start.elapsed();
        assert_eq!(ok, N);
        took
    };

    // One of each to warm caches, not counted.
    run_herald();
    run_loop();
    let (mut process, mut baseline) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        process.push(run_herald());
        baseline.push(run_loop());
    }
    let (p, b) = (median(process.clone()), median(baseline.clone()));
    let ratio = p.as_secs_f64() / b.as_secs_f64();
    println!("rounds: {rounds}, {N} envelopes, one trace, 3 signers, 40-byte payloads");
    println!("herald verify (whole process): median {p:.1?}  all {process:.1?}");
    println!("SHA-256 + verify_strict loop:  median {b:.1?}  all {baseline:.1?}");
    let verdict = |goal: f64| if ratio <= goal { "met" } else { "MISSED" };
    println!(
        "ratio {ratio:.3} (row 5p, goal <= 0.30: {}; row 26, goal <= 0.16: {})",
        verdict(0.30),
        verdict(0.16)
    );
    if std::env::var_os("HERALD_BENCH_DIR").is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
}

fn tempfile_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HERALD_BENCH_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        return dir.into();
    }
    let dir = std::env::temp_dir().join(format!("herald-process-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
