//! The conduit against a Nostr relay, side by side (docs/performance.md,
//! the comparisons with the tools people would use instead):
//! `herald conduit serve --roles relay,notary` (verifies, co-signs, logs in
//! a Merkle tree, on disk before it answers 201) against `nostr-rs-relay`
//! (verifies the event id and its BIP-340 Schnorr signature, stores it in
//! SQLite, then answers NIP-01 `OK`), both servers processes of their own on
//! this machine, in one run, alternating, with the same clients:
//!
//! - the same number of clients, each keeping one connection open
//!   (HTTP/1.1 keep-alive to the conduit, a WebSocket to the relay) and
//!   posting one message at a time, then the same with a new connection
//!   per post;
//! - the same message content (a 300-byte text: the conduit's envelope
//!   payload, the relay's kind-1 event content), each message signed once
//!   before the clock starts, fresh messages and a fresh server each round;
//! - durable settings on both, as far as each has them: the conduit always
//!   syncs its redb commit before answering; nostr-rs-relay 0.8.12 has no
//!   setting for it (`PRAGMA synchronous = NORMAL` in WAL mode, hard-coded
//!   in its `src/repo/sqlite_migration.rs`: a commit reaches the WAL file
//!   but is synced only at checkpoints), so it runs as shipped, which
//!   favours it.
//!
//! The metric: accepted posts per second per core used, the posts over the
//! server process's CPU seconds (user + system, `/proc/PID/stat`) during
//! the load; also posts per wall second and latency. Medians over ROUNDS
//! rounds and the ratio herald / relay, with each round's ratio (the
//! spread).
//!
//! ```text
//! benches/peers-setup            # installs nostr-rs-relay under ~/.cache/herald-rs/
//! cargo build --release -p herald-cli -p herald-benches
//! cargo run --release -p herald-benches --bin peers_nostr [POSTS [CLIENTS [ROUNDS]]]
//! ```
//!
//! `HERALD_BIN` names the `herald` binary (default: beside this one),
//! `HERALD_NOSTR_RELAY` the relay's (default: where benches/peers-setup puts
//! it); `HERALD_PEERS_ONLY=herald` (or `relay`) runs that side alone, to
//! profile it (its round lines only).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use herald_benches::load::{drive, median, pct, pid_cpu};
use herald_benches::payload_text;
use herald_conduit::client;
use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigilForm, SigningKey};
use k256::schnorr;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio_tungstenite::tungstenite::Message;

const POSTS: usize = 2000;
const CLIENTS: usize = 50;
const ROUNDS: usize = 5;
/// Posts before the clock starts, each round (connections, caches).
const WARM_UP: usize = 100;
/// Bytes of the text every message carries.
const CONTENT: usize = 300;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The cache directory benches/peers-setup installs the peers in.
fn cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"))
        .join("herald-rs")
}

/// Which server a run measures.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Herald,
    Relay,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Self::Herald => "herald conduit",
            Self::Relay => "nostr-rs-relay",
        }
    }
}

