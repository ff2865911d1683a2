//! `herald mcp proxy --listen` against MCP proxies that sign nothing, side
//! by side (docs/performance.md, the comparisons with the tools people
//! would use instead): each exposes `@modelcontextprotocol/server-everything`
//! (a stdio child) over streamable HTTP, and the server's own streamable
//! HTTP mode is the floor no proxy can beat:
//!
//! - `herald mcp proxy --listen` (signs each `tools/call` and co-signs its
//!   result, appends both to its trace and `fdatasync`s it before the
//!   result is released: `--sync release`, its default);
//! - `supergateway --stdio … --outputTransport streamableHttp --stateful`
//!   (npm; stateful, one child per session as herald: its stateless mode
//!   starts a child per request);
//! - `mcp-proxy … COMMAND` (PyPI; streamable HTTP at `/mcp`);
//! - `mcp-server-everything streamableHttp` (no proxy).
//!
//! One client for all: JSON-RPC over one kept-alive HTTP/1.1 connection,
//! written here (a blocking socket; a request's latency ends when the SSE
//! event or JSON body carrying its response has arrived), making the same
//! calls (`initialize`, then `tools/call` of `echo`). Each round starts
//! every side afresh, in an order that alternates between rounds, and
//! makes WARM-UP calls, then CALLS timed ones; the figures are median and
//! p99 over all rounds' calls, with each round's median (the spread), and
//! the CPU time of the side's own process (the proxy, not its child) per
//! call. Goal: herald's median at most 0.8 x the fastest peer's, its p99 no
//! worse than theirs.
//!
//! ```text
//! benches/peers-setup      # supergateway, mcp-proxy, server-everything under ~/.cache/herald-rs/
//! cargo build --release -p herald-cli -p herald-benches
//! cargo run --release -p herald-benches --bin peers_mcp [CALLS [ROUNDS]]
//! ```
//!
//! `HERALD_BIN` names the `herald` binary (default: beside this one);
//! `HERALD_MCP_EVERYTHING`, `HERALD_SUPERGATEWAY` and `HERALD_MCP_PROXY` the
//! peers (default: where benches/peers-setup puts them);
//! `HERALD_MCP_WARMUP` the warm-up calls (default 50).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herald_benches::load::{median, pid_cpu};
use serde_json::json;

const CALLS: usize = 500;
const ROUNDS: usize = 5;
const WARM_UP: usize = 50;
/// Append + fdatasync samples a round.
const SYNC_SAMPLES: usize = 100;

/// The cache directory benches/peers-setup installs the peers in.
fn cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"))
        .join("herald-rs")
}

/// The path in the environment variable `var`, else `default`; it must
/// exist.
fn program(var: &str, default: PathBuf) -> PathBuf {
    let p = std::env::var_os(var).map_or(default, PathBuf::from);
    assert!(
        p.exists(),
        "{}: run benches/peers-setup first (or set {var})",
        p.display()
    );
    p
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process (a proxy and its child, or the server alone), killed
/// when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Start `command` listening on `port`, and wait until it accepts.
    fn on_port(mut command: Command, port: u16, dir: tempfile::TempDir) -> Self {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let t = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "{command:?} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            addr,
            _dir: dir,
        }
    }
}

/// The sides, in the order of the table.
const SIDES: [&str; 4] = [
    "herald mcp proxy",
    "supergateway",
    "mcp-proxy",
    "server's own HTTP (floor)",
];

struct Programs {
    herald: PathBuf,
    everything: PathBuf,
    supergateway: PathBuf,
    mcp_proxy: PathBuf,
}

impl Programs {
    fn start(&self, side: usize) -> Server {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let everything = self.everything.display().to_string();
        let port = free_port();
        match side {
            0 => {
                let d = dir.path();
                for name in ["agent", "tool"] {
                    let st = Command::new(&self.herald)
                        .args(["keygen", "-o"])
                        .arg(d.join(name))
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(st.success());
                }
                let mut child = Command::new(&self.herald)
                    .current_dir(d)
                    .args([
                        "mcp",
                        "proxy",
                        "--key",
                        "agent.key",
                        "--sandbox-key",
                        "tool.key",
                    ])
                    .args(["--trace", "trace.herald", "--listen", "127.0.0.1:0", "--"])
                    .arg("node")
                    .arg(&self.everything)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                let mut out = BufReader::new(child.stdout.take().unwrap());
                let mut line = String::new();
                let addr = loop {
                    line.clear();
                    assert!(out.read_line(&mut line).unwrap() > 0, "the proxy ended");
                    if let Some(a) = line.trim().strip_prefix("listening on http://") {
                        break a.trim_end_matches("/mcp").parse().unwrap();
                    }
                };
                std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
                Server {
                    child,
                    addr,
                    _dir: dir,
                }
            }
            1 => {
                let mut c = Command::new("node");
                c.arg(&self.supergateway)
                    .args(["--stdio", &format!("node {everything}")])
                    .args(["--outputTransport", "streamableHttp", "--stateful"])
                    .args(["--port", &port.to_string(), "--logLevel", "none"]);
                Server::on_port(c, port, dir)
            }
            2 => {
                let mut c = Command::new(&self.mcp_proxy);
                c.args(["--host", "127.0.0.1", "--port", &port.to_string()])
                    .args(["--log-level", "WARNING", "node", &everything]);
                Server::on_port(c, port, dir)
            }
            _ => {
                let mut c = Command::new("node");
                c.arg(&self.everything)
                    .arg("streamableHttp")
                    .env("PORT", port.to_string());
                Server::on_port(c, port, dir)
            }
        }
    }
}

