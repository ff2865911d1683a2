//! Issue 14: envelopes whose every item is a reason. A non-map item of
//! `attestations` is a `malformed` reason and costs its sender one byte; an
//! unknown top-level key is an `unknown_field` warning for seven. Listed one
//! by one, 300 envelopes of 65 536 one-byte attestations (19.7 MB) took
//! 2.34 GB. An envelope now lists every kind of reason it has and its
//! repeats up to one per 256 of its bytes, and counts the rest by code
//! (`unlisted_reasons`): the tests check the counts add up, the status is
//! the one every reason implies, and the state beyond the input and a
//! one-envelope baseline stays under the input's own size (the issue's
//! `2 × input + 64 MiB` without the 64 MiB, which would hide it here).
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::path::Path;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, EnvelopeRef, Nonce, SigningKey};
use herald_testkit::T0 as TS;
use herald_verify::keyring::key_line;

/// `key`'s signed genesis, `extra` appended to its map as `count` more
/// entries (the template's last field is `signatures`, and every key
/// `extra` adds must sort after it: P1, shorter keys first), its id computed
/// again when it still decodes.
fn envelope(key: &SigningKey, nonce: u8, count: usize, extra: &[u8]) -> Vec<u8> {
    let env = EnvelopeBuilder::genesis(TS)
        .nonce(Nonce([nonce; 16]))
        .sign(key)
        .unwrap();
    let bytes = env.as_bytes();
    let fields = usize::from(bytes[0] - 0xa0);
    let n = fields + count;
    let mut out = match u8::try_from(n) {
        Ok(n @ 0..=23) => vec![0xa0 + n],
        Ok(n) => vec![0xb8, n],
        Err(_) => {
            let mut h = vec![0xb9];
            h.extend_from_slice(&u16::try_from(n).unwrap().to_be_bytes());
            h
        }
    };
    out.extend_from_slice(&bytes[1..]);
    out.extend_from_slice(extra);
    if let Ok(view) = EnvelopeRef::decode(&out) {
        let id = view.computed_id();
        let at = view.id().as_ptr() as usize - out.as_ptr() as usize;
        out[at..at + 32].copy_from_slice(&id);
    }
    out
}

/// `attestations: [0, 0, …]`, `items` one-byte items.
fn attestations(items: usize) -> Vec<u8> {
    let mut a = b"\x6cattestations\x99".to_vec();
    a.extend_from_slice(&u16::try_from(items).unwrap().to_be_bytes());
    a.resize(a.len() + items, 0x00);
    a
}

/// `key`'s signed genesis with `fields` unknown top-level keys,
/// `zz0000: 0` …, each seven bytes.
fn with_unknown_fields(key: &SigningKey, nonce: u8, fields: usize) -> Vec<u8> {
    let mut b = EnvelopeBuilder::genesis(TS).nonce(Nonce([nonce; 16]));
    for k in 0..fields {
        b = b
            .extra_field(&format!("zz{k:04x}"), Value::Unsigned(0))
            .unwrap();
    }
    b.sign(key).unwrap().as_bytes().to_vec()
}

/// Verify `set` (and `one` of its envelopes, the baseline) in text and
/// `--json`; check the memory, and give the JSON report of `set`.
fn run(d: &Path, set: &[u8], one: &[u8], expect: i32) -> serde_json::Value {
    std::fs::write(d.join("set.cbor"), set).unwrap();
    std::fs::write(d.join("one.cbor"), one).unwrap();
    let now = (TS + 10).to_string();
    for mode in [&[][..], &["--json"]] {
        let args = |file| {
            let mut a = vec!["verify", file, "--keyring", "k.pub", "--now", &now];
            a.extend_from_slice(mode);
            a
        };
        let base = support::rss::peak_rss(d, &args("one.cbor"), None);
        let m = support::rss::peak_rss(d, &args("set.cbor"), None);
        assert_eq!(m.code, expect, "{}", m.stderr);
        let state = m.peak.saturating_sub(base.peak + set.len() as u64);
        println!(
            "{mode:?}: {} B in, peak {} B, baseline {} B: {state} B of state",
            set.len(),
            m.peak,
            base.peak
        );
        assert!(
            state <= set.len() as u64,
            "{mode:?}: {state} B of state for {} B of input",
            set.len()
        );
    }
    let run = support::herald(
        d,
        &[
            "verify",
            "set.cbor",
            "--keyring",
            "k.pub",
            "--now",
            &now,
            "--json",
        ],
    );
    run.json()
}