/// A server process on loopback, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `herald conduit serve --roles relay,notary` with `alice` pinned, in a
    /// fresh state directory.
    fn herald(bin: &Path, alice: &SigningKey) -> Self {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let d = dir.path();
        let st = Command::new(bin)
            .args(["keygen", "-o"])
            .arg(d.join("conduit"))
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        let pk = alice.public_key();
        std::fs::write(
            d.join("keyring"),
            format!(
                "{} ed25519 {}\n",
                pk.sigil(SigilForm::Default),
                data_encoding::HEXLOWER.encode(pk.as_bytes())
            ),
        )
        .unwrap();
        let mut child = Command::new(bin)
            .current_dir(d)
            .args([
                "conduit",
                "serve",
                "--key",
                "conduit.key",
                "--state",
                "state",
            ])
            .args(["--roles", "relay,notary", "--keyring", "keyring"])
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let addr = loop {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "the conduit ended");
            if let Some(a) = line.trim().strip_prefix("listening on http://") {
                break a.parse().unwrap();
            }
        };
        // Keep reading its standard output so that it never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Self {
            child,
            addr,
            _dir: dir,
        }
    }

    /// `nostr-rs-relay` with its database in a fresh directory, on a free
    /// loopback port, logging warnings only.
    fn relay(bin: &Path) -> Self {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let d = dir.path();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "[info]\nrelay_url = \"ws://127.0.0.1:{port}/\"\nname = \"bench\"\n\n\
             [database]\ndata_directory = \"{}\"\n\n\
             [network]\naddress = \"127.0.0.1\"\nport = {port}\n\n\
             [options]\nreject_future_seconds = 1800\n",
            d.display()
        );
        std::fs::write(d.join("config.toml"), config).unwrap();
        let child = Command::new(bin)
            .current_dir(d)
            .arg("--config")
            .arg(d.join("config.toml"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let t = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the relay did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            addr,
            _dir: dir,
        }
    }
}

/// `n` conduit envelopes from `alice` to `bob`, `salt` making them unique.
fn envelopes(alice: &SigningKey, bob: &SigningKey, n: usize, salt: u8) -> Vec<Vec<u8>> {
    let text = payload_text(CONTENT);
    (0..n)
        .map(|i| {
            let mut nonce = [salt; 16];
            nonce[..8].copy_from_slice(&(i as u64).to_be_bytes());
            EnvelopeBuilder::genesis(now())
                .nonce(Nonce(nonce))
                .to(bob.sigil(SigilForm::Default))
                .payload(Value::text(text.clone()))
                .sign(alice)
                .unwrap()
                .into_bytes()
        })
        .collect()
}

/// `n` NIP-01 `["EVENT", …]` messages: kind-1 events carrying the same
/// text (and a counter, so that each id is new), signed by `key`.
fn events(key: &schnorr::SigningKey, n: usize, salt: u8) -> Vec<String> {
    let pubkey = data_encoding::HEXLOWER.encode(&key.verifying_key().to_bytes());
    let text = payload_text(CONTENT - 8);
    (0..n)
        .map(|i| {
            let content = format!("{text}{salt:02x}{i:06}");
            let created = now();
            // NIP-01: the id is the SHA-256 of [0,pubkey,created_at,kind,tags,content].
            let id: [u8; 32] = Sha256::digest(
                serde_json::to_string(&json!([0, pubkey, created, 1, [], content])).unwrap(),
            )
            .into();
            let sig = key.sign_raw(&id, &[salt; 32]).unwrap();
            json!(["EVENT", {
                "id": data_encoding::HEXLOWER.encode(&id),
                "pubkey": pubkey,
                "created_at": created,
                "kind": 1,
                "tags": [],
                "content": content,
                "sig": data_encoding::HEXLOWER.encode(&sig.to_bytes()),
            }])
            .to_string()
        })
        .collect()
}

/// The work of one run: the conduit's envelopes or the relay's events.
enum Work {
    Herald(Vec<Vec<u8>>),
    Relay(Vec<String>),
}

impl Work {
    fn len(&self) -> usize {
        match self {
            Self::Herald(w) => w.len(),
            Self::Relay(w) => w.len(),
        }
    }
}

type Ws = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn ws_connect(addr: SocketAddr) -> Ws {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    tokio_tungstenite::client_async(format!("ws://{addr}/"), tcp)
        .await
        .unwrap()
        .0
}

/// Send one event and wait for its NIP-01 `OK`, which must accept it.
async fn ws_post(ws: &mut Ws, event: &str) {
    ws.send(Message::text(event)).await.unwrap();
    loop {
        match ws.next().await.unwrap().unwrap() {
            Message::Text(t) => {
                let m: serde_json::Value = serde_json::from_str(&t).unwrap();
                if m[0] == "OK" {
                    assert_eq!(m[2], true, "the relay refused an event: {t}");
                    return;
                }
            }
            Message::Close(c) => panic!("the relay closed the connection: {c:?}"),
            _ => {}
        }
    }
}

