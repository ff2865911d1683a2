//! The C2SP commands end to end with the real binary: a log's checkpoint
//! and verifier key, its static tiles read back by `log fetch`, two
//! `herald witness serve` processes cosigning through `log witness`, a
//! 2-of-2 `--log-policy` on `log verify-proof`, and a forked log caught by
//! `log monitor` with evidence that `log verify-evidence` checks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::path::Path;

use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::NoteVerifier;
use support::{herald, keygen};

const ORIGIN: &str = "example.test/herald-log";

/// Envelopes `from..to` by testkit key `k`, appended to the log `log`.
fn append(d: &Path, log: &str, k: u8, from: u64, to: u64) -> Vec<String> {
    let key = herald_testkit::key(k);
    let mut files = Vec::new();
    for n in from..to {
        let name = format!("env-{k}-{n}.cbor");
        std::fs::write(d.join(&name), herald_testkit::genesis(&key, n).as_bytes()).unwrap();
        files.push(name);
    }
    let mut args = vec!["log", "append", log];
    args.extend(files.iter().map(String::as_str));
    let run = herald(d, &args);
    run.expect(0);
    run.out()
        .lines()
        .map(|l| l.split_once(' ').unwrap().1.to_owned())
        .collect()
}

fn witness(d: &Path, name: &str, vkey: &str) -> (support::witness::Serve, String) {
    support::witness::serve(d, name, ORIGIN, vkey)
}

