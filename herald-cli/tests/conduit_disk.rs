//! `herald conduit serve` when its disk fills (docs/conduit.md *Storage
//! failures*), made real without root: the conduit runs with SIGXFSZ
//! ignored (`sh -c 'trap "" XFSZ; exec …'`), and once some posts are
//! acknowledged `prlimit` caps the size of the files it writes at the
//! store's current size (RLIMIT_FSIZE, soft), so its next growth fails
//! with EFBIG as a full disk fails with ENOSPC. Then:
//! - the post that needed the space, and the next, get a `500` whose body
//!   names no file (a generic `storage` problem), and `/healthz` answers
//!   503 while the store cannot take a post;
//! - the failure is logged on standard error;
//! - the limit is lifted (space returns): `/healthz` answers 200 again, a
//!   new post is acknowledged, and every envelope acknowledged before is
//!   still served, byte for byte.
//!
//! Needs `sh` and `prlimit` (util-linux): skipped with a notice when
//! missing, unless HERALD_TEST_ALL=1. Bounded: every request and every
//! wait has a deadline, and the conduit is killed at the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Read;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::EnvelopeRef;
use support::conduit::{bob, message, write_files};

const T: Duration = Duration::from_secs(20);
/// How often the conduit tries to reopen its store (docs/conduit.md).
const REPAIR_RETRY: Duration = Duration::from_secs(1);
/// Posts of this size until one needs more room than there is.
const FILLER: usize = 200_000;

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn prlimit(pid: u32, fsize: &str) {
    let out = Command::new("prlimit")
        .arg("--pid")
        .arg(pid.to_string())
        .arg(format!("--fsize={fsize}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "prlimit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn healthz(addr: SocketAddr) -> u16 {
    client::get(addr, "/healthz", T).await.unwrap().status
}

async fn post(addr: SocketAddr, body: &[u8]) -> client::Response {
    client::post(addr, "/v1/envelopes", body, T).await.unwrap()
}

/// The forwarded envelope of a 201 body (no notary: the envelope only).
fn forwarded(body: &[u8]) -> Vec<u8> {
    let v = herald_core::cbor::Value::decode(body).unwrap();
    match v.as_map().unwrap().get("envelope") {
        Some(herald_core::cbor::Value::Bytes(b)) => b.clone(),
        other => panic!("no envelope in the 201 body: {other:?}"),
    }
}

fn assert_no_path(r: &client::Response, state: &std::path::Path) {
    let body = String::from_utf8_lossy(&r.body);
    for leak in [state.to_string_lossy().as_ref(), "conduit.redb", "/tmp"] {
        assert!(!body.contains(leak), "the answer names {leak:?}: {body}");
    }
    assert!(body.contains("storage"), "{body}");
}

/// Start the conduit with SIGXFSZ ignored; its standard error is read on
/// a thread of its own.
fn spawn(dir: &std::path::Path) -> (Child, SocketAddr, std::thread::JoinHandle<String>) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_herald"))
        .args([
            "conduit",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--roles",
            "relay",
        ])
        .arg("--key")
        .arg(dir.join("conduit.key"))
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--keyring")
        .arg(dir.join("keyring"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let addr = support::listening(&mut child, "listening on http://")
        .parse()
        .unwrap();
    (child, addr, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_stops_posts_until_space_returns_and_loses_nothing() {
    if !have("sh") || !have("prlimit") {
        assert!(
            std::env::var("HERALD_TEST_ALL").as_deref() != Ok("1"),
            "sh and prlimit are needed (HERALD_TEST_ALL=1)"
        );
        eprintln!("skipped: sh or prlimit (util-linux) not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let state = dir.path().join("state");
    let (mut child, addr, log) = spawn(dir.path());
    let pid = child.id();

    let mut acked = Vec::new();
    for n in 0..5u64 {
        let r = post(addr, &message(n, &"a".repeat(10_000))).await;
        assert_eq!(r.status, 201);
        acked.push(forwarded(&r.body));
    }

    // The disk is full: no file of the conduit's may grow any more.
    let size = std::fs::metadata(state.join("conduit.redb")).unwrap().len();
    prlimit(pid, &format!("{size}:unlimited"));
    let mut refused = None;
    for n in 100..300u64 {
        let r = post(addr, &message(n, &"f".repeat(FILLER))).await;
        match r.status {
            201 => acked.push(forwarded(&r.body)),
            _ => {
                refused = Some(r);
                break;
            }
        }
    }
    let refused = refused.expect("the store never ran out of room");
    assert_eq!(
        refused.status,
        500,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    assert_no_path(&refused, &state);
    assert_eq!(
        healthz(addr).await,
        503,
        "/healthz while the store cannot take a post"
    );
    let again = post(addr, &message(400, "while full")).await;
    assert!(
        again.status == 500 || again.status == 503,
        "{}",
        again.status
    );
    assert_no_path(&again, &state);
    // Still unhealthy after the repairer tried again: it cannot prove room.
    tokio::time::sleep(REPAIR_RETRY * 2).await;
    assert_eq!(healthz(addr).await, 503);

    // Space returns.
    prlimit(pid, "unlimited:unlimited");
    let deadline = Instant::now() + Duration::from_secs(30);
    while healthz(addr).await != 200 {
        assert!(
            Instant::now() < deadline,
            "/healthz stayed 503 after space returned"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r = post(addr, &message(500, "after the disk was freed")).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    acked.push(forwarded(&r.body));
    for f in &acked {
        let id = herald_verify::hex(EnvelopeRef::decode(f).unwrap().id());
        let r = client::get_as(addr, &format!("/v1/envelopes/{id}"), &bob(), T)
            .await
            .unwrap();
        assert_eq!((r.status, &r.body), (200, f), "acknowledged {id} is lost");
    }

    let _ = child.kill();
    let _ = child.wait();
    let log = log.join().unwrap();
    assert!(log.contains("the store failed"), "nothing logged: {log}");
    assert!(
        log.contains("open again"),
        "the repair is not logged: {log}"
    );
}