fn key(d: &Path) -> SigningKey {
    let key = SigningKey::from_seed(&[0x42; 32]);
    std::fs::write(d.join("k.pub"), key_line(&key.public_key()) + "\n").unwrap();
    key
}

/// The reasons of an envelope's JSON report with `code`.
fn with_code<'j>(e: &'j serde_json::Value, code: &str) -> Vec<&'j serde_json::Value> {
    e["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["code"] == code)
        .collect()
}

#[test]
fn one_byte_attestations_are_listed_to_a_cap_and_counted() {
    const ENVELOPES: u8 = 40;
    const ITEMS: usize = 65_535;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = key(d);
    let items = attestations(ITEMS);
    let set: Vec<u8> = (0..ENVELOPES)
        .flat_map(|i| envelope(&key, i, 1, &items))
        .collect();
    let one = envelope(&key, 0, 1, &items);
    let report = run(d, &set, &one, 1);
    let envelopes = report["envelopes"].as_array().unwrap();
    assert_eq!(envelopes.len(), usize::from(ENVELOPES));
    for e in envelopes {
        assert_eq!(e["status"], "invalid", "{e}");
        let malformed = with_code(e, "malformed");
        let listed = e["reasons"].as_array().unwrap().len();
        let unlisted = e["unlisted_reasons"]["malformed"].as_u64().unwrap() as usize;
        assert_eq!(e["unlisted_reasons"].as_object().unwrap().len(), 1, "{e}");
        // One per 256 bytes of the envelope, and every other kind once.
        assert_eq!(malformed.len(), one.len() / 256, "{listed} listed");
        let others: std::collections::HashSet<_> = e["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["code"] != "malformed")
            .map(|r| (r["code"].to_string(), r["index"].to_string()))
            .collect();
        assert_eq!(others.len(), listed - malformed.len(), "{e}");
        assert_eq!(
            malformed.len() + unlisted,
            ITEMS,
            "each item listed or counted"
        );
    }

    // The text names the run once, with its count, and the rest counted.
    let now = (TS + 10).to_string();
    let text = support::herald(
        d,
        &["verify", "one.cbor", "--keyring", "k.pub", "--now", &now],
    );
    let listed = one.len() / 256;
    for expected in [
        format!("invalid  malformed ×{listed}, "),
        format!(", +{} more malformed\n", ITEMS - listed),
    ] {
        assert!(text.out().contains(&expected), "{expected}: {}", text.out());
    }
}

#[test]
fn thousands_of_unknown_fields_are_listed_to_a_cap_and_counted() {
    const ENVELOPES: u8 = 200;
    const FIELDS: usize = 5000;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = key(d);
    let set: Vec<u8> = (0..ENVELOPES)
        .flat_map(|i| with_unknown_fields(&key, i, FIELDS))
        .collect();
    let one = with_unknown_fields(&key, 0, FIELDS);
    let report = run(d, &set, &one, 0);
    let envelopes = report["envelopes"].as_array().unwrap();
    assert_eq!(envelopes.len(), usize::from(ENVELOPES));
    for e in envelopes {
        // Warnings: the envelope stays valid, its origin verified.
        assert_eq!(e["status"], "valid", "{e}");
        assert_eq!(e["key_source"], "keyring", "{e}");
        let listed = with_code(e, "unknown_field");
        assert_eq!(listed.len(), one.len() / 256);
        assert!(
            listed[0]["detail"]
                .as_str()
                .unwrap()
                .starts_with("\"zz0000\""),
            "{}",
            listed[0]
        );
        assert_eq!(
            listed.len() + e["unlisted_reasons"]["unknown_field"].as_u64().unwrap() as usize,
            FIELDS
        );
    }
}
