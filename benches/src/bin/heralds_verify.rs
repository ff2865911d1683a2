//! `herald verify --heralds` against the same verify without Heralds
//! (PROFILE P14; docs/heralds.md *Verifying with Heralds*): the
//! whole-process bench trace (`process`: 10 000 envelopes, one trace,
//! three signers), once with the signers pinned in a keyring, once with
//! no keyring and the signers' keys from two Heralds instead, each
//! Herald's `key` certification of each signer given as an input with its
//! C2SP tlog-proof in a checkpoint a witness cosigned (three senders, two
//! certifications and proofs each), at threshold 2. Certifications are
//! checked per sender, not per envelope: goal at most 1.1× the run
//! without Heralds. Both are separate `herald` processes, measured
//! alternately in one run; the medians of the rounds give the ratio.
//!
//! Usage: `cargo build --release -p herald-cli && cargo run --release -p
//! herald-benches --bin heralds_verify [ROUNDS]` (default 9). The `herald`
//! binary is taken from `$HERALD_BIN`, else from beside this one.

// A benchmark driver: a failure is a broken benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use herald_benches::{PROCESS_N as N, ProcessTrace};
use herald_core::SigilForm;
use herald_core::payload::Claim;
use herald_testkit::heralds::{TestHerald, Witness, list, policy};
use herald_verify::CertificationItem;

/// Goal: `verify --heralds` within this factor of verify with a keyring.
const GOAL: f64 = 1.1;

fn herald_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("HERALD_BIN") {
        return p.into();
    }
    std::env::current_exe().unwrap().with_file_name("herald")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Run `herald ARGS` in `dir`; it must exit 0 (every envelope valid).
fn timed(herald: &Path, dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let status = Command::new(herald)
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let took = start.elapsed();
    assert!(status.success(), "herald {args:?}: {status}");
    took
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(9, |a| a.parse().expect("ROUNDS is a number"));
    let herald = herald_bin();
    assert!(
        herald.exists(),
        "{} not found: cargo build --release -p herald-cli",
        herald.display()
    );
    let dir = std::env::temp_dir().join(format!("herald-heralds-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = ProcessTrace::write(&dir).unwrap();

    // Two Heralds certify each signer's key; one witness cosigns.
    let w = Witness::new("w1", 31);
    let mut hs = [TestHerald::new(11), TestHerald::new(12)];
    let mut items: Vec<CertificationItem> = Vec::new();
    for h in &mut hs {
        let certs: Vec<_> = input
            .set
            .keys
            .iter()
            .map(|k| {
                let pk = k.public_key();
                h.certify(
                    pk.sigil(SigilForm::Default),
                    &Claim::Key(pk.as_bytes()),
                    herald_testkit::T0,
                    None,
                )
            })
            .collect();
        items.extend(certs.iter().map(|c| h.item(c, &[&w])));
    }
    assert_eq!(items.len(), 6);
    std::fs::write(
        dir.join("certifications.cbor"),
        CertificationItem::encode_sequence(&items),
    )
    .unwrap();
    let [a, b] = &hs;
    std::fs::write(dir.join("heralds.txt"), list(&[a, b], 2)).unwrap();
    std::fs::write(dir.join("policy.txt"), policy(&[a, b], &[&w], "", "w1")).unwrap();

    let now = input.now.to_string();
    let keyring = [
        "verify",
        "trace.cbor",
        "--keyring",
        "keyring",
        "--now",
        &now,
    ];
    let heralds = [
        "verify",
        "trace.cbor",
        "certifications.cbor",
        "--heralds",
        "heralds.txt",
        "--log-policy",
        "policy.txt",
        "--now",
        &now,
    ];
    // One of each to warm caches, not counted.
    timed(&herald, &dir, &keyring);
    timed(&herald, &dir, &heralds);
    let (mut plain, mut with) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        plain.push(timed(&herald, &dir, &keyring));
        with.push(timed(&herald, &dir, &heralds));
    }
    let (p, h) = (median(plain.clone()), median(with.clone()));
    let ratio = h.as_secs_f64() / p.as_secs_f64();
    println!(
        "rounds: {rounds}, {N} envelopes, one trace, 3 signers; 2 Heralds x 3 key certifications with proofs, threshold 2"
    );
    println!("verify --keyring:             median {p:.1?}  all {plain:.1?}");
    println!("verify --heralds (no keyring): median {h:.1?}  all {with:.1?}");
    println!(
        "ratio {ratio:.3} (goal <= {GOAL}): {}",
        if ratio <= GOAL { "met" } else { "MISSED" }
    );
    std::fs::remove_dir_all(&dir).ok();
}
