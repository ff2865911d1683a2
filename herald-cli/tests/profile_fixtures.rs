//! The protocol profile fixtures of `tests/fixtures/profile/` (used by the
//! `verify-haven-*` and `verify-valp-*` snapshot cases in `tests/cmd/`) are
//! exactly the example traces `herald_testkit::protocols` builds from the
//! Haven and VALP operation sequences (fixed keys, nonces and times), and
//! through the real binary each gives the findings its rules call for.
//!
//! After a deliberate change: `HERALD_UPDATE_FIXTURES=1 cargo test -p
//! herald-cli --test profile_fixtures`, then `TRYCMD=overwrite cargo test
//! -p herald-cli --test cli` and review the diff.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};

use herald_core::SigningKey;
use herald_testkit::T0;
use herald_testkit::protocols::{Trace, haven, valp};
use herald_verify::key_line;

/// `--now` of the snapshots: ten minutes after the first step.
const NOW: u64 = T0 + 600;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn traces() -> Vec<(&'static str, Trace)> {
    vec![
        ("haven-complete", haven::complete()),
        ("haven-release", haven::release()),
        ("haven-settle", haven::settle()),
        ("haven-delegated", haven::delegated()),
        ("haven-unproven", haven::unproven()),
        ("haven-self-accepted", haven::self_accepted()),
        ("haven-widened", haven::widened()),
        ("haven-offerer-claims", haven::offerer_claims()),
        ("haven-two-claimers", haven::two_claimers()),
        ("haven-hasty", haven::hasty()),
        ("valp-activation", valp::activation()),
        ("valp-forged", valp::forged()),
        ("valp-self-reviewed", valp::self_reviewed()),
        ("valp-replayed", valp::replayed()),
        ("valp-rollback", valp::rollback()),
        ("valp-retired", valp::retired()),
    ]
}

fn keys() -> Vec<(&'static str, SigningKey)> {
    vec![
        ("offerer", haven::offerer()),
        ("worker", haven::worker()),
        ("other", haven::other()),
        ("verifier", haven::verifier()),
        ("installation", valp::installation()),
        ("user", valp::user()),
        ("leader", valp::leader()),
        ("reviewer", valp::reviewer()),
    ]
}

/// Every fixture file: (path under tests/fixtures, contents).
fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = traces()
        .into_iter()
        .map(|(name, tr)| (format!("profile/{name}.cbor"), tr.bytes()))
        .collect();
    for (name, k) in keys() {
        out.push((
            format!("profile/keys/{name}.pub"),
            format!("{}\n", key_line(&k.public_key())).into_bytes(),
        ));
    }
    out.push((
        format!("profile/{}", valp::EVIDENCE_REF),
        valp::EVIDENCE.to_vec(),
    ));
    out
}

#[test]
fn fixtures_are_current() {
    let update = std::env::var_os("HERALD_UPDATE_FIXTURES").is_some();
    for (name, bytes) in fixtures() {
        let path = dir().join(&name);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        } else {
            let committed = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("{}: {e}; set HERALD_UPDATE_FIXTURES=1", path.display())
            });
            assert!(
                committed == bytes,
                "{name} differs from what the test builds; if the change is deliberate, \
                 set HERALD_UPDATE_FIXTURES=1 and re-run, then review the snapshots"
            );
        }
    }
}

/// `herald verify profile/NAME.cbor --profile P --json` at `now`: the exit
/// status and the findings as "code@step".
fn findings(name: &str, profile: &str, now: u64, extra: &[&str]) -> (i32, Vec<String>) {
    let now = now.to_string();
    let file = format!("profile/{name}.cbor");
    let mut args = vec![
        "verify",
        &file,
        "--keyring",
        "profile/keys",
        "--now",
        &now,
        "--profile",
        profile,
        "--json",
    ];
    args.extend_from_slice(extra);
    let run = support::herald(&dir(), &args);
    let doc = run.json();
    let ids: Vec<String> = doc["envelopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    let found = doc["profile"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let at = ids.iter().position(|id| id == &f["id"]).unwrap();
            format!("{}@{at}", f["code"].as_str().unwrap())
        })
        .collect();
    (run.code, found)
}

const EVIDENCE: &str = "evidence/tests.log=profile/evidence/tests.log";

