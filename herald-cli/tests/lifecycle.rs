//! Identity lifecycle through the real binary (PROFILE.md P8): a molt
//! proven by a bundled inclusion proof, a disputed molt end to end, and
//! the worked example of docs/lifecycle.md run from the document.
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;

use support::{codes, herald, keygen};

use herald_testkit::T0;
const DAY: u64 = 86_400;
const NOW: &str = "1746800000";

fn ts(t: u64) -> String {
    t.to_string()
}

/// Alice's birth, a message, a molt to `alice-next` (ts T0 + 2 d,
/// not_before T0 + 3 d) logged by the notary with its proof, and a message
/// by the new key for Alice at T0 + 4 d. Returns Alice's sigil.
fn molt_story(d: &Path) -> String {
    keygen(d, "notary");
    let alice = keygen(d, "alice");
    keygen(d, "alice-next");
    herald(d, &["log", "init", "audit", "--key", "notary.key"]).expect(0);
    herald(
        d,
        &[
            "new",
            "--key",
            "alice.key",
            "--kind",
            "birth",
            "--ts",
            &ts(T0),
            "-o",
            "birth.cbor",
        ],
    )
    .expect(0);
    herald(
        d,
        &[
            "reply",
            "--key",
            "alice.key",
            "--parent",
            "birth.cbor",
            "--ts",
            &ts(T0 + 100),
            "-o",
            "hello.cbor",
        ],
    )
    .expect(0);
    herald(
        d,
        &[
            "reply",
            "--key",
            "alice.key",
            "--parent",
            "hello.cbor",
            "--kind",
            "molt",
            "--new-key",
            "alice-next.pub",
            "--not-before",
            &ts(T0 + 3 * DAY),
            "--ts",
            &ts(T0 + 2 * DAY),
            "-o",
            "molt.cbor",
        ],
    )
    .expect(0);
    let appended = herald(d, &["log", "append", "audit", "molt.cbor"])
        .expect(0)
        .out();
    let id = appended.trim().split(' ').nth(1).unwrap().to_owned();
    herald(
        d,
        &[
            "log",
            "prove",
            "audit",
            &id,
            "--ts",
            &ts(T0 + 3 * DAY),
            "-o",
            "molt.proof",
        ],
    )
    .expect(0);
    let run = herald(
        d,
        &[
            "reply",
            "--key",
            "alice-next.key",
            "--from",
            &alice,
            "--parent",
            "molt.cbor",
            "--ts",
            &ts(T0 + 4 * DAY),
            "--payload-json",
            r#""new key""#,
            "-o",
            "after.cbor",
        ],
    );
    run.expect(0);
    // The new key signs for Alice: no warning that it will not verify.
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    alice
}

