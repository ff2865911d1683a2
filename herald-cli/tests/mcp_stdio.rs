//! `herald mcp proxy`'s own standard input and output when they are pipes
//! or socket pairs (`herald-mcp/src/own_stdio.rs`): read and written by
//! the runtime's thread, which needs `O_NONBLOCK` on them; that flag
//! belongs to the pipe end or socket every holder shares, so the proxy must
//! give them back blocking when it is done, or the next program of a shell
//! pipeline that shares them would get `EAGAIN`.
//!
//! The server is `cat` (whatever the proxy forwards comes back as the
//! server's output, so a message crosses both of the proxy's ends), and
//! for the Node.js client, server-everything (skipped with one line
//! without Node: `herald_testkit::external`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use support::keygen;
use support::mcp::{PROXY, server_everything, typescript_sdk, verify};

/// `O_NONBLOCK` (Linux, octal as `/proc/*/fdinfo` prints flags).
const O_NONBLOCK: u32 = 0o4000;

/// The `flags:` of an `fdinfo` text.
fn flags(fdinfo: &str) -> u32 {
    let line = fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .unwrap_or_else(|| panic!("no flags in {fdinfo:?}"));
    u32::from_str_radix(line.trim(), 8).unwrap()
}

#[test]
fn the_clients_pipes_are_polled_and_given_back_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let mut shell = shell(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = shell.stdin.take().unwrap();
    let stdout = shell.stdout.take().unwrap();
    polled_then_given_back(shell, stdin, stdout);
}

/// As a Node.js client starts it: socket pairs, not pipes (libuv).
#[test]
fn the_clients_sockets_are_polled_and_given_back_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let (stdin, child_in) = UnixStream::pair().unwrap();
    let (stdout, child_out) = UnixStream::pair().unwrap();
    let shell = shell(dir.path())
        .stdin(OwnedFd::from(child_in))
        .stdout(OwnedFd::from(child_out))
        .spawn()
        .unwrap();
    polled_then_given_back(shell, stdin, stdout);
}

/// The official TypeScript SDK's client, started the way Node.js hosts
/// start a server (socket pairs), through the proxy to server-everything:
/// the call is answered and signed, the proxy's ends were sockets it
/// polled, and the trace verifies.
#[test]
fn the_typescript_sdk_client_through_socket_pairs() {
    let Some(everything) = server_everything() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    keygen(dir.path(), "agent");
    keygen(dir.path(), "tool");
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-ts-client.cjs");
    let out = Command::new("timeout")
        .args(["120", "node"])
        .arg(client)
        .arg(typescript_sdk())
        .arg(env!("CARGO_BIN_EXE_herald"))
        .args(PROXY)
        .args(["--trace", "s.herald", "--", "node"])
        .arg(everything)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", out.status);
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        seen.pointer("/result/content/0/text"),
        Some(&json!("Echo: over a socket pair")),
        "{seen}"
    );
    assert!(
        seen.pointer("/result/_meta/herald~1envelope").is_some(),
        "{seen}"
    );
    for fd in ["0", "1"] {
        let target = seen["fds"][fd]["target"].as_str().unwrap();
        assert!(target.starts_with("socket:"), "fd {fd}: {target}");
        let info = seen["fds"][fd]["fdinfo"].as_str().unwrap();
        assert_ne!(flags(info) & O_NONBLOCK, 0, "fd {fd}: {info}");
    }
    let run = verify(dir.path(), Path::new("s.herald"), &[]);
    assert_eq!(run.code, 0, "{}", run.out());
    let summary = &run.json()["summary"];
    assert_eq!(
        (&summary["invalid"], &summary["partial"]),
        (&json!(0), &json!(0))
    );
    // The tool identity's birth, the genesis, the request and its result.
    assert!(summary["valid"].as_u64() >= Some(4), "{summary}");
}

/// A shell that runs the proxy (keys made in `dir`), then reports the
/// flags of the ends it shares with it: its standard input and output are
/// the proxy's.
fn shell(dir: &Path) -> Command {
    keygen(dir, "agent");
    keygen(dir, "tool");
    let script = r#""$HERALD" mcp proxy --key agent.key --sandbox-key tool.key --trace s.herald -- cat
        echo "in: $(grep ^flags /proc/$$/fdinfo/0)"
        echo "out: $(grep ^flags /proc/$$/fdinfo/1)""#;
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("HERALD", env!("CARGO_BIN_EXE_herald"));
    shell
}

/// Through `shell`'s proxy, with the client's ends `stdin`, `stdout`: a
/// message crosses, both ends are non-blocking while the proxy runs and
/// blocking once it is done.
fn polled_then_given_back(mut shell: Child, mut stdin: impl Write, stdout: impl Read) {
    let mut stdout = BufReader::new(stdout);
    // A notification goes to the server and comes back untouched.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}"#;
    writeln!(stdin, "{note}").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), note);

    let proxy = proxy_pid(shell.id());
    for fd in [0, 1] {
        let info = std::fs::read_to_string(format!("/proc/{proxy}/fdinfo/{fd}")).unwrap();
        assert_ne!(
            flags(&info) & O_NONBLOCK,
            0,
            "fd {fd} while running: {info}"
        );
    }

    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(shell.wait().unwrap().success(), "{rest}");
    for (side, fd) in [("in: ", "0"), ("out: ", "1")] {
        let report = rest
            .lines()
            .find_map(|l| l.strip_prefix(side))
            .unwrap_or_else(|| panic!("no {side} line in {rest:?}"));
        assert_eq!(flags(report) & O_NONBLOCK, 0, "fd {fd} after: {report}");
    }
}

/// The pid of the shell's child running `herald`.
fn proxy_pid(shell: u32) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
        for pid in children.split_whitespace() {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "herald" {
                return pid.parse().unwrap();
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no herald under the shell"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
