//! A 10 000-envelope chain (each a reply to the one before) verifies in
//! full; the human form of a long chain cuts its tree at the depth cap.
//!
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigningKey};
use herald_verify::key_line;

use herald_testkit::T0 as TS;

/// Write a chain of `length` envelopes to `dir/chain.cbor` and its key to `dir/k.pub`.
fn chain(dir: &Path, length: usize) {
    let key = SigningKey::from_seed(&[9; 32]);
    std::fs::write(dir.join("k.pub"), key_line(&key.public_key()) + "\n").unwrap();
    let nonce = |i: usize| {
        let mut n = [0u8; 16];
        n[..8].copy_from_slice(&(i as u64).to_be_bytes());
        Nonce(n)
    };
    let mut previous = EnvelopeBuilder::genesis(TS)
        .nonce(nonce(0))
        .payload(Value::Unsigned(0))
        .sign(&key)
        .unwrap();
    let mut bytes = previous.as_bytes().to_vec();
    for i in 1..length {
        let next = EnvelopeBuilder::reply(&previous.view(), TS + i as u64)
            .nonce(nonce(i))
            .payload(Value::Unsigned(i as u64))
            .sign(&key)
            .unwrap();
        bytes.extend_from_slice(next.as_bytes());
        previous = next;
    }
    std::fs::write(dir.join("chain.cbor"), &bytes).unwrap();
}

fn verify(dir: &Path, length: usize, json: bool) -> support::Run {
    let now = (TS + length as u64).to_string();
    let mut args = vec!["verify", "chain.cbor", "--keyring", "k.pub", "--now", &now];
    if json {
        args.push("--json");
    }
    support::herald(dir, &args)
}

#[test]
fn ten_thousand_envelope_chain() {
    const LENGTH: usize = 10_000;
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), LENGTH);
    let run = verify(tmp.path(), LENGTH, true);
    run.expect(0);
    let report = run.json();
    assert_eq!(report["summary"]["valid"], LENGTH);
    assert_eq!(report["envelopes"].as_array().unwrap().len(), LENGTH);
    let traces = report["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0]["valid"], LENGTH);
    assert_eq!(traces[0]["leaves"].as_array().unwrap().len(), 1);
    assert_eq!(traces[0]["genesis"], report["envelopes"][0]["id"]);

    let run = verify(tmp.path(), LENGTH, false);
    run.expect(0);
    let text = run.out();
    assert!(text.contains("10000 envelopes: 10000 valid, 0 partial, 0 invalid"));
    assert!(text.contains("└─ … 9967 more envelopes below (drawn to depth 32)"));
}

#[test]
fn long_chain_tree_is_cut_at_the_depth_cap() {
    const LENGTH: usize = 100;
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), LENGTH);
    let run = verify(tmp.path(), LENGTH, false);
    run.expect(0);
    let text = run.out();
    assert!(
        text.contains("100 envelopes: 100 valid, 0 partial, 0 invalid"),
        "{text}"
    );
    // Root + 32 levels drawn, the rest (100 - 33) summarised on one line.
    assert!(
        text.contains("└─ … 67 more envelopes below (drawn to depth 32)"),
        "{text}"
    );
    // One line per envelope, the summary, a blank line, the trace header,
    // 33 tree lines and the cap line.
    assert_eq!(text.lines().count(), LENGTH + 1 + 1 + 1 + 33 + 1, "{text}");
}
