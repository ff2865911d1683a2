//! The human report of `herald verify` (CLI.md *verify*: one line per
//! envelope, the summary, the trace tree; `-v` adds each reason's detail
//! and the codes explained) is byte-identical to the one committed in
//! `tests/fixtures/verify-human/`, on sets large enough to be rendered on
//! every core (more than one chunk of lines, the tree drawn beside them):
//! the whole-process benchmark's trace (`benches/src/bin/process.rs`,
//! 10 000 envelopes, three signers) with its keyring, and with a keyring
//! missing one signer (every third envelope `unknown_signer`, partial),
//! plus a second input ending in a truncated item.
//!
//! The committed lengths and SHA-256s were written by this test in its
//! writing mode, `HERALD_UPDATE_VERIFY_HUMAN=/path/to/herald`, from the
//! binary of main before the report was rendered in parallel
//! (`tests/fixtures/verify-human/README.md`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use herald_benches::ProcessTrace;
use sha2::{Digest, Sha256};

fn expected() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify-human/bench-trace.sha256")
}

/// The binary whose outputs this run writes as the expected ones, if any.
fn updating_from() -> Option<PathBuf> {
    std::env::var_os("HERALD_UPDATE_VERIFY_HUMAN").map(PathBuf::from)
}

/// `herald verify ARGS` in `dir`, colour off: its exit status and the
/// length and SHA-256 of its standard output.
fn verify(dir: &Path, args: &[&str]) -> String {
    let herald = updating_from().unwrap_or_else(|| env!("CARGO_BIN_EXE_herald").into());
    let out = Command::new(herald)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .arg("verify")
        .args(args.iter().map(OsString::from))
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    format!(
        "{} {} {} {}\n",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        out.stdout.len(),
        data_encoding::HEXLOWER.encode(&Sha256::digest(&out.stdout))
    )
}

#[test]
fn the_human_report_is_byte_stable_on_large_sets() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let input = ProcessTrace::write(dir).unwrap();
    let now = input.now.to_string();
    // The keyring without its last signer, the others labelled.
    let keyring = std::fs::read_to_string(&input.keyring).unwrap();
    let lines: Vec<&str> = keyring.lines().filter(|l| l.contains("sigil:")).collect();
    assert_eq!(lines.len(), 3, "{keyring}");
    let two = format!("{} alice\n{} bob-the-second-signer\n", lines[0], lines[1]);
    std::fs::write(dir.join("two.pub"), two).unwrap();
    // A second input: the trace's first envelopes, then a truncated one.
    let trace = std::fs::read(&input.trace).unwrap();
    let mut tail = trace[..5_000].to_vec();
    tail.extend_from_slice(&[0xa9, 0x62, b'i']);
    std::fs::write(dir.join("tail.cbor"), &tail).unwrap();
    let cases: [&[&str]; 4] = [
        &["trace.cbor", "--keyring", "keyring", "--now", &now],
        &["trace.cbor", "--keyring", "keyring", "--now", &now, "-v"],
        &[
            "trace.cbor",
            "tail.cbor",
            "--keyring",
            "two.pub",
            "--now",
            &now,
        ],
        &[
            "trace.cbor",
            "tail.cbor",
            "--keyring",
            "two.pub",
            "--now",
            &now,
            "-v",
            "--no-tree",
        ],
    ];
    let got: String = cases.iter().map(|args| verify(dir, args)).collect();
    if updating_from().is_some() {
        std::fs::write(expected(), &got).unwrap();
    } else {
        assert_eq!(got, std::fs::read_to_string(expected()).unwrap());
    }
}
