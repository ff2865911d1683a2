//! A conduit on 127.0.0.1:0 in a temp dir, and envelopes to post to it.
#![allow(dead_code, unreachable_pub)]

pub mod pg;

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use herald_conduit::client::{self, Response};
use herald_conduit::{Conduit, Config, Roles};
use herald_core::cbor::Value;
use herald_core::{CheckOptions, EnvelopeBuilder, EnvelopeRef, Kind, Nonce, SigilForm, SigningKey};
use herald_verify::{InclusionProof, Keyring, Provenance};
use tokio::sync::oneshot;

pub const T: Duration = Duration::from_secs(20);

pub fn alice() -> SigningKey {
    SigningKey::from_seed(&[0x11; 32])
}
pub fn bob() -> SigningKey {
    SigningKey::from_seed(&[0x22; 32])
}
pub fn conduit_key() -> SigningKey {
    SigningKey::from_seed(&[0xc0; 32])
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The published keys: alice, bob and the conduit.
pub fn published() -> Keyring {
    let mut k = Keyring::new();
    for key in [alice(), bob(), conduit_key()] {
        k.insert(key.public_key(), Provenance::Pinned);
    }
    k
}

pub struct Running {
    pub addr: SocketAddr,
    pub state: std::path::PathBuf,
    _dir: Option<tempfile::TempDir>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(T, t).await.unwrap().unwrap().unwrap();
        }
    }
    pub async fn post(&self, body: &[u8]) -> Response {
        self.try_post(body).await.unwrap()
    }
    pub async fn try_post(&self, body: &[u8]) -> Result<Response, client::ClientError> {
        client::post(self.addr, "/v1/envelopes", body, T).await
    }
    pub async fn get(&self, path: &str) -> Response {
        client::get(self.addr, path, T).await.unwrap()
    }
    /// `GET path` signed by `key` (CONDUIT.md *Who may read what*).
    pub async fn get_as(&self, path: &str, key: &SigningKey) -> Response {
        client::get_as(self.addr, path, key, T).await.unwrap()
    }
}

/// A relay + notary conduit (pinned keys: alice, bob), `tune` applied.
pub async fn start(tune: impl FnOnce(&mut Config)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start_at(dir.path().join("state"), tune).await;
    r._dir = Some(dir);
    r
}

/// As [`start`], over the state directory `state` (kept by the caller).
pub async fn start_at(state: std::path::PathBuf, tune: impl FnOnce(&mut Config)) -> Running {
    let mut keyring = Keyring::new();
    keyring.insert(alice().public_key(), Provenance::Pinned);
    keyring.insert(bob().public_key(), Provenance::Pinned);
    start_as(state, conduit_key(), keyring, tune).await
}