#[test]
fn a_molt_proven_in_a_bundle_lets_the_new_key_speak() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let alice = molt_story(d);
    let files = ["birth.cbor", "hello.cbor", "molt.cbor", "after.cbor"];

    // Without the proof: P8 rule 3.
    let mut args = vec!["verify"];
    args.extend(files);
    args.extend(["--keyring", "audit/log.pub", "--now", NOW, "--json"]);
    let report = herald(d, &args).expect(1).json();
    assert_eq!(codes(&report["envelopes"][3]), ["molt_unproven"]);
    assert!(report.get("proofs").is_none());

    // Bundled with the proof.
    let mut args = vec!["bundle"];
    args.extend(files);
    args.extend(["--proof", "molt.proof", "-o", "alice.bundle"]);
    herald(d, &args).expect(0);
    let report = herald(
        d,
        &[
            "verify",
            "alice.bundle",
            "--keyring",
            "audit/log.pub",
            "--now",
            NOW,
            "--json",
        ],
    )
    .expect(0)
    .json();
    let after = &report["envelopes"][3];
    assert_eq!(after["status"], "valid");
    assert_eq!(after["from"], alice.as_str());
    assert_eq!(after["signing_key"], "molt 1");
    assert_eq!(report["proofs"][0]["status"], "valid");
    assert_eq!(report["proofs"][0]["index"], 0);

    // The human form lists the proof.
    let human = herald(
        d,
        &[
            "verify",
            "alice.bundle",
            "--keyring",
            "audit/log.pub",
            "--now",
            NOW,
        ],
    )
    .expect(0)
    .out();
    assert!(
        human.contains("1 inclusion proof: 1 valid, 0 invalid"),
        "{human}"
    );

    // The log's key must be pinned: carried by the bundle it is not trusted.
    let mut args = vec!["bundle"];
    args.extend(files);
    args.extend([
        "--proof",
        "molt.proof",
        "--key",
        "audit/log.pub",
        "-o",
        "self-vouched.bundle",
    ]);
    herald(d, &args).expect(0);
    let report = herald(
        d,
        &["verify", "self-vouched.bundle", "--now", NOW, "--json"],
    )
    .expect(1)
    .json();
    assert_eq!(report["proofs"][0]["status"], "invalid");
    assert_eq!(codes(&report["envelopes"][3]), ["molt_unproven"]);

    // A bundle extends: the bundle plus a later envelope of the old key,
    // now rotated out.
    herald(
        d,
        &[
            "reply",
            "--key",
            "alice.key",
            "--parent",
            "after.cbor",
            "--ts",
            &ts(T0 + 4 * DAY + 60),
            "-o",
            "late.cbor",
        ],
    )
    .expect(0);
    herald(
        d,
        &["bundle", "alice.bundle", "late.cbor", "-o", "more.bundle"],
    )
    .expect(0);
    let report = herald(
        d,
        &[
            "verify",
            "more.bundle",
            "--keyring",
            "audit/log.pub",
            "--now",
            NOW,
            "--json",
        ],
    )
    .expect(1)
    .json();
    assert_eq!(report["envelopes"].as_array().unwrap().len(), 5);
    assert_eq!(report["envelopes"][3]["status"], "valid");
    assert_eq!(codes(&report["envelopes"][4]), ["rotated_key"]);
}

#[test]
fn a_disputed_molt_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    molt_story(d);
    keygen(d, "thief");
    // The old key molts Alice again, to the thief's key, with a window
    // overlapping the first molt's (P8 rule 5).
    herald(
        d,
        &[
            "reply",
            "--key",
            "alice.key",
            "--parent",
            "hello.cbor",
            "--kind",
            "molt",
            "--new-key",
            "thief.pub",
            "--not-before",
            &ts(T0 + 3 * DAY + 3600),
            "--ts",
            &ts(T0 + 2 * DAY + 3600),
            "-o",
            "stolen.cbor",
        ],
    )
    .expect(0);
    herald(
        d,
        &[
            "bundle",
            "birth.cbor",
            "hello.cbor",
            "molt.cbor",
            "after.cbor",
            "stolen.cbor",
            "--proof",
            "molt.proof",
            "-o",
            "all.bundle",
        ],
    )
    .expect(0);
    let report = herald(
        d,
        &[
            "verify",
            "all.bundle",
            "--keyring",
            "audit/log.pub",
            "--now",
            NOW,
            "--json",
        ],
    )
    .expect(1)
    .json();
    let e = report["envelopes"].as_array().unwrap();
    // Before the molts: untouched.
    assert_eq!(e[0]["status"], "valid");
    assert_eq!(e[1]["status"], "valid");
    // Both molts, and everything of Alice's from the first of them on.
    assert_eq!(codes(&e[2]), ["disputed"]);
    assert_eq!(codes(&e[4]), ["disputed"]);
    assert!(codes(&e[3]).contains(&"disputed".to_owned()), "{:?}", e[3]);
    assert_eq!(e[3]["status"], "invalid");
    // The proof of the first molt still holds: it proves the log saw it,
    // not that the molt was the only one.
    assert_eq!(report["proofs"][0]["status"], "valid");
    // The human form names the reason.
    let human = herald(
        d,
        &[
            "verify",
            "all.bundle",
            "--keyring",
            "audit/log.pub",
            "--now",
            NOW,
        ],
    )
    .expect(1)
    .out();
    assert!(human.contains("disputed"), "{human}");
}

