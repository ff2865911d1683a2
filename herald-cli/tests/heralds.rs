//! Heralds through the real binary (PROFILE P14; CLI.md *Resolution and
//! Heralds*): `herald verify --heralds FILE --log-policy FILE` with
//! certifications given as inputs or fetched from each listed Herald's URL
//! (`GET /v1/certifications/{sigil}`, here a tiny loopback HTTP server of
//! this test serving what a Herald serves), and `herald resolve SIGIL
//! --heralds`. A 2-of-3 quorum where one Herald lies; the hostile cases of
//! P14 each named on standard error and none certifying below the
//! threshold; and `verify --json` byte-identical without certifications.
//! Fixtures: herald-core's builder and herald-tlog (herald-testkit's
//! `heralds`); verdicts stated from the rules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use herald_core::payload::Claim;
use herald_core::{Envelope, EnvelopeBuilder, SigilForm, SigningKey};
use herald_testkit::heralds::{TestHerald, Witness, model, policy};
use herald_testkit::{T0, key, nonce};
use herald_verify::CertificationItem;
use support::{codes, herald};

const NOW: u64 = T0 + 3_600;

fn alice() -> SigningKey {
    key(1)
}

fn bob() -> SigningKey {
    key(2)
}

/// Alice's message (her key pinned nowhere).
fn said() -> Envelope {
    EnvelopeBuilder::genesis(T0 + 60)
        .nonce(nonce(1))
        .payload(herald_core::cbor::Value::text("hello"))
        .sign(&alice())
        .unwrap()
}

/// Three Heralds and one witness; Heralds 0 and 1 certify Alice's key and
/// model m-1, Herald 2 lies: Bob's key and model m-2 for Alice's sigil.
struct World {
    h: Vec<TestHerald>,
    w: Witness,
    items: Vec<Vec<CertificationItem>>,
}

impl World {
    fn new() -> Self {
        let mut h = vec![
            TestHerald::new(11),
            TestHerald::new(12),
            TestHerald::new(13),
        ];
        let w = Witness::new("w1", 31);
        let subject = alice().sigil(SigilForm::Default);
        let real = *alice().public_key().as_bytes();
        let fake = *bob().public_key().as_bytes();
        let mut issued = Vec::new();
        for (n, herald) in h.iter_mut().enumerate() {
            let (key, m) = if n == 2 {
                (&fake, "m-2")
            } else {
                (&real, "m-1")
            };
            issued.push(vec![
                herald.certify(subject, &Claim::Key(key), T0, None),
                herald.certify(subject, &model(m), T0, None),
            ]);
        }
        let items = h
            .iter()
            .zip(&issued)
            .map(|(herald, es)| es.iter().map(|e| herald.item(e, &[&w])).collect())
            .collect();
        Self { h, w, items }
    }

    /// The list of the three, each with `urls[n]` after its origin.
    fn list(&self, urls: &[&str], threshold: usize) -> String {
        let mut text = String::new();
        for (n, h) in self.h.iter().enumerate() {
            text.push_str(&h.list_line(urls.get(n).copied().unwrap_or("")));
            text.push('\n');
        }
        text.push_str(&format!("threshold {threshold}\n"));
        text
    }

    fn policy(&self) -> String {
        let hs: Vec<&TestHerald> = self.h.iter().collect();
        policy(&hs, &[&self.w], "", "w1")
    }

    fn all_items(&self) -> Vec<u8> {
        let all: Vec<CertificationItem> = self.items.iter().flatten().cloned().collect();
        CertificationItem::encode_sequence(&all)
    }
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn claims(entry: &serde_json::Value) -> Vec<(String, String, usize)> {
    let Some(list) = entry["certified"].as_array() else {
        return Vec::new();
    };
    let mut out: Vec<(String, String, usize)> = list
        .iter()
        .map(|c| {
            let value = match &c["value"] {
                serde_json::Value::String(s) => s.clone(),
                v => v["name"].as_str().unwrap_or_default().to_owned(),
            };
            (
                c["claim"].as_str().unwrap().to_owned(),
                value,
                c["heralds"].as_array().unwrap().len(),
            )
        })
        .collect();
    out.sort();
    out
}

fn verify_json(dir: &Path, extra: &[&str]) -> support::Run {
    let now = NOW.to_string();
    let mut args = vec!["verify", "trace.cbor", "--json", "--now", &now];
    args.extend_from_slice(extra);
    herald(dir, &args)
}

#[test]
fn two_of_three_heralds_resolve_a_signer_and_the_liar_certifies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let world = World::new();
    write(d, "trace.cbor", said().as_bytes());
    write(d, "certs.cbor", world.all_items());
    write(d, "heralds.txt", world.list(&[], 2));
    write(d, "policy.txt", world.policy());

    let plain = verify_json(d, &[]);
    plain.expect(1);
    assert_eq!(codes(&plain.json()["envelopes"][0]), ["unknown_signer[0]"]);

