//! The memory bound: envelopes whose every item is a reason. A non-map item of
//! `attestations` is a `malformed` reason and costs its sender one byte; an
//! unknown top-level key is an `unknown_field` warning for seven. Listed one
//! by one, 300 envelopes of 65 536 one-byte attestations (19.7 MB) took
//! 2.34 GB. PROFILE P11 revision 3 (CLI.md `verify --json`): every reason
//! that names a signature is listed with its index; of a code that names
//! none, the first 16 in an envelope are listed and the rest counted by
//! code (`unlisted_reasons`). A non-map item of `signatures` is `malformed`
//! at its index, one byte each, and every one is listed. The tests check
//! the counts add up, the status is the one every reason implies, and the
//! state beyond the input and a one-envelope baseline stays under the
//! input's own size (the memory bound's `2 × input + 64 MiB` without the 64 MiB,
//! which would hide it here).
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::path::Path;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, EnvelopeRef, Nonce, SigningKey};
use herald_testkit::T0 as TS;
use herald_verify::key_line;

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
    // The array head in its shortest form (P1).
    let mut a = b"\x6cattestations".to_vec();
    match u8::try_from(items) {
        Ok(n @ 0..=23) => a.push(0x80 + n),
        Ok(n) => a.extend_from_slice(&[0x98, n]),
        Err(_) => {
            a.push(0x99);
            a.extend_from_slice(&u16::try_from(items).unwrap().to_be_bytes());
        }
    }
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

/// `key`'s signed genesis whose `signatures` holds its origin signature
/// and then `items - 1` one-byte items (`0x00`, none a map): `malformed`
/// at each of their indices, one byte of input each.
fn with_junk_signature_items(key: &SigningKey, nonce: u8, items: u16) -> Vec<u8> {
    let env = EnvelopeBuilder::genesis(TS)
        .nonce(Nonce([nonce; 16]))
        .sign(key)
        .unwrap();
    let bytes = env.as_bytes();
    // The template's last field is `signatures`, one map: `0x81 {…}`.
    let at = bytes
        .windows(12)
        .position(|w| w == b"\x6asignatures\x81")
        .expect("signatures holds one map")
        + 11;
    let mut out = bytes[..at].to_vec();
    out.push(0x99);
    out.extend_from_slice(&items.to_be_bytes());
    out.extend_from_slice(&bytes[at + 1..]);
    out.resize(out.len() + usize::from(items) - 1, 0x00);
    out
}

/// Verify `set` (and `one` of its envelopes, the baseline) in text and
/// `--json`; check the memory, and give the JSON report of `set`.
fn run(d: &Path, set: &[u8], one: &[u8], expect: i32) -> serde_json::Value {
    check_memory(d, set, one, expect);
    json_of(d, "set.cbor")
}

/// The JSON report of `file` in `d`.
fn json_of(d: &Path, file: &str) -> serde_json::Value {
    let now = (TS + 10).to_string();
    let run = support::herald(
        d,
        &[
            "verify",
            file,
            "--keyring",
            "k.pub",
            "--now",
            &now,
            "--json",
        ],
    );
    run.json()
}

/// Verify `set` (and `one` of its envelopes, the baseline) in text and
/// `--json`, and check the memory.
fn check_memory(d: &Path, set: &[u8], one: &[u8], expect: i32) {
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
        // Under 1.5 x the input (the memory bound for any input is
        // 2 x input + 64 MiB): the listed reasons cost about the input
        // (one byte of detail each); the rest is the allocator's slack,
        // which varies with the threads the batch check runs on.
        assert!(
            state <= set.len() as u64 * 3 / 2,
            "{mode:?}: {state} B of state for {} B of input",
            set.len()
        );
    }
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
fn one_byte_attestations_are_listed_to_sixteen_and_counted() {
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
        // The first 16, and every other reason.
        assert_eq!(malformed.len(), 16, "{listed} listed");
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
    let listed = 16;
    for expected in [
        format!("invalid  malformed ×{listed}, "),
        format!(", +{} more malformed\n", ITEMS - listed),
    ] {
        assert!(text.out().contains(&expected), "{expected}: {}", text.out());
    }
}

