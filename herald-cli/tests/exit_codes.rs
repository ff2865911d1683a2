//! Every exit status of CLI.md, and input that is not envelopes: 0 every
//! envelope valid; 1 some partial, invalid or unparseable; 2 the command
//! could not run.
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;

use support::{cat, codes, herald, keygen};

/// A directory with keys a, b and a two-envelope trace `t.cbor`.
fn setup() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    keygen(d, "a");
    keygen(d, "b");
    herald(
        d,
        &[
            "new",
            "--key",
            "a.key",
            "--payload-json",
            r#"{"text": "tamper-me-please"}"#,
            "-o",
            "1.cbor",
        ],
    )
    .expect(0);
    herald(
        d,
        &[
            "reply", "--key", "b.key", "--parent", "1.cbor", "-o", "2.cbor",
        ],
    )
    .expect(0);
    cat(d, &["1.cbor", "2.cbor"], "t.cbor");
    tmp
}

fn flip_in_payload(d: &Path, file: &str, out: &str) {
    let mut bytes = std::fs::read(d.join(file)).unwrap();
    let needle = b"tamper-me-please";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    bytes[at + 3] ^= 0x01;
    std::fs::write(d.join(out), bytes).unwrap();
}

#[test]
fn zero_when_every_envelope_is_valid() {
    let tmp = setup();
    herald(tmp.path(), &["verify", "t.cbor", "--keyring", "."]).expect(0);
    herald(
        tmp.path(),
        &[
            "verify",
            "1.cbor",
            "2.cbor",
            "--keyring",
            "a.pub",
            "--keyring",
            "b.pub",
        ],
    )
    .expect(0);
}

#[test]
fn one_when_tampered() {
    let tmp = setup();
    let d = tmp.path();
    flip_in_payload(d, "t.cbor", "bad.cbor");
    let run = herald(d, &["verify", "bad.cbor", "--keyring", ".", "--json"]);
    run.expect(1);
    let report = run.json();
    assert_eq!(report["envelopes"][0]["status"], "invalid");
    assert!(codes(&report["envelopes"][0]).contains(&"bad_signature[0]".to_owned()));
    // P13 revision 2: a tampered (id_mismatch) envelope is nobody's
    // parent, so its child reports missing_parent: the envelope it signed
    // over is not in the set.
    assert_eq!(report["envelopes"][1]["status"], "invalid");
    assert_eq!(codes(&report["envelopes"][1]), ["missing_parent"]);
    let run = herald(d, &["verify", "bad.cbor", "--keyring", "."]);
    run.expect(1);
    assert!(
        run.out().contains("invalid  id_mismatch, bad_signature[0]"),
        "{}",
        run.out()
    );
}

#[test]
fn one_when_partial() {
    let tmp = setup();
    let run = herald(
        tmp.path(),
        &[
            "verify",
            "t.cbor",
            "--keyring",
            ".",
            "--require",
            "tool_sandbox",
            "--json",
        ],
    );
    run.expect(1);
    assert_eq!(run.json()["summary"]["partial"], 2);
}

#[test]
fn one_when_a_parent_is_missing_or_a_nonce_replayed() {
    let tmp = setup();
    let d = tmp.path();
    let run = herald(d, &["verify", "2.cbor", "--keyring", ".", "--json"]);
    run.expect(1);
    assert_eq!(codes(&run.json()["envelopes"][0]), ["missing_parent"]);
    let run = herald(
        d,
        &["verify", "t.cbor", "1.cbor", "--keyring", ".", "--json"],
    );
    run.expect(1);
    assert_eq!(codes(&run.json()["envelopes"][2]), ["replayed_nonce"]);
}

