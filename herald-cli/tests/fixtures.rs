//! The committed fixtures of `tests/fixtures/` (used by the snapshot cases
//! in `tests/cmd/`) are exactly what this file builds, deterministically
//! (fixed seeds, nonces and times; Ed25519 signing is deterministic), and
//! they still verify as the snapshots say.
//!
//! After a deliberate change: `HERALD_UPDATE_FIXTURES=1 cargo test -p
//! herald-cli --test fixtures`, then `TRYCMD=overwrite cargo test -p
//! herald-cli --test cli` and review the diff.
// Test helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Nonce, Scope, SigilForm, SigningKey};
use herald_testkit::key;
use herald_verify::key_line;

use herald_testkit::T0 as TS;
/// `--now` the snapshots verify at (ten minutes later).
const NOW: &str = "1746432600";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn text(s: &str) -> Value {
    let mut m = Map::new();
    m.insert("text", Value::text(s));
    Value::Map(m)
}

fn hex(bytes: &[u8]) -> String {
    herald_verify::hex(bytes)
}

/// Offset of the last byte of `e`'s payload in its bytes.
fn payload_end(e: &Envelope) -> usize {
    let view = e.view();
    view.payload_bytes().as_ptr() as usize - view.as_bytes().as_ptr() as usize
        + view.payload_bytes().len()
        - 1
}

/// Every fixture file: (relative path, contents).
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    let (alice, bob, carol) = (key(1), key(2), key(3));
    let sigil = |k: &SigningKey| k.sigil(SigilForm::Default);

    let mut payload = Map::new();
    payload.insert("text", Value::text("hello, bob"));
    payload.insert("n", Value::Unsigned(42));
    payload.insert("ratio", Value::from_f64(0.25).unwrap());
    payload.insert("blob", Value::Bytes(vec![0xde, 0xad, 0xbe, 0xef]));
    let genesis = EnvelopeBuilder::genesis(TS)
        .to(sigil(&bob))
        .nonce(Nonce([1; 16]))
        .attest("model", Value::text("fixture-model"))
        .payload(Value::Map(payload))
        .sign(&alice)
        .unwrap();
    let answer = EnvelopeBuilder::reply(&genesis.view(), TS + 60)
        .to(sigil(&alice))
        .nonce(Nonce([2; 16]))
        .payload(text("hello, alice"))
        .sign(&bob)
        .unwrap();
    // A fan-out: a second reply to the genesis, then a reply to it co-signed by a human.
    let second = EnvelopeBuilder::reply(&genesis.view(), TS + 90)
        .to(sigil(&alice))
        .nonce(Nonce([3; 16]))
        .payload(text("a second answer"))
        .sign(&bob)
        .unwrap();
    let approved = EnvelopeBuilder::reply(&second.view(), TS + 120)
        .to(sigil(&bob))
        .nonce(Nonce([4; 16]))
        .payload(text("approved"))
        .sign(&alice)
        .unwrap()
        .cosign(&carol, Scope::HumanApproval, Some(TS + 150))
        .unwrap();
    let trace: Vec<u8> = [&genesis, &answer, &second, &approved]
        .iter()
        .flat_map(|e| e.as_bytes().to_vec())
        .collect();
    let mut tampered = trace.clone();
    tampered[genesis.as_bytes().len() + payload_end(&answer)] ^= 0x01;
    let half = genesis.as_bytes().len() / 2;

    // The identity point: a valid encoding of a key of small order (P5).
    let mut small = [0u8; 32];
    small[0] = 1;
    let small_sigil = herald_core::Sigil::from_key(&small, SigilForm::Default);

    // A proof bundle: Alice molts to a new key three days before the
    // snapshots' clock, the notary's log proves the molt, the new key speaks.
    let (next, notary) = (key(4), key(5));
    let mut molt_payload = Map::new();
    molt_payload.insert(
        "new_key",
        Value::Bytes(next.public_key().as_bytes().to_vec()),
    );
    molt_payload.insert("not_before", Value::Unsigned(TS - 2 * 86_400));
    let molt = EnvelopeBuilder::genesis(TS - 3 * 86_400)
        .kind(herald_core::Kind::Molt)
        .nonce(Nonce([5; 16]))
        .payload(Value::Map(molt_payload))
        .sign(&alice)
        .unwrap();
    let after = EnvelopeBuilder::reply(&molt.view(), TS)
        .from_sigil(sigil(&alice))
        .nonce(Nonce([6; 16]))
        .payload(text("same alice, new key"))
        .sign(&next)
        .unwrap();
    let log_dir = tempfile::tempdir().unwrap();
    let mut log = herald_verify::Log::create(log_dir.path(), &notary.public_key(), None).unwrap();
    log.append(&molt.view()).unwrap();
    let proof = log
        .inclusion_proof(&notary, &molt.id(), None, TS - 2 * 86_400)
        .unwrap()
        .encode();
    let bundle = herald_verify::encode_bundle(&[molt.as_bytes(), after.as_bytes()], &[&proof], &[]);

    vec![
        ("molt.bundle", bundle),
        (
            "notary.pub",
            format!("{}\n", key_line(&notary.public_key())).into_bytes(),
        ),
        (
            "keys/alice.pub",
            format!("{}\n", key_line(&alice.public_key())).into_bytes(),
        ),
        (
            "keys/bob.pub",
            format!("{}\n", key_line(&bob.public_key())).into_bytes(),
        ),
        (
            "keys/carol.pub",
            format!("{}\n", key_line(&carol.public_key())).into_bytes(),
        ),
        ("genesis.cbor", genesis.as_bytes().to_vec()),
        ("trace.cbor", trace),
        ("tampered.cbor", tampered),
        ("truncated.cbor", genesis.as_bytes()[..half].to_vec()),
        ("empty.cbor", Vec::new()),
        ("not-envelope.json", b"{\"hello\": \"world\"}\n".to_vec()),
        (
            "bad-sigil.pub",
            format!(
                "# alice's sigil with bob's key\n{} ed25519 {}\n",
                sigil(&alice),
                hex(bob.public_key().as_bytes())
            )
            .into_bytes(),
        ),
        (
            "small-order.pub",
            format!("{small_sigil} ed25519 {}\n", hex(&small)).into_bytes(),
        ),
    ]
}

