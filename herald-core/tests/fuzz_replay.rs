//! Stable-toolchain replay of the herald-core fuzz targets (docs/fuzzing.md).
//!
//! The target bodies are `fuzz/src/core_targets.rs`, compiled here with
//! `#[path]` (one copy, shared with the libFuzzer binaries). Each test runs
//! one body over every file of `fuzz/corpus/<target>/`, of
//! `fuzz/regressions/<target>/` (committed reproducers) and of any local
//! `fuzz/artifacts/<target>/crash-*`, and asserts none panics.
//!
//! `seeds` builds the seed inputs (envelopes from the builder, the cbor-wg
//! vectors' encoded items, sigil strings). With `HERALD_WRITE_SEEDS=1` it
//! writes them as `fuzz/corpus/<target>/seed-*`; otherwise it checks that
//! they are there.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

#[allow(unreachable_pub, dead_code)]
#[path = "../../fuzz/src/core_targets.rs"]
mod targets;

use std::fs;
use std::path::Path;

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, Reserved, Scope, SigilForm};
use herald_testkit::corpus::{self, files, fuzz_dir};
use support::{TS, TestRng, alice, bob, carol};

/// Run `body` over `target`'s corpus, regressions and crash artifacts.
fn replay(target: &str, body: fn(&[u8])) {
    corpus::replay(
        target,
        "HERALD_WRITE_SEEDS=1 cargo test -p herald-core --test fuzz_replay seeds",
        body,
    );
}

#[test]
fn replay_cbor_decode() {
    replay("cbor_decode", targets::cbor_decode);
}

#[test]
fn replay_cbor_differential() {
    replay("cbor_differential", targets::cbor_differential);
}

#[test]
fn replay_envelope_check() {
    replay("envelope_check", targets::envelope_check);
}

#[test]
fn replay_sigil_parse() {
    replay("sigil_parse", targets::sigil_parse);
}

// ---- seeds ----------------------------------------------------------------

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().collect::<Map>())
}

