//! PROFILE.md P9 audit log, crash safety: "Idempotency and recovery must
//! not lose an acknowledged leaf." A child process (`herald-log-writer`)
//! appends leaves in batches and prints each index only after
//! `Log::append_leaves` returned; the test kills it with SIGKILL at random
//! moments, reopens the log after every kill (which must open cleanly,
//! recovering at most unacknowledged data), and checks that every
//! acknowledged leaf is present, at the index acknowledged, with its bytes.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::time::Instant;

use herald_core::{SigilForm, SigningKey};
use herald_verify::{Leaf, Log};
use sha2::{Digest, Sha256};

use herald_testkit::crash::{self, Rng};

const KILLS: usize = 24;

/// Leaf `i`, as `src/bin/herald-log-writer.rs` makes it.
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

/// Account for one whole line of a writer: `next` is the next index
/// expected, `logged` the log's length when the writer started (leaves
/// below it are reported `existing`, every later one new).
fn account(line: &str, logged: u64, next: &mut u64, acks: &mut u64, existing: &mut u64) {
    let line = line.strip_suffix('\n').expect("whole lines only");
    let (index, was_there) = match line.strip_prefix("existing ") {
        Some(i) => (i.parse::<u64>().unwrap(), true),
        None => (line.parse::<u64>().unwrap(), false),
    };
    assert_eq!(index, *next, "acknowledgements out of order");
    assert_eq!(
        was_there,
        index < logged,
        "leaf {index}: `existing` exactly for leaves written before this writer"
    );
    if was_there {
        *existing += 1;
    } else {
        *acks += 1;
    }
    *next += 1;
}

#[test]
fn acknowledged_leaves_survive_sigkill() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join("log");
    let log_key = SigningKey::from_seed(&[0x33; 32]);
    drop(Log::create(&log_dir, &log_key.public_key(), None).unwrap());
    let (mut rng, seed) = Rng::new();
    eprintln!("auditlog_crash seed {seed} (set HERALD_CRASH_SEED to repeat)");

    // Leaves 0..next have been acknowledged (or found existing) in order.
    let mut next = 0u64;
    let mut acks = 0u64;
    let mut existing = 0u64;
    let mut adopted = 0u64;
    let mut recoveries = 0u64;
    let mut kills = 0usize;
    for _ in 0..KILLS {
        // What is in the log now (a reopen after the kill established it).
        let logged = Log::open(&log_dir).unwrap().len();
        let start = next;
        let target = rng.range(1, 150);
        let start_arg = start.to_string();
        // A random moment: the writer is somewhere in its next appends
        // (writing, syncing, moving the header, printing).
        crash::run_and_kill(
            env!("CARGO_BIN_EXE_herald-log-writer"),
            &[log_dir.as_os_str(), start_arg.as_ref()],
            &mut rng,
            target,
            8_000,
            |line| {
                account(line, logged, &mut next, &mut acks, &mut existing);
                true
            },
        );
        kills += 1;

        // The log opens cleanly after every kill; it holds every leaf
        // acknowledged, at its index, and at most one unacknowledged batch
        // (≤ 3 leaves) besides.
        let log = Log::open(&log_dir).unwrap_or_else(|e| panic!("reopen after kill {kills}: {e}"));
        if let Some(r) = log.recovery() {
            recoveries += 1;
            adopted += r.adopted;
            eprintln!("kill {kills}: {r}");
        }
        let len = log.len();
        assert!(
            (next..=next + 3).contains(&len),
            "{len} leaves after {next} acknowledged"
        );
        for index in start..next {
            assert_eq!(
                log.index_of(leaf(index).id()),
                Some(index),
                "leaf {index} lost or moved at kill {kills}"
            );
            assert_eq!(log.leaf(index).unwrap(), leaf(index));
        }
    }

    // Every acknowledged leaf, from every writer, is still there.
    let log = Log::open(&log_dir).unwrap();
    assert!(log.recovery().is_none(), "{:?}", log.recovery());
    let mut tree = herald_merkle::Tree::new();
    for index in 0..log.len() {
        let l = leaf(index);
        assert_eq!(log.index_of(l.id()), Some(index), "leaf {index} lost");
        assert_eq!(log.leaf(index).unwrap(), l);
        tree.push(l.hash());
    }
    assert_eq!(log.tree().root(), tree.root());
    assert_eq!(acks + existing, next);
    eprintln!(
        "auditlog_crash: {kills} SIGKILLs, {next} acknowledged leaves re-checked ({acks} \
         acknowledged new, {existing} found by the next writer as written-but-unacknowledged; \
         {recoveries} reopenings recovered, adopting {adopted} leaves), log of {} leaves, {:?}",
        log.len(),
        started.elapsed()
    );
    assert!(kills >= 20);
}