#[test]
fn fixtures_are_current() {
    let update = std::env::var_os("HERALD_UPDATE_FIXTURES").is_some();
    for (name, bytes) in fixtures() {
        let path = dir().join(name);
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

#[test]
fn fixtures_still_verify() {
    let d = dir();
    let verify = |file: &str| {
        support::herald(
            &d,
            &["verify", file, "--keyring", "keys", "--now", NOW, "--json"],
        )
    };
    let honest = verify("trace.cbor");
    honest.expect(0);
    assert_eq!(honest.json()["summary"]["valid"], 4);
    let tampered = verify("tampered.cbor");
    tampered.expect(1);
    let entry = &tampered.json()["envelopes"][1];
    assert_eq!(entry["status"], "invalid");
    assert!(support::codes(entry).contains(&"bad_signature[0]".to_owned()));
    verify("genesis.cbor").expect(0);
    // The bundle: valid with the notary's log pinned, not without.
    let proven = support::herald(
        &d,
        &[
            "verify",
            "molt.bundle",
            "--keyring",
            "keys",
            "--keyring",
            "notary.pub",
            "--now",
            NOW,
            "--json",
        ],
    );
    proven.expect(0);
    assert_eq!(proven.json()["envelopes"][1]["signing_key"], "molt 1");
    verify("molt.bundle").expect(1);
    for bad in ["truncated.cbor", "empty.cbor", "not-envelope.json"] {
        verify(bad).expect(1);
    }
}
