//! Test helper for the inspector's browser test (docs/inspector.md
//! *Tests*), not a user tool: writes a trace whose sender three Heralds
//! certify (PROFILE P14), with what a verifier needs to judge them.
//!
//! Usage: `herald-heralds-writer <out dir>`, which gets:
//! - `trace.cbor`: alice's genesis "hello from alice" and her reply to it
//!   (her key in no keyring: a certified `key` claim resolves it);
//! - `heralds.txt`: the Herald list (labels `herald-a`, `herald-b`,
//!   `herald-c`), `threshold 2`;
//! - `heralds.policy`: the tlog-policy naming their logs and the witness
//!   `w1`, quorum `w1`;
//! - `certs.cbor`: the certification items. Heralds a and b certify
//!   alice's key, handle `alice@acme.com` and model `claude-test`; Herald c
//!   lies (bob's key and model `m-2` for alice's sigil) and also gives
//!   one certification that has expired (`not_after` T0 + 60).
//!
//! Every item's proof is in a checkpoint the witness cosigned; times are
//! from `herald_testkit::T0`.

use std::process::ExitCode;

use herald_core::cbor::Value;
use herald_core::payload::Claim;
use herald_core::{EnvelopeBuilder, SigilForm};
use herald_testkit::heralds::{TestHerald, Witness, model, policy};
use herald_testkit::{T0, key, nonce};
use herald_verify::CertificationItem;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("herald-heralds-writer: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        return Err("usage: herald-heralds-writer <out dir>".into());
    };
    let dir = std::path::Path::new(dir);
    let (alice, bob) = (key(1), key(2));
    let said = EnvelopeBuilder::genesis(T0 + 60)
        .nonce(nonce(1))
        .payload(Value::text("hello from alice"))
        .sign(&alice)
        .map_err(|e| e.to_string())?;
    let again = EnvelopeBuilder::reply(&said.view(), T0 + 120)
        .nonce(nonce(2))
        .payload(Value::text("and again"))
        .sign(&alice)
        .map_err(|e| e.to_string())?;

    let mut heralds = [
        TestHerald::new(11),
        TestHerald::new(12),
        TestHerald::new(13),
    ];
    let w = Witness::new("w1", 31);
    let subject = alice.sigil(SigilForm::Default);
    let (real, fake) = (*alice.public_key().as_bytes(), *bob.public_key().as_bytes());
    let mut issued = Vec::new();
    for (n, h) in heralds.iter_mut().enumerate() {
        let es = if n < 2 {
            vec![
                h.certify(subject, &Claim::Key(&real), T0, None),
                h.certify(subject, &Claim::Handle("alice@acme.com"), T0, None),
                h.certify(subject, &model("claude-test"), T0, None),
            ]
        } else {
            vec![
                h.certify(subject, &Claim::Key(&fake), T0, None),
                h.certify(subject, &model("m-2"), T0, None),
                h.certify(subject, &Claim::Handle("alice@acme.com"), T0, Some(T0 + 60)),
            ]
        };
        issued.push(es);
    }
    let items: Vec<CertificationItem> = heralds
        .iter()
        .zip(&issued)
        .flat_map(|(h, es)| es.iter().map(|e| h.item(e, &[&w])).collect::<Vec<_>>())
        .collect();

    let mut list = String::from("# the inspector test's Heralds\n");
    for (h, label) in heralds.iter().zip(["herald-a", "herald-b", "herald-c"]) {
        list.push_str(&h.list_line(label));
        list.push('\n');
    }
    list.push_str("threshold 2\n");
    let all: Vec<&TestHerald> = heralds.iter().collect();
    let policy = policy(&all, &[&w], "", "w1");

    let mut trace = said.as_bytes().to_vec();
    trace.extend_from_slice(again.as_bytes());
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).map_err(|e| format!("{name}: {e}"))
    };
    write("trace.cbor", &trace)?;
    write("heralds.txt", list.as_bytes())?;
    write("heralds.policy", policy.as_bytes())?;
    write("certs.cbor", &CertificationItem::encode_sequence(&items))
}
