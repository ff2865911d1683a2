//! `herald mcp proxy`'s release order (docs/mcp.md *Release order*), seen
//! from outside: with `--sync release` (the default) and `--sync each`, the
//! server finds each call's request envelope in the trace file when the
//! call reaches it, the client finds the result's envelope in the file when
//! the result reaches it, and the trace verifies. That the result is
//! `fdatasync`ed (with its request) before it is released is asserted in
//! `herald-mcp` (`ledger.rs`), where the sync can be seen.
//!
//! The server is `tests/mcp-probe-server.cjs` (Node.js, as for the other
//! MCP tests): it reads the trace file on every `tools/call`. Without
//! Node the tests are skipped with one line (`herald_testkit::external`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use data_encoding::BASE64;
use serde_json::{Value, json};
use support::keygen;
use support::mcp::{PROXY, verify};

/// The proxy in front of the probe server, and the client's ends.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    fn start(dir: &Path, sync: Option<&str>) -> Self {
        let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-probe-server.cjs");
        let mut command = Command::new(env!("CARGO_BIN_EXE_herald"));
        command
            .current_dir(dir)
            .env("PROBE_TRACE", dir.join("s.herald"))
            .args(PROXY)
            .args(["--trace", "s.herald"]);
        if let Some(when) = sync {
            command.args(["--sync", when]);
        }
        let mut child = command
            .arg("--")
            .arg("node")
            .arg(probe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and read until its response.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "no answer");
            let m: Value = serde_json::from_str(&line).unwrap();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
        }
    }

    fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "exit {status}");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
    }
}

/// Three calls through the proxy with `--sync` `sync` (absent: the
/// default); each request was in the file when the server got it, each
/// result when the client got it, and the trace verifies.
fn calls_in_order(sync: Option<&str>) {
    if herald_testkit::external::require("node", "apt-get install nodejs").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    keygen(dir.path(), "agent");
    keygen(dir.path(), "tool");
    let mut s = Session::start(dir.path(), sync);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 2..5 {
        let r = s.request(id, "tools/call", json!({"name": "probe", "arguments": {}}));
        assert_eq!(
            r.pointer("/result/content/0/text"),
            Some(&json!("in the trace file")),
            "{r}"
        );
        let result = r
            .pointer("/result/_meta/herald~1envelope")
            .and_then(Value::as_str)
            .unwrap();
        let result = BASE64.decode(result.as_bytes()).unwrap();
        let file = std::fs::read(dir.path().join("s.herald")).unwrap();
        assert!(
            file.ends_with(&result),
            "the released result is not the file's last envelope"
        );
    }
    s.finish();
    let run = verify(dir.path(), Path::new("s.herald"), &[]);
    assert_eq!(run.code, 0, "{}", run.out());
    // The birth, the genesis, and a request and a result per call.
    assert_eq!(
        run.json()["summary"],
        json!({"valid": 8, "partial": 0, "invalid": 0}),
        "{}",
        run.out()
    );
}

#[test]
fn by_default_a_call_reaches_the_server_after_its_request_is_in_the_trace_file() {
    calls_in_order(None);
}

#[test]
fn with_sync_each_too() {
    calls_in_order(Some("each"));
}
