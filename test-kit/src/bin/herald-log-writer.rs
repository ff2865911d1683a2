//! Test helper for the audit-log crash test (`tests/auditlog_crash.rs`), not
//! a user tool: appends the leaves `start, start + 1, …` to the log in
//! `dir`, forever, in batches of one to three, and prints each leaf's index
//! on its own line (flushed) only after `Log::append_leaves` returned — an
//! acknowledgement the log must keep even if this process is killed the
//! next instant (PROFILE.md P9).
//!
//! Usage: `herald-log-writer <log dir> <start index>`.
//!
//! A leaf found already logged is printed as `existing <index>`: expected
//! only for the leaves the previous writer wrote but was killed before
//! acknowledging.

use std::process::ExitCode;

use herald_core::{SigilForm, SigningKey};
use herald_testkit::crash;
use herald_verify::{Leaf, Log};
use sha2::{Digest, Sha256};

/// Leaf `i` of the crash test (the test computes the same ones).
fn leaf(i: u64) -> Leaf {
    let hash = |label: &[u8]| -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(label);
        h.update(i.to_be_bytes());
        h.finalize().into()
    };
    let parent = (!i.is_multiple_of(5)).then(|| hash(b"parent"));
    let consented = i.is_multiple_of(4).then(|| {
        let from = SigningKey::from_seed(&[0x11; 32]).sigil(SigilForm::Default);
        let to = SigningKey::from_seed(&[0x22; 32]).sigil(SigilForm::Long);
        (from, i.is_multiple_of(8).then_some(to))
    });
    Leaf::from_parts(
        hash(b"id"),
        parent,
        hash(b"trace"),
        1_746_432_000 + 7 * i,
        consented,
    )
}

fn main() -> ExitCode {
    crash::writer("herald-log-writer", "log dir", |dir| {
        let mut log = Log::open(std::path::Path::new(dir)).map_err(|e| e.to_string())?;
        Ok(move |i: u64| {
            let batch: Vec<Leaf> = (i..i + 1 + i % 3).map(leaf).collect();
            let appended = log.append_leaves(&batch).map_err(|e| e.to_string())?;
            let mut lines = String::new();
            for a in &appended {
                if a.new {
                    lines.push_str(&format!("{}\n", a.index));
                } else {
                    lines.push_str(&format!("existing {}\n", a.index));
                }
            }
            Ok((lines, i + batch.len() as u64))
        })
    })
}
