//! A fleet conduit (`herald conduit serve --store postgres://...`) whose
//! PostgreSQL goes away and comes back (docs/conduit.md *Storage
//! failures*): while the database is down `/healthz` answers 503 and every
//! post or read that needs it a generic `500 storage` problem naming no
//! connection string, address, file or driver message; once the database
//! is back the conduit reconnects by itself: `/healthz` 200, a new post
//! acknowledged, an envelope acknowledged before the outage served and its
//! repeat acknowledged with the same envelope and leaf index (its proof may
//! be against a later head: the first answer is recorded best effort, and
//! an outage right after it may lose that record; docs/conduit.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code, unreachable_pub)]
#[path = "../../herald-conduit/tests/support/pg.rs"]
mod pg;
mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use herald_conduit::client::{self, Response};
use herald_core::EnvelopeRef;
use herald_core::cbor::Value;
use support::conduit::{bob, message, write_files};

const T: Duration = Duration::from_secs(10);

async fn healthz(addr: SocketAddr) -> u16 {
    client::get(addr, "/healthz", T).await.unwrap().status
}

async fn post(addr: SocketAddr, bytes: &[u8]) -> Response {
    client::post(addr, "/v1/envelopes", bytes, T).await.unwrap()
}

/// The conduit, killed however the test ends.
struct Conduit(std::process::Child);

impl Drop for Conduit {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The envelope and the leaf index of a 201 body.
fn acknowledged(body: &[u8]) -> (Vec<u8>, u64) {
    let v = Value::decode(body).unwrap();
    let m = v.as_map().unwrap();
    match (m.get("envelope"), m.get("index")) {
        (Some(Value::Bytes(e)), Some(Value::Unsigned(i))) => (e.clone(), *i),
        _ => panic!("not a notary's 201 body: {v:?}"),
    }
}

/// `r` is the generic storage problem and shows none of `private`.
fn assert_storage_problem(r: &Response, what: &str, private: &[&str]) {
    let body = String::from_utf8_lossy(&r.body);
    assert_eq!(r.status, 500, "{what}: {body}");
    assert_eq!(
        r.header("content-type"),
        Some("application/problem+json"),
        "{what}"
    );
    assert!(
        body.contains("urn:herald:conduit:storage"),
        "{what}: {body}"
    );
    for p in private {
        assert!(!body.contains(p), "{what} shows {p:?}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_database_outage_fails_healthz_hides_the_cause_and_recovers() {
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let (child, addr) = support::conduit::serve(|cmd| {
        cmd.args(["--roles", "relay,notary", "--batch-ms", "50", "--key"])
            .arg(dir.path().join("conduit.key"))
            .arg("--state")
            .arg(dir.path().join("state"))
            .arg("--keyring")
            .arg(dir.path().join("keyring"))
            .arg("--store")
            .arg(&url);
    });
    let _conduit = Conduit(child);

    let first = message(1, "before the outage");
    let answered = post(addr, &first).await;
    assert_eq!(
        answered.status,
        201,
        "{}",
        String::from_utf8_lossy(&answered.body)
    );
    let id = herald_verify::hex(EnvelopeRef::decode(&first).unwrap().id());
    assert_eq!(healthz(addr).await, 200);

    // The database goes away: connections cut, new ones refused.
    cluster.stop();
    assert_eq!(healthz(addr).await, 503, "/healthz without the database");
    let port = cluster.port.to_string();
    let state = dir.path().to_string_lossy().into_owned();
    let private = [
        url.as_str(),
        "postgres",
        "127.0.0.1",
        port.as_str(),
        state.as_str(),
        "connect",
        "refused",
        "db error",
    ];
    let second = message(2, "during the outage");
    assert_storage_problem(&post(addr, &second).await, "a post", &private);
    let read = client::get_as(addr, &format!("/v1/envelopes/{id}"), &bob(), T)
        .await
        .unwrap();
    assert_storage_problem(&read, "an envelope read", &private);
    let sth = client::get(addr, "/v1/sth", T).await.unwrap();
    assert_storage_problem(&sth, "the tree head", &private);
    assert_eq!(healthz(addr).await, 503, "/healthz still without it");

    // It comes back: the conduit reconnects by itself.
    cluster.start_again();
    let deadline = Instant::now() + Duration::from_secs(30);
    while healthz(addr).await != 200 {
        assert!(
            Instant::now() < deadline,
            "/healthz stayed 503 after the database came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r = post(addr, &second).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let again = post(addr, &first).await;
    assert_eq!(
        again.status,
        201,
        "{}",
        String::from_utf8_lossy(&again.body)
    );
    assert_eq!(
        acknowledged(&again.body),
        acknowledged(&answered.body),
        "a repeat after the outage is the same envelope at the same index"
    );
    let read = client::get_as(addr, &format!("/v1/envelopes/{id}"), &bob(), T)
        .await
        .unwrap();
    assert_eq!(read.status, 200);
}
