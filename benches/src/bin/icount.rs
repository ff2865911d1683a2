//! Instruction counts behind targets 1–4 of docs/performance.md: the same
//! operations on the same fixtures as the criterion benches, counted by
//! `valgrind --tool=callgrind`. A count is the same on every run whatever
//! else the machine does, where wall time on this shared 2-vCPU guest moves
//! by ±20% between two groups of one criterion run; it is a cross-check of
//! the criterion ratios, not a replacement (instructions are not cycles,
//! and valgrind's CPU has no SHA-NI, so SHA-256 runs sha2's portable code
//! under it and counts for more than it costs on this machine).
//!
//! `cargo run --release -p herald-benches --bin icount` runs itself under
//! valgrind, once per operation with 0 and with `N` repetitions, and prints
//! instructions per operation (the difference over `N`) and the ratios.
//! `icount OP SIZE N` runs one operation `N` times (what valgrind runs).

// A measuring tool: a broken fixture or a missing valgrind ends it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::process::Command;

use ed25519_dalek::{Signature, Signer};
use herald_benches::{Fixture, PAYLOAD_SIZES, attestation_pairs, cose, direct, verify_envelope};
use herald_core::SigilForm;
use herald_core::cbor::Value;
use sha2::{Digest, Sha256};

/// Every counted operation.
const OPS: [&str; 11] = [
    "herald_build_sign",
    "sha256",
    "ed25519_sign",
    "cose_sign",
    "herald_verify",
    "ed25519_verify_strict",
    "cose_verify",
    "herald_value_encode",
    "ciborium_value_encode",
    "builder_write_encode",
    "herald_decode",
];

/// Repetitions per counted run.
const N: u64 = 200;

fn run(op: &str, len: usize, n: u64) {
    let f = Fixture::new(len);
    f.self_check().unwrap();
    let wire = f.envelope.as_bytes().to_vec();
    let sigil = f.key.sigil(SigilForm::Default);
    let from = sigil.to_string();
    let vk = f.dalek.verifying_key();
    let sig = Signature::from_bytes(f.envelope.view().signatures().next().unwrap().unwrap().sig);
    let payload = Value::text(f.parts.payload.as_str());
    let attestations = attestation_pairs();
    for _ in 0..n {
        match op {
            "herald_build_sign" => drop(black_box(f.parts.sign(&f.key))),
            "sha256" => drop(black_box(Sha256::digest(black_box(&f.body)))),
            "ed25519_sign" => drop(black_box(f.dalek.sign(black_box(&f.message)))),
            "cose_sign" => drop(black_box(cose::sign(black_box(&f.body), &f.dalek, &sigil))),
            "herald_verify" => assert!(verify_envelope(black_box(&wire), &f.public)),
            "ed25519_verify_strict" => {
                assert!(vk.verify_strict(black_box(&f.message), &sig).is_ok())
            }
            "cose_verify" => assert!(cose::verify(black_box(&f.cose), &vk)),
            "herald_value_encode" => drop(black_box(black_box(&f.value).to_vec())),
            "ciborium_value_encode" => {
                let mut out = Vec::new();
                ciborium::into_writer(black_box(&f.ciborium), &mut out).unwrap();
                drop(black_box(out));
            }
            "builder_write_encode" => drop(black_box(direct::body_values(
                black_box(&f.parts),
                &from,
                &payload,
                &attestations,
            ))),
            "herald_decode" => {
                assert!(herald_core::EnvelopeRef::decode(black_box(&wire)).is_ok())
            }
            other => panic!("unknown operation {other}"),
        }
    }
}

/// Instructions valgrind counted for `icount op len n`.
fn counted(op: &str, len: usize, n: u64) -> u64 {
    let me = std::env::current_exe().unwrap();
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(&me)
        .args([op, &len.to_string(), &n.to_string()])
        .output()
        .expect("valgrind runs (apt-get install valgrind)");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{op} {len} {n}: {text}");
    // "==pid== Collected : 123456789"
    text.lines()
        .find_map(|l| {
            l.split_once("Collected :")
                .map(|(_, n)| n.trim().to_string())
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count from callgrind: {text}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [op, len, n] = args.as_slice() {
        run(op, len.parse().unwrap(), n.parse().unwrap());
        return;
    }
    println!("instructions per operation (callgrind, ({N} runs - 0 runs) / {N})\n");
    for (len, label) in PAYLOAD_SIZES {
        let per: Vec<(&str, f64)> = OPS
            .iter()
            .map(|op| {
                let base = counted(op, len, 0);
                let total = counted(op, len, N);
                (*op, (total - base) as f64 / N as f64)
            })
            .collect();
        let get = |name: &str| per.iter().find(|(o, _)| *o == name).unwrap().1;
        println!("| {label} | instructions |\n|---|---|");
        for (op, ir) in &per {
            println!("| {op} | {ir:.0} |");
        }
        let ratio = |what: &str, r: f64| println!("| {what} | {r:.3} |");
        println!("\n| {label} ratio | value |\n|---|---|");
        ratio(
            "1: build_sign / (sha256 + ed25519_sign)",
            get("herald_build_sign") / (get("sha256") + get("ed25519_sign")),
        );
        ratio(
            "2: verify / (sha256 + verify_strict)",
            get("herald_verify") / (get("sha256") + get("ed25519_verify_strict")),
        );
        ratio(
            "3a: build_sign / cose_sign",
            get("herald_build_sign") / get("cose_sign"),
        );
        ratio(
            "3b: verify / cose_verify",
            get("herald_verify") / get("cose_verify"),
        );
        ratio(
            "4: ciborium / Value::to_vec (speed-up)",
            get("ciborium_value_encode") / get("herald_value_encode"),
        );
        ratio(
            "4: ciborium / builder's route (speed-up)",
            get("ciborium_value_encode") / get("builder_write_encode"),
        );
        println!();
    }
}
