//! Target 7 of docs/performance.md: `herald verify` on a 100 000-envelope
//! trace file peaks below 3× the file's size in resident memory.
//!
//! The file holds the typical envelope of the spec's §3.1 example (`to`,
//! `expires`, five attestations, a 300-byte text payload: 0.9 KB each) in 100
//! traces of 1 000 replies by 16 signers. The real binary verifies it, in the
//! human form and with `--json`; its peak resident set size is read by
//! `/usr/bin/time -f %M` (the kernel's `ru_maxrss` of the child), or, where
//! that tool is missing, by polling `VmHWM` in `/proc/<pid>/status` while it
//! runs. The figures are printed (run with `--nocapture` to see them).

// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigilForm, SigningKey};
use herald_verify::keyring::key_line;

const TS: u64 = 1_746_432_000;
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

/// Run `herald args…` in `dir`; its exit code, the bytes it wrote to
/// standard output, and its peak resident set size in bytes.
fn peak_rss(dir: &Path, args: &[&str]) -> (i32, usize, u64) {
    let herald = env!("CARGO_BIN_EXE_herald");
    let time = Path::new("/usr/bin/time");
    let report = dir.join("time.out");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&report).arg(herald);
        c
    } else {
        Command::new(herald)
    };
    let mut child = cmd
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut n = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k,
            }
        }
    });
    // Without /usr/bin/time: VmHWM (the kernel's high-water mark of the
    // resident set) only grows, so its last value before exit is the peak.
    let status_path = format!("/proc/{}/status", child.id());
    let mut hwm_kib = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kib) = vm_hwm_kib(&text)
        {
            hwm_kib = hwm_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let written = drain.join().unwrap();
    let kib = if time.exists() {
        // GNU time writes the figure on the last line (after a note when
        // the command exits non-zero).
        let text = std::fs::read_to_string(&report).unwrap();
        text.lines()
            .rfind(|l| !l.trim().is_empty())
            .and_then(|l| l.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no figure from /usr/bin/time: {text:?}"))
    } else {
        hwm_kib
    };
    assert!(kib > 0, "no peak RSS measured");
    (status.code().unwrap(), written, kib * 1024)
}

fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
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
        let (code, written, peak) = peak_rss(dir.path(), &args);
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
