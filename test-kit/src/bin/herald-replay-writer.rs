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

use std::process::ExitCode;

use herald_testkit::crash;
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
    crash::writer("herald-replay-writer", "store path", |path| {
        let store = Store::open_or_create(path, "crash-test").map_err(|e| e.to_string())?;
        Ok(move |index: u64| {
            let line = match store.claim(&SIGNER, &nonce(index), u64::MAX, NOW) {
                Ok(Claim::Fresh) => format!("{index}\n"),
                Ok(Claim::Replayed) => format!("replayed {index}\n"),
                Err(e) => return Err(e.to_string()),
            };
            Ok((line, index + 1))
        })
    })
}
