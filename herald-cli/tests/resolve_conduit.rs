//! Resolution through conduits (PROFILE.md P15 *Conduits*; CLI.md
//! *Resolution and Heralds*) through the real binary: `herald resolve
//! SIGIL --conduit URL` and `herald verify --resolve conduit --conduit
//! URL` against a real `herald conduit serve` on loopback, and against a
//! LYING conduit (a tiny HTTP server of this test) answering a birth for
//! another sigil, a molt without its proof, a truncated, a huge or no
//! answer: each is `not resolved` with the failure named, never a key.
//! Bounded: every server is loopback, every child killed, the resolver's
//! own 5 s bound is the longest wait.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::time::{Duration, Instant};

use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Kind, SigilForm, SigningKey};
use support::conduit::{
    Killed, NOTARY, carol, carol_next, dan, molt_payload, now, post_ok as post, sigil, write_files,
};
use support::{Run, herald};

const DAY: u64 = 86_400;

fn birth(k: &SigningKey, t: u64) -> Envelope {
    support::conduit::birth(k, "agent", t)
}

/// `k`'s molt to `new` after `parent`, at `t`, effective at `not_before`.
fn molt(k: &SigningKey, parent: &Envelope, new: &SigningKey, t: u64, not_before: u64) -> Envelope {
    EnvelopeBuilder::reply(&parent.view(), t)
        .kind(Kind::Molt)
        .payload(molt_payload(new, not_before))
        .sign(k)
        .unwrap()
}

fn hex(k: &SigningKey) -> String {
    herald_verify::hex(k.public_key().as_bytes())
}

fn resolve(dir: &Path, who: &str, url: &str, keyring: Option<&str>) -> Run {
    let mut args = vec!["resolve", who, "--conduit", url, "--json"];
    if let Some(k) = keyring {
        args.extend(["--keyring", k]);
    }
    herald(dir, &args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_and_verify_through_a_real_conduit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_conduit, addr) = notary(d);
    let url = format!("http://{addr}");
    let t = now();
    // Carol molted (cool-off waited: not_before two days on); dan is
    // only born.
    let carol_birth = birth(&carol(), t);
    let carol_molt = molt(&carol(), &carol_birth, &carol_next(), t + 1, t + 2 * DAY);
    post(addr, carol_birth.as_bytes()).await;
    post(addr, carol_molt.as_bytes()).await;
    let dan_birth = birth(&dan(), t);
    post(addr, dan_birth.as_bytes()).await;

    // With the conduit's log key pinned, carol's current key is the
    // molt's (proven in its log).
    let run = resolve(d, &sigil(&carol()), &url, Some("conduit.pub"));
    run.expect(0);
    let answer = run.json();
    assert_eq!(answer["source"], "conduit");
    assert_eq!(answer["sigil"], sigil(&carol()));
    assert_eq!(answer["key"], hex(&carol_next()));
    // Without it, the molt's proof counts for nothing: not resolved, and
    // never the key before the molt as if current.
    let run = resolve(d, &sigil(&carol()), &url, None);
    run.expect(1);
    assert!(run.stdout.is_empty(), "{}", run.out());
    assert!(run.stderr.contains("no inclusion proof"), "{}", run.stderr);
    // Dan: his own key, in any form of his sigil.
    let short = dan().sigil(SigilForm::Short).to_string();
    let run = resolve(d, &short, &url, None);
    run.expect(0);
    assert_eq!(run.json()["key"], hex(&dan()));
    // A stranger: not resolved, nothing on standard output.
    let stranger = sigil(&SigningKey::from_seed(&[0x55; 32]));
    let run = resolve(d, &stranger, &url, None);
    run.expect(1);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("not resolved"), "{}", run.stderr);

    // verify: dan's message, his key resolved through the conduit.
    let hello = EnvelopeBuilder::genesis(t + 5)
        .payload(Value::text("hello"))
        .sign(&dan())
        .unwrap();
    std::fs::write(d.join("hello.cbor"), hello.as_bytes()).unwrap();
    let plain = herald(d, &["verify", "hello.cbor", "--json"]);
    plain.expect(1);
    assert_eq!(plain.json()["envelopes"][0]["status"], "invalid");
    let run = herald(
        d,
        &[
            "verify",
            "hello.cbor",
            "--resolve",
            "conduit",
            "--conduit",
            &url,
            "--json",
        ],
    );
    run.expect(0);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(entry["status"], "valid");
    assert_eq!(entry["key_source"], "conduit");

    // verify: carol molted on the conduit; her message is not verified
    // with a resolved key (the molt and its proof belong in the set).
    let words = EnvelopeBuilder::genesis(t + 5)
        .payload(Value::text("words"))
        .sign(&carol())
        .unwrap();
    std::fs::write(d.join("words.cbor"), words.as_bytes()).unwrap();
    let run = herald(
        d,
        &[
            "verify",
            "words.cbor",
            "--resolve",
            "conduit",
            "--conduit",
            &url,
            "--keyring",
            "conduit.pub",
            "--json",
        ],
    );
    run.expect(1);
    assert_eq!(run.json()["envelopes"][0]["status"], "invalid");
    // Either way said: the history cannot be used (molted) or its molt's
    // proof does not count for this verifier.
    assert!(
        run.stderr
            .contains(&format!("resolving {}", sigil(&carol())))
            || run.stderr.contains("molted"),
        "{}",
        run.stderr
    );
}

