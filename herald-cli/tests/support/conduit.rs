//! `herald conduit serve` on 127.0.0.1:0, its address from the
//! `listening on http://ADDR` line (CONDUIT.md), and the keys and files the
//! conduit tests share.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, SigilForm, SigningKey};

/// The sender of the load tests' messages.
pub(crate) fn alice() -> SigningKey {
    SigningKey::from_seed(&[0x11; 32])
}

/// Their recipient.
pub(crate) fn bob() -> SigningKey {
    SigningKey::from_seed(&[0x22; 32])
}

/// A third party: a reader in no trace, or a key born and molted on the
/// conduit.
pub(crate) fn carol() -> SigningKey {
    SigningKey::from_seed(&[0x33; 32])
}

/// Carol's molted-in key.
pub(crate) fn carol_next() -> SigningKey {
    SigningKey::from_seed(&[0x34; 32])
}

/// A fourth key.
pub(crate) fn dan() -> SigningKey {
    SigningKey::from_seed(&[0x44; 32])
}

/// `k`'s default sigil, as text.
pub(crate) fn sigil(k: &SigningKey) -> String {
    k.sigil(SigilForm::Default).to_string()
}

/// `k`'s birth at `t` (P7, self-certified), named `name`.
pub(crate) fn birth(k: &SigningKey, name: &str, t: u64) -> Envelope {
    EnvelopeBuilder::genesis(t)
        .kind(Kind::Birth)
        .attest("birth", birth_attestation(&k.public_key(), name, &[]))
        .sign(k)
        .unwrap()
}

/// The payload of a molt to `new` effective at `not_before` (P8).
pub(crate) fn molt_payload(new: &SigningKey, not_before: u64) -> Value {
    let mut p = Map::new();
    p.insert(
        "new_key",
        Value::Bytes(new.public_key().as_bytes().to_vec()),
    );
    p.insert("not_before", Value::Unsigned(not_before));
    Value::Map(p)
}

/// The conduit's key (a fleet's, shared).
pub(crate) fn conduit_key() -> SigningKey {
    SigningKey::from_seed(&[0xc0; 32])
}

/// Now, Unix seconds.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Alice's message to bob with nonce number `n`.
pub(crate) fn message(n: u64, text: &str) -> Vec<u8> {
    let mut nonce = [0u8; 16];
    nonce[..8].copy_from_slice(&n.to_be_bytes());
    EnvelopeBuilder::genesis(now())
        .nonce(Nonce(nonce))
        .to(bob().sigil(SigilForm::Default))
        .payload(Value::text(text))
        .sign(&alice())
        .unwrap()
        .into_bytes()
}

/// `key`'s secret key file at `path` (mode 0600).
pub(crate) fn write_key(path: &Path, key: &SigningKey) {
    let seed = herald_verify::hex(key.to_seed().as_slice());
    std::fs::write(path, format!("herald-secret-key-v1\n{seed}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// In `dir`: the conduit's key file `conduit.key` (0600), the senders'
/// keyring `keyring` (alice, bob) and the log's keyring `conduit.pub`.
pub(crate) fn write_files(dir: &Path) {
    write_key(&dir.join("conduit.key"), &conduit_key());
    let line = |k: &SigningKey| herald_verify::key_line(&k.public_key());
    std::fs::write(
        dir.join("keyring"),
        format!("{}\n{}\n", line(&alice()), line(&bob())),
    )
    .unwrap();
    std::fs::write(
        dir.join("conduit.pub"),
        format!("{}\n", line(&conduit_key())),
    )
    .unwrap();
}

/// Start the real binary with `configure`'s flags added; the child and
/// the address it listens on.
pub(crate) fn serve(configure: impl FnOnce(&mut Command)) -> (Child, SocketAddr) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_herald"));
    cmd.args(["conduit", "serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    configure(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let addr = super::listening(&mut child, "listening on http://")
        .parse()
        .unwrap();
    (child, addr)
}

/// A conduit child, killed when the test ends however it ends.
pub(crate) struct Killed {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
}

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The roles and batch of the conduits most tests start: a relay and
/// notary signing a tree head every 50 ms.
pub(crate) const NOTARY: [&str; 4] = ["--roles", "relay,notary", "--batch-ms", "50"];

/// A conduit over the files of [`write_files`] in `dir` (its key,
/// `dir/state`, its keyring), with `extra` flags, killed on drop.
pub(crate) fn start(dir: &Path, extra: &[&str]) -> Killed {
    let (child, addr) = serve(|cmd| {
        cmd.arg("--key")
            .arg(dir.join("conduit.key"))
            .arg("--state")
            .arg(dir.join("state"))
            .arg("--keyring")
            .arg(dir.join("keyring"))
            .args(extra);
    });
    Killed { child, addr }
}

/// `POST /v1/envelopes` of `env`, asserting its `201`.
pub(crate) async fn post_ok(addr: SocketAddr, env: &[u8]) {
    let r = herald_conduit::client::post(addr, "/v1/envelopes", env, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

/// Every envelope id in the inbox of `owner`'s sigil, paging from cursor
/// 0 and reading each page through the next of `addrs`, signed by `owner`
/// (CONDUIT.md *Who may read what*); and the last cursor.
pub(crate) async fn read_inbox(
    addrs: &[SocketAddr],
    owner: &SigningKey,
    timeout: std::time::Duration,
) -> (Vec<[u8; 32]>, u64) {
    let sigil = owner.sigil(SigilForm::Default);
    let mut inbox = Vec::new();
    let mut cursor = 0u64;
    for page in 0.. {
        let via = addrs[page % addrs.len()];
        let path = format!("/v1/inbox/{sigil}?after={cursor}");
        let r = herald_conduit::client::get_as(via, &path, owner, timeout)
            .await
            .unwrap();
        let next: u64 = r.header("herald-cursor").unwrap().parse().unwrap();
        if next == cursor {
            break;
        }
        for piece in herald_verify::split_sequence(&r.body, 1 << 20, 64) {
            let herald_verify::Piece::Item { bytes, .. } = piece else {
                panic!("inbox is not a CBOR sequence");
            };
            inbox.push(*herald_core::EnvelopeRef::decode(bytes).unwrap().id());
        }
        cursor = next;
    }
    (inbox, cursor)
}
