//! `herald verify --json` is byte-identical, with the same exit status, to
//! the outputs committed in `tests/fixtures/verify-json/`: on every verify
//! and bundle case of the conformance vectors (with the case's keyring,
//! `now` and required scopes) and on the whole-process benchmark's trace
//! (`benches/src/bin/process.rs`: 10 000 envelopes, one trace, three
//! signers, 40-byte payloads). The JSON report is a contract (CLI.md
//! *verify*): a refactoring of herald-verify must not move one byte of it.
//!
//! The committed outputs were written by this test in its writing mode,
//! `HERALD_UPDATE_VERIFY_JSON=/path/to/herald`, which runs that binary and
//! writes what it prints, from the binary of an unchanged main (see
//! `tests/fixtures/verify-json/README.md`); after a deliberate change of
//! the report, rerun it in that mode with the new binary and review the
//! diff.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use herald_benches::ProcessTrace;
use sha2::{Digest, Sha256};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance")
}

fn expected() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify-json")
}

/// The binary whose outputs this run writes as the expected ones, if any.
fn updating_from() -> Option<PathBuf> {
    std::env::var_os("HERALD_UPDATE_VERIFY_JSON").map(PathBuf::from)
}

fn updating() -> bool {
    updating_from().is_some()
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("herald-verify-json-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `herald verify --json ARGS`: its exit status and standard output.
fn verify_json(args: &[&std::ffi::OsStr]) -> (i32, Vec<u8>) {
    let herald = updating_from().unwrap_or_else(|| env!("CARGO_BIN_EXE_herald").into());
    // From the vectors directory, so that an input's name in a reason's
    // detail is the same relative path wherever the clone lies.
    let out = Command::new(herald)
        .current_dir(vectors())
        .arg("verify")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    (out.status.code().unwrap(), out.stdout)
}

#[test]
fn verify_json_is_byte_stable_on_the_conformance_cases() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(vectors().join("manifest.json")).unwrap()).unwrap();
    let dir = scratch("conformance");
    let mut statuses = String::new();
    let mut compared = 0;
    for case in manifest["cases"].as_array().unwrap() {
        if case["type"] != "verify" && case["type"] != "bundle" {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let keyring = dir.join(format!("{name}.keyring"));
        let mut lines = Vec::new();
        for key in case["keyring"].as_array().unwrap() {
            let file = vectors().join(format!("keys/{}.pub", key.as_str().unwrap()));
            lines.extend(std::fs::read(file).unwrap());
        }
        std::fs::write(&keyring, lines).unwrap();
        let input = PathBuf::from(case["input"].as_str().unwrap());
        let now = case["now"].as_u64().unwrap().to_string();
        let mut args: Vec<&std::ffi::OsStr> = vec![
            input.as_os_str(),
            "--keyring".as_ref(),
            keyring.as_os_str(),
            "--now".as_ref(),
            now.as_ref(),
        ];
        for scope in case["required_scopes"].as_array().unwrap() {
            args.push("--require".as_ref());
            args.push(scope.as_str().unwrap().as_ref());
        }
        let (code, stdout) = verify_json(&args);
        writeln!(statuses, "{name} {code}").unwrap();
        let file = expected().join(format!("{name}.json"));
        if updating() {
            std::fs::write(&file, &stdout).unwrap();
        } else {
            let want = std::fs::read(&file).unwrap();
            assert!(
                stdout == want,
                "{name}: herald verify --json differs from {}:\n{}",
                file.display(),
                String::from_utf8_lossy(&stdout)
            );
        }
        compared += 1;
    }
    let file = expected().join("status.txt");
    if updating() {
        std::fs::write(&file, &statuses).unwrap();
    } else {
        assert_eq!(statuses, std::fs::read_to_string(&file).unwrap());
    }
    // 67 verify and 13 bundle cases today: none skipped silently.
    assert!(compared >= 80, "{compared} cases");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verify_json_is_byte_stable_on_the_bench_trace() {
    // The trace benches/src/bin/process.rs runs `herald verify` on.
    let dir = scratch("bench");
    let input = ProcessTrace::write(&dir).unwrap();
    let now = input.now.to_string();
    let (code, stdout) = verify_json(&[
        input.trace.as_os_str(),
        "--keyring".as_ref(),
        input.keyring.as_os_str(),
        "--now".as_ref(),
        now.as_ref(),
    ]);
    assert_eq!(code, 0);
    // The report is megabytes: its length and SHA-256 are committed.
    let got = format!(
        "{} {}\n",
        stdout.len(),
        data_encoding::HEXLOWER.encode(&Sha256::digest(&stdout))
    );
    let file = expected().join("bench-trace.sha256");
    if updating() {
        std::fs::write(&file, &got).unwrap();
    } else {
        assert_eq!(got, std::fs::read_to_string(&file).unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
