//! `GET /v1/keys/{sigil}` of `herald conduit serve` (CONDUIT.md
//! *Endpoints*, PROFILE.md P15 *Conduits*) through the real binary, on the
//! redb store and on a fleet's PostgreSQL: a born, molted and deprecated
//! sigil's birth, molt (with its inclusion proof) and deprecation, in any
//! of the sigil's three forms, which herald-verify's `check_keys` turns
//! into its key history; `400` for what is not a sigil, `404` (and not a
//! byte of anything else) for a sigil the conduit holds no lifecycle of.
//! Bounded: every request has a timeout, every conduit is killed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code, unreachable_pub)]
#[path = "../../herald-conduit/tests/support/pg.rs"]
mod pg;
mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use herald_conduit::client;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, SigilForm, SigningKey};
use herald_verify::{HistoryOrigin, Keyring, KeysLimits, Provenance, check_keys};
use support::conduit::{
    Killed, NOTARY, birth, carol, carol_next, conduit_key, message, molt_payload, now,
    post_ok as post, write_files,
};

const T: Duration = Duration::from_secs(10);
const DAY: u64 = 86_400;

/// Carol (born on the conduit, molted, deprecated): her birth at `t`, her molt to [`carol_next`] at `t + 1` (not
/// before `t + 2 d`: P8 rule 2's cool-off after the birth) and her
/// deprecation at `t + 2`, signed by her birth key.
fn carol_lifecycle(t: u64) -> [Envelope; 3] {
    let k = carol();
    let birth = birth(&k, "carol", t);
    let molt = EnvelopeBuilder::reply(&birth.view(), t + 1)
        .kind(Kind::Molt)
        .payload(molt_payload(&carol_next(), t + 2 * DAY))
        .sign(&k)
        .unwrap();
    let deprecation = EnvelopeBuilder::reply(&molt.view(), t + 2)
        .kind(Kind::Deprecation)
        .payload(Value::Map(Map::new()))
        .sign(&k)
        .unwrap();
    [birth, molt, deprecation]
}

/// The verifier's keyring: the conduit's log key pinned (P8 rule 3).
fn log_pinned() -> Keyring {
    let mut k = Keyring::new();
    k.insert(conduit_key().public_key(), Provenance::Pinned);
    k
}

/// A relay and notary conduit on loopback, on `store` (a fleet's URL) or
/// the redb store in `dir`, killed on drop.
fn spawn(dir: &Path, store: Option<&str>) -> Killed {
    match store {
        Some(url) => support::conduit::start(dir, &[&NOTARY[..], &["--store", url]].concat()),
        None => support::conduit::start(dir, &NOTARY),
    }
}

async fn get(addr: SocketAddr, path: &str) -> client::Response {
    client::get(addr, path, T).await.unwrap()
}

/// Post carol's lifecycle and alice's message to bob, then read
/// `/v1/keys/` as a verifier would.
async fn exercise(addr: SocketAddr) {
    let t = now();
    let [birth, molt, deprecation] = carol_lifecycle(t);
    post(addr, &message(1, "hello bob")).await;
    for e in [&birth, &molt, &deprecation] {
        post(addr, e.as_bytes()).await;
    }

    let mut bodies = Vec::new();
    for form in [SigilForm::Default, SigilForm::Short, SigilForm::Long] {
        let r = get(addr, &format!("/v1/keys/{}", carol().sigil(form))).await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
        bodies.push(r.body);
    }
    let body = &bodies[0];
    // Birth, molt, its proof, deprecation: as forwarded (with receipts).
    let items_of = |body: &[u8]| -> Vec<Vec<u8>> {
        herald_verify::split_sequence(body, 1 << 20, 64)
            .into_iter()
            .map(|p| match p {
                herald_verify::Piece::Item { bytes, .. } => bytes.to_vec(),
                other => panic!("not a CBOR sequence: {other:?}"),
            })
            .collect()
    };
    let items = items_of(body);
    assert_eq!(items.len(), 4);
    // Every form answers the same, but for the molt's proof: it is against
    // the latest tree head, which the notary re-signs (a new `ts`) while
    // the log is idle, so reads a second apart may get different heads.
    for other in &bodies[1..] {
        let others = items_of(other);
        assert_eq!(others.len(), 4);
        for i in [0, 1, 3] {
            assert_eq!(others[i], items[i], "item {i}");
        }
        let proof = herald_verify::InclusionProof::decode(&others[2]).unwrap();
        assert_eq!(proof.leaf().id(), &molt.id());
    }
    let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
    let id = |b: &[u8]| *herald_core::EnvelopeRef::decode(b).unwrap().id();
    assert_eq!(id(items[0]), birth.id());
    assert_eq!(id(items[1]), molt.id());
    let proof = herald_verify::InclusionProof::decode(items[2]).unwrap();
    assert_eq!(proof.leaf().id(), &molt.id());
    assert_eq!(id(items[3]), deprecation.id());

    let sigil = carol().sigil(SigilForm::Default);
    let h = check_keys(body, &sigil, &log_pinned(), &KeysLimits::default()).unwrap();
    assert_eq!(h.keys.len(), 2);
    assert_eq!(h.keys[0].key, carol().public_key());
    assert_eq!(h.keys[0].origin, HistoryOrigin::Birth);
    assert_eq!(h.keys[1].key, carol_next().public_key());
    assert_eq!(h.keys[1].since, t + 2 * DAY);
    assert_eq!(h.deprecated, Some(t + 2));
    assert_eq!(h.key_at(t).unwrap().key, carol().public_key());

    // Alice posted a message but no lifecycle; bob only received one; a
    // stranger is unknown: 404, and nothing of theirs in the answer.
    let alice = support::conduit::alice().sigil(SigilForm::Default);
    let bob = support::conduit::bob().sigil(SigilForm::Short);
    let stranger = SigningKey::from_seed(&[0x55; 32]).sigil(SigilForm::Long);
    for who in [alice.to_string(), bob.to_string(), stranger.to_string()] {
        let r = get(addr, &format!("/v1/keys/{who}")).await;
        assert_eq!(r.status, 404, "{who}");
        let text = String::from_utf8_lossy(&r.body);
        assert!(text.contains("unknown_sigil"), "{text}");
        assert!(!text.contains("hello bob"), "{text}");
    }
    // Not a sigil (P2): 400.
    let upper = sigil.to_string().to_uppercase();
    for bad in [
        "hello",
        "sigil:xyz",
        "sigil:none",
        upper.as_str(),
        "sigil:short:aaaaaaaaaaaaaaa",
    ] {
        let r = get(addr, &format!("/v1/keys/{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(String::from_utf8_lossy(&r.body).contains("bad_sigil"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_of_a_born_molted_deprecated_sigil() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let c = spawn(dir.path(), None);
    exercise(c.addr).await;
    // The index survives a restart (it is in the store, not in memory).
    drop(c);
    let c = spawn(dir.path(), None);
    let r = get(
        c.addr,
        &format!("/v1/keys/{}", carol().sigil(SigilForm::Default)),
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_keys_of_a_born_molted_deprecated_sigil() {
    let Some(cluster) = pg::Cluster::start() else {
        return;
    };
    let url = cluster.create_db("keys").await;
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let c = spawn(dir.path(), Some(&url));
    exercise(c.addr).await;
}