/// Post items `from..` of `work` with `clients` clients (kept-alive or a
/// connection per post): the wall time and the sorted latencies.
fn post_all(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    work: &Arc<Work>,
    from: usize,
    clients: usize,
    kept: bool,
) -> (Duration, Vec<Duration>) {
    rt.block_on(drive(clients, work.len() - from, |claim| {
        let work = Arc::clone(work);
        async move {
            let mut lat = Vec::new();
            let mut http: Option<client::Connection> = None;
            let mut ws: Option<Ws> = None;
            let timeout = Duration::from_secs(30);
            while let Some(i) = claim.next() {
                let t = Instant::now();
                match &*work {
                    Work::Herald(w) => {
                        let r = if kept {
                            if http.is_none() {
                                http = Some(client::Connection::connect(addr).await.unwrap());
                            }
                            let c = http.as_mut().unwrap();
                            c.post("/v1/envelopes", &w[from + i], timeout)
                                .await
                                .unwrap()
                        } else {
                            client::post(addr, "/v1/envelopes", &w[from + i], timeout)
                                .await
                                .unwrap()
                        };
                        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                    }
                    Work::Relay(w) => {
                        if kept {
                            if ws.is_none() {
                                ws = Some(ws_connect(addr).await);
                            }
                            ws_post(ws.as_mut().unwrap(), &w[from + i]).await;
                        } else {
                            let mut one = ws_connect(addr).await;
                            ws_post(&mut one, &w[from + i]).await;
                        }
                    }
                }
                lat.push(t.elapsed());
            }
            lat
        }
    }))
}

