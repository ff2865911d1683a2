//! Test helper for the P10 crash test (`tests/replay_crash.rs`), not a user
//! tool: claims nonces `start, start + 1, …` in the replay store at `path`,
//! forever, and prints each index on its own line (flushed) only after
//! `Store::claim` answered `Fresh` — an acknowledgement the store must keep
//! even if this process is killed the next instant (PROFILE.md P10).
//!
//! Usage: `herald-replay-writer <store path> <start index>`.
//!
//! A claim answered `Replayed` is printed as `replayed <index>`: expected
//! only for `start`, when the previous writer was killed after its commit
//! and before its acknowledgement.

use std::io::Write;
use std::process::ExitCode;

use herald_verify::{Claim, Store};

/// The signer of every claim.
const SIGNER: [u8; 32] = [0x5a; 32];
/// The `now` of every claim.
const NOW: u64 = 1_000_000;

/// The nonce of claim `index`: the index, big-endian.
fn nonce(index: u64) -> [u8; 16] {
    u128::from(index).to_be_bytes()
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(start), None) = (args.next(), args.next(), args.next()) else {
        std::eprintln!("usage: herald-replay-writer <store path> <start index>");
        return ExitCode::from(2);
    };
    let Ok(start) = start.parse::<u64>() else {
        std::eprintln!("herald-replay-writer: {start}: not an index");
        return ExitCode::from(2);
    };
    let store = match Store::open_or_create(&path, "crash-test") {
        Ok(store) => store,
        Err(e) => {
            std::eprintln!("herald-replay-writer: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    for index in start.. {
        let line = match store.claim(&SIGNER, &nonce(index), u64::MAX, NOW) {
            Ok(Claim::Fresh) => std::format!("{index}\n"),
            Ok(Claim::Replayed) => std::format!("replayed {index}\n"),
            Err(e) => {
                std::eprintln!("herald-replay-writer: {e}");
                return ExitCode::from(1);
            }
        };
        // One write per line, then flush: the parent sees whole lines only.
        if out
            .write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
