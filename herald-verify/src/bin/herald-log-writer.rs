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

use std::io::Write;
use std::process::ExitCode;

use herald_core::{SigilForm, SigningKey};
use herald_verify::auditlog::{Leaf, Log};
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
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(start), None) = (args.next(), args.next(), args.next()) else {
        std::eprintln!("usage: herald-log-writer <log dir> <start index>");
        return ExitCode::from(2);
    };
    let Ok(start) = start.parse::<u64>() else {
        std::eprintln!("herald-log-writer: {start}: not an index");
        return ExitCode::from(2);
    };
    let mut log = match Log::open(std::path::Path::new(&dir)) {
        Ok(log) => log,
        Err(e) => {
            std::eprintln!("herald-log-writer: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let mut i = start;
    loop {
        let batch: Vec<Leaf> = (i..i + 1 + i % 3).map(leaf).collect();
        let appended = match log.append_leaves(&batch) {
            Ok(a) => a,
            Err(e) => {
                std::eprintln!("herald-log-writer: {e}");
                return ExitCode::from(1);
            }
        };
        let mut lines = String::new();
        for a in &appended {
            if a.new {
                lines.push_str(&format!("{}\n", a.index));
            } else {
                lines.push_str(&format!("existing {}\n", a.index));
            }
        }
        // One write per batch, then flush: the parent counts whole lines.
        if out
            .write_all(lines.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::from(1);
        }
        i += batch.len() as u64;
    }
}
