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
use std::time::Duration;

use futures_lite::StreamExt;
use herald_core::{Envelope, EnvelopeBuilder, SigilForm, SigningKey};
use herald_resolve::{
    DhtAnnouncer, DhtChannel, DhtConfig, Query, Resolution, ResolveError, Resolver, Source,
};
use mainline::{Dht, Testnet};

use support::conduit::Killed;
use support::herald;

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
    support::conduit::write_key(&path, key);
    path.to_str().unwrap().to_owned()
}

/// `herald conduit serve --dht-announce` on 127.0.0.1:0; the child and its port.
fn conduit(dir: &Path, net: &Testnet, announce: &[String]) -> (Killed, u16) {
    support::conduit::write_files(dir);
    let mut extra = vec!["--dht-bootstrap".to_owned(), net.bootstrap.join(",")];
    for sigil in announce {
        extra.extend(["--dht-announce".to_owned(), sigil.clone()]);
    }
    let extra: Vec<&str> = [
        &support::conduit::NOTARY[..],
        &extra.iter().map(String::as_str).collect::<Vec<_>>(),
    ]
    .concat();
    // The line comes once the first announce round is over.
    let c = support::conduit::start(dir, &extra);
    let port = c.addr.port();
    (c, port)
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
    // A short sigil carries too few digest bytes to be announced (P15).
    let short = key.sigil(SigilForm::Short).to_string();
    let refused = herald(
        tmp.path(),
        &[
            "conduit",
            "serve",
            "--key",
            &path,
            "--state",
            "state",
            "--listen",
            "127.0.0.1:0",
            "--dht-announce",
            &short,
            "--dht-bootstrap",
            &bootstrap,
        ],
    );
    refused.expect(2);
    assert!(
        refused.stderr.contains("--dht-announce"),
        "{}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty());
}

/// `key`'s birth (P7), now.
fn birth(key: &SigningKey, name: &str) -> Envelope {
    support::conduit::birth(key, name, support::conduit::now())
}

/// Post `envelope` to the conduit on `port`.
fn post(port: u16, envelope: &Envelope) {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let r = block_on(herald_conduit::client::post(
        addr,
        "/v1/envelopes",
        envelope.as_bytes(),
        Duration::from_secs(10),
    ))
    .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

/// Resolve `sigil` through the DHT channel alone, on `net`.
fn resolve_on(net: &Testnet, sigil: herald_core::Sigil) -> Resolution {
    let config = DhtConfig::new().with_bootstrap(net.bootstrap.clone());
    let channel = DhtChannel::new(&config).unwrap();
    assert!(channel.local_addr().ip().is_loopback());
    let resolver = Resolver::new().with_channel(Box::new(channel));
    block_on(resolver.resolve(&Query::sigil(sigil)))
}

/// A conduit announced under alice's sigil that serves her birth gives
/// her key; her own record names her conduit in the answer, and a record
/// published by another key (mallory's, naming his) is not hers.
#[test]
fn announce_then_resolve() {
    let net = testnet();
    let tmp = tempfile::tempdir().unwrap();
    let alice = SigningKey::from_seed(&[0x44; 32]);
    let sigil = alice.sigil(SigilForm::Default);
    let (_conduit, port) = conduit(tmp.path(), &net, &[sigil.to_string()]);
    post(port, &birth(&alice, "alice"));

    // Before any record: the conduit that served the key.
    let found = resolve_on(&net, sigil);
    assert!(found.is_resolved(), "{:?}", found.failures);
    let answer = &found.answers[0];
    assert_eq!(answer.key, alice.public_key());
    assert_eq!(answer.source, Source::Dht);
    assert_eq!(
        answer.conduit.as_deref(),
        Some(format!("http://127.0.0.1:{port}").as_str())
    );

    // Mallory publishes a record naming his conduit; alice publishes hers.
    let bootstrap = net.bootstrap.join(",");
    let mallory = SigningKey::from_seed(&[0x4d; 32]);
    for (name, key, url) in [
        ("mallory.key", &mallory, "http://127.0.0.1:1"),
        ("alice.key", &alice, "https://mail.alice.example"),
    ] {
        let path = key_file(tmp.path(), name, key);
        herald(
            tmp.path(),
            &[
                "dht",
                "announce",
                "--key",
                &path,
                "--conduit",
                url,
                "--dht-bootstrap",
                &bootstrap,
            ],
        )
        .expect(0);
    }
    let found = resolve_on(&net, sigil);
    assert!(found.is_resolved(), "{:?}", found.failures);
    assert_eq!(found.answers[0].key, alice.public_key());
    assert_eq!(
        found.answers[0].conduit.as_deref(),
        Some("https://mail.alice.example")
    );

    // The long form of her sigil meets under the same info-hash.
    let long = resolve_on(&net, alice.sigil(SigilForm::Long));
    assert_eq!(
        long.answers.first().map(|a| a.key),
        Some(alice.public_key())
    );
    // Through the binary: `herald resolve` ...
    let sigil_text = sigil.to_string();
    let run = herald(
        tmp.path(),
        &[
            "resolve",
            &sigil_text,
            "--dht-bootstrap",
            &bootstrap,
            "--json",
        ],
    );
    run.expect(0);
    let json = run.json();
    assert_eq!(json["sigil"], sigil_text.as_str());
    assert_eq!(json["source"], "dht");
    assert_eq!(
        json["key"],
        herald_verify::hex(alice.public_key().as_bytes()).as_str()
    );
    assert_eq!(json["conduit"], "https://mail.alice.example");

    // ... and `herald verify --resolve dht` of her message, no keyring given.
    let message = EnvelopeBuilder::genesis(support::conduit::now())
        .payload(herald_core::cbor::Value::text("hello"))
        .sign(&alice)
        .unwrap();
    std::fs::write(tmp.path().join("m.cbor"), message.as_bytes()).unwrap();
    let unresolved = herald(tmp.path(), &["verify", "m.cbor", "--json"]);
    unresolved.expect(1);
    let run = herald(
        tmp.path(),
        &[
            "verify",
            "m.cbor",
            "--resolve",
            "dht",
            "--dht-bootstrap",
            &bootstrap,
            "--json",
        ],
    );
    run.expect(0);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(entry["status"], "valid", "{entry}");
    // The key was served by a conduit the DHT pointed at.
    assert_eq!(entry["key_source"], "conduit", "{entry}");
}

/// `herald resolve --dht-bootstrap` whose only node never answers: not
/// resolved (exit 1) within the lookup's bound, and the binary's DHT node
/// bound loopback only (a loopback bootstrap list makes it so).
#[test]
fn a_dht_lookup_that_finds_nothing_is_not_resolved_in_time() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let sigil = SigningKey::from_seed(&[0x47; 32])
        .sigil(SigilForm::Default)
        .to_string();
    let node = silent.local_addr().unwrap().to_string();
    let started = std::time::Instant::now();
    let run = herald(tmp.path(), &["resolve", &sigil, "--dht-bootstrap", &node]);
    run.expect(1);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(run.stderr.contains("not resolved"), "{}", run.stderr);
    // Every datagram the binary sent came from 127.0.0.1.
    silent.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 1500];
    let mut seen = 0;
    while let Ok((_, from)) = silent.recv_from(&mut buf) {
        assert!(from.ip().is_loopback(), "{from}");
        seen += 1;
    }
    assert!(seen > 0, "the binary never asked its bootstrap node");
}