/// A spread of valid envelopes: every kind, replies, co-signatures, every
/// `from` form, optional fields, and one signed by a key outside the
/// fuzz resolver (Carol).
fn envelopes() -> Vec<(String, Envelope)> {
    let mut rng = TestRng::new(0x4655_5a5a);
    let (a, b, c) = (alice(), bob(), carol());
    let mut out: Vec<(String, Envelope)> = Vec::new();
    let genesis = EnvelopeBuilder::genesis(TS)
        .payload(Value::text("hello"))
        .sign_with_rng(&a, &mut rng)
        .unwrap();
    let reply = EnvelopeBuilder::reply(&genesis.view(), TS + 1)
        .to(a.sigil(SigilForm::Default))
        .expires(TS + 7_200)
        .payload(map(vec![
            ("n", Value::Unsigned(7)),
            ("x", Value::from_f64(0.5).unwrap()),
            ("b", Value::Bytes(vec![1, 2, 3])),
            ("l", Value::Array(vec![Value::Null, Value::Bool(true)])),
        ]))
        .sign_with_rng(&b, &mut rng)
        .unwrap();
    let cosigned = reply
        .cosign(&a, Scope::ToolSandbox, Some(TS + 2))
        .unwrap()
        .cosign(&c, Scope::ConduitReceipt, None)
        .unwrap();
    out.push(("genesis".into(), genesis.clone()));
    out.push(("reply".into(), reply));
    out.push(("cosigned".into(), cosigned));
    for form in SigilForm::ALL {
        let e = EnvelopeBuilder::genesis(TS)
            .from_form(form)
            .to(Reserved::Scribe.as_str().parse().unwrap())
            .sign_with_rng(&a, &mut rng)
            .unwrap();
        out.push((format!("from-{}", form.name()), e));
    }
    let extra = EnvelopeBuilder::genesis(TS)
        .extra_field("zz_unknown", Value::text("kept and signed"))
        .unwrap()
        .attest("model", Value::text("m-1"))
        .attest("confidence", Value::from_f64(0.25).unwrap())
        .attest("tools", Value::Array(vec![Value::text("grep")]))
        .attest("log_metadata_consent", Value::Bool(true))
        .lineage_proof([9; 32])
        .nonce(Nonce([0x42; 16]))
        .sign_with_rng(&b, &mut rng)
        .unwrap();
    out.push(("attested".into(), extra));
    out.push((
        "unknown-signer".into(),
        EnvelopeBuilder::genesis(TS)
            .sign_with_rng(&c, &mut rng)
            .unwrap(),
    ));
    for kind in Kind::ALL {
        let builder = match kind {
            Kind::Birth => EnvelopeBuilder::genesis(TS).attest(
                "birth",
                birth_attestation(&c.public_key(), "carol", &[a.sigil(SigilForm::Default)]),
            ),
            _ => EnvelopeBuilder::reply(&genesis.view(), TS + 1),
        };
        let payload = match kind {
            Kind::Molt => map(vec![
                ("new_key", Value::Bytes(b.public_key().as_bytes().to_vec())),
                ("not_before", Value::Unsigned(TS + 86_400)),
            ]),
            Kind::Deprecation => map(vec![(
                "successor",
                Value::text(b.sigil(SigilForm::Default).to_string()),
            )]),
            Kind::Duress => map(vec![("note", Value::text("help"))]),
            Kind::Refusal => map(vec![
                ("reason", Value::text("over quota")),
                ("retry_after", Value::Unsigned(60)),
            ]),
            Kind::Manifest => map(vec![(
                "capabilities",
                Value::Array(vec![Value::text("legal-research/eu")]),
            )]),
            Kind::Certification => map(vec![
                (
                    "subject",
                    Value::text(b.sigil(SigilForm::Default).to_string()),
                ),
                ("claim", Value::text("key")),
                ("value", Value::Bytes(b.public_key().as_bytes().to_vec())),
                ("not_after", Value::Unsigned(TS + 86_400)),
            ]),
            _ => Value::text("hello"),
        };
        let signer = if kind == Kind::Birth { &c } else { &a };
        let env = builder
            .kind(kind)
            .payload(payload)
            .sign_with_rng(signer, &mut rng)
            .unwrap();
        let env = match kind {
            Kind::Duress => env.cosign(&b, Scope::DuressWitness, None).unwrap(),
            Kind::Birth => env.cosign(&a, Scope::LineageConsent, None).unwrap(),
            Kind::Molt => env.cosign(&b, Scope::HeraldEndorsement, None).unwrap(),
            _ => env,
        };
        out.push((format!("kind-{}", kind.name()), env));
    }
    out
}

/// The byte string after each `"encoded"` key of a cbor-wg vector file.
/// (A byte scan rather than a decode: ciborium refuses some `decoded`
/// values of these files, and only the `encoded` items matter here.)
fn encoded_items(file: &[u8]) -> Vec<Vec<u8>> {
    const KEY: &[u8] = b"\x67encoded";
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = file
        .get(at..)
        .and_then(|rest| rest.windows(KEY.len()).position(|w| w == KEY))
    {
        let head = at + i + KEY.len();
        at = head;
        let Some(&initial) = file.get(head) else {
            break;
        };
        if initial >> 5 != 2 {
            continue;
        }
        let width = match initial & 0x1f {
            n @ 0..=23 => {
                let start = head + 1;
                if let Some(b) = file.get(start..start + usize::from(n)) {
                    out.push(b.to_vec());
                }
                continue;
            }
            24 => 1,
            25 => 2,
            26 => 4,
            _ => continue,
        };
        let Some(len) = file.get(head + 1..head + 1 + width) else {
            break;
        };
        let len = len
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        let start = head + 1 + width;
        if let Some(b) = file.get(start..start + len) {
            out.push(b.to_vec());
        }
    }
    out
}

