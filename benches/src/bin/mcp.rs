//! MCP wrapper overhead (issue 19, docs/performance.md *(9)*): in one run,
//! the latency of a `tools/call` (server-everything's `echo`) made directly
//! and through `herald mcp proxy`, and the budget the issue sets for the
//! difference: 2 × (one envelope sign + verify) + one trace-file append
//! (write + fdatasync), measured here on the same machine and disk.
//!
//! ```text
//! cargo build --release -p herald-cli
//! HERALD_MCP_EVERYTHING=…/node_modules/.bin/mcp-server-everything \
//!     cargo run --release -p herald-benches --bin mcp [CALLS]
//! ```
//!
//! Direct and proxied sessions alternate in rounds (each round a fresh
//! session of CALLS calls after a warm-up), so drift hits both alike; the
//! figures are medians over all calls.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use herald_core::cbor::{Map, Value};
use herald_core::{CheckOptions, EnvelopeBuilder, Scope, SigilForm, SigningKey};
use herald_verify::{Keyring, Provenance};
use serde_json::json;

const ROUNDS: usize = 3;
const WARM_UP: usize = 20;

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Session {
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Self {
            child,
            stdin,
            stdout,
            next: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, m: &serde_json::Value) {
        let mut line = m.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "session ended"
            );
            let m: serde_json::Value = serde_json::from_str(&line).unwrap();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// Latency of each of `n` echo calls.
    fn calls(&mut self, n: usize) -> Vec<Duration> {
        (0..n)
            .map(|i| {
                let t = Instant::now();
                let r = self.request(
                    "tools/call",
                    json!({"name": "echo", "arguments": {"message": format!("call {i}")}}),
                );
                let took = t.elapsed();
                assert!(r.pointer("/result/content").is_some(), "{r}");
                took
            })
            .collect()
    }

    fn close(mut self) {
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Median of one sign (request-shaped payload) + one single-envelope verify.
fn sign_verify(key: &SigningKey, keyring: &Keyring) -> Duration {
    let opts = CheckOptions {
        now: Some(now()),
        ..CheckOptions::default()
    };
    let mut times: Vec<Duration> = (0..2000)
        .map(|i| {
            let mut payload = Map::new();
            payload.insert("mcp", Value::text("tools/call"));
            payload.insert("name", Value::text("echo"));
            let mut args = Map::new();
            args.insert("message", Value::text(format!("call {i}")));
            payload.insert("arguments", Value::Map(args));
            let t = Instant::now();
            let e = EnvelopeBuilder::genesis(now())
                .attest("tools", Value::Array(vec![Value::text("echo")]))
                .payload(Value::Map(payload))
                .sign(key)
                .unwrap();
            let mut reasons = Vec::new();
            let checked = herald_core::check(e.as_bytes(), keyring, &opts, &mut reasons);
            let took = t.elapsed();
            assert_eq!(checked.status, herald_core::Status::Valid);
            took
        })
        .collect();
    median(&mut times)
}

/// Median of one append of `bytes` + fdatasync in `dir`.
fn append(dir: &Path, bytes: &[u8]) -> Duration {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("append.bench"))
        .unwrap();
    let mut times: Vec<Duration> = (0..300)
        .map(|_| {
            let t = Instant::now();
            f.write_all(bytes).unwrap();
            f.sync_data().unwrap();
            t.elapsed()
        })
        .collect();
    median(&mut times)
}

fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .map_or(300, |a| a.parse().expect("CALLS is a number"));
    let server = PathBuf::from(
        std::env::var_os("HERALD_MCP_EVERYTHING")
            .expect("set HERALD_MCP_EVERYTHING to server-everything's bin (see .ci/run)"),
    );
    let herald = std::env::current_exe().unwrap().with_file_name("herald");
    assert!(
        herald.exists(),
        "{}: build it first (cargo build --release -p herald-cli)",
        herald.display()
    );
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let d = dir.path();
    for name in ["agent", "tool"] {
        let st = Command::new(&herald)
            .args(["keygen", "-o"])
            .arg(d.join(name))
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    }

    let direct = || {
        let mut c = Command::new("node");
        c.arg(&server);
        c
    };
    let proxied = |round: usize| {
        let mut c = Command::new(&herald);
        c.current_dir(d)
            .args([
                "mcp",
                "proxy",
                "--key",
                "agent.key",
                "--sandbox-key",
                "tool.key",
            ])
            .arg("--trace")
            .arg(format!("round{round}.herald"))
            .arg("--")
            .arg("node")
            .arg(&server);
        c
    };
    let (mut plain, mut wrapped) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        for (command, out) in [(direct(), &mut plain), (proxied(round), &mut wrapped)] {
            let mut s = Session::start(command);
            s.calls(WARM_UP);
            out.extend(s.calls(calls));
            s.close();
        }
    }
    let plain = median(&mut plain);
    let wrapped = median(&mut wrapped);
    let added = wrapped.saturating_sub(plain);

    let key = SigningKey::generate_os();
    let mut keyring = Keyring::new();
    keyring.insert(key.public_key(), Provenance::Pinned);
    let sv = sign_verify(&key, &keyring);
    let sample = EnvelopeBuilder::genesis(now())
        .payload(Value::text("x".repeat(200)))
        .sign(&key)
        .unwrap()
        .cosign(&SigningKey::generate_os(), Scope::ToolSandbox, None)
        .unwrap();
    let ap = append(d, sample.as_bytes());
    let budget = sv * 2 + ap;
    let _ = key.sigil(SigilForm::Default);

    println!("mcp tools/call (server-everything echo), {calls} calls x {ROUNDS} rounds, medians:");
    println!("  direct                      {:>9.1} us", us(plain));
    println!("  through herald mcp proxy    {:>9.1} us", us(wrapped));
    println!("  added per call              {:>9.1} us", us(added));
    println!("  one sign + verify           {:>9.1} us", us(sv));
    println!("  one append + fdatasync      {:>9.1} us", us(ap));
    println!("  budget 2(sign+verify)+append {:>8.1} us", us(budget));
    println!(
        "  added / budget              {:>9.2}  ({})",
        added.as_secs_f64() / budget.as_secs_f64(),
        if added <= budget { "within" } else { "OVER" }
    );
}
