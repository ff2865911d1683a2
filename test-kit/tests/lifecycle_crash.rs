//! P8 in live mode: the lifecycle state "survives restart and SIGKILL like
//! [the replay cache]". A child process (`herald-lifecycle-writer`) has a
//! `Receiver` witness births and then a deprecation (even identities) or a
//! molt (odd ones), and acknowledges each fact on stdout after `receive`
//! accepted it; the test kills it with SIGKILL at random moments, reopens
//! the store after every kill, and checks that every acknowledged fact is
//! still in force: later envelopes from a deprecated identity are
//! `deprecated_signer`, the old key of a molted one is `rotated_key`.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Instant;

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, ReasonCode, SigilForm, SigningKey, Status};
use herald_verify::{Keyring, Receiver, Store};

use herald_testkit::crash::{self, Rng};

/// The owner the writer process names its store with (src/bin).
const OWNER: &str = "crash-test";

use herald_testkit::T0;
const NOW: u64 = T0 + 3 * 86_400;
const NOT_BEFORE: u64 = T0 + 86_400;
const KILLS: usize = 22;

/// The seed of identity `index`'s key, as the writer derives it.
fn key(index: u64) -> SigningKey {
    let mut s = [0x1d; 32];
    s[..8].copy_from_slice(&index.to_le_bytes());
    SigningKey::from_seed(&s)
}

/// Account for one line from a writer started at `start`; `next` is the
/// next index expected. Returns whether it was an acknowledgement.
fn account(line: &str, start: u64, next: &mut u64) -> bool {
    let line = line
        .strip_suffix('\n')
        .expect("only whole lines are counted");
    let (word, index) = line.split_once(' ').expect("`<word> <index>`");
    let index: u64 = index.parse().unwrap();
    assert_eq!(index, *next, "acknowledgements out of order");
    *next += 1;
    match word {
        // Only the fact in flight at the previous kill may be stored
        // without having been acknowledged.
        "replayed" => {
            assert_eq!(
                index, start,
                "an unacknowledged fact other than the last one"
            );
            false
        }
        "deprecated" => {
            assert!(index.is_multiple_of(2));
            true
        }
        "molted" => {
            assert!(!index.is_multiple_of(2));
            true
        }
        other => panic!("unexpected line {other:?}"),
    }
}

/// Identity `index`'s fact is in force on the receiver: by what it
/// witnessed and by the verdict on a fresh envelope.
fn in_force(rx: &Receiver, index: u64, check_receive: bool) {
    let k = key(index);
    let w = rx
        .lifecycle(&k.sigil(SigilForm::Default))
        .unwrap()
        .unwrap_or_else(|| panic!("identity {index} forgotten"));
    assert!(w.birth.is_some(), "birth of {index} forgotten");
    if index.is_multiple_of(2) {
        assert_eq!(w.deprecated, Some(T0 + 10), "deprecation of {index} lost");
    } else {
        assert!(
            w.molts.len() == 1 && w.molts[0].accepted(),
            "molt of {index} lost: {w:?}"
        );
    }
    if check_receive {
        // The old key speaking after the fact: refused for it.
        let late = EnvelopeBuilder::genesis(NOT_BEFORE + 5)
            .nonce(Nonce([0xee; 16]))
            .payload(Value::text("after"))
            .sign(&k)
            .unwrap();
        let r = rx.receive(late.as_bytes()).unwrap();
        assert_eq!(r.status(), Status::Invalid);
        let expected = if index.is_multiple_of(2) {
            ReasonCode::DeprecatedSigner
        } else {
            ReasonCode::RotatedKey
        };
        assert!(r.has(expected), "identity {index}: {:?}", r.reasons);
    }
}

fn open(path: &Path) -> Receiver {
    Receiver::new(Store::open_or_create(path, OWNER).unwrap(), Keyring::new()).with_clock(|| NOW)
}

#[test]
fn acknowledged_lifecycle_facts_survive_sigkill() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.redb");
    let (mut rng, seed) = Rng::new();
    std::eprintln!("lifecycle_crash seed {seed} (set HERALD_CRASH_SEED to repeat)");

    // Identities 0..next have their fact stored; every acknowledged one is among them.
    let mut next = 0u64;
    let mut acks = 0u64;
    let mut recovered = 0u64;
    let mut kills = 0usize;
    for _ in 0..KILLS {
        let start = next;
        let target = rng.range(1, 12);
        let mut round = 0u64;
        let start_arg = start.to_string();
        // A random moment: the writer is somewhere in its next receives.
        crash::run_and_kill(
            env!("CARGO_BIN_EXE_herald-lifecycle-writer"),
            &[path.as_os_str(), start_arg.as_ref()],
            &mut rng,
            target,
            20_000,
            |line| {
                let acknowledged = account(line, start, &mut next);
                if acknowledged {
                    round += 1;
                } else {
                    recovered += 1;
                }
                acknowledged
            },
        );
        kills += 1;
        acks += round;

        // The store opens cleanly after every kill; this round's facts are
        // in force, verdicts included.
        let rx = open(&path);
        for index in start..next {
            in_force(&rx, index, true);
        }
        // The identity in flight, if any, is witnessed whole or not at all
        // as far as its fact goes: never a half-written record.
        if let Some(w) = rx.lifecycle(&key(next).sigil(SigilForm::Default)).unwrap() {
            assert!(w.birth.is_some());
        }
        drop(rx);
    }

    // Every acknowledged fact, from every writer, is still in force.
    let rx = open(&path);
    for index in 0..next {
        in_force(&rx, index, false);
    }
    assert_eq!(acks + recovered, next);
    std::eprintln!(
        "lifecycle_crash: {kills} SIGKILLs, {acks} acknowledged facts re-checked \
         ({recovered} stored-but-unacknowledged facts found by the next writer), {:?}",
        started.elapsed()
    );
    assert!(kills >= 20);
}
