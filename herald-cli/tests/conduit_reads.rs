//! Hostile reads of `herald conduit serve` (CONDUIT.md revision 3,
//! *Bounded answers*): a trace of ~105 MB (a genesis and 150 replies of
//! 700 KB) read by 4 clients at once costs the conduit less than 64 MiB of
//! resident memory above what it held before the reads (answers are pages
//! of at most `--max-page` bytes, streamed from the store, never built
//! whole), and each reader gets every envelope exactly once, in order, by
//! following `Herald-Cursor`. Bounded: every request has a timeout and the
//! conduit is killed at the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, EnvelopeRef, Nonce, SigilForm};
use support::conduit::{alice, bob, message, now, write_files};

const REPLIES: usize = 150;
const REPLY_BYTES: usize = 700_000;
const READERS: usize = 4;
/// The goal: resident memory above idle during the reads.
const MAX_GROWTH: u64 = 64 << 20;
const T: Duration = Duration::from_secs(60);

fn vm_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Every page of `path`, each read whole (at most a page) and dropped: the
/// ids in order.
async fn read_all(addr: SocketAddr, path: &str) -> Vec<[u8; 32]> {
    let mut ids = Vec::new();
    let mut cursor = 0u64;
    for _ in 0..=REPLIES + 1 {
        // Signed by bob, to whom every reply goes (CONDUIT.md *Who may read what*).
        let r = client::get_as(addr, &format!("{path}?after={cursor}"), &bob(), T)
            .await
            .unwrap();
        assert_eq!(r.status, 200);
        let next: u64 = r.header("herald-cursor").unwrap().parse().unwrap();
        if r.body.is_empty() {
            assert_eq!(next, cursor);
            return ids;
        }
        assert!(r.body.len() <= herald_conduit::page::DEFAULT_MAX_PAGE);
        for piece in herald_verify::split_sequence(&r.body, 1 << 20, 64) {
            let herald_verify::Piece::Item { bytes, .. } = piece else {
                panic!("{path}: not a CBOR sequence");
            };
            ids.push(*EnvelopeRef::decode(bytes).unwrap().id());
        }
        cursor = next;
    }
    panic!("{path}: pages never ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_concurrent_reads_of_a_100_mb_trace_stay_within_64_mib() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let (mut child, addr) = support::conduit::serve(|cmd| {
        cmd.args(["--roles", "relay", "--key"])
            .arg(dir.path().join("conduit.key"))
            .arg("--state")
            .arg(dir.path().join("state"))
            .arg("--keyring")
            .arg(dir.path().join("keyring"));
    });
    let pid = child.id();

    let genesis = Envelope::from_bytes(message(1, "a long trace")).unwrap();
    let mut posted = vec![genesis.clone()];
    for n in 0..REPLIES {
        let mut nonce = [0x77; 16];
        nonce[..8].copy_from_slice(&(n as u64).to_be_bytes());
        let payload = vec![u8::try_from(n % 251).unwrap(); REPLY_BYTES];
        posted.push(
            EnvelopeBuilder::reply(&genesis.view(), now())
                .nonce(Nonce(nonce))
                .to(bob().sigil(SigilForm::Default))
                .payload(Value::Bytes(payload))
                .sign(&alice())
                .unwrap(),
        );
    }
    let mut want: Vec<[u8; 32]> = posted.iter().map(Envelope::id).collect();
    want.sort_unstable();
    let posted = Arc::new(posted);
    let mut posters = Vec::new();
    for part in 0..4 {
        let posted = Arc::clone(&posted);
        posters.push(tokio::spawn(async move {
            for e in posted.iter().skip(part).step_by(4) {
                let r = client::post(addr, "/v1/envelopes", e.as_bytes(), T)
                    .await
                    .unwrap();
                assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
            }
        }));
    }
    for p in posters {
        p.await.unwrap();
    }
    drop(posted);

    let trace = herald_verify::hex(genesis.view().trace());
    let path = format!("/v1/traces/{trace}");
    // Idle: after the posts, before any read.
    let idle = vm_rss(pid);
    let peak = Arc::new(AtomicU64::new(idle));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                peak.fetch_max(vm_rss(pid), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let started = Instant::now();
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let path = path.clone();
            tokio::spawn(async move { read_all(addr, &path).await })
        })
        .collect();
    let mut first: Option<Vec<[u8; 32]>> = None;
    for r in readers {
        let ids = r.await.unwrap();
        // Posted four at a time: arrival order is the conduit's, the same
        // for every reader.
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert!(
            sorted == want,
            "every envelope exactly once ({} read)",
            ids.len()
        );
        assert!(
            first.get_or_insert_with(|| ids.clone()) == &ids,
            "readers disagree on the order"
        );
    }
    let took = started.elapsed();
    done.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    let peak = peak.load(Ordering::SeqCst);
    let growth = peak.saturating_sub(idle);
    eprintln!(
        "conduit RSS: idle {} MiB, peak during {READERS} concurrent reads of {} MB: {} MiB \
         (+{} MiB), reads took {took:?}",
        idle >> 20,
        (REPLIES * REPLY_BYTES) / 1_000_000,
        peak >> 20,
        growth >> 20
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        growth < MAX_GROWTH,
        "the conduit grew by {} MiB during the reads (goal: < 64 MiB)",
        growth >> 20
    );
}