/// One round's figures for one side and mode.
struct Run {
    per_sec: f64,
    per_core_sec: f64,
    cpu: f64,
    p50: f64,
    p99: f64,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let posts: usize = args.next().map_or(POSTS, |a| a.parse().expect("POSTS"));
    let clients: usize = args.next().map_or(CLIENTS, |a| a.parse().expect("CLIENTS"));
    let rounds: usize = args.next().map_or(ROUNDS, |a| a.parse().expect("ROUNDS"));
    let herald = std::env::var_os("HERALD_BIN").map_or_else(
        || std::env::current_exe().unwrap().with_file_name("herald"),
        PathBuf::from,
    );
    assert!(
        herald.exists(),
        "{}: build it first (cargo build --release -p herald-cli) or set HERALD_BIN",
        herald.display()
    );
    let relay = std::env::var_os("HERALD_NOSTR_RELAY").map_or_else(
        || cache().join("nostr-rs-relay/bin/nostr-rs-relay"),
        PathBuf::from,
    );
    // One side alone (to profile it): its round lines, no table.
    let only = std::env::var("HERALD_PEERS_ONLY").ok();
    let runs_side = |side: Side| {
        only.as_deref().is_none_or(|o| {
            o == match side {
                Side::Herald => "herald",
                Side::Relay => "relay",
            }
        })
    };
    assert!(
        !runs_side(Side::Relay) || relay.exists(),
        "{}: run benches/peers-setup first (or set HERALD_NOSTR_RELAY)",
        relay.display()
    );
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let bob = SigningKey::from_seed(&[0x22; 32]);
    let nostr_key = schnorr::SigningKey::from_bytes(&[0x33; 32]).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let total = WARM_UP + posts;
    {
        let e = &envelopes(&alice, &bob, 1, 0)[0];
        let v = &events(&nostr_key, 1, 0)[0];
        println!(
            "{posts} posts x {rounds} rounds, {clients} clients, content {CONTENT} bytes: \
             conduit envelope {} bytes (CBOR, HTTP body), relay EVENT message {} bytes (JSON, WebSocket text)",
            e.len(),
            v.len()
        );
    }
    let modes = [(true, "kept-alive"), (false, "connection per post")];
    // runs[mode][side]
    let mut runs: Vec<[Vec<Run>; 2]> = (0..modes.len()).map(|_| [vec![], vec![]]).collect();
    for round in 0..rounds {
        // Alternate which side goes first, so that drift hits both alike.
        let order = if round % 2 == 0 {
            [Side::Herald, Side::Relay]
        } else {
            [Side::Relay, Side::Herald]
        };
        let mut line = format!("round {round}:");
        for (m, &(kept, mode)) in modes.iter().enumerate() {
            for side in order.into_iter().filter(|&s| runs_side(s)) {
                let salt = (round * 4 + m * 2 + usize::from(side == Side::Relay)) as u8;
                let (server, work) = match side {
                    Side::Herald => (
                        Server::herald(&herald, &alice),
                        Work::Herald(envelopes(&alice, &bob, total, salt)),
                    ),
                    Side::Relay => (
                        Server::relay(&relay),
                        Work::Relay(events(&nostr_key, total, salt)),
                    ),
                };
                let work = Arc::new(work);
                let pid = server.child.id();
                // Warm up on the first WARM_UP items, then measure the rest.
                let _ = post_all(
                    &rt,
                    server.addr,
                    &truncated(&work, WARM_UP),
                    0,
                    clients,
                    kept,
                );
                let cpu0 = pid_cpu(pid);
                let (took, lat) = post_all(&rt, server.addr, &work, WARM_UP, clients, kept);
                let cpu = pid_cpu(pid) - cpu0;
                drop(server);
                let run = Run {
                    per_sec: posts as f64 / took.as_secs_f64(),
                    per_core_sec: posts as f64 / cpu,
                    cpu,
                    p50: pct(&lat, 0.5),
                    p99: pct(&lat, 0.99),
                };
                line.push_str(&format!(
                    " {} {mode} {:.0}/s {:.0}/core-s;",
                    side.name(),
                    run.per_sec,
                    run.per_core_sec
                ));
                runs[m][usize::from(side == Side::Relay)].push(run);
            }
        }
        eprintln!("{line}");
    }
    if only.is_some() {
        return;
    }
    println!(
        "  {:<21}{:<16}{:>10}{:>12}{:>14}{:>9}{:>9}",
        "mode", "server", "posts/s", "server CPU", "posts/core-s", "p50 ms", "p99 ms"
    );
    for (m, &(_, mode)) in modes.iter().enumerate() {
        let mut per_core = [0.0; 2];
        for (s, side) in [Side::Herald, Side::Relay].into_iter().enumerate() {
            let r = &runs[m][s];
            let med = |f: fn(&Run) -> f64| median(&mut r.iter().map(f).collect::<Vec<_>>());
            per_core[s] = med(|r| r.per_core_sec);
            println!(
                "  {mode:<21}{:<16}{:>10.0}{:>10.2} s{:>14.0}{:>9.1}{:>9.1}",
                side.name(),
                med(|r| r.per_sec),
                med(|r| r.cpu),
                per_core[s],
                med(|r| r.p50),
                med(|r| r.p99),
            );
        }
        let each: Vec<String> = runs[m][0]
            .iter()
            .zip(&runs[m][1])
            .map(|(h, r)| format!("{:.2}", h.per_core_sec / r.per_core_sec))
            .collect();
        let wall: Vec<String> = runs[m][0]
            .iter()
            .zip(&runs[m][1])
            .map(|(h, r)| format!("{:.2}", h.per_sec / r.per_sec))
            .collect();
        println!(
            "  {mode}: herald / relay, posts per core-second: {:.2} (goal >= 1.0; rounds {}); posts per second, rounds {}",
            per_core[0] / per_core[1],
            each.join(" "),
            wall.join(" ")
        );
    }
}

/// The first `n` items of `work`.
fn truncated(work: &Work, n: usize) -> Arc<Work> {
    Arc::new(match work {
        Work::Herald(w) => Work::Herald(w[..n].to_vec()),
        Work::Relay(w) => Work::Relay(w[..n].to_vec()),
    })
}
