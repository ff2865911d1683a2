//! `herald log` through the real binary (CLI.md `herald log`, PROFILE.md
//! P9): init → append → sth → prove → verify-proof, tampering, consistency
//! and split views, the key file rules, recovery notes, exit codes, and the
//! worked example of docs/audit-log.md run from the document itself.
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::path::Path;

use herald_core::cbor::Value;
use support::{herald, keygen};

const TS: &str = "1746500000";

/// `herald new` with a fixed ts; `extra` are more options.
fn new(d: &Path, key: &str, ts: u64, out: &str, extra: &[&str]) {
    let ts = ts.to_string();
    let mut args = vec!["new", "--key", key, "--ts", &ts, "-o", out];
    args.extend_from_slice(extra);
    herald(d, &args).expect(0);
}

/// `herald log append` → the `(index, id)` lines.
fn append(d: &Path, log: &str, files: &[&str]) -> Vec<(u64, String)> {
    let mut args = vec!["log", "append", log];
    args.extend_from_slice(files);
    let run = herald(d, &args);
    run.expect(0);
    run.out()
        .lines()
        .map(|l| {
            let (i, id) = l.split_once(' ').unwrap();
            assert_eq!(id.len(), 64, "{l}");
            (i.parse().unwrap(), id.to_owned())
        })
        .collect()
}

fn verify(d: &Path, args: &[&str]) -> support::Run {
    let mut all = vec!["log", "verify-proof"];
    all.extend_from_slice(args);
    herald(d, &all)
}

/// Lowercase hex to bytes.
fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Decode a P1 map file, edit it, write it back under `out`.
fn edit(d: &Path, file: &str, out: &str, f: impl FnOnce(&mut herald_core::cbor::Map)) {
    let bytes = std::fs::read(d.join(file)).unwrap();
    let Value::Map(mut m) = Value::decode(&bytes).unwrap() else {
        panic!("{file} is not a map")
    };
    f(&mut m);
    std::fs::write(d.join(out), Value::Map(m).to_vec()).unwrap();
}

