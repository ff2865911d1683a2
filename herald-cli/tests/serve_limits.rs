//! Every HERALD server against slow and idle clients (docs/conduit.md
//! *Limits against slow and idle clients*), through the real binary on
//! loopback: `herald conduit serve`, `herald witness serve`, `herald
//! inspect --serve` and `herald mcp proxy --listen`, each with the
//! defaults it ships with (a header read timeout of 10 s, a shutdown grace
//! of 10 s).
//!
//! - a request head trickled one byte a second is closed when the header
//!   read timeout ends, not kept open;
//! - idle connections held open by the hundred, under a soft limit of 256
//!   file descriptors, do not keep a genuine request from being answered
//!   (the server raises its soft limit to the hard limit);
//! - SIGTERM while a client stalls in the middle of its request head: the
//!   server exits 0 within the shutdown grace (CONDUIT.md *Operation*).
//!
//! The four servers are tried in parallel threads, each bounded in time.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{herald, keygen};

/// The header read timeout and shutdown grace the servers ship with.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Scheduling slack on a shared machine.
const MARGIN: Duration = Duration::from_secs(3);
/// How long a test waits for what must happen within `TIMEOUT`.
const GIVE_UP: Duration = Duration::from_secs(15);

#[derive(Clone, Copy, Debug)]
enum Kind {
    Conduit,
    Witness,
    Inspector,
    Mcp,
}

const KINDS: [Kind; 4] = [Kind::Conduit, Kind::Witness, Kind::Inspector, Kind::Mcp];

/// A running server, killed when dropped.
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

/// The arguments that start `kind` on 127.0.0.1:0 in `d`.
fn args(kind: Kind, d: &Path) -> Vec<String> {
    let owned = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    match kind {
        Kind::Conduit => {
            support::conduit::write_files(d);
            owned(&[
                "conduit",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--key",
                "conduit.key",
                "--state",
                "state",
                "--keyring",
                "keyring",
            ])
        }
        Kind::Witness => {
            keygen(d, "w");
            let log = herald(
                d,
                &["witness", "key", "--key", "w.key", "--name", "log.test"],
            );
            log.expect(0);
            let mut a = owned(&[
                "witness",
                "serve",
                "--key",
                "w.key",
                "--state",
                "state",
                "--listen",
                "127.0.0.1:0",
                "--log-key",
            ]);
            a.push(format!("log.test={}", log.out().trim()));
            a
        }
        Kind::Inspector => owned(&["inspect", "--serve", "--listen", "127.0.0.1:0"]),
        Kind::Mcp => {
            keygen(d, "agent");
            keygen(d, "tool");
            let mut a = owned(&support::mcp::PROXY);
            a.extend(owned(&[
                "--trace",
                "trace",
                "--listen",
                "127.0.0.1:0",
                "--",
                "cat",
            ]));
            a
        }
    }
}

/// Start `kind`; with `soft_fds`, under that soft file-descriptor limit
/// (set by the shell before it runs the binary).
fn start(kind: Kind, soft_fds: Option<u32>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let args = args(kind, dir.path());
    let bin = env!("CARGO_BIN_EXE_herald");
    let mut cmd = match soft_fds {
        None => Command::new(bin),
        Some(n) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -Sn {n} && exec \"$0\" \"$@\""))
                .arg(bin);
            c
        }
    };
    let mut child = cmd
        .args(&args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let rest = support::listening(&mut child, "listening on http://");
    // `ADDR`, `ADDR/mcp` (MCP) or `ADDR/#token=…` (the inspector).
    let addr = rest.split('/').next().unwrap_or(&rest).parse().unwrap();
    Server {
        child,
        addr,
        _dir: dir,
    }
}

/// A genuine request on a new connection: whether an HTTP answer began
/// within 5 s (any status: the four servers answer `/healthz` differently).
fn answered(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let mut got = [0u8; 9];
    s.read_exact(&mut got).is_ok() && &got == b"HTTP/1.1 "
}