/// A DNS record naming a conduit (`conduit=`, PROFILE P15): `herald
/// resolve HANDLE` follows it to the sigil's key history there, so the
/// answer is the key carol molted to; without the conduit's log key the
/// molt's proof counts for nothing and the record's own key stands, with
/// the failure named. Real knotd and a real conduit, both on loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dns_record_names_the_conduit_that_proves_the_molt() {
    let Some(programs) = support::knot::programs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_conduit, addr) = notary(d);
    let url = format!("http://{addr}");
    let t = now();
    let carol_birth = birth(&carol(), t);
    post(addr, carol_birth.as_bytes()).await;
    post(
        addr,
        molt(&carol(), &carol_birth, &carol_next(), t + 1, t + 2 * DAY).as_bytes(),
    )
    .await;
    let zone = format!(
        "$ORIGIN acme.test.\n$TTL 300\n@ SOA ns admin 1 3600 600 86400 300\n@ NS ns\n\
         ns A 127.0.0.1\ncarol._herald TXT \"v=herald1; sigil={}; key={}; conduit={url}\"\n",
        sigil(&carol()),
        hex(&carol()),
    );
    let zones = [support::knot::Zone {
        name: "acme.test",
        text: zone,
        sign: false,
    }];
    let knot_dir = d.join("knot");
    std::fs::create_dir_all(&knot_dir).unwrap();
    let knot = support::knot::Knot::start(&programs, &knot_dir, &zones, false);
    let dns = knot.addr();
    let resolve = |pins: Option<&str>| {
        let mut args = vec!["resolve", "carol@acme.test", "--dns", &dns, "--json"];
        if let Some(k) = pins {
            args.extend(["--keyring", k]);
        }
        herald(d, &args)
    };

    let run = resolve(Some("conduit.pub"));
    run.expect(0);
    let answer = run.json();
    assert_eq!(answer["source"], "dns", "{}", run.out());
    assert_eq!(answer["handle"], "carol@acme.test");
    assert_eq!(answer["conduit"], url.as_str());
    assert_eq!(answer["key"], hex(&carol_next()), "{}", run.out());

    let run = resolve(None);
    run.expect(0);
    assert_eq!(run.json()["key"], hex(&carol()), "{}", run.out());
    assert!(run.stderr.contains("conduit"), "{}", run.stderr);
    assert!(run.stderr.contains("no inclusion proof"), "{}", run.stderr);
}

/// A real `herald conduit serve --roles relay,notary` in `d` (its key,
/// state and keyring written there), killed when the guard drops.
fn notary(d: &Path) -> (Killed, SocketAddr) {
    write_files(d);
    let c = support::conduit::start(d, &NOTARY);
    let addr = c.addr;
    (c, addr)
}

/// What the lying conduit answers every request with.
#[derive(Clone)]
enum Lie {
    /// `200` with this body.
    Body(Vec<u8>),
    /// `200` announcing and sending this many zero bytes.
    Huge(usize),
    /// Reads the request, never answers.
    Silent,
}

/// A tiny HTTP server on 127.0.0.1:0 answering `lie` to every request,
/// on a thread of its own (the process exits with the test).
fn lying_conduit(lie: Lie) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
                match sock.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let body = match &lie {
                Lie::Body(b) => b.clone(),
                Lie::Huge(n) => vec![0u8; *n],
                Lie::Silent => {
                    held.push(sock);
                    continue;
                }
            };
            let _ = write!(
                sock,
                "HTTP/1.1 200 OK\r\ncontent-type: application/cbor-seq\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(&body);
        }
    });
    format!("http://{addr}")
}

/// `herald resolve` carol through `lie`: not resolved, nothing on
/// standard output, the failure named on standard error.
fn refused(lie: Lie, named: &str) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path());
    let url = lying_conduit(lie);
    let started = Instant::now();
    let run = resolve(dir.path(), &sigil(&carol()), &url, Some("conduit.pub"));
    let took = started.elapsed();
    run.expect(1);
    assert!(
        run.stdout.is_empty(),
        "a key from a lying conduit: {}",
        run.out()
    );
    assert!(run.stderr.contains("not resolved"), "{}", run.stderr);
    assert!(run.stderr.contains(named), "{named}: {}", run.stderr);
    took
}

#[test]
fn a_lying_conduit_gives_no_key() {
    let t = now();
    // A birth for another sigil (bob's own, served for carol).
    refused(
        Lie::Body(birth(&SigningKey::from_seed(&[0x22; 32]), t).into_bytes()),
        "another sigil",
    );
    // Carol's real birth and molt, the molt's proof withheld.
    let b = birth(&carol(), t);
    let m = molt(&carol(), &b, &carol_next(), t + 1, t + 2 * DAY);
    refused(
        Lie::Body([b.as_bytes(), m.as_bytes()].concat()),
        "no inclusion proof",
    );
    // Truncated.
    let bytes = b.as_bytes();
    refused(Lie::Body(bytes[..bytes.len() - 7].to_vec()), "truncated");
    // Huge: over the answer bound, not read to its end.
    refused(Lie::Huge(herald_verify::KEYS_MAX_BYTES + 1), "larger than");
    // Silent: the resolver's 5 s bound.
    let took = refused(Lie::Silent, "no answer in time");
    assert!(took < Duration::from_secs(9), "{took:?}");
}