/// Each exits 1 and reports one `id: null`, `malformed` entry.
#[test]
fn one_for_input_that_is_not_envelopes() {
    let tmp = setup();
    let d = tmp.path();
    let whole = std::fs::read(d.join("1.cbor")).unwrap();
    std::fs::write(d.join("truncated.cbor"), &whole[..whole.len() - 7]).unwrap();
    std::fs::write(d.join("note.json"), br#"{"id": null, "hello": "world"}"#).unwrap();
    std::fs::write(d.join("empty.cbor"), b"").unwrap();
    for file in ["truncated.cbor", "note.json", "empty.cbor"] {
        let run = herald(d, &["verify", file, "--keyring", ".", "--json"]);
        run.expect(1);
        let report = run.json();
        let entries = report["envelopes"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{file}");
        assert!(entries[0]["id"].is_null(), "{file}");
        assert!(entries[0]["from"].is_null(), "{file}");
        assert_eq!(entries[0]["status"], "invalid", "{file}");
        assert_eq!(codes(&entries[0]), ["malformed"], "{file}");
        assert_eq!(report["summary"]["invalid"], 1);
        // The human form too, and inspect.
        herald(d, &["verify", file, "--keyring", "."]).expect(1);
        let run = herald(d, &["inspect", file]);
        run.expect(1);
        // (JSON is first tried as the display form; a note says why not.)
        assert!(
            run.stderr
                .lines()
                .any(|l| l.starts_with(&format!("herald: {file}: byte 0: "))),
            "{}",
            run.stderr
        );
    }
    // Envelopes before the bad bytes are still checked.
    let mut mixed = std::fs::read(d.join("t.cbor")).unwrap();
    mixed.extend_from_slice(&whole[..40]);
    std::fs::write(d.join("mixed.cbor"), &mixed).unwrap();
    let run = herald(d, &["verify", "mixed.cbor", "--keyring", ".", "--json"]);
    run.expect(1);
    let report = run.json();
    let statuses: Vec<&str> = report["envelopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["valid", "valid", "invalid"]);
    assert!(report["envelopes"][2]["id"].is_null());
    let run = herald(d, &["inspect", "--json", "mixed.cbor"]);
    run.expect(1);
    assert_eq!(run.out().lines().count(), 2);
}

#[test]
fn two_for_usage_errors() {
    let d = Path::new(".");
    for args in [
        &[][..],
        &["frobnicate"],
        &["verify"],
        &["verify", "--bogus", "x"],
        &["verify", "x", "--now", "yesterday"],
        &["keygen"],
        &["new", "--key", "k.key"],
        &[
            "cosign",
            "--key",
            "k.key",
            "--scope",
            "human_approval",
            "-o",
            "x",
        ],
    ] {
        let run = herald(d, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn two_for_unreadable_paths() {
    let tmp = setup();
    let d = tmp.path();
    let run = herald(d, &["verify", "t.cbor", "nowhere.cbor", "--keyring", "."]);
    run.expect(2);
    assert_eq!(
        run.stderr,
        "herald: nowhere.cbor: No such file or directory (os error 2)\n"
    );
    assert!(run.stdout.is_empty());
    std::fs::create_dir(d.join("sub")).unwrap();
    let run = herald(d, &["verify", "sub", "--keyring", "."]);
    run.expect(2);
    assert!(run.stderr.starts_with("herald: sub: "), "{}", run.stderr);
    herald(d, &["inspect", "nowhere.cbor"]).expect(2);
    herald(
        d,
        &[
            "reply",
            "--key",
            "a.key",
            "--parent",
            "nowhere.cbor",
            "-o",
            "x",
        ],
    )
    .expect(2);
    herald(
        d,
        &[
            "cosign",
            "--key",
            "a.key",
            "--scope",
            "human_approval",
            "nowhere",
            "-o",
            "x",
        ],
    )
    .expect(2);
    herald(
        d,
        &[
            "new",
            "--key",
            "a.key",
            "--payload-file",
            "nowhere",
            "-o",
            "x",
        ],
    )
    .expect(2);
    herald(d, &["verify", "t.cbor", "--keyring", "nowhere"]).expect(2);
}

#[cfg(unix)]
#[test]
fn two_for_a_key_file_others_can_read() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = setup();
    let d = tmp.path();
    std::fs::set_permissions(d.join("a.key"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = herald(d, &["new", "--key", "a.key", "-o", "x.cbor"]);
    run.expect(2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.starts_with("herald: a.key: "), "{}", run.stderr);
    assert!(run.stderr.contains("0644"), "{}", run.stderr);
    assert!(!d.join("x.cbor").exists());
    for args in [
        &[
            "reply", "--key", "a.key", "--parent", "1.cbor", "-o", "x.cbor",
        ][..],
        &[
            "cosign",
            "--key",
            "a.key",
            "--scope",
            "human_approval",
            "2.cbor",
            "-o",
            "x.cbor",
        ],
    ] {
        let run = herald(d, args);
        run.expect(2);
        assert!(
            run.stderr.contains("a.key") && run.stderr.contains("0644"),
            "{}",
            run.stderr
        );
    }
    std::fs::set_permissions(d.join("a.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
    herald(d, &["new", "--key", "a.key", "-o", "x.cbor"]).expect(0);
}

#[test]
fn two_for_a_bad_key_file() {
    let tmp = setup();
    let d = tmp.path();
    let good = std::fs::read_to_string(d.join("a.key")).unwrap();
    let write = |text: &str| {
        let path = d.join("bad.key");
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    };
    for bad in [
        good.replace("herald-secret-key-v1", "herald-secret-key-v9"),
        good.to_uppercase(),
        good[..good.len() - 3].to_owned(),
        format!("{good}extra\n"),
        String::new(),
    ] {
        write(&bad);
        let run = herald(d, &["new", "--key", "bad.key", "-o", "x.cbor"]);
        run.expect(2);
        assert!(
            run.stderr
                .starts_with("herald: bad.key: not a herald secret key file"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn two_for_bad_keyring_lines() {
    let tmp = setup();
    let d = tmp.path();
    let a = std::fs::read_to_string(d.join("a.pub")).unwrap();
    let b = std::fs::read_to_string(d.join("b.pub")).unwrap();
    let sigil_a = a.split(' ').next().unwrap();
    let key_b = b.split(' ').nth(2).unwrap().trim();
    // A sigil that is not its key's.
    std::fs::write(
        d.join("mixed.ring"),
        format!("# comment\n\n{sigil_a} ed25519 {key_b}\n"),
    )
    .unwrap();
    let run = herald(d, &["verify", "t.cbor", "--keyring", "mixed.ring"]);
    run.expect(2);
    assert_eq!(
        run.stderr,
        "herald: mixed.ring:3: the sigil is not this key's (P2)\n"
    );
    // A key of small order (the identity point), under its own sigil.
    let mut small = [0u8; 32];
    small[0] = 1;
    let sigil = herald_core::Sigil::from_key(&small, herald_core::SigilForm::Default);
    std::fs::write(
        d.join("small.ring"),
        format!("{sigil} ed25519 {}\n", herald_verify::hex(&small)),
    )
    .unwrap();
    let run = herald(d, &["verify", "t.cbor", "--keyring", "small.ring"]);
    run.expect(2);
    assert!(
        run.stderr.starts_with("herald: small.ring:1: "),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("small order"), "{}", run.stderr);
    // Not a keyring line at all; a bad .pub inside a keyring directory.
    std::fs::write(d.join("junk.ring"), "hello\n").unwrap();
    herald(d, &["verify", "t.cbor", "--keyring", "junk.ring"]).expect(2);
    std::fs::create_dir(d.join("ring")).unwrap();
    std::fs::write(d.join("ring/x.pub"), format!("{sigil_a} ed25519 {key_b}\n")).unwrap();
    let run = herald(d, &["verify", "t.cbor", "--keyring", "ring"]);
    run.expect(2);
    assert!(run.stderr.contains("x.pub:1"), "{}", run.stderr);
}

#[test]
fn oversized_stdin_stream_is_refused_with_bounded_memory() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    // A 1 GiB stream of envelopes against a 1 MiB limit: refused after
    // reading just past the limit, long before the stream ends.
    // (tests/stdin_stream.rs measures other streams and the memory.)
    let envelope = herald_core::EnvelopeBuilder::genesis(1_746_432_000)
        .sign(&herald_core::SigningKey::from_seed(&[7; 32]))
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(["verify", "-"])
        .env("HERALD_MAX_INPUT", "1048576")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk: Vec<u8> = envelope
            .as_bytes()
            .iter()
            .copied()
            .cycle()
            .take(envelope.as_bytes().len() * 1000)
            .collect();
        let mut sent = 0usize;
        while sent < 1 << 30 {
            if stdin.write_all(&chunk).is_err() {
                break; // the reader stopped: the point of the test
            }
            sent += chunk.len();
        }
        sent
    });
    let out = child.wait_with_output().unwrap();
    let sent = writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("input larger than 1048576 bytes"),
        "{stderr}"
    );
    assert!(sent < 1 << 30, "the whole 1 GiB stream was read");
}
