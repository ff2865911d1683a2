//! DNS resolution through the real binary against a real authoritative
//! server (PROFILE P15, CLI.md *Resolution and Heralds*): Knot DNS on a
//! loopback port serving a zone it signed, an unsigned zone, and a zone
//! whose signatures no longer match (edited after signing, served with
//! signing off). Skipped with one line when knotd is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::knot::{self, Knot, Zone};
use support::{Run, cat, herald};

/// The keys of the three signers, each with its hex key.
struct Who {
    sigil: String,
    hex: String,
    /// `herald keygen --handle`'s record line.
    record: String,
}

/// `herald keygen -o NAME --handle HANDLE` in `dir`.
fn keygen(dir: &Path, name: &str, handle: &str) -> Who {
    let run = herald(dir, &["keygen", "-o", name, "--handle", handle]);
    run.expect(0);
    let out = run.out();
    let mut lines = out.lines();
    let sigil = lines.next().unwrap().to_owned();
    let record = lines.next().unwrap().to_owned();
    let public = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
    let hex = public.split_whitespace().nth(2).unwrap().to_owned();
    Who { sigil, hex, record }
}

fn txt(name: &str, who: &Who, extra: &str) -> String {
    format!(
        "{name} TXT \"v=herald1; sigil={}; key={}{extra}\"\n",
        who.sigil, who.hex
    )
}

fn zone(name: &str, records: &str) -> String {
    format!(
        "$ORIGIN {name}.\n$TTL 300\n@ SOA ns admin 1 3600 600 86400 300\n@ NS ns\nns A 127.0.0.1\n{records}"
    )
}

/// Everything the cases share: the keys, the server, the anchors.
struct World {
    dir: tempfile::TempDir,
    alice: Who,
    bob: Who,
    knot: Knot,
}

impl World {
    fn resolve(&self, args: &[&str]) -> Run {
        let addr = self.knot.addr();
        let mut all = vec!["resolve"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--dns", &addr]);
        herald(self.dir.path(), &all)
    }
}

fn world() -> Option<World> {
    let programs = knot::programs()?;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let alice = keygen(d, "alice", "alice@signed.test");
    let bob = keygen(d, "bob", "bob@plain.test");
    let carol = keygen(d, "carol", "carol@plain.test");
    assert!(
        alice
            .record
            .starts_with("alice._herald.signed.test. 3600 IN TXT \"v=herald1; sigil=")
            && alice.record.ends_with(&format!("key={}\"", alice.hex)),
        "{}",
        alice.record
    );
    // Knot signs the zones it is told to, writes them back, and is
    // stopped; the broken zone is then edited, and every zone is served
    // as written, signing off.
    let signed = zone(
        "signed.test",
        &format!(
            "{}\n{}{}_herald TXT \"v=spf1 -all\"\n",
            alice.record,
            txt("_herald", &alice, ""),
            // Strings of one record are concatenated (P15).
            txt("_herald", &bob, "\" \"; x-extra=1"),
        ),
    );
    let broken = zone(
        "broken.test",
        &txt("alice._herald", &alice, "; note=original"),
    );
    let pad = "p".repeat(200);
    let mut huge = String::new();
    for i in 0..40 {
        huge.push_str(&txt("huge._herald", &alice, &format!("; n={i}; pad={pad}")));
    }
    let plain = zone(
        "plain.test",
        &format!(
            // bob@plain.test names carol, not bob; bad@ gives a key that
            // does not hash to the sigil.
            "{}{}bad._herald TXT \"v=herald1; sigil={}; key={}\"\n{huge}",
            txt("alice._herald", &alice, ""),
            txt("bob._herald", &carol, ""),
            alice.sigil,
            bob.hex,
        ),
    );
    let zones = |sign: bool| {
        vec![
            Zone {
                name: "signed.test",
                text: signed.clone(),
                sign,
            },
            Zone {
                name: "broken.test",
                text: broken.clone(),
                sign,
            },
        ]
    };
    let first = Knot::start(&programs, d, &zones(true), false);
    let anchors = format!(
        "{}{}",
        first.dnskeys("signed.test"),
        first.dnskeys("broken.test")
    );
    drop(first);
    std::fs::write(d.join("anchors"), anchors).unwrap();
    let file = d.join("broken.test.zone");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("RRSIG") && text.contains("note=original"),
        "{text}"
    );
    std::fs::write(&file, text.replace("note=original", "note=tampered")).unwrap();
    let mut all = zones(false);
    all.push(Zone {
        name: "plain.test",
        text: plain,
        sign: false,
    });
    let knot = Knot::start(&programs, d, &all, true);
    Some(World {
        dir,
        alice,
        bob,
        knot,
    })
}

