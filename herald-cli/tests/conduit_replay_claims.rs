//! Attack D6 through the real `herald conduit serve` on loopback (PROFILE
//! P10 revision 3: in live reception a refused envelope claims nothing).
//! A copy of alice's valid envelope with one junk co-signature appended is
//! posted first and refused (422); the genuine envelope after it is
//! accepted (201, where it once got 409 `replayed_nonce` forever); the
//! genuine one again, and the junk copy again (it has the genuine id),
//! get the idempotent answer (the stored genuine envelope); another
//! envelope reusing the nonce gets 409. Through one conduit with
//! its redb store, and through a fleet of two on PostgreSQL (the same
//! rules through `LiveState`; skipped with a notice without PostgreSQL,
//! unless `HERALD_TEST_ALL=1`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code, unreachable_pub)]
#[path = "../../herald-conduit/tests/support/pg.rs"]
mod pg;
mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use herald_conduit::client;
use herald_core::SigilForm;
use herald_core::cbor::{Map, Value};
use support::conduit::{alice, message, write_files};

const T: Duration = Duration::from_secs(10);

/// Kills the conduit it holds when dropped, so a failed assertion does
/// not leave it running.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start a relay conduit over the files in `dir`, `store` its store URL
/// (none: redb in its state directory).
fn spawn(dir: &Path, name: &str, store: Option<&str>) -> (Killed, SocketAddr) {
    let (child, addr) = support::conduit::serve(|cmd| {
        cmd.args(["--roles", "relay", "--batch-ms", "5", "--key"])
            .arg(dir.join("conduit.key"))
            .arg("--state")
            .arg(dir.join(format!("state-{name}")))
            .arg("--keyring")
            .arg(dir.join("keyring"));
        if let Some(url) = store {
            cmd.arg("--store")
                .arg(format!("{url}?application_name={name}"));
        }
    });
    (Killed(child), addr)
}

/// `bytes` with a co-signature of 64 junk bytes under alice's name
/// appended: a copy anyone can make of her envelope (its id is hers).
fn junk_cosigned(bytes: &[u8]) -> Vec<u8> {
    let Ok(Value::Map(mut map)) = Value::decode(bytes) else {
        panic!("an envelope is a map")
    };
    let Some(Value::Array(mut sigs)) = map.remove("signatures") else {
        panic!("signatures is an array")
    };
    let by = alice().sigil(SigilForm::Default).to_string();
    let mut junk = Map::new();
    junk.insert("alg", Value::text("ed25519"));
    junk.insert("by", Value::text(by.as_str()));
    junk.insert("scope", Value::text("human_approval"));
    junk.insert("sig", Value::Bytes(vec![0x5a; 64]));
    sigs.push(Value::Map(junk));
    map.insert("signatures", Value::Array(sigs));
    Value::Map(map).to_vec()
}

async fn post(addr: SocketAddr, body: &[u8]) -> client::Response {
    client::post(addr, "/v1/envelopes", body, T).await.unwrap()
}

/// The D6 sequence, each post to the next of `addrs`.
async fn junk_copy_first_then_genuine(addrs: &[SocketAddr], n: u64) {
    let mut to = addrs.iter().copied().cycle();
    let genuine = message(n, "the genuine one");
    let copy = junk_cosigned(&genuine);

    let r = post(to.next().unwrap(), &copy).await;
    assert_eq!(r.status, 422, "the junk copy is refused");
    let reasons = r.header("herald-reasons").unwrap_or_default().to_owned();
    assert!(reasons.contains("bad_signature"), "{reasons}");

    let r = post(to.next().unwrap(), &genuine).await;
    assert_eq!(r.status, 201, "the genuine envelope after the refused copy");
    let accepted = r.body;

    let r = post(to.next().unwrap(), &genuine).await;
    assert_eq!(r.status, 201, "the same envelope again: idempotent");
    assert_eq!(r.body, accepted);

    // The copy has the genuine id (P4: the id covers no signature): the
    // answer is the stored genuine envelope, and the copy is not stored.
    let r = post(to.next().unwrap(), &copy).await;
    assert_eq!(r.status, 201, "the junk copy after the genuine one");
    assert_eq!(r.body, accepted);

    let other = {
        // Another envelope from alice with the genuine one's nonce.
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&n.to_be_bytes());
        herald_core::EnvelopeBuilder::genesis(support::conduit::now())
            .nonce(herald_core::Nonce(nonce))
            .payload(Value::text("another, same nonce"))
            .sign(&alice())
            .unwrap()
            .into_bytes()
    };
    let r = post(to.next().unwrap(), &other).await;
    // 409 is `replayed_nonce` (CONDUIT.md; its signed refusal names it).
    assert_eq!(r.status, 409, "another envelope reusing the nonce");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junk_cosigned_copy_first_does_not_block_the_genuine_envelope() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let (_conduit, addr) = spawn(dir.path(), "one", None);
    tokio::time::timeout(T * 3, junk_copy_first_then_genuine(&[addr], 0xd6))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junk_cosigned_copy_first_does_not_block_the_genuine_envelope_in_a_fleet() {
    // Skips with one line without PostgreSQL (fails under HERALD_TEST_ALL=1).
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let (_a, first) = spawn(dir.path(), "a", Some(&url));
    let (_b, second) = spawn(dir.path(), "b", Some(&url));
    tokio::time::timeout(T * 3, junk_copy_first_then_genuine(&[first, second], 0xd60))
        .await
        .unwrap();
}