#[test]
fn init_append_sth_prove_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let notary = keygen(d, "notary");
    keygen(d, "alice");
    let run = herald(d, &["log", "init", "audit", "--key", "notary.key"]);
    run.expect(0);
    assert_eq!(run.out().trim(), notary);
    // The secret is not in the log directory; its path is.
    let seed_line = std::fs::read_to_string(d.join("notary.key")).unwrap();
    let seed = seed_line.lines().nth(1).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(d.join("audit"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["leaves.dat", "log.conf", "log.pub"]);
    for name in &names {
        let bytes = std::fs::read(d.join("audit").join(name)).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(seed), "{name}");
    }
    let conf = std::fs::read_to_string(d.join("audit/log.conf")).unwrap();
    assert!(conf.starts_with("herald-log-v1\nkey /"), "{conf}");
    assert!(conf.trim_end().ends_with("notary.key"), "{conf}");
    assert!(
        std::fs::read_to_string(d.join("audit/log.pub"))
            .unwrap()
            .starts_with(&notary)
    );
    // A second init is refused.
    herald(d, &["log", "init", "audit", "--key", "notary.key"]).expect(2);

    new(d, "alice.key", 1_746_432_000, "g.cbor", &[]);
    herald(
        d,
        &[
            "reply",
            "--key",
            "alice.key",
            "--parent",
            "g.cbor",
            "--ts",
            "1746435700",
            "--attest",
            "log_metadata_consent=true",
            "-o",
            "r.cbor",
        ],
    )
    .expect(0);
    let first = append(d, "audit", &["g.cbor", "r.cbor"]);
    assert_eq!(first.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 1]);
    // Idempotent, also from a trace file and from standard input.
    support::cat(d, &["g.cbor", "r.cbor"], "trace.cbor");
    assert_eq!(append(d, "audit", &["r.cbor"]), first[1..]);
    assert_eq!(append(d, "audit", &["trace.cbor"]), first);
    let stdin = std::fs::read(d.join("r.cbor")).unwrap();
    let run = support::herald_in(d, &["log", "append", "audit", "-"], Some(&stdin));
    run.expect(0);
    assert_eq!(run.out(), format!("1 {}\n", first[1].1));

    // STH, binary and JSON.
    herald(d, &["log", "sth", "audit", "--ts", TS, "-o", "sth.cbor"]).expect(0);
    let run = herald(d, &["log", "sth", "audit", "--ts", TS, "--json"]);
    run.expect(0);
    let sth = run.json();
    assert_eq!(sth["log"], notary.as_str());
    assert_eq!(sth["size"], 2);
    assert_eq!(sth["ts"], 1_746_500_000u64);
    assert_eq!(sth["root"].as_str().unwrap().len(), 64);
    assert_eq!(sth["sig"].as_str().unwrap().len(), 128);
    let run = verify(d, &["sth.cbor", "--keyring", "audit/log.pub"]);
    run.expect(0);
    assert!(
        run.out().starts_with("valid signed tree head"),
        "{}",
        run.out()
    );

    // Inclusion proof of the reply; JSON has the CLI.md keys.
    let id = &first[1].1;
    herald(
        d,
        &["log", "prove", "audit", id, "--ts", TS, "-o", "p.cbor"],
    )
    .expect(0);
    let run = herald(d, &["log", "prove", "audit", id, "--ts", TS, "--json"]);
    run.expect(0);
    let p = run.json();
    let mut keys: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["index", "leaf", "log", "path", "size", "sth"]);
    assert_eq!(p["index"], 1);
    assert_eq!(p["size"], 2);
    assert_eq!(p["sth"], sth);
    assert_eq!(p["path"].as_array().unwrap().len(), 1);
    // The leaf carries from and ts: the sender consented.
    let leaf = unhex(p["leaf"].as_str().unwrap());
    let leaf = Value::decode(&leaf).unwrap();
    let leaf = leaf.as_map().unwrap();
    assert!(leaf.get("from").is_some() && leaf.get("ts").is_some());
    assert_eq!(
        leaf.get("bucket"),
        Some(&Value::Unsigned(1_746_435_700 - 1_746_435_700 % 3600))
    );

    let run = verify(
        d,
        &[
            "p.cbor",
            "--keyring",
            "audit/log.pub",
            "--envelope",
            "r.cbor",
        ],
    );
    run.expect(0);
    assert!(
        run.out().starts_with("valid inclusion proof"),
        "{}",
        run.out()
    );
    // A trace file: the envelope with the leaf's id is compared.
    verify(
        d,
        &["p.cbor", "--keyring", "audit", "--envelope", "trace.cbor"],
    )
    .expect(0);
    verify(d, &["p.cbor", "--keyring", "audit/log.pub"]).expect(0);
    // The proof from standard input.
    let bytes = std::fs::read(d.join("p.cbor")).unwrap();
    support::herald_in(
        d,
        &["log", "verify-proof", "-", "--keyring", "audit/log.pub"],
        Some(&bytes),
    )
    .expect(0);
    // A proof for a past size.
    herald(
        d,
        &[
            "log",
            "prove",
            "audit",
            &first[0].1,
            "--size",
            "1",
            "--ts",
            TS,
            "-o",
            "p1.cbor",
        ],
    )
    .expect(0);
    verify(
        d,
        &[
            "p1.cbor",
            "--keyring",
            "audit/log.pub",
            "--envelope",
            "g.cbor",
        ],
    )
    .expect(0);
    herald(d, &["log", "prove", "audit", id, "--size", "1", "--ts", TS]).expect(2);
    herald(d, &["log", "prove", "audit", id, "--size", "3", "--ts", TS]).expect(2);
    herald(d, &["log", "prove", "audit", &"ab".repeat(32), "--ts", TS]).expect(2);
    herald(d, &["log", "prove", "audit", "xyz", "--ts", TS]).expect(2);
}