/// An HTTP server on loopback that answers every request with `body` as
/// a keys answer (CONDUIT.md `GET /v1/keys/{sigil}`), whatever was asked.
fn lying_conduit(body: Vec<u8>) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/cbor-seq\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    port
}

/// A peer announced under alice's sigil whose conduit serves the birth of
/// another sigil (bob's): its key is not accepted, alice is not resolved
/// and the DHT channel's failure says why; with an honest conduit
/// announced too, alice resolves to her own key.
#[test]
fn a_peer_serving_another_sigils_birth_is_not_believed() {
    let net = testnet();
    let alice = SigningKey::from_seed(&[0x45; 32]);
    let bob = SigningKey::from_seed(&[0x46; 32]);
    let sigil = alice.sigil(SigilForm::Default);
    let liar = lying_conduit(birth(&bob, "bob").as_bytes().to_vec());
    let announcer =
        DhtAnnouncer::new(&DhtConfig::new().with_bootstrap(net.bootstrap.clone())).unwrap();
    assert!(announcer.local_addr().ip().is_loopback());
    block_on(announcer.announce_conduit(&sigil, liar)).unwrap();

    let found = resolve_on(&net, sigil);
    assert!(!found.is_resolved(), "{:?}", found.answers);
    let tmp = tempfile::tempdir().unwrap();
    let sigil_text = sigil.to_string();
    let run = herald(
        tmp.path(),
        &[
            "resolve",
            &sigil_text,
            "--dht-bootstrap",
            &net.bootstrap.join(","),
        ],
    );
    run.expect(1);
    assert!(run.stdout.is_empty(), "{}", run.out());
    assert!(run.stderr.contains("dht:"), "{}", run.stderr);
    assert!(
        found
            .failures
            .iter()
            .any(|f| f.source == Source::Dht && matches!(f.error, ResolveError::Malformed { .. })),
        "{:?}",
        found.failures
    );

    // A peer that accepts and never answers holds the lookup up for 2 s at
    // most: the honest conduit is still asked within the bound.
    let tarpit = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tarpit_port = tarpit.local_addr().unwrap().port();
    block_on(announcer.announce_conduit(&sigil, tarpit_port)).unwrap();
    let (_conduit, port) = conduit(tmp.path(), &net, &[sigil.to_string()]);
    post(port, &birth(&alice, "alice"));
    let found = resolve_on(&net, sigil);
    drop(tarpit);
    assert!(found.is_resolved(), "{:?}", found.failures);
    assert_eq!(found.answers[0].key, alice.public_key());
    assert_eq!(
        found.answers[0].conduit.as_deref(),
        Some(format!("http://127.0.0.1:{port}").as_str())
    );
}