    let run = verify_json(
        d,
        &[
            "certs.cbor",
            "--heralds",
            "heralds.txt",
            "--log-policy",
            "policy.txt",
        ],
    );
    run.expect(0);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(entry["key_source"], "herald");
    assert_eq!(
        run.json()["envelopes"].as_array().unwrap().len(),
        1,
        "items are no envelopes"
    );
    let key = herald_verify::hex(alice().public_key().as_bytes());
    assert_eq!(
        claims(entry),
        vec![
            ("key".into(), key.clone(), 2),
            ("model".into(), "m-1".into(), 2)
        ]
    );
    // The human report states the claims once for the sender, from the
    // line of an envelope without any reason.
    let now = NOW.to_string();
    let human = herald(
        d,
        &[
            "verify",
            "trace.cbor",
            "--now",
            &now,
            "certs.cbor",
            "--heralds",
            "heralds.txt",
            "--log-policy",
            "policy.txt",
        ],
    );
    human.expect(0);
    let text = human.out();
    let stated: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("certified: "))
        .collect();
    assert_eq!(stated.len(), 2, "{text}");
    // Each value as its JSON text.
    assert!(
        stated[0].ends_with(&format!(" key \"{key}\" by 2 Heralds")),
        "{stated:?}"
    );
    assert!(
        stated[1].ends_with(" model {\"name\":\"m-1\"} by 2 Heralds"),
        "{stated:?}"
    );
    // The liar's key does not hash to the sigil: named, never used.
    assert!(
        run.stderr
            .contains("does not count: its key does not hash to its subject"),
        "{}",
        run.stderr
    );

    // At 3 of 3 nothing is certified: the signer stays unknown.
    write(d, "heralds3.txt", world.list(&[], 3));
    let run = verify_json(
        d,
        &[
            "certs.cbor",
            "--heralds",
            "heralds3.txt",
            "--log-policy",
            "policy.txt",
        ],
    );
    run.expect(1);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(codes(entry), ["unknown_signer[0]"]);
    assert!(entry.get("certified").is_none());
}

#[test]
fn without_certifications_verify_json_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let world = World::new();
    write(d, "trace.cbor", said().as_bytes());
    write(d, "heralds.txt", world.list(&[], 2));
    write(d, "policy.txt", world.policy());
    let plain = verify_json(d, &[]);
    let with = verify_json(
        d,
        &["--heralds", "heralds.txt", "--log-policy", "policy.txt"],
    );
    assert_eq!(with.code, plain.code);
    assert_eq!(with.stdout, plain.stdout);
}

#[test]
fn hostile_certifications_are_named_and_certify_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut world = World::new();
    let subject = alice().sigil(SigilForm::Default);
    let real = *alice().public_key().as_bytes();
    let w = Witness::new("w1", 31);
    let h0 = &mut world.h[0];
    // Expired, revoked, without a proof, against an unwitnessed checkpoint.
    let expired = h0.certify(subject, &Claim::Key(&real), T0, Some(NOW - 1));
    let revoked = h0.certify(subject, &Claim::Key(&real), T0 + 1, None);
    let id = revoked.id();
    let revocation = h0.certify(subject, &Claim::Revocation(&id), T0 + 2, None);
    let unproven = h0.certify(subject, &Claim::Key(&real), T0 + 3, None);
    let unwitnessed = h0.certify(subject, &Claim::Key(&real), T0 + 4, None);
    // And a Herald outside the list.
    let mut outsider = TestHerald::new(14);
    let outside = outsider.certify(subject, &Claim::Key(&real), T0, None);
    let items = vec![
        h0.item(&expired, &[&w]),
        h0.item(&revoked, &[&w]),
        h0.item(&revocation, &[&w]),
        CertificationItem::new(unproven.as_bytes().to_vec(), String::new()),
        h0.item(&unwitnessed, &[]),
        outsider.item(&outside, &[&w]),
    ];
    write(d, "trace.cbor", said().as_bytes());
    write(
        d,
        "hostile.cbor",
        CertificationItem::encode_sequence(&items),
    );
    write(d, "heralds.txt", world.list(&[], 1));
    write(d, "policy.txt", world.policy());
    let run = verify_json(
        d,
        &[
            "hostile.cbor",
            "--heralds",
            "heralds.txt",
            "--log-policy",
            "policy.txt",
        ],
    );
    run.expect(1);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(codes(entry), ["unknown_signer[0]"]);
    assert!(entry.get("certified").is_none());
    for why in [
        format!("does not count: it expired at not_after {}", NOW - 1),
        format!(
            "does not count: its Herald revoked it ({})",
            herald_verify::hex(&revocation.id())
        ),
        "does not count: it came without an inclusion proof".to_owned(),
        "does not count: its proof's checkpoint: policy quorum not met".to_owned(),
        "does not count: its signer is not a listed Herald".to_owned(),
    ] {
        assert!(run.stderr.contains(&why), "{why}\n{}", run.stderr);
    }
}