/// A log `audit` with `n` envelopes (e0.cbor …) in `d`; returns the lines.
fn populated(d: &Path, n: u64) -> Vec<(u64, String)> {
    keygen(d, "notary");
    keygen(d, "alice");
    herald(d, &["log", "init", "audit", "--key", "notary.key"]).expect(0);
    let files: Vec<String> = (0..n).map(|i| format!("e{i}.cbor")).collect();
    for (i, f) in files.iter().enumerate() {
        new(d, "alice.key", 1_746_432_000 + i as u64, f, &[]);
    }
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    append(d, "audit", &refs)
}

/// A command against a log another process holds (a running notary) exits
/// 2 at once with the reason, instead of hanging on the lock.
#[test]
fn a_log_held_by_another_process_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    populated(d, 1);
    let held = herald_verify::Log::open(&d.join("audit")).unwrap();
    let run = herald(d, &["log", "status", "audit"]);
    run.expect(2);
    assert!(
        run.stderr.contains("open in another process"),
        "{}",
        run.stderr
    );
    drop(held);
    // The lock (flock) belongs to the open file, which a child that another
    // test of this binary spawns at that moment holds too until it execs
    // (close-on-exec): under load that takes a while, so the release is
    // awaited, bounded, rather than assumed at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let run = herald(d, &["log", "status", "audit"]);
        if run.code == 0 || std::time::Instant::now() > deadline {
            run.expect(0);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn tampered_proofs_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let lines = populated(d, 5);
    herald(
        d,
        &[
            "log",
            "prove",
            "audit",
            &lines[3].1,
            "--ts",
            TS,
            "-o",
            "p.cbor",
        ],
    )
    .expect(0);
    verify(
        d,
        &[
            "p.cbor",
            "--keyring",
            "audit/log.pub",
            "--envelope",
            "e3.cbor",
        ],
    )
    .expect(0);

    // Every single flipped bit of the proof is refused (exit 1, one line).
    let bytes = std::fs::read(d.join("p.cbor")).unwrap();
    for i in (0..bytes.len()).step_by(7) {
        let mut t = bytes.clone();
        t[i] ^= 0x04;
        std::fs::write(d.join("t.cbor"), &t).unwrap();
        let run = verify(d, &["t.cbor", "--keyring", "audit/log.pub"]);
        run.expect(1);
        assert!(run.out().starts_with("invalid: t.cbor: "), "{}", run.out());
    }
    // Semantic edits, re-encoded canonically.
    edit(d, "p.cbor", "t.cbor", |m| {
        m.insert("index", Value::Unsigned(2));
    });
    let run = verify(d, &["t.cbor", "--keyring", "audit/log.pub"]);
    run.expect(1);
    assert!(run.out().contains("Merkle path"), "{}", run.out());
    edit(d, "p.cbor", "t.cbor", |m| {
        m.insert("size", Value::Unsigned(4));
    });
    verify(d, &["t.cbor", "--keyring", "audit/log.pub"]).expect(1);
    edit(d, "p.cbor", "t.cbor", |m| {
        let Some(Value::Map(sth)) = m.get("sth").cloned() else {
            panic!()
        };
        let mut sth = sth;
        sth.insert("root", Value::Bytes(vec![0; 32]));
        m.insert("sth", Value::Map(sth));
    });
    let run = verify(d, &["t.cbor", "--keyring", "audit/log.pub"]);
    run.expect(1);
    assert!(run.out().contains("bad_signature"), "{}", run.out());
    // The right proof, the wrong envelope.
    let run = verify(
        d,
        &[
            "p.cbor",
            "--keyring",
            "audit/log.pub",
            "--envelope",
            "e2.cbor",
        ],
    );
    run.expect(1);
    // Not the log's key in the keyring.
    let run = verify(d, &["p.cbor", "--keyring", "alice.pub"]);
    run.expect(1);
    assert!(run.out().contains("unknown_signer"), "{}", run.out());
    // Not a proof at all; an empty file.
    let run = verify(d, &["e1.cbor", "--keyring", "audit/log.pub"]);
    run.expect(1);
    std::fs::write(d.join("empty"), b"").unwrap();
    verify(d, &["empty", "--keyring", "audit/log.pub"]).expect(1);
    // Cannot run: missing files, a bad keyring, --envelope with a
    // consistency proof, no keyring.
    verify(d, &["missing.cbor", "--keyring", "audit/log.pub"]).expect(2);
    verify(d, &["p.cbor", "--keyring", "missing.pub"]).expect(2);
    std::fs::write(d.join("bad.pub"), "not a key line\n").unwrap();
    verify(d, &["p.cbor", "--keyring", "bad.pub"]).expect(2);
    verify(
        d,
        &["p.cbor", "--keyring", "audit/log.pub", "--envelope", "nope"],
    )
    .expect(2);
    herald(
        d,
        &[
            "log",
            "consistency",
            "audit",
            "--from",
            "2",
            "--ts",
            TS,
            "-o",
            "c.cbor",
        ],
    )
    .expect(0);
    verify(
        d,
        &[
            "c.cbor",
            "--keyring",
            "audit/log.pub",
            "--envelope",
            "e1.cbor",
        ],
    )
    .expect(2);
    verify(d, &["p.cbor"]).expect(2);
}