/// The `encoded` bytes of every cbor-wg test vector (vectors/external/cbor).
fn cbor_wg_items() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/external/cbor");
    let mut out = Vec::new();
    for sub in ["cbor-wg-rfc8949", "cbor-wg-rfc8949-appendixA"] {
        for path in files(&dir.join(sub), "") {
            if path.extension().is_none_or(|e| e != "cbor") {
                continue;
            }
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            for (i, bytes) in encoded_items(&fs::read(&path).unwrap())
                .into_iter()
                .enumerate()
            {
                out.push((format!("wg-{stem}-{i:03}"), bytes));
            }
        }
    }
    // README section 1: 88 good + 47 bad + 81 Appendix A tests.
    assert_eq!(out.len(), 88 + 47 + 81, "every cbor-wg vector found");
    out
}

fn sigil_strings() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (who, key) in [("alice", alice()), ("bob", bob())] {
        for form in SigilForm::ALL {
            let s = key.sigil(form).to_string();
            out.push((format!("{who}-{}", form.name()), s.clone().into_bytes()));
            out.push((
                format!("{who}-{}-upper", form.name()),
                s.to_uppercase().into_bytes(),
            ));
        }
    }
    for r in Reserved::ALL {
        out.push((
            format!("reserved-{}", r.as_str().trim_start_matches("sigil:")),
            r.as_str().into(),
        ));
    }
    let extra: [(&str, &str); 6] = [
        ("spec-example", "sigil:m7zr4hb2qa6kpl9xn3qg4w"),
        ("padded", "sigil:aaaaaaaaaaaaaaaaaaaaaaaaaa======"),
        ("trailing-bits", "sigil:aaaaaaaaaaaaaaaaaaaaaaaaab"),
        ("prefix-only", "sigil:"),
        ("long-prefix", "sigil:long:"),
        ("not-a-sigil", "herald/0.2"),
    ];
    out.extend(
        extra
            .iter()
            .map(|(n, s)| (n.to_string(), s.as_bytes().to_vec())),
    );
    out
}

/// `target` -> `(name, bytes)` seeds.
fn all_seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut seeds = Vec::new();
    let envs = envelopes();
    for (name, env) in &envs {
        let bytes = env.as_bytes().to_vec();
        seeds.push(("envelope_check", format!("env-{name}"), bytes.clone()));
        seeds.push(("cbor_decode", format!("env-{name}"), bytes.clone()));
        seeds.push(("cbor_differential", format!("env-{name}"), bytes.clone()));
        // A tampered copy: one byte of the signature flipped.
        let mut bad = bytes;
        let last = bad.len() - 1;
        bad[last] ^= 1;
        seeds.push(("envelope_check", format!("env-{name}-flipped"), bad));
    }
    for (name, bytes) in cbor_wg_items() {
        seeds.push(("cbor_decode", name.clone(), bytes.clone()));
        seeds.push(("cbor_differential", name, bytes));
    }
    for (name, bytes) in sigil_strings() {
        seeds.push(("sigil_parse", name, bytes));
    }
    seeds
}

#[test]
fn seeds() {
    let write = std::env::var("HERALD_WRITE_SEEDS").is_ok_and(|v| v == "1");
    let corpus = fuzz_dir().join("corpus");
    let mut missing = Vec::new();
    for (target, name, bytes) in all_seeds() {
        let path = corpus.join(target).join(format!("seed-{name}"));
        if write {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &bytes).unwrap();
        } else {
            match fs::read(&path) {
                Ok(found) if found == bytes => {}
                // Still a useful input; the generator has moved on.
                Ok(_) => eprintln!("{} differs from the generator", path.display()),
                Err(_) => missing.push(path.display().to_string()),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "seeds missing (HERALD_WRITE_SEEDS=1 to write them): {missing:#?}"
    );
}