/// A conduit with its own key and keyring.
pub async fn start_as(
    state: std::path::PathBuf,
    key: SigningKey,
    keyring: Keyring,
    tune: impl FnOnce(&mut Config),
) -> Running {
    let mut config = Config::new(&state);
    config.roles = Roles {
        relay: true,
        notary: true,
    };
    config.batch = Duration::from_millis(100);
    tune(&mut config);
    let conduit = Conduit::open(config, key, keyring).await.unwrap();
    let listener = herald_conduit::listen(([127, 0, 0, 1], 0).into()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(herald_conduit::serve(conduit, listener, async move {
        let _ = stopped.await;
    }));
    Running {
        addr,
        state,
        _dir: None,
        stop: Some(stop),
        task: Some(task),
    }
}

/// A message from `from` to `to`, nonce from `n`.
pub fn message(from: &SigningKey, to: &SigningKey, n: u64, text: &str) -> Vec<u8> {
    let mut nonce = [0u8; 16];
    nonce[..8].copy_from_slice(&n.to_be_bytes());
    nonce[8] = from.public_key().as_bytes()[0];
    EnvelopeBuilder::genesis(now())
        .nonce(Nonce(nonce))
        .to(to.sigil(SigilForm::Default))
        .payload(Value::text(text))
        .sign(from)
        .unwrap()
        .into_bytes()
}

/// The fields of a 201 body.
pub struct Created {
    pub envelope: Vec<u8>,
    pub index: Option<u64>,
    pub proof: Option<Vec<u8>>,
}

pub fn created(body: &[u8]) -> Created {
    let v = Value::decode(body).unwrap();
    let m = v.as_map().unwrap();
    let bytes = |k: &str| match m.get(k) {
        Some(Value::Bytes(b)) => Some(b.clone()),
        _ => None,
    };
    Created {
        envelope: bytes("envelope").unwrap(),
        index: match m.get("index") {
            Some(Value::Unsigned(i)) => Some(*i),
            _ => None,
        },
        proof: m.get("proof").map(|p| p.to_vec()),
    }
}

/// The forwarded envelope is valid with the published keys and carries
/// the conduit's receipt (signature 1, `conduit_receipt`).
pub fn assert_receipt(forwarded: &[u8]) {
    let keys = published();
    let mut reasons = Vec::new();
    let checked = herald_core::check(
        forwarded,
        &keys,
        &CheckOptions {
            now: Some(now()),
            ..CheckOptions::default()
        },
        &mut reasons,
    );
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    let env = EnvelopeRef::decode(forwarded).unwrap();
    assert_eq!(env.signature_count(), 2);
    let sig = env.signatures().nth(1).unwrap().unwrap();
    assert_eq!(sig.scope, "conduit_receipt");
    assert_eq!(sig.by, conduit_key().sigil(SigilForm::Default).to_string());
}

/// The proof verifies with the conduit's key and covers `forwarded`.
pub fn assert_proof(proof: &[u8], forwarded: &[u8]) -> InclusionProof {
    let p = InclusionProof::decode(proof).unwrap();
    p.verify(&published()).unwrap();
    p.matches(&EnvelopeRef::decode(forwarded).unwrap()).unwrap();
    p
}

/// A refusal: signed by the conduit, `parent` = the refused id, `to` =
/// its `from`, payload `reason`.
pub fn assert_refusal(body: &[u8], refused: &[u8], reason: &str) {
    let keys = published();
    let mut reasons = Vec::new();
    let checked = herald_core::check(body, &keys, &CheckOptions::default(), &mut reasons);
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    let r = EnvelopeRef::decode(body).unwrap();
    assert_eq!(r.kind(), Kind::Refusal);
    assert_eq!(
        r.from(),
        conduit_key().sigil(SigilForm::Default).to_string()
    );
    let head = refused_head(refused);
    assert_eq!(r.parent(), Some(&head.0));
    assert_eq!(r.trace(), &head.1);
    assert_eq!(r.to().unwrap().0, head.2);
    let payload = Value::decode(r.payload_bytes()).unwrap();
    assert_eq!(
        payload
            .as_map()
            .unwrap()
            .get("reason")
            .and_then(|v| v.as_text()),
        Some(reason)
    );
}

fn refused_head(bytes: &[u8]) -> ([u8; 32], [u8; 32], String) {
    // The first bytes suffice (an oversize envelope is cut).
    let v = herald_core::cbor::decode(bytes);
    let env = EnvelopeRef::decode(bytes);
    match (env, v) {
        (Ok(e), _) => (*e.id(), *e.trace(), e.from().to_owned()),
        _ => panic!("refused bytes do not decode"),
    }
}

/// The items of a CBOR sequence.
pub fn items(seq: &[u8]) -> Vec<Vec<u8>> {
    if seq.is_empty() {
        return Vec::new();
    }
    herald_verify::split_sequence(seq, 1 << 20, 64)
        .into_iter()
        .map(|p| match p {
            herald_verify::Piece::Item { bytes, .. } => bytes.to_vec(),
            other => panic!("not a CBOR sequence: {other:?}"),
        })
        .collect()
}