#[test]
fn consistency_verifies_and_split_views_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    populated(d, 3);
    herald(d, &["log", "sth", "audit", "--ts", TS, "-o", "sth3.cbor"]).expect(0);
    for i in 3..7u64 {
        new(
            d,
            "alice.key",
            1_746_433_000 + i,
            &format!("e{i}.cbor"),
            &[],
        );
    }
    append(d, "audit", &["e3.cbor", "e4.cbor", "e5.cbor", "e6.cbor"]);

    for (from, to) in [(1, 7), (3, 7), (3, 5), (4, 4), (7, 7), (6, 7)] {
        let (from, to) = (from.to_string(), to.to_string());
        herald(
            d,
            &[
                "log",
                "consistency",
                "audit",
                "--from",
                &from,
                "--to",
                &to,
                "--ts",
                TS,
                "-o",
                "c.cbor",
                "--force",
            ],
        )
        .expect(0);
        let run = verify(d, &["c.cbor", "--keyring", "audit/log.pub"]);
        run.expect(0);
        assert!(
            run.out().starts_with("valid consistency proof"),
            "{}",
            run.out()
        );
    }
    let run = herald(
        d,
        &[
            "log",
            "consistency",
            "audit",
            "--from",
            "3",
            "--ts",
            TS,
            "--json",
        ],
    );
    run.expect(0);
    let c = run.json();
    let mut keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["log", "path", "size1", "size2", "sth1", "sth2"]);
    assert_eq!(
        (c["size1"].as_u64(), c["size2"].as_u64()),
        (Some(3), Some(7))
    );
    // The sth1 of the proof is the head signed when the log had 3 leaves.
    let sth3 = Value::decode(&std::fs::read(d.join("sth3.cbor")).unwrap()).unwrap();
    herald(
        d,
        &[
            "log",
            "consistency",
            "audit",
            "--from",
            "3",
            "--ts",
            TS,
            "-o",
            "c37.cbor",
        ],
    )
    .expect(0);
    let c37 = Value::decode(&std::fs::read(d.join("c37.cbor")).unwrap()).unwrap();
    assert_eq!(c37.as_map().unwrap().get("sth1"), Some(&sth3));
    herald(
        d,
        &["log", "consistency", "audit", "--from", "0", "--ts", TS],
    )
    .expect(2);
    herald(
        d,
        &[
            "log",
            "consistency",
            "audit",
            "--from",
            "5",
            "--to",
            "4",
            "--ts",
            TS,
        ],
    )
    .expect(2);
    herald(
        d,
        &[
            "log",
            "consistency",
            "audit",
            "--from",
            "1",
            "--to",
            "8",
            "--ts",
            TS,
        ],
    )
    .expect(2);

    // Split view: the same key runs a second log that shares the first two
    // envelopes and then diverges. Its head verifies on its own; spliced
    // into a consistency proof with the honest log's old head, it fails.
    herald(d, &["log", "init", "shadow", "--key", "notary.key"]).expect(0);
    append(
        d,
        "shadow",
        &[
            "e0.cbor", "e1.cbor", "e4.cbor", "e3.cbor", "e5.cbor", "e6.cbor", "e2.cbor",
        ],
    );
    herald(
        d,
        &["log", "sth", "shadow", "--ts", TS, "-o", "shadow7.cbor"],
    )
    .expect(0);
    verify(d, &["shadow7.cbor", "--keyring", "audit/log.pub"]).expect(0);
    let shadow7 = Value::decode(&std::fs::read(d.join("shadow7.cbor")).unwrap()).unwrap();
    herald(
        d,
        &[
            "log",
            "consistency",
            "shadow",
            "--from",
            "3",
            "--ts",
            TS,
            "-o",
            "s37.cbor",
        ],
    )
    .expect(0);
    for (proof, out) in [("c37.cbor", "split1.cbor"), ("s37.cbor", "split2.cbor")] {
        let (sth1, sth2) = (sth3.clone(), shadow7.clone());
        edit(d, proof, out, move |m| {
            m.insert("sth1", sth1);
            m.insert("sth2", sth2);
        });
        let run = verify(d, &[out, "--keyring", "audit/log.pub"]);
        run.expect(1);
        assert!(run.out().contains("Merkle path"), "{}", run.out());
    }

    // A different log's head (another key) never pairs with this log's.
    keygen(d, "other");
    herald(d, &["log", "init", "elsewhere", "--key", "other.key"]).expect(0);
    append(
        d,
        "elsewhere",
        &[
            "e0.cbor", "e1.cbor", "e2.cbor", "e3.cbor", "e4.cbor", "e5.cbor", "e6.cbor",
        ],
    );
    herald(
        d,
        &["log", "sth", "elsewhere", "--ts", TS, "-o", "other7.cbor"],
    )
    .expect(0);
    let other7 = Value::decode(&std::fs::read(d.join("other7.cbor")).unwrap()).unwrap();
    edit(d, "c37.cbor", "mixed.cbor", move |m| {
        m.insert("sth2", other7);
    });
    std::fs::write(
        d.join("both.pub"),
        std::fs::read_to_string(d.join("notary.pub")).unwrap()
            + &std::fs::read_to_string(d.join("other.pub")).unwrap(),
    )
    .unwrap();
    let run = verify(d, &["mixed.cbor", "--keyring", "both.pub"]);
    run.expect(1);
    assert!(run.out().contains("sth2"), "{}", run.out());
}

