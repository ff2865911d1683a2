//! P10: "The cache is persistent and survives a crash without losing entries
//! it acknowledged." A child process (`herald-replay-writer`) claims nonces
//! and acknowledges each on stdout after `claim` returned `Fresh`; the test
//! kills it with SIGKILL at random moments, reopens the store after every
//! kill, and finally checks that every acknowledged claim is still there.
//! Also: a damaged file is a clear error, never a panic or a silent reset.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Instant;

use herald_verify::{Claim, Store, StoreError};

use herald_testkit::crash::{self, Rng};

/// The owner the writer process names its store with (src/bin).
const OWNER: &str = "crash-test";

/// The writer's signer and clock (src/bin/herald-replay-writer.rs).
const SIGNER: [u8; 32] = [0x5a; 32];
const NOW: u64 = 1_000_000;
const KILLS: usize = 24;

fn nonce(index: u64) -> [u8; 16] {
    u128::from(index).to_be_bytes()
}

/// What one writer process reported.
#[derive(Default)]
struct Round {
    /// Claims acknowledged `Fresh`.
    acks: u64,
    /// The start index was already stored (committed, not acknowledged, by
    /// the writer killed before this one).
    recovered: bool,
}

/// Account for one line from a writer started at `start`; `next` is the
/// next index expected.
fn account(line: &str, start: u64, next: &mut u64, round: &mut Round) {
    let line = line
        .strip_suffix('\n')
        .expect("only whole lines are counted");
    if let Some(index) = line.strip_prefix("replayed ") {
        let index: u64 = index.parse().unwrap();
        // Only the one claim in flight at the previous kill may be stored
        // without having been acknowledged.
        assert_eq!(
            index, start,
            "an unacknowledged claim other than the last one"
        );
        assert_eq!(*next, start);
        round.recovered = true;
    } else {
        let index: u64 = line.parse().unwrap();
        assert_eq!(index, *next, "acknowledgements out of order");
        round.acks += 1;
    }
    *next += 1;
}

#[test]
fn acknowledged_claims_survive_sigkill() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.redb");
    let (mut rng, seed) = Rng::new();
    std::eprintln!("replay_crash seed {seed} (set HERALD_CRASH_SEED to repeat)");

    // Indices 0..next are stored; every acknowledged one is among them.
    let mut next = 0u64;
    let mut acks = 0u64;
    let mut recovered = 0u64;
    let mut kills = 0usize;
    for _ in 0..KILLS {
        let start = next;
        let target = rng.range(1, 200);
        let mut round = Round::default();
        let start_arg = start.to_string();
        crash::run_and_kill(
            env!("CARGO_BIN_EXE_herald-replay-writer"),
            &[path.as_os_str(), start_arg.as_ref()],
            &mut rng,
            target,
            2_000,
            |line| {
                let before = round.acks;
                account(line, start, &mut next, &mut round);
                round.acks > before
            },
        );
        kills += 1;
        acks += round.acks;
        recovered += u64::from(round.recovered);

        // The store opens cleanly after every kill, holds every claim
        // acknowledged, and at most the one that was in flight besides.
        let store = Store::open_or_create(&path, OWNER)
            .unwrap_or_else(|e| panic!("reopen after kill {kills}: {e}"));
        let len = store.len().unwrap();
        assert!(
            len == next || len == next + 1,
            "{len} entries after {next} claims"
        );
        for index in start..next {
            assert_eq!(
                store.claim(&SIGNER, &nonce(index), u64::MAX, NOW).unwrap(),
                Claim::Replayed,
                "claim {index} lost at kill {kills}"
            );
        }
        drop(store);
    }

    // Every acknowledged nonce, from every writer, is still a replay.
    let store = Store::open_or_create(&path, OWNER).unwrap();
    for index in 0..next {
        assert_eq!(
            store.claim(&SIGNER, &nonce(index), u64::MAX, NOW).unwrap(),
            Claim::Replayed,
            "claim {index} lost"
        );
    }
    assert_eq!(acks + recovered, next);
    std::eprintln!(
        "replay_crash: {kills} SIGKILLs, {acks} acknowledged claims re-checked \
         ({recovered} stored-but-unacknowledged claims found by the next writer), {:?}",
        started.elapsed()
    );
    assert!(kills >= 20);
}

fn assert_corrupted(path: &Path) {
    match Store::open(path, OWNER) {
        Err(e @ StoreError::Corrupted { .. }) => {
            let text = e.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
        Err(e) => panic!("expected Corrupted, got {e:?}"),
        Ok(_) => panic!("a damaged store opened"),
    }
}

fn populated(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("replay.redb");
    let store = Store::open_or_create(&path, OWNER).unwrap();
    for i in 0..300u64 {
        assert_eq!(
            store.claim(&SIGNER, &nonce(i), u64::MAX, NOW).unwrap(),
            Claim::Fresh
        );
    }
    path
}

#[test]
fn garbage_file_is_corrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.redb");
    std::fs::write(&path, [0xa5u8; 64 * 1024]).unwrap();
    assert_corrupted(&path);
    std::fs::write(&path, b"keyring, not a replay store\n").unwrap();
    assert_corrupted(&path);
}

#[test]
fn damaged_pages_are_corrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    // Past the header and its commit slots: the pages of the tree.
    let len = bytes.len();
    for b in &mut bytes[len / 4..len / 2] {
        *b ^= 0xff;
    }
    std::fs::write(&path, &bytes).unwrap();
    assert_corrupted(&path);
}

#[test]
fn truncated_file_is_corrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    assert_corrupted(&path);
}

#[test]
fn second_handle_is_locked_and_a_directory_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.redb");
    let _first = Store::open_or_create(&path, OWNER).unwrap();
    assert!(matches!(
        Store::open_or_create(&path, OWNER),
        Err(StoreError::Locked { .. })
    ));
    let e = Store::open(dir.path(), OWNER).unwrap_err();
    assert!(matches!(e, StoreError::File(_)), "{e:?}");
    assert!(e.to_string().contains("a directory"), "{e}");
    assert!(e.to_string().contains(&dir.path().display().to_string()));
}
