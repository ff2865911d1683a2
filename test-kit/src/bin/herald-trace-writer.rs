//! Test helper for the inspector's browser test (docs/inspector.md
//! *Tests*), not a user tool: writes a trace of N envelopes as a CBOR
//! sequence, and the keyring of its two signers, labelled `left` and
//! `right`.
//!
//! Usage: `herald-trace-writer <out dir> <count> <ts>`: `trace.cbor` and
//! `keyring` in `out dir`. Envelope 0 is the genesis; envelope i > 0
//! replies to envelope (i - 1) / 2, so the trace fans out (a binary tree)
//! with every envelope's `ts` = `ts` + i, alternating signers.

use std::process::ExitCode;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigilForm, SigningKey};
use herald_verify::labelled_key_line;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("herald-trace-writer: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, count, ts] = args.as_slice() else {
        return Err("usage: herald-trace-writer <out dir> <count> <ts>".into());
    };
    let count: usize = count.parse().map_err(|e| format!("count: {e}"))?;
    let ts: u64 = ts.parse().map_err(|e| format!("ts: {e}"))?;
    let dir = std::path::Path::new(dir);
    let keys = [
        SigningKey::from_seed(&[7; 32]),
        SigningKey::from_seed(&[8; 32]),
    ];
    let mut keyring = String::new();
    for (key, label) in keys.iter().zip(["left", "right"]) {
        keyring.push_str(&labelled_key_line(&key.public_key(), label));
        keyring.push('\n');
    }
    let mut envelopes = Vec::with_capacity(count);
    let mut bytes = Vec::new();
    for i in 0..count {
        let key = &keys[i % 2];
        let at = ts + i as u64;
        let builder = match i {
            0 => EnvelopeBuilder::genesis(at),
            _ => {
                let (id, trace) = envelopes[(i - 1) / 2];
                EnvelopeBuilder::reply_to(id, trace, at)
            }
        };
        let other = keys[(i + 1) % 2].sigil(SigilForm::Default);
        let envelope = builder
            .to(other)
            .nonce(Nonce(u128::try_from(i).unwrap_or(u128::MAX).to_be_bytes()))
            .payload(Value::Unsigned(i as u64))
            .sign(key)
            .map_err(|e| format!("envelope {i}: {e}"))?;
        bytes.extend_from_slice(envelope.as_bytes());
        let view = envelope.view();
        envelopes.push((*view.id(), *view.trace()));
    }
    std::fs::write(dir.join("trace.cbor"), &bytes).map_err(|e| format!("trace.cbor: {e}"))?;
    std::fs::write(dir.join("keyring"), keyring).map_err(|e| format!("keyring: {e}"))?;
    Ok(())
}
