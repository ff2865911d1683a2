//! MCP wrapper overhead (docs/performance.md *(10)*): in one run,
//! the latency of a `tools/call` (server-everything's `echo`) made directly
//! and through `herald mcp proxy`, and the budget docs/performance.md *(10)* sets for the
//! difference: 2 × (one envelope sign + verify) + one trace-file append
//! (write + fdatasync), measured here on the same machine and disk.
//!
//! ```text
//! cargo build --release -p herald-cli
//! HERALD_MCP_EVERYTHING=…/node_modules/.bin/mcp-server-everything \
//!     [HERALD_MCP_BASELINE=path/to/another/herald] \
//!     cargo run --release -p herald-benches --bin mcp [CALLS [ROUNDS]]
//! ```
//!
//! `HERALD_MCP_WARMUP` (default 20) sets the warm-up calls of each session
//! and `HERALD_MCP_GAP_US` (default 0) a pause before each call, as a model
//! that thinks between calls would make: with it, the server and the
//! wrapper are idle between calls, as they are in use.
//!
//! Direct and proxied sessions (the default `--sync release`, then `--sync
//! each`, then the baseline binary's proxy when `HERALD_MCP_BASELINE` names
//! one: an A/B in one run) alternate in ROUNDS rounds (default 3), each a
//! fresh session of CALLS calls after a warm-up, and each round also
//! samples the budget's terms, so drift (this machine's `fdatasync` varies
//! from 0.15 to 4 ms with the other work on its disk) hits all alike; the
//! figures are medians over all calls and samples.
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
/// Samples of each budget term per round.
const SIGN_SAMPLES: usize = 700;
const APPEND_SAMPLES: usize = 100;

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

    /// Latency of each of `n` echo calls, each made `gap` after the last
    /// answer.
    fn calls(&mut self, n: usize, gap: Duration) -> Vec<Duration> {
        (0..n)
            .map(|i| {
                if !gap.is_zero() {
                    std::thread::sleep(gap);
                }
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

/// Times of one sign (request-shaped payload) + one single-envelope verify.
fn sign_verify(key: &SigningKey, keyring: &Keyring) -> Vec<Duration> {
    let opts = CheckOptions {
        now: Some(now()),
        ..CheckOptions::default()
    };
    (0..SIGN_SAMPLES)
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
        .collect()
}

/// Times of one append of `bytes` + fdatasync to `file`.
fn append(file: &mut std::fs::File, bytes: &[u8]) -> Vec<Duration> {
    (0..APPEND_SAMPLES)
        .map(|_| {
            let t = Instant::now();
            file.write_all(bytes).unwrap();
            file.sync_data().unwrap();
            t.elapsed()
        })
        .collect()
}

/// The number in the environment variable `name`, else `default`.
fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args
        .next()
        .map_or(300, |a| a.parse().expect("CALLS is a number"));
    let rounds: usize = args
        .next()
        .map_or(ROUNDS, |a| a.parse().expect("ROUNDS is a number"));
    let gap = Duration::from_micros(env_number("HERALD_MCP_GAP_US", 0) as u64);
    let warm_up = env_number("HERALD_MCP_WARMUP", WARM_UP);
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
    let baseline = std::env::var_os("HERALD_MCP_BASELINE").map(PathBuf::from);
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
    let proxied = |bin: &Path, extra: &[&str], trace: String| {
        let mut c = Command::new(bin);
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
            .arg(trace)
            .args(extra)
            .arg("--")
            .arg("node")
            .arg(&server);
        c
    };
    // What each round runs: (label, command for round r).
    type Side<'a> = (&'a str, Box<dyn Fn(usize) -> Command + 'a>);
    let mut sides: Vec<Side> = vec![
        ("direct", Box::new(|_| direct())),
        (
            "through herald mcp proxy",
            Box::new(|r| proxied(&herald, &[], format!("round{r}.herald"))),
        ),
        (
            "  with --sync each",
            Box::new(|r| proxied(&herald, &["--sync", "each"], format!("each{r}.herald"))),
        ),
    ];
    if let Some(base) = &baseline {
        sides.push((
            "  baseline's proxy",
            Box::new(move |r| proxied(base, &[], format!("base{r}.herald"))),
        ));
    }

    let key = SigningKey::generate_os();
    let mut keyring = Keyring::new();
    keyring.insert(key.public_key(), Provenance::Pinned);
    let sample = EnvelopeBuilder::genesis(now())
        .payload(Value::text("x".repeat(200)))
        .sign(&key)
        .unwrap()
        .cosign(&SigningKey::generate_os(), Scope::ToolSandbox, None)
        .unwrap();
    let mut append_file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(d.join("append.bench"))
        .unwrap();

    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    let (mut sv, mut ap) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Each round's medians on standard error: which side the disk's
        // slow minutes hit.
        let mut line = format!("round {round}:");
        for ((label, command), out) in sides.iter().zip(&mut times) {
            let mut s = Session::start(command(round));
            s.calls(warm_up, gap);
            let mut these = s.calls(calls, gap);
            s.close();
            line.push_str(&format!(
                " {} {:.0} us;",
                label.trim(),
                us(median(&mut these))
            ));
            out.extend(these);
        }
        sv.extend(sign_verify(&key, &keyring));
        let mut appends = append(&mut append_file, sample.as_bytes());
        eprintln!(
            "{line} append + fdatasync {:.0} us",
            us(median(&mut appends))
        );
        ap.extend(appends);
    }
    let medians: Vec<Duration> = times.iter_mut().map(|t| median(t)).collect();
    let plain = medians[0];
    let sv = median(&mut sv);
    let ap = median(&mut ap);
    let budget = sv * 2 + ap;
    let _ = key.sigil(SigilForm::Default);

    println!("mcp tools/call (server-everything echo), {calls} calls x {rounds} rounds, medians:");
    println!(
        "  {:<28}{:>12}{:>12}{:>9}",
        "", "per call", "added", "/ budget"
    );
    for ((label, _), m) in sides.iter().zip(&medians) {
        let added = m.saturating_sub(plain);
        if added.is_zero() {
            println!("  {label:<28}{:>9.1} us", us(*m));
        } else {
            println!(
                "  {label:<28}{:>9.1} us{:>9.1} us{:>9.2}",
                us(*m),
                us(added),
                added.as_secs_f64() / budget.as_secs_f64()
            );
        }
    }
    println!("  one sign + verify           {:>9.1} us", us(sv));
    println!("  one append + fdatasync      {:>9.1} us", us(ap));
    println!("  budget 2(sign+verify)+append {:>8.1} us", us(budget));
    let added = medians[1].saturating_sub(plain);
    println!("  added per call              {:>9.1} us", us(added));
    println!(
        "  added / budget              {:>9.2}  ({})",
        added.as_secs_f64() / budget.as_secs_f64(),
        if added <= budget { "within" } else { "OVER" }
    );
}