fn lines(run: &Run) -> Vec<serde_json::Value> {
    run.out()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn dns_resolution_against_a_real_server() {
    let Some(w) = world() else { return };
    let anchored = ["--trust-anchor", "anchors", "--json"];

    // A handle in a signed zone: its sigil and key, DNSSEC-validated.
    let run = w.resolve(&["alice@signed.test", anchored[0], anchored[1], anchored[2]]);
    run.expect(0);
    let got = lines(&run);
    assert_eq!(got.len(), 1, "{}", run.out());
    assert_eq!(got[0]["query"], "alice@signed.test");
    assert_eq!(got[0]["sigil"], w.alice.sigil);
    assert_eq!(got[0]["key"], w.alice.hex);
    assert_eq!(got[0]["source"], "dns");
    assert_eq!(got[0]["handle"], "alice@signed.test");
    assert_eq!(got[0]["dnssec"], true);
    assert_eq!(got[0]["certified"], serde_json::json!([]));

    // Without the anchor the same answer is not validated.
    let run = w.resolve(&["alice@signed.test", "--json"]);
    run.expect(0);
    assert_eq!(lines(&run)[0]["dnssec"], false);

    // Several records, several sigils; a record not ours is ignored.
    let run = w.resolve(&["signed.test", anchored[0], anchored[1], anchored[2]]);
    run.expect(0);
    let sigils: Vec<_> = lines(&run).iter().map(|l| l["sigil"].clone()).collect();
    assert_eq!(sigils.len(), 2, "{}", run.out());
    assert!(
        sigils.contains(&w.alice.sigil.clone().into())
            && sigils.contains(&w.bob.sigil.clone().into())
    );

    // The human form is a keyring line.
    let run = w.resolve(&["alice@signed.test", "--trust-anchor", "anchors"]);
    run.expect(0);
    assert!(
        run.out().starts_with(&format!(
            "{} ed25519 {}  # dns alice@signed.test, DNSSEC-validated",
            w.alice.sigil, w.alice.hex
        )),
        "{}",
        run.out()
    );

    // An unsigned zone: resolved, dnssec false, even with anchors for others.
    let run = w.resolve(&["alice@plain.test", anchored[0], anchored[1], anchored[2]]);
    run.expect(0);
    assert_eq!(lines(&run)[0]["dnssec"], false);

    // Signatures that fail: an error, never a downgrade.
    let run = w.resolve(&["alice@broken.test", anchored[0], anchored[1], anchored[2]]);
    run.expect(1);
    assert!(run.out().is_empty());
    assert!(
        run.stderr.contains("DNSSEC validation failed"),
        "{}",
        run.stderr
    );
    // (The record itself is well-formed: without anchors it resolves.)
    w.resolve(&["alice@broken.test"]).expect(0);

    // A key that does not hash to its sigil is never used.
    let run = w.resolve(&["bad@plain.test", "--json"]);
    run.expect(1);
    assert!(run.out().is_empty());
    assert!(run.stderr.contains("does not hash"), "{}", run.stderr);

    // A huge answer (truncated over UDP, fetched over TCP) is refused.
    let run = w.resolve(&["huge@plain.test", "--json"]);
    run.expect(1);
    assert!(
        run.stderr.contains("answer larger than 8192 bytes"),
        "{}",
        run.stderr
    );

    // No record: not resolved.
    w.resolve(&["nobody@plain.test"]).expect(1);

    verify_resolves_senders(&w);
}

/// `verify --resolve dns`: a sender is named by a handle only when the
/// handle's record names it with its key, both directions agreeing.
fn verify_resolves_senders(w: &World) {
    let d = w.dir.path();
    herald(
        d,
        &[
            "new",
            "--key",
            "alice.key",
            "--attest",
            "handle=alice@signed.test",
            "-o",
            "a.cbor",
        ],
    )
    .expect(0);
    // bob@plain.test names carol, not bob.
    herald(
        d,
        &[
            "new",
            "--key",
            "bob.key",
            "--attest",
            "handle=bob@plain.test",
            "-o",
            "b.cbor",
        ],
    )
    .expect(0);
    // carol claims alice's handle; its record names alice.
    herald(
        d,
        &[
            "new",
            "--key",
            "carol.key",
            "--attest",
            "handle=alice@signed.test",
            "-o",
            "c.cbor",
        ],
    )
    .expect(0);
    // A forged envelope "from" bob (signed by carol) claims signed.test,
    // whose records do name bob: the claim is not bob's, so not used.
    herald(
        d,
        &[
            "new",
            "--key",
            "carol.key",
            "--from",
            &w.bob.sigil,
            "--attest",
            "handle=signed.test",
            "-o",
            "f.cbor",
        ],
    )
    .expect(0);
    cat(d, &["a.cbor", "b.cbor", "c.cbor", "f.cbor"], "set.cbor");
    let addr = w.knot.addr();
    let base = [
        "verify",
        "set.cbor",
        "--resolve",
        "dns",
        "--dns",
        &addr,
        "--trust-anchor",
        "anchors",
    ];

    let mut args = base.to_vec();
    args.push("--json");
    let run = herald(d, &args);
    run.expect(1);
    let json = run.json();
    let envs = json["envelopes"].as_array().unwrap();
    assert_eq!(envs[0]["status"], "valid", "{}", run.out());
    assert_eq!(envs[0]["key_source"], "dns");
    assert_eq!(envs[0]["handle"], "alice@signed.test");
    assert_eq!(envs[0]["dnssec"], true);
    for other in &envs[1..] {
        assert_ne!(other["status"], "valid", "{other}");
        assert!(
            other.get("handle").is_none() && other.get("key_source").is_none(),
            "{other}"
        );
    }
    assert_eq!(envs.len(), 4);
    assert!(
        run.stderr.contains("signed.test names")
            && run
                .stderr
                .contains("no envelope signed by that key claims signed.test"),
        "{}",
        run.stderr
    );

    // The human report names alice by her handle, and nobody else by one.
    let run = herald(d, &base);
    run.expect(1);
    let out = run.out();
    let named: Vec<&str> = out.lines().filter(|l| l.contains('@')).collect();
    assert!(!named.is_empty(), "{out}");
    for line in named {
        assert!(
            line.contains("alice@signed.test (sigil:short:")
                && line.contains("valid")
                && !line.contains("invalid"),
            "{out}"
        );
    }

    // Without --resolve, the set and its report are as before.
    let run = herald(d, &["verify", "set.cbor", "--json"]);
    run.expect(1);
    assert!(!run.out().contains("\"handle\"") && !run.out().contains("\"dns\""));
}

/// A server that never answers: not resolved within the 5 s bound.
#[test]
fn a_silent_server_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let port = knot::free_port();
    let _udp = std::net::UdpSocket::bind(("127.0.0.1", port)).unwrap();
    let _tcp = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let started = Instant::now();
    let run = herald(
        dir.path(),
        &[
            "resolve",
            "alice@example.test",
            "--dns",
            &format!("127.0.0.1:{port}"),
        ],
    );
    let took = started.elapsed();
    run.expect(1);
    assert!(run.stderr.contains("no answer in time"), "{}", run.stderr);
    assert!(took < Duration::from_secs(9), "{took:?}");
}