/// One MCP session over one kept-alive HTTP/1.1 connection to `/mcp`.
struct Session {
    stream: BufReader<TcpStream>,
    host: String,
    session: Option<String>,
    next: u64,
}

/// What an answer to a POST held.
struct Answer {
    status: u16,
    /// When the response with the request's id had arrived (None: none in
    /// the answer, e.g. a 202).
    at: Option<Instant>,
    response: Option<serde_json::Value>,
}

impl Session {
    fn open(addr: SocketAddr) -> Self {
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_nodelay(true).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut s = Self {
            stream: BufReader::new(tcp),
            host: addr.to_string(),
            session: None,
            next: 1,
        };
        let a = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}),
        );
        assert!(a.response.unwrap().get("result").is_some());
        let a = s.post(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            None,
        );
        assert_eq!(a.status, 202);
        s
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> Answer {
        let id = self.next;
        self.next += 1;
        let a = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            Some(id),
        );
        assert_eq!(a.status, 200, "{method}");
        assert!(a.at.is_some(), "{method}: no response");
        a
    }

    /// POST `m` and read the whole answer, noting when the response to `id`
    /// arrived.
    fn post(&mut self, m: &serde_json::Value, id: Option<u64>) -> Answer {
        let body = m.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(s) = &self.session {
            head.push_str(&format!(
                "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
            ));
        }
        head.push_str("\r\n");
        head.push_str(&body);
        self.stream.get_mut().write_all(head.as_bytes()).unwrap();

        let mut line = String::new();
        self.stream.read_line(&mut line).unwrap();
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("status line {line:?}"));
        let (mut length, mut chunked, mut sse) = (None, false, false);
        loop {
            line.clear();
            self.stream.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (name, value) = l.split_once(':').unwrap();
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "content-type" => sse = value.starts_with("text/event-stream"),
                "mcp-session-id" => self.session = Some(value.to_string()),
                _ => {}
            }
        }
        let mut answer = Answer {
            status,
            at: None,
            response: None,
        };
        let mut got = Vec::new();
        let seen = |got: &[u8], answer: &mut Answer| {
            if answer.at.is_none()
                && let Some(r) = find_response(got, sse, id)
            {
                answer.at = Some(Instant::now());
                answer.response = Some(r);
            }
        };
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).unwrap();
                let n = usize::from_str_radix(line.trim().split(';').next().unwrap(), 16)
                    .unwrap_or_else(|_| panic!("chunk size {line:?}"));
                let start = got.len();
                got.resize(start + n, 0);
                self.stream.read_exact(&mut got[start..]).unwrap();
                line.clear();
                self.stream.read_line(&mut line).unwrap();
                if n == 0 {
                    break;
                }
                seen(&got, &mut answer);
            }
        } else {
            got.resize(length.unwrap_or(0), 0);
            self.stream.read_exact(&mut got).unwrap();
            seen(&got, &mut answer);
        }
        answer
    }

    /// The latency of each of `n` echo calls.
    fn calls(&mut self, n: usize) -> Vec<Duration> {
        (0..n)
            .map(|i| {
                let t = Instant::now();
                let a = self.request(
                    "tools/call",
                    json!({"name": "echo", "arguments": {"message": format!("call {i}")}}),
                );
                let r = a.response.unwrap();
                assert!(r.pointer("/result/content").is_some(), "{r}");
                a.at.unwrap() - t
            })
            .collect()
    }
}