#[test]
fn checkpoint_tiles_witnesses_policy_monitor() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    keygen(d, "log");
    herald(d, &["log", "init", "L", "--key", "log.key"]).expect(0);
    let ids = append(d, "L", 1, 0, 5);

    // Checkpoint and key.
    let vkey = herald(d, &["log", "key", "L", "--origin", ORIGIN])
        .out()
        .trim()
        .to_owned();
    let v = NoteVerifier::parse(&vkey).unwrap();
    assert_eq!(v.name(), ORIGIN);
    let run = herald(
        d,
        &["log", "checkpoint", "L", "--origin", ORIGIN, "-o", "cp5"],
    );
    run.expect(0);
    let cp5 = std::fs::read(d.join("cp5")).unwrap();
    let (cp, _) = SignedCheckpoint::open(&cp5, std::slice::from_ref(&v)).unwrap();
    assert_eq!(cp.checkpoint().size(), 5);
    herald(d, &["log", "checkpoint", "L", "--origin", "bad origin"]).expect(2);

    // Static tiles, read back from the tiles alone, consistent with cp5.
    let ids2 = append(d, "L", 1, 5, 300);
    let run = herald(d, &["log", "tiles", "L", "T", "--origin", ORIGIN]);
    run.expect(0);
    assert!(
        run.out().contains("of a tree of 300 leaves"),
        "{}",
        run.out()
    );
    let run = herald(
        d,
        &[
            "log",
            "fetch",
            "T",
            "--log-key",
            &vkey,
            "--index",
            "0",
            "--index",
            "299",
            "--since",
            "cp5",
        ],
    );
    run.expect(0);
    let out = run.out();
    assert!(
        out.contains("size 300")
            && out.contains("inclusion 299:")
            && out.contains("consistency 5 -> 300"),
        "{out}"
    );
    // A tampered tile is refused.
    let tile = d.join("T/tile/0/001.p/44");
    let mut bytes = std::fs::read(&tile).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&tile, bytes).unwrap();
    herald(d, &["log", "fetch", "T", "--log-key", &vkey]).expect(2);

    // Two witnesses cosign; a 2-of-2 policy accepts the proof.
    let (w1, v1) = witness(d, "w1", &vkey);
    let (w2, v2) = witness(d, "w2", &vkey);
    let run = herald(
        d,
        &[
            "log",
            "witness",
            "L",
            &w1.1,
            &w2.1,
            "--origin",
            ORIGIN,
            "--witness-key",
            &v1,
            "--witness-key",
            &v2,
            "-o",
            "cosigned",
        ],
    );
    run.expect(0);
    let policy = format!(
        "log {vkey}\nwitness W1 {v1}\nwitness W2 {v2}\ngroup both all W1 W2\nquorum both\n"
    );
    std::fs::write(d.join("policy"), policy).unwrap();
    herald(d, &["log", "prove", "L", &ids[2], "-o", "proof"]).expect(0);
    let ok = herald(
        d,
        &[
            "log",
            "verify-proof",
            "proof",
            "--keyring",
            "L/log.pub",
            "--log-policy",
            "policy",
            "--checkpoint",
            "cosigned",
        ],
    );
    ok.expect(0);
    assert!(ok.out().contains("cosigned by W1, W2"), "{}", ok.out());
    // Only one cosignature: the quorum fails.
    let one = herald(
        d,
        &[
            "log", "witness", "L", &w1.1, "--origin", ORIGIN, "-o", "one",
        ],
    );
    one.expect(0);
    let bad = herald(
        d,
        &[
            "log",
            "verify-proof",
            "proof",
            "--keyring",
            "L/log.pub",
            "--log-policy",
            "policy",
            "--checkpoint",
            "one",
        ],
    );
    bad.expect(1);
    assert!(bad.out().contains("quorum"), "{}", bad.out());
    // A checkpoint of another tree head than the proof's: refused.
    let _ = append(d, "L", 1, 300, 310);
    let grown = herald(
        d,
        &[
            "log", "witness", "L", &w1.1, &w2.1, "--origin", ORIGIN, "-o", "grown",
        ],
    );
    grown.expect(0);
    herald(
        d,
        &[
            "log",
            "verify-proof",
            "proof",
            "--keyring",
            "L/log.pub",
            "--log-policy",
            "policy",
            "--checkpoint",
            "grown",
        ],
    )
    .expect(1);
    herald(d, &["log", "prove", "L", &ids2[0], "-o", "proof2"]).expect(0);
    herald(
        d,
        &[
            "log",
            "verify-proof",
            "proof2",
            "--keyring",
            "L/log.pub",
            "--log-policy",
            "policy",
            "--checkpoint",
            "grown",
        ],
    )
    .expect(0);

    // A fork: the same key, another history of 200 leaves, then 320.
    herald(d, &["log", "init", "F", "--key", "log.key"]).expect(0);
    let _ = append(d, "F", 2, 0, 200);
    herald(d, &["log", "tiles", "F", "FT", "--origin", ORIGIN]).expect(0);
    herald(d, &["log", "tiles", "L", "T", "--origin", ORIGIN]).expect(0);
    let run = herald(
        d,
        &[
            "log",
            "monitor",
            "--log-key",
            &vkey,
            "T",
            "FT",
            "cp5",
            "--evidence",
            "ev",
        ],
    );
    run.expect(1);
    let out = run.out();
    assert!(
        out.contains("split_view: FT (size 200) and T (size 310)"),
        "{out}"
    );
    assert!(
        out.contains("consistent: cp5 (size 5) and T (size 310)"),
        "{out}"
    );
    let ev = herald(d, &["log", "verify-evidence", "ev", "--log-key", &vkey]);
    ev.expect(0);
    assert!(
        ev.out().starts_with("valid split_view evidence"),
        "{}",
        ev.out()
    );
    // cp5 is not in the fork's history either: a second piece of evidence.
    assert!(
        out.contains("split_view: cp5 (size 5) and FT (size 200)"),
        "{out}"
    );
    herald(d, &["log", "verify-evidence", "ev.2"]).expect(0);
    // Tampered evidence does not verify.
    let mut bytes = std::fs::read(d.join("ev")).unwrap();
    let at = bytes.windows(7).position(|w| w == b"prefix ").unwrap() + 7;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    std::fs::write(d.join("ev-bad"), bytes).unwrap();
    herald(d, &["log", "verify-evidence", "ev-bad"]).expect(1);
    // The same size, different roots: the notes alone are the proof.
    let _ = append(d, "F", 2, 200, 310);
    herald(
        d,
        &["log", "checkpoint", "F", "--origin", ORIGIN, "-o", "f310"],
    )
    .expect(0);
    let run = herald(
        d,
        &[
            "log",
            "monitor",
            "--log-key",
            &vkey,
            "T",
            "f310",
            "--evidence",
            "same",
        ],
    );
    run.expect(1);
    herald(d, &["log", "verify-evidence", "same"]).expect(0);
    // The honest log alone, across runs with a state file: consistent.
    let run = herald(
        d,
        &[
            "log",
            "monitor",
            "--log-key",
            &vkey,
            "cp5",
            "T",
            "--state",
            "mon",
        ],
    );
    run.expect(0);
    herald(
        d,
        &["log", "monitor", "--log-key", &vkey, "T", "--state", "mon"],
    )
    .expect(0);
    // A witness refuses the fork: it cosigned the honest log at 310.
    let forked = herald(d, &["log", "witness", "F", &w1.1, "--origin", ORIGIN]);
    forked.expect(1);
    assert!(forked.stderr.contains("HTTP 422"), "{}", forked.stderr);
    drop((w1, w2));
}