#[test]
fn bundle_refuses_what_it_cannot_vouch_for() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    molt_story(d);
    // A proof of an envelope the bundle does not carry.
    let run = herald(
        d,
        &[
            "bundle",
            "hello.cbor",
            "--proof",
            "molt.proof",
            "-o",
            "x.bundle",
        ],
    );
    run.expect(2);
    assert!(
        run.stderr.contains("not one of the bundle's envelopes"),
        "{}",
        run.stderr
    );
    // A proof file that is not a proof.
    let run = herald(
        d,
        &[
            "bundle",
            "molt.cbor",
            "--proof",
            "hello.cbor",
            "-o",
            "x.bundle",
        ],
    );
    run.expect(2);
    assert!(run.stderr.contains("--proof hello.cbor"), "{}", run.stderr);
    // Something that is not an envelope.
    std::fs::write(d.join("junk"), b"\xff\x00").unwrap();
    let run = herald(d, &["bundle", "junk", "-o", "x.bundle"]);
    run.expect(2);
    assert!(run.stderr.contains("junk: byte 0"), "{}", run.stderr);
    assert!(!d.join("x.bundle").exists());
    // --kind molt needs its key and time; the flags need the kind.
    let run = herald(
        d,
        &[
            "new",
            "--key",
            "alice.key",
            "--kind",
            "molt",
            "-o",
            "m.cbor",
        ],
    );
    run.expect(2);
    assert!(run.stderr.contains("--new-key"), "{}", run.stderr);
    let run = herald(
        d,
        &[
            "new",
            "--key",
            "alice.key",
            "--new-key",
            "thief.pub",
            "--not-before",
            "1",
            "-o",
            "m.cbor",
        ],
    );
    run.expect(2);
    assert!(run.stderr.contains("--kind molt"), "{}", run.stderr);
}

#[test]
fn a_bundle_reads_like_its_envelopes_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    molt_story(d);
    herald(
        d,
        &[
            "bundle",
            "birth.cbor",
            "hello.cbor",
            "molt.cbor",
            "after.cbor",
            "--proof",
            "molt.proof",
            "-o",
            "alice.bundle",
        ],
    )
    .expect(0);
    // inspect shows the bundle's envelopes, in order.
    let out = herald(d, &["inspect", "--json", "alice.bundle"])
        .expect(0)
        .out();
    let kinds: Vec<String> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["kind"].as_str().unwrap_or("message").to_owned()
        })
        .collect();
    assert_eq!(kinds, ["birth", "message", "molt", "message"]);
    // A log takes them as it takes a trace file (the molt is already there).
    let out = herald(d, &["log", "append", "audit", "alice.bundle"])
        .expect(0)
        .out();
    let indices: Vec<&str> = out.lines().map(|l| &l[..1]).collect();
    assert_eq!(indices, ["1", "2", "0", "3"]);
    // A damaged container is named, not guessed at.
    let mut bytes = std::fs::read(d.join("alice.bundle")).unwrap();
    let at = bytes.windows(6).position(|w| w == b"proofs").unwrap();
    bytes[at..at + 6].copy_from_slice(b"proofz");
    std::fs::write(d.join("bad.bundle"), &bytes).unwrap();
    let run = herald(d, &["inspect", "bad.bundle"]);
    run.expect(1);
    assert!(
        run.stderr.contains("bundle: unknown field `proofz`"),
        "{}",
        run.stderr
    );
}

/// The worked example of docs/lifecycle.md, run from the document.
#[test]
fn docs_worked_example() {
    let (tmp, stdout) = support::run_doc_example("lifecycle.md");
    let d = tmp.path();
    // What the comments in the example say.
    assert!(stdout.contains("molt_unproven"), "{stdout}");
    let disputed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("disputed.json")).unwrap()).unwrap();
    let e = disputed["envelopes"].as_array().unwrap();
    assert_eq!(e.len(), 5);
    assert_eq!(codes(&e[2]), ["disputed"]);
    assert!(codes(&e[3]).contains(&"disputed".to_owned()));
    assert_eq!(codes(&e[4]), ["disputed"]);
}
