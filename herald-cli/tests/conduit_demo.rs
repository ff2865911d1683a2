//! `herald demo --conduit` and `herald conduit serve`, run as the real
//! binary: the conversation through a conduit, its public replay, the
//! tampered copy rejected; a clean exit on SIGTERM; bad flags exit 2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn demo_through_a_conduit_replays_and_rejects_the_tampered_copy() {
    let (_dir, text) = support::run_demo("--conduit");
    assert!(
        text.contains("honest replay: valid; tampered copy: rejected"),
        "{text}"
    );
    assert!(
        text.contains("6 inclusion proofs: 6 valid, 0 invalid"),
        "{text}"
    );
    // The replay names the agents by their keyring labels (CLI.md keyring line).
    for name in ["alice (sigil:", "bob (sigil:"] {
        assert!(text.matches(name).count() >= 3, "{name}: {text}");
    }
    assert_eq!(
        text.matches("valid, receipt by the conduit").count(),
        6,
        "{text}"
    );
}

#[test]
fn serve_stops_cleanly_on_sigterm_and_refuses_bad_flags() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("c");
    let st = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(["keygen", "--output"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(st.status.success());
    let (mut child, addr) = support::conduit::serve(|cmd| {
        cmd.arg("--key")
            .arg(dir.path().join("c.key"))
            .arg("--state")
            .arg(dir.path().join("state"));
    });
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(["conduit", "serve", "--roles", "mirror", "--key"])
        .arg(dir.path().join("c.key"))
        .arg("--state")
        .arg(dir.path().join("state"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--roles: unknown role \"mirror\""));
    // --store: only a PostgreSQL URL; one nobody answers is a clear error.
    for (url, says) in [
        (
            "sqlite:///tmp/x.db",
            "--store: expected a postgres:// or postgresql:// URL",
        ),
        (
            "postgres://herald@127.0.0.1:1/herald",
            "--store: fleet database: connect",
        ),
    ] {
        let bad = Command::new(env!("CARGO_BIN_EXE_herald"))
            .args(["conduit", "serve", "--store", url, "--key"])
            .arg(dir.path().join("c.key"))
            .arg("--state")
            .arg(dir.path().join("state"))
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(2), "{url}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains(says), "{url}: {err}");
    }
}