#[test]
fn thousands_of_unknown_fields_are_listed_to_sixteen_and_counted() {
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
        assert_eq!(listed.len(), 16);
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

/// PROFILE P11 revision 3: 40 envelopes of 65 535 one-byte items of
/// `signatures` each (2.6 MB): every one is `malformed` at its index, and
/// every one is listed, none counted, in a state under 1.5 x the input's size.
/// The text names the run once by its range.
#[test]
fn one_byte_signature_items_are_all_listed() {
    const ENVELOPES: u8 = 40;
    const ITEMS: u16 = 65_535;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = key(d);
    let set: Vec<u8> = (0..ENVELOPES)
        .flat_map(|i| with_junk_signature_items(&key, i, ITEMS))
        .collect();
    let one = with_junk_signature_items(&key, 0, ITEMS);
    check_memory(d, &set, &one, 1);
    let report = json_of(d, "one.cbor");
    let e = &report["envelopes"][0];
    assert_eq!(e["status"], "partial", "{}", e["reasons"][0]);
    assert!(
        e.get("unlisted_reasons").is_none(),
        "{}",
        e["unlisted_reasons"]
    );
    let indices: Vec<u64> = with_code(e, "malformed")
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, (1..u64::from(ITEMS)).collect::<Vec<_>>());
    assert_eq!(
        with_code(e, "malformed")[0]["detail"],
        "signatures: each signature must be a map"
    );

    let now = (TS + 10).to_string();
    let text = support::herald(
        d,
        &["verify", "one.cbor", "--keyring", "k.pub", "--now", &now],
    );
    let expected = format!("partial  malformed[1-{}]\n", ITEMS - 1);
    assert!(text.out().contains(&expected), "{}", text.out());
}

/// `key`'s signed genesis with `n` co-signatures of 64 junk bytes each,
/// in scope `human_approval`, by `by` (pinned).
fn with_bad_cosignatures(key: &SigningKey, by: &SigningKey, n: u32) -> Vec<u8> {
    use herald_core::cbor::Map;
    let env = EnvelopeBuilder::genesis(TS)
        .nonce(Nonce([0xbd; 16]))
        .sign(key)
        .unwrap();
    let Ok(Value::Map(mut map)) = Value::decode(env.as_bytes()) else {
        panic!("an envelope is a map")
    };
    let Some(Value::Array(mut sigs)) = map.remove("signatures") else {
        panic!("signatures is an array")
    };
    let sigil = by.sigil(herald_core::SigilForm::Default).to_string();
    for i in 0..n {
        let mut junk = Map::new();
        junk.insert("alg", Value::text("ed25519"));
        junk.insert("by", Value::text(sigil.as_str()));
        junk.insert("scope", Value::text("human_approval"));
        let mut sig = vec![0x77u8; 64];
        sig[..4].copy_from_slice(&i.to_be_bytes());
        junk.insert("sig", Value::Bytes(sig));
        sigs.push(Value::Map(junk));
    }
    map.insert("signatures", Value::Array(sigs));
    Value::Map(map).to_vec()
}

/// PROFILE P11 revision 3: an envelope with 4, 17 or 1 000 bad
/// co-signatures lists every one with its index through `herald verify
/// --json` (it once listed three and counted the rest, dropping which
/// signature was bad).
#[test]
fn every_bad_cosignature_is_listed_with_its_index() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = key(d);
    let by = SigningKey::from_seed(&[0x43; 32]);
    std::fs::write(
        d.join("k.pub"),
        key_line(&key.public_key()) + "\n" + &key_line(&by.public_key()) + "\n",
    )
    .unwrap();
    for n in [4u32, 17, 1000] {
        std::fs::write(d.join("bad.cbor"), with_bad_cosignatures(&key, &by, n)).unwrap();
        let report = json_of(d, "bad.cbor");
        let e = &report["envelopes"][0];
        assert_eq!(e["status"], "partial", "{n}: {e}");
        assert!(e.get("unlisted_reasons").is_none(), "{n}: {e}");
        let bad: Vec<u64> = with_code(e, "bad_signature")
            .iter()
            .map(|r| r["index"].as_u64().unwrap())
            .collect();
        assert_eq!(bad, (1..=u64::from(n)).collect::<Vec<_>>(), "{n}");
        // The same co-signer again at every later index.
        assert_eq!(
            with_code(e, "duplicate_signer").len() as u32,
            n - 1,
            "{n}: {e}"
        );
    }
}

/// CLI.md `verify --json`: 40 malformed attestations (one-byte items, no
/// signature named) list the first 16 and count 24.
#[test]
fn forty_malformed_attestations_list_sixteen_and_count_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = key(d);
    std::fs::write(d.join("a.cbor"), envelope(&key, 1, 1, &attestations(40))).unwrap();
    let report = json_of(d, "a.cbor");
    let e = &report["envelopes"][0];
    assert_eq!(e["status"], "invalid", "{e}");
    assert_eq!(with_code(e, "malformed").len(), 16, "{e}");
    assert_eq!(e["unlisted_reasons"], serde_json::json!({"malformed": 24}));
}