/// Send a request head to `addr` one byte a second, never finishing it;
/// how long until the server closed the connection (or `None` after
/// `GIVE_UP`). Each one-second read timeout paces the next byte.
fn trickle_until_closed(addr: SocketAddr) -> Option<Duration> {
    let start = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let head = format!("POST /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ");
    let mut buf = [0u8; 512];
    for i in 0.. {
        if start.elapsed() > GIVE_UP {
            return None;
        }
        let byte = head.as_bytes().get(i).copied().unwrap_or(b'a');
        if s.write_all(&[byte]).is_err() {
            return Some(start.elapsed());
        }
        match s.read(&mut buf) {
            // Closed, or an answer (a 408) before closing.
            Ok(_) => return Some(start.elapsed()),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some(start.elapsed()),
        }
    }
    None
}

/// Run `check` on each of the four servers in its own thread.
fn on_every_server(check: fn(Kind)) {
    let threads: Vec<_> = KINDS
        .into_iter()
        .map(|k| (k, std::thread::spawn(move || check(k))))
        .collect();
    let failed: Vec<_> = threads
        .into_iter()
        .filter_map(|(k, t)| t.join().is_err().then_some(k))
        .collect();
    assert!(failed.is_empty(), "failed on {failed:?}");
}

#[test]
fn a_trickled_request_head_is_closed_at_the_header_read_timeout() {
    on_every_server(|kind| {
        let server = start(kind, None);
        let open = trickle_until_closed(server.addr);
        let open = open.unwrap_or_else(|| panic!("{kind:?}: still open after {GIVE_UP:?}"));
        assert!(
            open >= TIMEOUT - MARGIN && open <= TIMEOUT + MARGIN,
            "{kind:?}: a trickled head stayed open {open:?}"
        );
    });
}

#[test]
fn idle_connections_do_not_starve_a_genuine_request() {
    // The server must be able to raise its soft limit past what is held.
    let hard = Command::new("sh")
        .args(["-c", "ulimit -Hn"])
        .output()
        .unwrap();
    let hard = String::from_utf8_lossy(&hard.stdout).trim().to_owned();
    if hard != "unlimited" && hard.parse::<u64>().is_ok_and(|h| h < 1024) {
        eprintln!("skipped: the hard file-descriptor limit ({hard}) is under 1024");
        return;
    }
    // One server at a time: the test holds 300 sockets per server.
    for kind in KINDS {
        let server = start(kind, Some(256));
        let idle: Vec<TcpStream> = (0..300)
            .map(|_| TcpStream::connect(server.addr).unwrap())
            .collect();
        let t = Instant::now();
        assert!(
            answered(server.addr),
            "{kind:?}: no answer with {} idle connections held",
            idle.len()
        );
        assert!(
            t.elapsed() < TIMEOUT,
            "{kind:?}: answered only when idle ones closed"
        );
    }
}

#[test]
fn sigterm_with_a_stalled_client_exits_within_the_grace() {
    on_every_server(|kind| {
        let mut server = start(kind, None);
        let mut stalled = TcpStream::connect(server.addr).unwrap();
        stalled.write_all(b"GET /healthz HTTP/1.1\r\nHo").unwrap();
        // Connections are accepted in order by one loop: once a later one
        // is answered, the stalled one is being served.
        assert!(answered(server.addr), "{kind:?}: no answer");
        let pid = server.child.id().to_string();
        let t = Instant::now();
        let term = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(term.success());
        let status = loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                t.elapsed() < GIVE_UP,
                "{kind:?}: no exit {GIVE_UP:?} after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(status.success(), "{kind:?}: {status}");
        assert!(
            t.elapsed() <= TIMEOUT + MARGIN,
            "{kind:?}: exited {:?} after SIGTERM",
            t.elapsed()
        );
        drop(stalled);
    });
}