#[test]
fn the_log_key_is_checked_on_every_use() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let lines = populated(d, 2);
    herald(d, &["log", "sth", "audit", "--ts", TS, "-o", "s.cbor"]).expect(0);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let key = d.join("notary.key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let run = herald(d, &["log", "sth", "audit", "--ts", TS, "-o", "s.cbor"]);
        run.expect(2);
        assert!(
            run.stderr.starts_with("herald: ") && run.stderr.contains("0644"),
            "{}",
            run.stderr
        );
        herald(
            d,
            &[
                "log",
                "prove",
                "audit",
                &lines[0].1,
                "--ts",
                TS,
                "-o",
                "p.cbor",
            ],
        )
        .expect(2);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        // init refuses a readable key too.
        std::fs::set_permissions(d.join("alice.key"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
        herald(d, &["log", "init", "other", "--key", "alice.key"]).expect(2);
        std::fs::set_permissions(d.join("alice.key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
    }
    // Another key via --key is refused; the same key elsewhere is fine.
    let run = herald(
        d,
        &["log", "sth", "audit", "--key", "alice.key", "--ts", TS],
    );
    run.expect(2);
    assert!(
        run.stderr.contains("is not the key of log"),
        "{}",
        run.stderr
    );
    std::fs::create_dir(d.join("moved")).unwrap();
    std::fs::rename(d.join("notary.key"), d.join("moved/notary.key")).unwrap();
    let run = herald(d, &["log", "sth", "audit", "--ts", TS, "-o", "s.cbor"]);
    run.expect(2);
    assert!(run.stderr.contains("notary.key"), "{}", run.stderr);
    herald(
        d,
        &[
            "log",
            "sth",
            "audit",
            "--key",
            "moved/notary.key",
            "--ts",
            TS,
            "-o",
            "s.cbor",
            "--force",
        ],
    )
    .expect(0);
    // Binary output is refused on a terminal only; not a log; bad input.
    herald(
        d,
        &["log", "sth", "nothing-here", "--key", "moved/notary.key"],
    )
    .expect(2);
    std::fs::write(d.join("junk.cbor"), b"\xff\xff").unwrap();
    herald(d, &["log", "append", "audit", "junk.cbor"]).expect(2);
    herald(d, &["log", "append", "audit", "missing.cbor"]).expect(2);
    // Nothing of a failed batch was logged.
    assert_eq!(append(d, "audit", &["e0.cbor"]), lines[..1]);
}

#[test]
fn a_torn_append_is_recovered_with_a_note_and_corruption_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let lines = populated(d, 3);
    let data = d.join("audit/leaves.dat");
    let intact = std::fs::read(&data).unwrap();
    // A partial record after the acknowledged ones (a crash mid-append).
    let mut torn = intact.clone();
    torn.extend_from_slice(&[0, 0, 0, 90, 0xa4, 0x62]);
    std::fs::write(&data, &torn).unwrap();
    new(d, "alice.key", 1_746_440_000, "e3.cbor", &[]);
    let run = herald(d, &["log", "append", "audit", "e3.cbor"]);
    run.expect(0);
    assert!(run.stderr.starts_with("herald: note: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("recovered an interrupted append"),
        "{}",
        run.stderr
    );
    assert!(run.out().starts_with("3 "), "{}", run.out());
    assert_eq!(
        append(d, "audit", &["e0.cbor", "e1.cbor", "e2.cbor"]),
        lines
    );

    // A flipped byte inside acknowledged data: exit 2, naming file and byte.
    let mut damaged = std::fs::read(&data).unwrap();
    damaged[4096 + 40] ^= 1;
    std::fs::write(&data, &damaged).unwrap();
    let run = herald(d, &["log", "append", "audit", "e0.cbor"]);
    run.expect(2);
    assert!(
        run.stderr.contains("leaves.dat: corrupted at byte 4096"),
        "{}",
        run.stderr
    );
}

/// The worked example of docs/audit-log.md, run from the document.
#[test]
fn docs_worked_example() {
    let (tmp, stdout) = support::run_doc_example("audit-log.md");
    let d = tmp.path();
    // What the comments in the example say.
    let lines: Vec<&str> = stdout.lines().collect();
    let appended: Vec<&&str> = lines
        .iter()
        .filter(|l| l.len() == 66 && l.as_bytes()[1] == b' ')
        .collect();
    assert_eq!(appended.len(), 4, "{stdout}");
    assert!(appended[0].starts_with("0 ") && appended[1].starts_with("1 "));
    assert_eq!(appended[2], appended[1]);
    assert!(appended[3].starts_with("2 "));
    assert!(stdout.contains("\"size\":2"), "{stdout}");
    assert!(stdout.contains("valid inclusion proof"), "{stdout}");
    assert!(stdout.contains("invalid: hello.cbor"), "{stdout}");
    assert!(stdout.contains("valid consistency proof"), "{stdout}");
    let mut names: Vec<String> = std::fs::read_dir(d.join("audit"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["checkpoint", "leaves.dat", "log.conf", "log.pub"]);
}

/// `herald` run by `sh` under `umask 000`.
#[cfg(unix)]
fn herald_umask_000(d: &Path, args: &[&str]) -> support::Run {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .current_dir(d)
        .output()
        .unwrap();
    support::Run {
        code: out.status.code().unwrap(),
        stdout: out.stdout,
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// docs/performance.md *Memory under hostile input*, B5: a log is
/// owner-only whatever the umask, a log others may write is refused, and
/// a local writer who rewrites a leaf record (its checksum recomputed)
/// cannot make the log sign a second root for a size it signed.
#[cfg(unix)]
#[test]
fn the_log_is_owner_only_and_a_rewritten_leaf_is_refused() {
    use sha2::Digest;
    use std::os::unix::fs::PermissionsExt;

    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    keygen(d, "notary");
    keygen(d, "alice");
    herald_umask_000(d, &["log", "init", "audit", "--key", "notary.key"]).expect(0);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&d.join("audit")), 0o700);
    for f in ["leaves.dat", "log.pub", "log.conf"] {
        assert_eq!(mode(&d.join("audit").join(f)), 0o600, "{f}");
    }
    let files: Vec<String> = (0..3).map(|i| format!("e{i}.cbor")).collect();
    for (i, f) in files.iter().enumerate() {
        new(d, "alice.key", 1_746_432_000 + i as u64, f, &[]);
    }
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    herald_umask_000(d, &["log", "append", "audit", refs[0], refs[1], refs[2]]).expect(0);
    let sth = |d: &Path| herald(d, &["log", "sth", "audit", "--ts", TS]);
    let signed = sth(d);
    signed.expect(0);
    assert_eq!(mode(&d.join("audit/checkpoint")), 0o600);

    // The local writer swaps leaves 1 and 2, recomputing each record's
    // checksum `sha256(index ‖ leaf)`: every record is well formed.
    let data = d.join("audit/leaves.dat");
    let bytes = std::fs::read(&data).unwrap();
    let mut records = Vec::new();
    let mut at = 4096;
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        records.push(bytes[at + 4..at + 4 + len].to_vec());
        at += 4 + len + 32;
    }
    assert_eq!(records.len(), 3);
    records.swap(1, 2);
    let mut forged = bytes[..4096].to_vec();
    for (i, leaf) in records.iter().enumerate() {
        forged.extend_from_slice(&(leaf.len() as u32).to_be_bytes());
        forged.extend_from_slice(leaf);
        let mut h = sha2::Sha256::new();
        h.update((i as u64).to_be_bytes());
        h.update(leaf);
        forged.extend_from_slice(&h.finalize());
    }
    assert_eq!(forged.len(), bytes.len());
    std::fs::write(&data, &forged).unwrap();
    let run = sth(d);
    run.expect(2);
    assert!(
        run.stderr
            .contains("no longer hash to the root the log signed for size 3"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("checkpoint"), "{}", run.stderr);
    std::fs::write(&data, &bytes).unwrap();
    assert_eq!(sth(d).stdout, signed.stdout);

    // A log directory or file that others may write is refused.
    std::fs::set_permissions(d.join("audit"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let run = sth(d);
    run.expect(2);
    assert!(
        run.stderr
            .contains("mode 0777 lets group or others write it"),
        "{}",
        run.stderr
    );
    std::fs::set_permissions(d.join("audit"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o666)).unwrap();
    sth(d).expect(2);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o600)).unwrap();
    sth(d).expect(0);
    let checkpoint = d.join("audit/checkpoint");
    std::fs::set_permissions(&checkpoint, std::fs::Permissions::from_mode(0o620)).unwrap();
    let run = sth(d);
    run.expect(2);
    assert!(
        run.stderr.contains("checkpoint: mode 0620"),
        "{}",
        run.stderr
    );
}
