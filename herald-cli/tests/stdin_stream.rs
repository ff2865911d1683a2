//! Hostile input, issue "Fuzzing and hostile input": `herald verify -` fed
//! a 1 GiB stream on standard input, in four shapes, each refused quickly
//! with a clear error and a peak resident memory far below the gigabyte,
//! measured (`support::rss`). Run with `--nocapture` to see the figures.
//!
//! The stream is written lazily by a thread; when `herald` stops reading,
//! the writer sees a broken pipe and stops: how much it sent is recorded.

// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Write;
use std::process::ChildStdin;
use std::time::Instant;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, SigningKey};
use support::rss::{Measured, peak_rss};

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// A writer of `head` then `pattern` repeated, 1 GiB in all; returns the
/// bytes the pipe took.
fn stream(head: Vec<u8>, pattern: Vec<u8>) -> Box<dyn FnOnce(ChildStdin) -> u64 + Send> {
    Box::new(move |mut stdin| {
        let mut chunk = head;
        while chunk.len() < (1 << 20) {
            chunk.extend_from_slice(&pattern);
        }
        let mut sent = 0u64;
        while sent < GIB {
            let n = chunk.len().min((GIB - sent) as usize);
            if stdin.write_all(&chunk[..n]).is_err() {
                break; // herald stopped reading: the point of the test
            }
            sent += n as u64;
            if sent == chunk.len() as u64 {
                // After the first chunk, the pattern only.
                chunk.clear();
                while chunk.len() < (1 << 20) {
                    chunk.extend_from_slice(&pattern);
                }
            }
        }
        sent
    })
}

fn verify_stdin(what: &str, head: Vec<u8>, pattern: Vec<u8>) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let m = peak_rss(
        dir.path(),
        &["verify", "-", "--now", "1746432000"],
        Some(stream(head, pattern)),
    );
    println!(
        "{what}: exit {}, {:.2} s, peak RSS {:.1} MB, {:.1} MB sent of 1 GiB, {} B written; stderr {:?}",
        m.code,
        start.elapsed().as_secs_f64(),
        m.peak as f64 / 1e6,
        m.fed as f64 / 1e6,
        m.written,
        m.stderr.lines().next().unwrap_or("")
    );
    m
}

fn envelope() -> Vec<u8> {
    EnvelopeBuilder::genesis(1_746_432_000)
        .payload(Value::text("x".repeat(300)))
        .sign(&SigningKey::from_seed(&[7; 32]))
        .unwrap()
        .as_bytes()
        .to_vec()
}

#[test]
fn a_head_claiming_more_than_the_envelope_limit_stops_the_read_at_once() {
    // A byte string head claiming 2^63 bytes, then zeros.
    let m = verify_stdin(
        "head claiming 2^63 bytes",
        vec![0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0],
        vec![0],
    );
    assert_eq!(m.code, 1, "{}", m.stderr);
    assert!(m.peak < 64 * MIB, "peak RSS {} B", m.peak);
    assert!(m.fed < 64 * MIB, "read {} B of the stream", m.fed);
}

#[test]
fn a_stream_that_is_not_cbor_stops_the_read_at_once() {
    let m = verify_stdin("0xff bytes", vec![], vec![0xff]);
    assert_eq!(m.code, 1, "{}", m.stderr);
    assert!(m.peak < 64 * MIB, "peak RSS {} B", m.peak);
    assert!(m.fed < 64 * MIB, "read {} B of the stream", m.fed);
}

#[test]
fn a_gigabyte_of_envelopes_is_refused_at_the_input_limit() {
    let m = verify_stdin("1 GiB of envelopes", vec![], envelope());
    assert_eq!(m.code, 2, "{}", m.stderr);
    assert!(
        m.stderr
            .contains("standard input: input larger than 268435456 bytes"),
        "{}",
        m.stderr
    );
    // The 256 MiB read, and nothing else of size.
    assert!(m.peak < 320 * MIB, "peak RSS {} B", m.peak);
    assert!(m.fed < GIB, "the whole stream was read");
}

#[test]
fn a_gigabyte_of_zeros_stops_after_the_audit_cap() {
    // Every 0x00 is a one-byte CBOR item: the audit reports each of the
    // first million as `malformed` and the rest as one entry over its cap;
    // reading stops there.
    let m = verify_stdin("1 GiB of zeros", vec![], vec![0]);
    assert_eq!(m.code, 1, "{}", m.stderr);
    assert!(m.peak < GIB / 2, "peak RSS {} B", m.peak);
    assert!(m.fed < 64 * MIB, "read {} B of the stream", m.fed);
}