/// The JSON-RPC response to `id` in `body` so far (an SSE stream's
/// complete events, or a JSON body), if there.
fn find_response(body: &[u8], sse: bool, id: Option<u64>) -> Option<serde_json::Value> {
    let id = id?;
    let is_ours =
        |m: &serde_json::Value| m.get("id") == Some(&json!(id)) && m.get("method").is_none();
    let text = std::str::from_utf8(body).ok()?;
    if !sse {
        let m: serde_json::Value = serde_json::from_str(text).ok()?;
        return is_ours(&m).then_some(m);
    }
    let text = text.replace("\r\n", "\n");
    // Complete events only: each ends with an empty line.
    let complete = &text[..text.rfind("\n\n")? + 2];
    complete.split("\n\n").find_map(|event| {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        let m: serde_json::Value = serde_json::from_str(&data.join("\n")).ok()?;
        is_ours(&m).then_some(m)
    })
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn quantile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p) as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().map_or(CALLS, |a| a.parse().expect("CALLS"));
    let rounds: usize = args.next().map_or(ROUNDS, |a| a.parse().expect("ROUNDS"));
    let warm_up: usize = std::env::var("HERALD_MCP_WARMUP").map_or(WARM_UP, |v| v.parse().unwrap());
    let c = cache();
    let p = Programs {
        herald: program(
            "HERALD_BIN",
            std::env::current_exe().unwrap().with_file_name("herald"),
        ),
        everything: program(
            "HERALD_MCP_EVERYTHING",
            c.join("npm/server-everything-2026.8.31/node_modules/.bin/mcp-server-everything"),
        ),
        supergateway: program(
            "HERALD_SUPERGATEWAY",
            c.join("npm/supergateway-4.0.0/node_modules/supergateway/dist/index.js"),
        ),
        mcp_proxy: program(
            "HERALD_MCP_PROXY",
            c.join("py/mcp-proxy-0.13.0/bin/mcp-proxy"),
        ),
    };
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); SIDES.len()];
    // Each round's (median, p99), microseconds.
    let mut round_medians: Vec<Vec<(f64, f64)>> = vec![Vec::new(); SIDES.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); SIDES.len()];
    // herald's own stage no peer has: the trace's fdatasync before each
    // result (`--sync release`), sampled on the same disk each round.
    let sync_dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let mut sync_file = std::fs::File::create(sync_dir.path().join("append")).unwrap();
    let mut syncs = Vec::new();
    for round in 0..rounds {
        let mut line = format!("round {round}:");
        let order: Vec<usize> = if round % 2 == 0 {
            (0..SIDES.len()).collect()
        } else {
            (0..SIDES.len()).rev().collect()
        };
        for side in order {
            let server = p.start(side);
            let mut s = Session::open(server.addr);
            s.calls(warm_up);
            let cpu0 = pid_cpu(server.child.id());
            let mut these = s.calls(calls);
            cpu[side].push((pid_cpu(server.child.id()) - cpu0) / calls as f64);
            drop(s);
            drop(server);
            these.sort();
            let m = us(quantile(&these, 0.5));
            let q = us(quantile(&these, 0.99));
            line.push_str(&format!(" {} {m:.0} us (p99 {q:.0});", SIDES[side]));
            round_medians[side].push((m, q));
            times[side].extend(these);
        }
        for _ in 0..SYNC_SAMPLES {
            let t = Instant::now();
            sync_file.write_all(&[0x5a; 400]).unwrap();
            sync_file.sync_data().unwrap();
            syncs.push(t.elapsed());
        }
        eprintln!("{line}");
    }
    syncs.sort();
    println!(
        "mcp tools/call (server-everything echo), one kept-alive HTTP/1.1 connection, {calls} calls x {rounds} rounds after {warm_up} warm-up calls each:"
    );
    println!(
        "  {:<28}{:>11}{:>11}{:>16}   rounds' median/p99 (us)",
        "", "median us", "p99 us", "own CPU us/call"
    );
    let mut med = vec![Duration::ZERO; SIDES.len()];
    let mut p99 = vec![Duration::ZERO; SIDES.len()];
    for side in 0..SIDES.len() {
        times[side].sort();
        med[side] = quantile(&times[side], 0.5);
        p99[side] = quantile(&times[side], 0.99);
        let rm: Vec<String> = round_medians[side]
            .iter()
            .map(|(m, q)| format!("{m:.0}/{q:.0}"))
            .collect();
        println!(
            "  {:<28}{:>11.0}{:>11.0}{:>16.0}   {}",
            SIDES[side],
            us(med[side]),
            us(p99[side]),
            median(&mut cpu[side]) * 1e6,
            rm.join(" ")
        );
    }
    println!(
        "  {:<28}{:>11.0}{:>11.0}   (a 400-byte append + fdatasync, {SYNC_SAMPLES} a round on the traces' disk: herald's, per call)",
        "append + fdatasync",
        us(quantile(&syncs, 0.5)),
        us(quantile(&syncs, 0.99)),
    );
    let fastest = if med[1] <= med[2] { 1 } else { 2 };
    // The p99 over all calls, and the median of the rounds' p99s (one
    // disturbed round, which under load hits the side it lands on, moves
    // the first and not the second).
    let round_p99: Vec<f64> = round_medians
        .iter()
        .map(|r| median(&mut r.iter().map(|&(_, q)| q).collect::<Vec<_>>()))
        .collect();
    let verdict = |h: f64, peers: f64| if h <= peers { "no worse" } else { "WORSE" };
    println!(
        "  herald median / fastest peer's ({}): {:.2} (goal <= 0.8)",
        SIDES[fastest],
        med[0].as_secs_f64() / med[fastest].as_secs_f64(),
    );
    println!(
        "  p99 over all calls: herald {:.0} us, supergateway {:.0} us, mcp-proxy {:.0} us ({}); median of the rounds' p99: herald {:.0} us, supergateway {:.0} us, mcp-proxy {:.0} us ({})",
        us(p99[0]),
        us(p99[1]),
        us(p99[2]),
        verdict(us(p99[0]), us(p99[1].min(p99[2]))),
        round_p99[0],
        round_p99[1],
        round_p99[2],
        verdict(round_p99[0], round_p99[1].min(round_p99[2])),
    );
}
