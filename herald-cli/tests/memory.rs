//! Target 7 of docs/performance.md: `herald verify` on a 100 000-envelope
//! trace file peaks below 3× the file's size in resident memory.
//!
//! The file holds the typical envelope of the spec's §3.1 example (`to`,
//! `expires`, five attestations, a 300-byte text payload: 0.9 KB each) in 100
//! traces of 1 000 replies by 16 signers. The real binary verifies it, in the
//! human form and with `--json`; its peak resident set size is measured by
//! `support::rss`. The figures are printed (run with `--nocapture` to see them).

// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigilForm, SigningKey};
use herald_verify::key_line;

use herald_testkit::T0 as TS;
const ENVELOPES: usize = 100_000;
const TRACES: usize = 100;
const SIGNERS: u8 = 16;

fn signer(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n.wrapping_add(1); 32])
}

/// Write the trace file `dir/set.cbor` and the keyring `dir/keys.pub`;
/// return the file's size.
fn trace_file(dir: &Path) -> usize {
    let keys: Vec<SigningKey> = (0..SIGNERS).map(signer).collect();
    let ring: String = keys
        .iter()
        .map(|k| key_line(&k.public_key()) + "\n")
        .collect();
    std::fs::write(dir.join("keys.pub"), ring).unwrap();
    let to = signer(200).public_key().sigil(SigilForm::Default);
    let payload = "x".repeat(300);
    let mut last: Vec<Option<([u8; 32], [u8; 32])>> = vec![None; TRACES];
    let mut bytes = Vec::with_capacity(ENVELOPES * 1000);
    for i in 0..ENVELOPES {
        let t = i % TRACES;
        let ts = TS + i as u64;
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&(i as u64).to_be_bytes());
        let b = match last[t] {
            Some((id, trace)) => EnvelopeBuilder::reply_to(id, trace, ts),
            None => EnvelopeBuilder::genesis(ts),
        };
        let e = b
            .to(to)
            .expires(ts + 200_000)
            .nonce(Nonce(nonce))
            .attest("model", Value::text("claude-opus-4-7"))
            .attest(
                "tools",
                Value::Array(vec![Value::text("search"), Value::text("python")]),
            )
            .attest("temperature", Value::from_f64(0.7).unwrap())
            .attest("confidence", Value::from_f64(0.62).unwrap())
            .attest("vibe", Value::text("the answer arrived already grateful"))
            .payload(Value::text(payload.as_str()))
            .sign(&keys[i % keys.len()])
            .unwrap();
        let view = e.view();
        last[t] = Some((*view.id(), *view.trace()));
        bytes.extend_from_slice(e.as_bytes());
    }
    std::fs::write(dir.join("set.cbor"), &bytes).unwrap();
    bytes.len()
}

#[test]
fn verify_of_100_000_envelopes_peaks_below_three_times_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let size = trace_file(dir.path());
    assert!(size > ENVELOPES * 800, "{size} bytes");
    let now = (TS + ENVELOPES as u64).to_string();
    for json in [false, true] {
        let mut args = vec!["verify", "set.cbor", "--keyring", "keys.pub", "--now", &now];
        if json {
            args.push("--json");
        }
        let support::rss::Measured {
            code,
            written,
            peak,
            ..
        } = support::rss::peak_rss(dir.path(), &args, None);
        assert_eq!(code, 0, "every envelope is valid");
        // The JSON form lists every envelope; the human one summarises.
        let least = if json { ENVELOPES * 64 } else { 1 };
        assert!(written >= least, "the report was written ({written} B)");
        let ratio = peak as f64 / size as f64;
        println!(
            "herald verify{}: input {size} B, peak RSS {peak} B = {ratio:.2} x input, {written} B written",
            if json { " --json" } else { "" }
        );
        assert!(
            peak < 3 * size as u64,
            "peak RSS {peak} B is {ratio:.2} x the {size}-byte input"
        );
    }
}