#[test]
fn the_binary_reports_each_rule_on_its_step() {
    let haven = |name: &str| findings(name, "haven", NOW, &[]);
    let none: Vec<String> = Vec::new();
    // The claim endings, each clean.
    assert_eq!(haven("haven-complete"), (0, none.clone()));
    assert_eq!(haven("haven-release"), (0, none.clone()));
    assert_eq!(haven("haven-delegated"), (0, none.clone()));
    // The settlement comes an hour after the silent claim: audited then,
    // the claim has expired (exit 1) and the profile still reads it.
    assert_eq!(
        findings("haven-settle", "haven", T0 + 4_600, &[]),
        (1, none.clone())
    );
    // Each bad input: its finding on the step that breaks the rule.
    let bad = |name: &str, expected: &[&str]| {
        assert_eq!(
            haven(name),
            (1, expected.iter().map(|s| (*s).to_owned()).collect()),
            "{name}"
        );
    };
    bad("haven-unproven", &["completion_without_evidence@2"]);
    bad("haven-self-accepted", &["self_receipt@4"]);
    bad("haven-widened", &["budget_widened@2"]);
    bad("haven-offerer-claims", &["claim_by_offerer@1"]);
    bad("haven-two-claimers", &["second_claimer@2"]);
    bad(
        "haven-hasty",
        &[
            "missing_expires@2",
            "secret_in_payload@2",
            "settle_before_silence@3",
        ],
    );
    let valp = |name: &str| findings(name, "valp", NOW, &["--evidence", EVIDENCE]);
    assert_eq!(valp("valp-activation"), (0, none.clone()));
    assert_eq!(
        valp("valp-forged"),
        (1, vec!["evidence_digest_mismatch@3".to_owned()])
    );
    assert_eq!(
        valp("valp-self-reviewed"),
        (1, vec!["self_verification@5".to_owned()])
    );
    assert_eq!(
        valp("valp-replayed"),
        (1, vec!["replayed_message@6".to_owned()])
    );
    assert_eq!(
        valp("valp-rollback"),
        (1, vec!["epoch_rollback@6".to_owned()])
    );
    assert_eq!(
        valp("valp-retired"),
        (1, vec!["accepted_after_retirement@7".to_owned()])
    );
}

#[test]
fn without_a_profile_the_report_is_unchanged() {
    let d = dir();
    let now = NOW.to_string();
    let base = [
        "verify",
        "profile/haven-unproven.cbor",
        "--keyring",
        "profile/keys",
        "--now",
        &now,
        "--json",
    ];
    let plain = support::herald(&d, &base);
    plain.expect(0);
    let mut with = base.to_vec();
    with.extend(["--profile", "haven"]);
    let profiled = support::herald(&d, &with);
    profiled.expect(1);
    let (plain, profiled) = (plain.out(), profiled.out());
    let cut = plain.trim_end().len() - 1;
    assert!(
        profiled.starts_with(&plain[..cut]) && profiled[cut..].starts_with(",\"profile\":{"),
        "{plain}\n{profiled}"
    );
}

/// docs/haven.md's worked example as written, against a real `herald
/// conduit serve` on loopback (a free port for the document's 8470): six
/// `valid` envelopes and no finding, exit 0. With Bob accepting his own
/// work instead of Carol, the document's `self_receipt` finding and exit 1,
/// every envelope still `valid`.
#[test]
fn haven_md_worked_example_runs_through_a_conduit() {
    if herald_testkit::external::require("curl", "apt-get install curl").is_none() {
        return;
    }
    let doc = support::doc_example("haven.md");
    let on_free_port = |script: &str| {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listen = "--listen 127.0.0.1:8470 &\n";
        assert!(script.contains(listen), "{script}");
        script
            .replace(
                listen,
                &format!("--listen 127.0.0.1:{port} &\nCONDUIT=$!; trap 'kill $CONDUIT' EXIT\n"),
            )
            .replace("127.0.0.1:8470", &format!("127.0.0.1:{port}"))
    };
    let limit = std::time::Duration::from_secs(120);

    let (_dir, status, out, err) = support::run_script(&on_free_port(&doc), limit);
    assert_eq!(status, Some(0), "--- stdout\n{out}\n--- stderr\n{err}");
    assert!(
        out.contains("6 envelopes: 6 valid, 0 partial, 0 invalid"),
        "{out}"
    );
    assert!(
        out.contains("profile haven: 6 steps checked, 0 skipped, no findings"),
        "{out}"
    );

    let carol = "step carol complete.cbor acceptance accepted.cbor";
    assert!(doc.contains(carol));
    let selfish = doc.replace(carol, "step bob   complete.cbor acceptance accepted.cbor");
    let (_dir, status, out, err) = support::run_script(&on_free_port(&selfish), limit);
    assert_eq!(status, Some(1), "--- stdout\n{out}\n--- stderr\n{err}");
    assert!(
        out.contains("6 envelopes: 6 valid, 0 partial, 0 invalid"),
        "{out}"
    );
    assert!(
        out.contains("  self_receipt  a receipt of the work by the worker's own key"),
        "{out}"
    );
}
