//! The MCP tests that need no Node: `herald mcp proxy` / `guard` in front
//! of tests/fixtures/mcp-sh-server.sh (a server in POSIX sh that logs each
//! `tools/call` it gets to `$PROBE_LOG`, signed or not), a line client
//! over stdio, and raw HTTP/1.1 to `--listen`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Longest wait for any one answer.
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// The sh server's script.
pub(crate) fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-sh-server.sh")
}

/// `herald ARGS… -- sh mcp-sh-server.sh` in `dir`, logging to `log`.
pub(crate) fn command(dir: &Path, args: &[&str], log: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_herald"));
    c.args(args)
        .arg("--")
        .arg("sh")
        .arg(script())
        .env("PROBE_LOG", log)
        .current_dir(dir);
    c
}

/// The `tools/call`s the server got: `(id, signed)`.
pub(crate) fn calls(log: &Path) -> Vec<(String, bool)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split(' ').skip(1);
            Some((w.next()?.to_owned(), w.next()? == "signed"))
        })
        .collect()
}

/// An MCP client over the stdio of a proxy or guard.
pub(crate) struct LineClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::Receiver<Value>,
}

impl LineClient {
    pub(crate) fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            incoming,
        }
    }

    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message within `within`, `None` after it.
    pub(crate) fn next(&mut self, within: Duration) -> Option<Value> {
        self.incoming.recv_timeout(within).ok()
    }

    /// The next message that is not a notification, within [`WAIT`].
    pub(crate) fn answer(&mut self) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self.next(left).expect("no answer in time");
            if m.get("method").is_none() {
                return m;
            }
        }
    }

    /// `initialize` (id 1), answered, then optionally `initialized`.
    pub(crate) fn initialize(&mut self, initialized: bool) {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}));
        let r = self.answer();
        assert_eq!(r["id"], json!(1), "{r}");
        if initialized {
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
    }

    /// A signed call of `probe` (id `id`) answered `ran`.
    pub(crate) fn call_ok(&mut self, id: u64) {
        self.send(&call(json!(id)));
        let r = self.answer();
        assert_eq!(r["id"], json!(id), "{r}");
        assert_eq!(
            r.pointer("/result/content/0/text"),
            Some(&json!("ran")),
            "{r}"
        );
    }

    /// Close standard input and wait (bounded) for the exit.
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("it did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `tools/call` of `probe` with `id` (`Value::Null` for `"id": null`).
pub(crate) fn call(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "probe", "arguments": {}}})
}

/// A `tools/call` of `probe` without an id (a notification).
pub(crate) fn call_without_id() -> Value {
    json!({"jsonrpc": "2.0", "method": "tools/call",
           "params": {"name": "probe", "arguments": {}}})
}

/// `herald mcp proxy --listen 127.0.0.1:0 extra…` in front of the sh
/// server: the process and its `HOST:PORT`.
pub(crate) fn listen(dir: &Path, extra: &[&str], log: &Path) -> (Child, String) {
    let mut args = vec![
        "mcp",
        "proxy",
        "--key",
        "agent.key",
        "--sandbox-key",
        "tool.key",
        "--trace",
        "t.herald",
        "--listen",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    let mut child = command(dir, &args, log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = super::listening(&mut child, "listening on http://");
    let addr = addr.strip_suffix("/mcp").unwrap().to_owned();
    (child, addr)
}

/// One HTTP/1.1 exchange (`Connection: close`): the status and the answer.
/// `headers` are whole lines, each ending `\r\n`.
pub(crate) fn http(addr: &str, method: &str, headers: &str, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    write!(
        s,
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n{headers}Accept: application/json, \
         text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not HTTP: {answer:?}"));
    (status, answer)
}

/// The `Mcp-Session-Id` of an answer.
pub(crate) fn session_of(answer: &str) -> Option<String> {
    answer.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("mcp-session-id:")
            .map(|v| v.trim().to_owned())
    })
}

/// The JSON in an answer's body: an SSE `data:` line, or the body itself.
pub(crate) fn body_json(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let data = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(body);
    serde_json::from_str(data.trim()).unwrap_or_else(|e| panic!("no JSON ({e}): {answer}"))
}

/// The child processes of `pid` that have not ended (Linux).
pub(crate) fn live_children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .filter(|c| {
            std::fs::read_to_string(format!("/proc/{c}/stat")).is_ok_and(|stat| {
                let state = stat.rsplit_once(')').map(|(_, r)| r.trim_start());
                !state.is_some_and(|r| r.starts_with('Z'))
            })
        })
        .collect()
}

/// Resident memory of `pid`, bytes (`VmRSS`, Linux); 0 once it is gone.
pub(crate) fn rss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}
