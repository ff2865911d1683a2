//! The Mainline DHT through the real binary (docs/resolution.md *Mainline
//! DHT*, PROFILE.md P15 *Distributed lookup*), against a DHT testnet of
//! the `mainline` crate started here: every node, the binary's included,
//! binds 127.0.0.1 (a loopback-only bootstrap list makes it so), so
//! nothing leaves the machine.
#![cfg(feature = "dht")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_lite::StreamExt;
use herald_core::{SigilForm, SigningKey};
use mainline::{Dht, Testnet};

use support::herald;

/// Children killed when the test ends, however it ends.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn testnet() -> Testnet {
    let net = Testnet::builder(5).build().unwrap();
    for node in &net.bootstrap {
        assert!(node.starts_with("127.0.0.1:"), "{node}");
    }
    net
}

/// A client of the testnet, bound to 127.0.0.1.
fn client(net: &Testnet) -> mainline::async_dht::AsyncDht {
    Dht::builder()
        .bootstrap(&net.bootstrap)
        .bind_address(Ipv4Addr::LOCALHOST)
        .port(0)
        .build()
        .unwrap()
        .as_async()
}

fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(20), work)
                .await
                .unwrap()
        })
}

/// `key`'s secret key file at `dir/name` (mode 0600).
fn key_file(dir: &Path, name: &str, key: &SigningKey) -> String {
    let path = dir.join(name);
    let seed = herald_verify::hex(key.to_seed().as_slice());
    std::fs::write(&path, format!("herald-secret-key-v1\n{seed}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path.to_str().unwrap().to_owned()
}

/// `herald conduit serve --dht-announce` on 127.0.0.1:0; the child and its port.
fn conduit(dir: &Path, net: &Testnet, announce: &[String]) -> (Kill, u16) {
    support::conduit::write_files(dir);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_herald"));
    cmd.args(["conduit", "serve", "--listen", "127.0.0.1:0", "--key"])
        .arg(dir.join("conduit.key"))
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--dht-bootstrap")
        .arg(net.bootstrap.join(","))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for sigil in announce {
        cmd.args(["--dht-announce", sigil]);
    }
    let mut child = cmd.spawn().unwrap();
    // The line comes once the first announce round is over.
    let addr: std::net::SocketAddr = support::listening(&mut child, "listening on http://")
        .parse()
        .unwrap();
    (Kill(child), addr.port())
}

/// A conduit started with `--dht-announce SIGIL` is found under SIGIL's
/// info-hash (BEP 5) at its own loopback address and port.
#[test]
fn a_conduit_announces_itself_under_the_sigil() {
    let net = testnet();
    let tmp = tempfile::tempdir().unwrap();
    let alice = SigningKey::from_seed(&[0x41; 32]).sigil(SigilForm::Default);
    let (_conduit, port) = conduit(tmp.path(), &net, &[alice.to_string()]);
    let info_hash = herald_resolve::dht_info_hash(&alice).unwrap();
    let dht = client(&net);
    let peers: Vec<SocketAddrV4> = block_on(async {
        dht.get_peers(info_hash.into())
            .take(16)
            .collect::<Vec<_>>()
            .await
            .concat()
    });
    assert!(
        peers.contains(&SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)),
        "{peers:?} lacks port {port}"
    );
    // Another sigil's info-hash holds nothing.
    let other = SigningKey::from_seed(&[0x42; 32]).sigil(SigilForm::Default);
    let none: Vec<Vec<SocketAddrV4>> = block_on(
        dht.get_peers(herald_resolve::dht_info_hash(&other).unwrap().into())
            .collect(),
    );
    assert!(none.concat().is_empty(), "{none:?}");
}

/// `herald dht announce` publishes the agent's BEP 44 record, signed by
/// its key, salt `herald.dht.v1`, naming its conduit.
#[test]
fn dht_announce_publishes_the_signed_record() {
    let net = testnet();
    let tmp = tempfile::tempdir().unwrap();
    let key = SigningKey::from_seed(&[0x43; 32]);
    let path = key_file(tmp.path(), "agent.key", &key);
    let bootstrap = net.bootstrap.join(",");
    let run = herald(
        tmp.path(),
        &[
            "dht",
            "announce",
            "--key",
            &path,
            "--conduit",
            "http://127.0.0.1:8470",
            "--dht-bootstrap",
            &bootstrap,
        ],
    );
    run.expect(0);
    let sigil = key.sigil(SigilForm::Default).to_string();
    assert!(
        run.out()
            .starts_with(&format!("published {sigil} -> http://127.0.0.1:8470 (seq "))
    );
    let dht = client(&net);
    let item = block_on(dht.get_mutable_most_recent(
        key.public_key().as_bytes(),
        Some(herald_resolve::DHT_DOMAIN),
    ))
    .expect("the record is on the DHT");
    let value = std::str::from_utf8(item.value()).unwrap();
    assert_eq!(
        value,
        format!(
            "v=herald1; sigil={sigil}; key={}; conduit=http://127.0.0.1:8470",
            herald_verify::hex(key.public_key().as_bytes())
        )
    );

    // A second announce supersedes it with a higher sequence number.
    let again = herald(
        tmp.path(),
        &[
            "dht",
            "announce",
            "--key",
            &path,
            "--conduit",
            "https://mail.example:443",
            "--dht-bootstrap",
            &bootstrap,
        ],
    );
    again.expect(0);
    let newer = block_on(dht.get_mutable_most_recent(
        key.public_key().as_bytes(),
        Some(herald_resolve::DHT_DOMAIN),
    ))
    .unwrap();
    assert!(newer.seq() > item.seq());
    assert!(
        std::str::from_utf8(newer.value())
            .unwrap()
            .ends_with("conduit=https://mail.example:443")
    );

    // A conduit that is not an http(s) URL is refused before any DHT traffic.
    let bad = herald(
        tmp.path(),
        &[
            "dht",
            "announce",
            "--key",
            &path,
            "--conduit",
            "ftp://x",
            "--dht-bootstrap",
            &bootstrap,
        ],
    );
    bad.expect(2);
    assert!(bad.stderr.contains("--conduit"), "{}", bad.stderr);
}