#[test]
fn a_list_naming_one_herald_twice_cannot_reach_two() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let world = World::new();
    let h = &world.h[0];
    let long = h.list_line("").replacen(
        &h.sigil().to_string(),
        &h.key.sigil(SigilForm::Long).to_string(),
        1,
    );
    write(d, "trace.cbor", said().as_bytes());
    write(
        d,
        "twice.txt",
        format!("{}\n{long}\nthreshold 2\n", h.list_line("")),
    );
    write(d, "policy.txt", world.policy());
    let run = verify_json(d, &["--heralds", "twice.txt", "--log-policy", "policy.txt"]);
    run.expect(2);
    assert!(
        run.stderr
            .contains("twice.txt:3: threshold 2 is more than the 1 distinct Heralds listed"),
        "{}",
        run.stderr
    );
    // --heralds without --log-policy cannot run.
    herald(d, &["verify", "trace.cbor", "--heralds", "twice.txt"]).expect(2);
}

/// A Herald's `GET /v1/certifications/{sigil}` on loopback: `items` for
/// `sigil`, 404 for any other path. Serves until the test ends.
fn herald_server(sigil: String, items: Vec<CertificationItem>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let body = CertificationItem::encode_sequence(&items);
    std::thread::spawn(move || {
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
            let head = String::from_utf8_lossy(&head).into_owned();
            let wanted = format!("GET /v1/certifications/{sigil} ");
            let (status, body) = if head.starts_with(&wanted) {
                ("200 OK", body.clone())
            } else {
                ("404 Not Found", Vec::new())
            };
            let _ = write!(
                sock,
                "HTTP/1.1 {status}\r\ncontent-type: application/cbor-seq\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(&body);
        }
    });
    format!("http://{addr}")
}

#[test]
fn certifications_fetched_from_each_listed_herald_resolve_and_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let world = World::new();
    let sigil = alice().sigil(SigilForm::Default).to_string();
    let urls: Vec<String> = world
        .items
        .iter()
        .map(|items| herald_server(sigil.clone(), items.clone()))
        .collect();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    write(d, "trace.cbor", said().as_bytes());
    write(d, "heralds.txt", world.list(&urls, 2));
    write(d, "policy.txt", world.policy());
    let run = verify_json(
        d,
        &["--heralds", "heralds.txt", "--log-policy", "policy.txt"],
    );
    run.expect(0);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(entry["key_source"], "herald");
    assert_eq!(claims(entry).len(), 2, "{entry}");

    // herald resolve SIGIL: the certified key, source herald, with the claims.
    let run = herald(
        d,
        &[
            "resolve",
            &sigil,
            "--heralds",
            "heralds.txt",
            "--log-policy",
            "policy.txt",
            "--json",
            "--dns",
            "127.0.0.1:9",
        ],
    );
    run.expect(0);
    let answer: serde_json::Value =
        serde_json::from_str(run.out().lines().next().unwrap()).unwrap();
    assert_eq!(answer["source"], "herald");
    assert_eq!(answer["sigil"], sigil);
    assert_eq!(
        answer["key"],
        herald_verify::hex(alice().public_key().as_bytes())
    );
    assert_eq!(claims(&answer).len(), 2, "{answer}");

    // Two Heralds down (nothing listening): one is not a quorum.
    let dead: Vec<String> = (0..2)
        .map(|_| {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", l.local_addr().unwrap())
        })
        .collect();
    write(d, "down.txt", world.list(&[&dead[0], &dead[1], urls[2]], 2));
    let run = verify_json(d, &["--heralds", "down.txt", "--log-policy", "policy.txt"]);
    run.expect(1);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(codes(entry), ["unknown_signer[0]"]);
    assert!(
        run.stderr.contains("Herald http://127.0.0.1:"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_bundle_carries_certifications_for_verify_heralds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let world = World::new();
    write(d, "said.cbor", said().as_bytes());
    write(d, "certs.cbor", world.all_items());
    write(d, "heralds.txt", world.list(&[], 2));
    write(d, "policy.txt", world.policy());
    herald(
        d,
        &[
            "bundle",
            "said.cbor",
            "--certification",
            "certs.cbor",
            "-o",
            "trace.cbor",
        ],
    )
    .expect(0);
    // Without Heralds the bundle is its envelope, as before.
    let plain = verify_json(d, &[]);
    plain.expect(1);
    assert_eq!(codes(&plain.json()["envelopes"][0]), ["unknown_signer[0]"]);
    let run = verify_json(
        d,
        &["--heralds", "heralds.txt", "--log-policy", "policy.txt"],
    );
    run.expect(0);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(entry["key_source"], "herald");
    assert_eq!(claims(entry).len(), 2, "{entry}");
    // A bundle of the bundle keeps them.
    herald(d, &["bundle", "trace.cbor", "-o", "again.cbor"]).expect(0);
    std::fs::rename(d.join("again.cbor"), d.join("trace.cbor")).unwrap();
    let run = verify_json(
        d,
        &["--heralds", "heralds.txt", "--log-policy", "policy.txt"],
    );
    run.expect(0);
}
