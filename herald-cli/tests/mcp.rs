//! `herald mcp proxy` against a real MCP server nobody here wrote
//! (`@modelcontextprotocol/server-everything` from the npm registry;
//! docs/mcp.md *How it is tested*): the client sees what it sees without
//! the wrapper (apart from the `herald/…` keys in `_meta`), progress and
//! cancellation pass through, the trace verifies, tampering is caught, and
//! no form of a secret key appears in any byte of the session.
//!
//! The server comes from `$HERALD_MCP_EVERYTHING` (set by `.ci/run`, which
//! installs it) or is installed with npm into this target's scratch dir;
//! without Node (or npm) a test that needs it is skipped with one line
//! (`herald_testkit::external`; a failure under `HERALD_TEST_ALL=1`).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use data_encoding::{BASE64, BASE64_NOPAD, BASE64URL, BASE64URL_NOPAD, HEXLOWER, HEXUPPER};
use herald_testkit::external;
use serde_json::{Value, json};
use support::mcp::{everything, server_everything};
use support::{herald, keygen};

/// Longest wait for any one answer.
const WAIT: Duration = Duration::from_secs(60);

/// One session with a real server at a time: on a 2-core CI machine,
/// parallel node servers would make the timing of cancellation (and so
/// what a test can compare) depend on the load.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A raw MCP client over stdio: every byte both ways is kept.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::Receiver<Value>,
    transcript: Arc<Mutex<Vec<u8>>>,
    /// Every message received so far, in order.
    seen: Vec<Value>,
}

impl Client {
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let transcript = Arc::new(Mutex::new(Vec::new()));
        let (tx, incoming) = mpsc::channel();
        let t = transcript.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                t.lock().unwrap().extend_from_slice(line.as_bytes());
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON from the server side ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            incoming,
            transcript,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.transcript
            .lock()
            .unwrap()
            .extend_from_slice(line.as_bytes());
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Receive until `stop` holds for a message (returned); all are kept in `seen`.
    fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .incoming
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer ({e}); seen so far: {:#?}", self.seen));
            self.seen.push(m.clone());
            if stop(&m) {
                return m;
            }
        }
    }

    /// `initialize` (id 1) and `notifications/initialized`.
    fn initialize(&mut self) {
        self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
    }

    /// Close standard input and wait for the exit; the stderr text.
    fn finish(mut self) -> (Vec<Value>, Vec<u8>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the proxy did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut stderr = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "exit {status}; stderr: {stderr}");
        // Messages still in flight (none expected after the last answer).
        while let Ok(m) = self.incoming.recv_timeout(Duration::from_millis(100)) {
            self.seen.push(m);
        }
        let transcript = self.transcript.lock().unwrap().clone();
        (self.seen, transcript, stderr)
    }
}

/// The scenario every comparison runs: several tools, one streaming
/// progress, one cancelled mid-way, then a ping to settle.
fn scenario(client: &mut Client) {
    client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "herald-test", "version": "1"}}),
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    client.request(2, "tools/list", json!({}));
    client.request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hi there"}}),
    );
    client.request(
        4,
        "tools/call",
        json!({"name": "get-sum", "arguments": {"a": 2, "b": 2.5}}),
    );
    client.request(
        5,
        "tools/call",
        json!({"name": "get-tiny-image", "arguments": {}}),
    );
    client.request(
        6,
        "tools/call",
        json!({"name": "no-such-tool", "arguments": {}}),
    );
    client.request(
        7,
        "tools/call",
        json!({"name": "trigger-long-running-operation", "arguments": {"duration": 0.4, "steps": 4},
               "_meta": {"progressToken": "p7"}}),
    );
    client.request(8, "resources/list", json!({}));
    client.request(9, "prompts/list", json!({}));
    // Cancelled after its first progress notification.
    client.send(&json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "trigger-long-running-operation", "arguments": {"duration": 1, "steps": 2},
                   "_meta": {"progressToken": "p10"}}}));
    client.until(|m| m.pointer("/params/progressToken") == Some(&json!("p10")));
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 10, "reason": "test cancels"}}),
    );
    std::thread::sleep(Duration::from_millis(1500));
    client.request(11, "ping", json!({}));
}

/// What a client sees of the [`scenario`] from server-everything over
/// stdio, without the wrapper.
fn scenario_without_the_wrapper() -> Vec<Value> {
    let mut direct = Client::start(server());
    scenario(&mut direct);
    direct.finish().0
}

/// A message with the wrapper's `herald/…` keys taken out of `_meta`
/// (and `_meta` itself when nothing else was in it).
fn without_herald(mut m: Value) -> Value {
    for pointer in ["/params", "/result"] {
        if let Some(obj) = m.pointer_mut(pointer).and_then(Value::as_object_mut)
            && let Some(Value::Object(meta)) = obj.get_mut("_meta")
        {
            meta.retain(|k, _| !k.starts_with("herald/"));
            if meta.is_empty() {
                obj.remove("_meta");
            }
        }
    }
    m
}

struct Keys {
    dir: tempfile::TempDir,
    /// Every encoding of every secret a test greps for.
    secrets: Vec<Vec<u8>>,
}

fn keys() -> Keys {
    let dir = tempfile::tempdir().unwrap();
    keygen(dir.path(), "agent");
    keygen(dir.path(), "tool");
    let mut secrets = Vec::new();
    for name in ["agent.key", "tool.key"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let hex = text.lines().nth(1).unwrap();
        let seed = HEXLOWER.decode(hex.as_bytes()).unwrap();
        let mut forms = vec![seed.clone(), hex.as_bytes().to_vec()];
        forms.push(HEXUPPER.encode(&seed).into_bytes());
        for enc in [&BASE64, &BASE64_NOPAD, &BASE64URL, &BASE64URL_NOPAD] {
            forms.push(enc.encode(&seed).into_bytes());
        }
        // A half of the seed is already a give-away.
        forms.push(seed[..16].to_vec());
        forms.push(hex.as_bytes()[..32].to_vec());
        secrets.extend(forms);
    }
    Keys { dir, secrets }
}

/// `herald mcp proxy` in `dir` with its two keys, tracing to `trace`; the
/// server still to be named.
fn proxy_base(dir: &Path, trace: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_herald"));
    c.current_dir(dir)
        .args(support::mcp::PROXY)
        .arg("--trace")
        .arg(trace);
    c
}

fn proxy_command(keys: &Keys, trace: &Path, extra: &[&str], server: Command) -> Command {
    let mut c = proxy_base(keys.dir.path(), trace);
    c.args(extra)
        .arg("--")
        .arg(server.get_program())
        .args(server.get_args());
    c
}

/// In a [`scenario`]: each progress step of call 7 came, before its
/// result; call 10 (cancelled) had progress and got no answer.
fn progress_passed_and_cancelled_unanswered(seen: &[Value]) {
    let token = |m: &Value, t: &str| m.pointer("/params/progressToken") == Some(&json!(t));
    let progress: Vec<_> = seen
        .iter()
        .filter(|m| token(m, "p7"))
        .map(|m| m.pointer("/params/progress").cloned().unwrap())
        .collect();
    assert_eq!(progress, [json!(1), json!(2), json!(3), json!(4)]);
    let result = seen
        .iter()
        .position(|m| m.get("id") == Some(&json!(7)))
        .unwrap();
    let last = seen.iter().rposition(|m| token(m, "p7")).unwrap();
    assert!(last < result);
    assert!(seen.iter().any(|m| token(m, "p10")));
    assert!(
        !seen
            .iter()
            .any(|m| m.get("id") == Some(&json!(10)) && m.get("method").is_none()),
        "the cancelled call was answered"
    );
}

/// The messages a client saw, comparable across paths: the wrapper's
/// `herald/…` keys taken out, the cancelled call's progress left out (its
/// count after the cancellation is timing), and the methods in `dropped`;
/// sorted.
fn comparable(seen: &[Value], dropped: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = seen
        .iter()
        .filter(|m| m.pointer("/params/progressToken") != Some(&json!("p10")))
        .filter(|m| {
            !m.get("method")
                .and_then(Value::as_str)
                .is_some_and(|method| dropped.contains(&method))
        })
        .cloned()
        .map(without_herald)
        .map(|m| m.to_string())
        .collect();
    v.sort();
    v
}

fn server() -> Command {
    let mut c = Command::new("node");
    c.arg(everything());
    c
}

/// `herald verify --json` of a trace, with both keys pinned.
fn verify(dir: &Path, trace: &Path) -> (i32, Value) {
    verify_with(dir, trace, &[])
}

/// As [`verify`], with more public key files (a conduit's).
fn verify_with(dir: &Path, trace: &Path, more: &[&str]) -> (i32, Value) {
    let run = support::mcp::verify(dir, trace, more);
    (run.code, run.json())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// No form of either secret key (raw, hex, base64, half of it) in `bytes`.
fn assert_no_secret_in(keys: &Keys, bytes: &[u8]) {
    for secret in &keys.secrets {
        assert!(!contains(bytes, secret), "a form of a secret key leaked");
    }
}

#[test]
fn the_client_sees_what_it_sees_without_the_wrapper_and_the_trace_verifies() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();

    let direct_seen = scenario_without_the_wrapper();

    // The server side of the wrapped session is recorded with tee.
    let up = d.join("server-in.log");
    let down = d.join("server-out.log");
    let mut teed = Command::new("sh");
    teed.arg("-c").arg(format!(
        "tee {} | node {} | tee {}",
        up.display(),
        everything().display(),
        down.display()
    ));
    let trace = d.join("session.herald");
    let mut wrapped = Client::start(proxy_command(&keys, &trace, &[], teed));
    scenario(&mut wrapped);
    let (wrapped_seen, transcript, stderr) = wrapped.finish();

    // The same messages, apart from the herald/… keys (and the progress of
    // the cancelled call, whose count after the cancellation is timing).
    assert_eq!(
        comparable(&direct_seen, &[]),
        comparable(&wrapped_seen, &[])
    );

    // Progress came through, each step, before its result; the cancelled
    // call got no answer on either path.
    for seen in [&direct_seen, &wrapped_seen] {
        progress_passed_and_cancelled_unanswered(seen);
    }

    // Every tool result carries its envelope ids, and the envelope in
    // `_meta` is the one in the trace file.
    let trace_bytes = std::fs::read(&trace).unwrap();
    for id in [3, 4, 5, 7] {
        let m = wrapped_seen
            .iter()
            .find(|m| m.get("id") == Some(&json!(id)))
            .unwrap();
        let meta = m.pointer("/result/_meta").unwrap();
        for key in [
            "herald/id",
            "herald/trace",
            "herald/request",
            "herald/envelope",
        ] {
            assert!(meta.get(key).is_some(), "{id}: no {key} in {meta}");
        }
        let envelope = BASE64
            .decode(meta["herald/envelope"].as_str().unwrap().as_bytes())
            .unwrap();
        assert!(
            contains(&trace_bytes, &envelope),
            "{id}: envelope not in the trace"
        );
    }
    // The server got each call with the request envelope in params._meta.
    let server_in = std::fs::read_to_string(&up).unwrap();
    let calls: Vec<Value> = server_in
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m.get("method") == Some(&json!("tools/call")))
        .collect();
    assert_eq!(calls.len(), 6);
    assert!(
        calls
            .iter()
            .all(|c| c.pointer("/params/_meta/herald~1envelope").is_some())
    );
    // And the cancellation, as the client sent it.
    assert!(server_in.contains(r#""reason":"test cancels""#));

    // The trace verifies end to end: the tool identity's birth, the
    // genesis, six requests, five answers, one cancellation.
    let (code, report) = verify(d, &trace);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        report["summary"],
        json!({"valid": 14, "partial": 0, "invalid": 0}),
        "{report:#}"
    );
    let traces = report["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2, "the birth's trace and the session's");
    let payloads = herald(d, &["inspect", "--json", trace.to_str().unwrap()]).out();
    for needle in [
        r#""mcp":"cancelled""#,
        r#""message":"hi there""#,
        r#""isError":true"#,
    ] {
        assert!(payloads.contains(needle), "{needle} not in the trace");
    }

    // No form of either secret key anywhere: what the client sent and got,
    // what the server got and sent, the proxy's standard error, the trace,
    // and every envelope carried in `_meta`.
    let mut everything_seen = transcript.clone();
    everything_seen.extend(std::fs::read(&up).unwrap());
    everything_seen.extend(std::fs::read(&down).unwrap());
    everything_seen.extend(stderr.as_bytes());
    everything_seen.extend(&trace_bytes);
    for m in &wrapped_seen {
        if let Some(e) = m
            .pointer("/result/_meta/herald~1envelope")
            .and_then(Value::as_str)
        {
            everything_seen.extend(BASE64.decode(e.as_bytes()).unwrap());
        }
    }
    assert!(everything_seen.len() > 10_000);
    assert_no_secret_in(&keys, &everything_seen);
}

#[test]
fn tampering_with_the_trace_is_detected() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let trace = d.join("t.herald");
    let mut c = Client::start(proxy_command(&keys, &trace, &[], server()));
    c.initialize();
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "pay 10"}}),
    );
    assert_eq!(
        r.pointer("/result/content/0/text"),
        Some(&json!("Echo: pay 10"))
    );
    c.finish();
    assert_eq!(verify(d, &trace).0, 0);

    let bytes = std::fs::read(&trace).unwrap();
    let at = bytes.windows(6).position(|w| w == b"pay 10").unwrap();
    let mut forged = bytes.clone();
    forged[at + 4] = b'9';
    let forged_path = d.join("forged.herald");
    std::fs::write(&forged_path, &forged).unwrap();
    let (code, report) = verify(d, &forged_path);
    assert_eq!(code, 1);
    assert!(
        report["summary"]["invalid"].as_u64().unwrap() >= 1,
        "{report:#}"
    );

    // A crash mid-append leaves a torn tail: the next session cuts it and
    // appends after the last whole envelope.
    let mut torn = bytes.clone();
    torn.extend_from_slice(&bytes[..40]);
    std::fs::write(&trace, &torn).unwrap();
    let mut c = Client::start(proxy_command(&keys, &trace, &[], server()));
    c.initialize();
    c.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "again"}}),
    );
    let (_, _, stderr) = c.finish();
    assert!(stderr.contains("torn last item"), "{stderr}");
    let (code, report) = verify(d, &trace);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["traces"].as_array().unwrap().len(), 4);
}

#[test]
fn a_pinned_tool_set_that_changed_is_refused_with_an_is_error_result() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let pin = d.join("tools.pin");
    let trace = d.join("t.herald");
    let session = |trace: &Path| {
        let mut c = Client::start(proxy_command(
            &keys,
            trace,
            &["--pin", "tools.pin"],
            server(),
        ));
        c.initialize();
        let r = c.request(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "x"}}),
        );
        c.finish();
        r
    };
    // First use pins; the call goes through.
    let r = session(&trace);
    assert_eq!(r.pointer("/result/content/0/text"), Some(&json!("Echo: x")));
    let pinned: Value = serde_json::from_str(&std::fs::read_to_string(&pin).unwrap()).unwrap();
    assert!(pinned["tools"].as_array().unwrap().contains(&json!("echo")));
    // Same server again: still fine.
    let r = session(&trace);
    assert_eq!(r.pointer("/result/isError"), None);
    // A pin of another tool set: the call is refused, answered, signed.
    std::fs::write(&pin, format!("{{\"sha256\": \"{}\"}}", "ab".repeat(32))).unwrap();
    let r = session(&trace);
    assert_eq!(r.pointer("/result/isError"), Some(&json!(true)), "{r}");
    let text = r
        .pointer("/result/content/0/text")
        .unwrap()
        .as_str()
        .unwrap();
    assert!(
        text.contains("refused") && text.contains("tools.pin"),
        "{text}"
    );
    assert!(r.pointer("/result/_meta/herald~1id").is_some());
    let (code, report) = verify(d, &trace);
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn bad_invocations_exit_2_naming_the_problem() {
    let keys = keys();
    let d = keys.dir.path();
    let proxy = |sandbox: &str, trace: &str, server: &str| {
        let run = herald(
            d,
            &[
                "mcp",
                "proxy",
                "--key",
                "agent.key",
                "--sandbox-key",
                sandbox,
                "--trace",
                trace,
            ]
            .into_iter()
            .chain(["--", server])
            .collect::<Vec<_>>(),
        );
        run.expect(2);
        run.stderr.clone()
    };
    let err = proxy("agent.key", "t", "true");
    assert!(err.contains("same key"), "{err}");
    let err = proxy("tool.key", "t", "/nonexistent/server");
    assert!(err.contains("cannot start"), "{err}");
    std::fs::write(d.join("not-a-trace"), b"{\"json\": true}").unwrap();
    let err = proxy("tool.key", "not-a-trace", "true");
    assert!(err.contains("not a trace file"), "{err}");
    assert_eq!(
        std::fs::read(d.join("not-a-trace")).unwrap(),
        b"{\"json\": true}"
    );
    // --upstream: an http:// URL, and either it or a command.
    for (more, says) in [
        (
            &["--upstream", "https://example.test/mcp"][..],
            "only http://",
        ),
        (
            &["--upstream", "http://[::1/mcp"][..],
            "--upstream http://[::1/mcp",
        ),
        (
            &["--upstream", "http://127.0.0.1:9/mcp", "--", "true"][..],
            "cannot be used with",
        ),
        (&[][..], "COMMAND"),
    ] {
        let run = proxy_base(d, &d.join("u.herald"))
            .args(more)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{more:?}: {stderr}");
        assert!(stderr.contains(says), "{more:?}: {stderr}");
    }
}

/// A conduit on loopback that knows `keyring`'s keys; stopped on drop.
struct Conduit {
    child: Child,
    url: String,
}

impl Drop for Conduit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn conduit(dir: &Path, name: &str, keyring: &[&str]) -> Conduit {
    herald(dir, &["keygen", "-o", name]).expect(0);
    let (child, addr) = support::conduit::serve(|cmd| {
        cmd.current_dir(dir)
            .args([
                "--key",
                &format!("{name}.key"),
                "--state",
                &format!("{name}-state"),
            ])
            .args(["--roles", "relay,notary"]);
        for k in keyring {
            cmd.args(["--keyring", k]);
        }
    });
    Conduit {
        child,
        url: format!("http://{addr}"),
    }
}

fn echo_session(keys: &Keys, trace: &Path, extra: &[&str], message: &str) -> Value {
    let mut c = Client::start(proxy_command(keys, trace, extra, server()));
    c.initialize();
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}}),
    );
    c.finish();
    r
}

#[test]
fn with_a_conduit_results_are_released_once_it_acknowledged_and_refusals_become_is_error() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();

    // A relay that knows both keys: every envelope comes back with its
    // receipt, and the trace file holds those bytes.
    let relay = conduit(d, "relay", &["agent.pub", "tool.pub"]);
    let trace = d.join("relayed.herald");
    let r = echo_session(&keys, &trace, &["--conduit", &relay.url], "via conduit");
    assert_eq!(
        r.pointer("/result/content/0/text"),
        Some(&json!("Echo: via conduit")),
        "{r}"
    );
    let envelope = r
        .pointer("/result/_meta/herald~1envelope")
        .unwrap()
        .as_str()
        .unwrap();
    let envelope = BASE64.decode(envelope.as_bytes()).unwrap();
    let inspected = herald(d, &["inspect", "--json", trace.to_str().unwrap()]).out();
    let receipts = inspected.matches(r#""scope":"conduit_receipt""#).count();
    assert_eq!(receipts, 4, "birth, genesis, request, result: {inspected}");
    assert!(contains(&std::fs::read(&trace).unwrap(), &envelope));
    let (code, report) = verify_with(d, &trace, &["relay.pub"]);
    assert_eq!(code, 0, "{report:#}");

    // A conduit that does not know the sandbox key refuses what it
    // co-signed (partial: unknown_signer): the call is answered isError
    // with the reason, never dropped, and never made.
    let strict = conduit(d, "strict", &["agent.pub"]);
    let trace = d.join("refused.herald");
    let r = echo_session(&keys, &trace, &["--conduit", &strict.url], "refused");
    assert_eq!(r.pointer("/result/isError"), Some(&json!(true)), "{r}");
    let text = r
        .pointer("/result/content/0/text")
        .unwrap()
        .as_str()
        .unwrap();
    assert!(
        text.contains("refused") && text.contains("unknown_signer"),
        "{text}"
    );
    // What was signed is still on file (what the conduit took, with its
    // receipt), and verifies with the keys.
    let (code, report) = verify_with(d, &trace, &["strict.pub"]);
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn a_tool_set_that_changes_mid_session_is_signed_warned_and_with_pin_refused() {
    let Some(python) = external::require("python3", "apt-get install python3") else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let growing = || {
        let mut c = Command::new(&python);
        c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-growing-server.py"));
        c
    };
    let trace = d.join("t.herald");
    let mut c = Client::start(proxy_command(
        &keys,
        &trace,
        &["--pin", "tools.pin"],
        growing(),
    ));
    c.initialize();
    let r = c.request(2, "tools/call", json!({"name": "grow", "arguments": {}}));
    assert_eq!(
        r.pointer("/result/content/0/text"),
        Some(&json!("now 2 tools"))
    );
    // The server's list_changed passes, and the wrapper's recheck warns.
    let warning = c.until(|m| m.get("method") == Some(&json!("notifications/message")));
    assert_eq!(warning.pointer("/params/level"), Some(&json!("warning")));
    let text = warning.pointer("/params/data").unwrap().as_str().unwrap();
    assert!(text.contains("tool set changed"), "{text}");
    assert!(
        c.seen
            .iter()
            .any(|m| m.get("method") == Some(&json!("notifications/tools/list_changed")))
    );
    // The client's own complete tools/list carries the warning in _meta.
    let list = c.request(3, "tools/list", json!({}));
    assert_eq!(
        list.pointer("/result/tools")
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        list.pointer("/result/_meta/herald~1warning").is_some(),
        "{list}"
    );
    // With --pin, calls are refused from now on, with a signed answer.
    let r = c.request(4, "tools/call", json!({"name": "grow", "arguments": {}}));
    assert_eq!(r.pointer("/result/isError"), Some(&json!(true)), "{r}");
    assert!(r.pointer("/result/_meta/herald~1id").is_some());
    c.finish();

    let (code, report) = verify(d, &trace);
    assert_eq!(code, 0, "{report:#}");
    let inspected = herald(d, &["inspect", "--json", trace.to_str().unwrap()]).out();
    assert!(
        inspected.contains(r#""mcp":"tools/changed""#),
        "{inspected}"
    );
    // The refused call never reached the server: one grow made a second tool only.
    assert!(!inspected.contains("now 3 tools"));
}

/// rmcp's own client (the official Rust SDK) through the wrapper: tools
/// listed and called, progress received, a call cancelled mid-way.
#[test]
fn rmcp_client_through_the_wrapper() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    use rmcp::model::{
        CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, ServerResult,
    };
    use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient};
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    use rmcp::{ClientHandler, ServiceExt};

    #[derive(Clone, Default)]
    struct Progress(Arc<Mutex<Vec<ProgressNotificationParam>>>);
    impl ClientHandler for Progress {
        async fn on_progress(
            &self,
            params: ProgressNotificationParam,
            _: NotificationContext<RoleClient>,
        ) {
            self.0.lock().unwrap().push(params);
        }
    }
    let args = |v: Value| v.as_object().unwrap().clone();

    let keys = keys();
    let d = keys.dir.path().to_path_buf();
    let trace = d.join("rmcp.herald");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let progress = Progress::default();
    let seen = progress.clone();
    runtime.block_on(async {
        let command = proxy_command(&keys, &trace, &[], server());
        let transport = TokioChildProcess::new(
            tokio::process::Command::new(command.get_program()).configure(|c| {
                c.current_dir(&d).args(command.get_args());
            }),
        )
        .unwrap();
        let client = tokio::time::timeout(WAIT, progress.serve(transport))
            .await
            .unwrap()
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));

        let r = client
            .call_tool(
                CallToolRequestParams::new("echo").with_arguments(args(json!({"message": "rmcp"}))),
            )
            .await
            .unwrap();
        let meta = serde_json::to_value(r.meta.as_ref().unwrap()).unwrap();
        assert!(meta.get("herald/id").is_some() && meta.get("herald/request").is_some());
        assert_eq!(
            serde_json::to_value(&r.content).unwrap()[0]["text"],
            json!("Echo: rmcp")
        );

        // Progress: four steps, then the result.
        let long = |duration: f64, steps: u64| {
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("trigger-long-running-operation")
                    .with_arguments(args(json!({"duration": duration, "steps": steps}))),
            ))
        };
        let handle = client
            .send_cancellable_request(long(0.4, 4), PeerRequestOptions::no_options())
            .await
            .unwrap();
        let token = handle.progress_token.clone();
        let ServerResult::CallToolResult(done) = handle.await_response().await.unwrap() else {
            panic!("not a CallToolResult")
        };
        assert!(
            serde_json::to_value(&done.content).unwrap()[0]["text"]
                .as_str()
                .unwrap()
                .contains("completed")
        );
        // rmcp hands notifications to the client's handler on their own
        // task, so the last one may reach `seen` just after the result even
        // though the proxy wrote them in order: wait for it, boundedly.
        let steps = |seen: &Progress| -> Vec<f64> {
            seen.0
                .lock()
                .unwrap()
                .iter()
                .filter(|p| p.progress_token == token)
                .map(|p| p.progress)
                .collect()
        };
        let waited = std::time::Instant::now();
        while steps(&seen).len() < 4 && waited.elapsed() < std::time::Duration::from_secs(5) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(steps(&seen), [1.0, 2.0, 3.0, 4.0]);

        // Cancelled mid-way: the server is told, the trace records it.
        let handle = client
            .send_cancellable_request(long(2.0, 4), PeerRequestOptions::no_options())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(700)).await;
        handle.cancel(Some("rmcp cancels".into())).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.cancel().await.unwrap();
    });
    // The wrapper has exited once its client closed; the trace verifies.
    let deadline = Instant::now() + WAIT;
    let (code, report) = loop {
        let (code, report) = verify(&d, &trace);
        if code == 0 || Instant::now() > deadline {
            break (code, report);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(code, 0, "{report:#}");
    let inspected = herald(&d, &["inspect", "--json", trace.to_str().unwrap()]).out();
    assert!(inspected.contains("rmcp cancels"), "{inspected}");
}

/// `herald mcp guard` facing server-everything: `keyring` and `state` in `dir`.
fn guard_command(dir: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_herald"));
    c.current_dir(dir)
        .args([
            "mcp",
            "guard",
            "--keyring",
            "agent.pub",
            "--state",
            "guard-state",
        ])
        .args(extra)
        .arg("--")
        .arg("node")
        .arg(everything());
    c
}

/// A request envelope for `echo(message)`, signed by `key`, in base64.
fn signed_echo(dir: &Path, key: &str, message: &str, ts: Option<u64>) -> String {
    let payload = json!({"mcp": "tools/call", "name": "echo", "arguments": {"message": message}});
    let mut args = vec![
        "new".to_owned(),
        "--key".into(),
        key.into(),
        "--payload-json".into(),
        payload.to_string(),
        "-o".into(),
        "-".into(),
    ];
    if let Some(ts) = ts {
        args.extend(["--ts".into(), ts.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = herald(dir, &args);
    run.expect(0);
    BASE64.encode(&run.stdout)
}

fn guarded_call(c: &mut Client, id: u64, message: &str, envelope: Option<&str>) -> Value {
    let mut params = json!({"name": "echo", "arguments": {"message": message}});
    if let Some(e) = envelope {
        params["_meta"] = json!({"herald/envelope": e});
    }
    c.request(id, "tools/call", params)
}

/// The call `envelope` signs, as request `id`: admitted with the server's
/// own answer; the same envelope again, as request `id + 1`: a replay.
fn admitted_once(c: &mut Client, id: u64, message: &str, envelope: &str) {
    let r = guarded_call(c, id, message, Some(envelope));
    assert_eq!(
        r.pointer("/result/content/0/text"),
        Some(&json!(format!("Echo: {message}"))),
        "{r}"
    );
    assert_eq!(
        refused_for(&guarded_call(c, id + 1, message, Some(envelope))),
        ["replayed_nonce"]
    );
}

fn refused_for(r: &Value) -> Vec<String> {
    assert_eq!(r.pointer("/result/isError"), Some(&json!(true)), "{r}");
    r.pointer("/result/_meta/herald~1reasons")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no herald/reasons: {r}"))
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_guard_admits_only_fresh_signed_unreplayed_calls_of_its_keyring() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let init = |c: &mut Client| {
        c.initialize();
    };
    let mut c = Client::start(guard_command(d, &[]));
    init(&mut c);
    // No envelope: refused, never forwarded.
    assert_eq!(
        refused_for(&guarded_call(&mut c, 2, "bare", None)),
        ["origin_missing"]
    );
    // A valid one for another message: refused, and its nonce not used up.
    let good = signed_echo(d, "agent.key", "signed", None);
    assert_eq!(
        refused_for(&guarded_call(&mut c, 3, "forged", Some(&good))),
        ["call_mismatch"]
    );
    // The call it signs: admitted, the server's answer as it is; the same
    // again: a replay.
    admitted_once(&mut c, 4, "signed", &good);
    // A signer outside the keyring; a stale request.
    let stranger = signed_echo(d, "tool.key", "x", None);
    assert!(
        refused_for(&guarded_call(&mut c, 6, "x", Some(&stranger)))
            .contains(&"unknown_signer".to_owned())
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let old = signed_echo(d, "agent.key", "old", Some(now - 1000));
    assert_eq!(
        refused_for(&guarded_call(&mut c, 7, "old", Some(&old))),
        ["stale"]
    );
    // Everything else passes untouched.
    let tools = c.request(8, "tools/list", json!({}));
    assert!(tools.pointer("/result/tools").is_some());
    let (seen, _, _) = c.finish();
    assert!(!seen.iter().any(|m| m.to_string().contains("Echo: bare") || m.to_string().contains("Echo: forged")));

    // The replay cache survives a restart.
    let mut c = Client::start(guard_command(d, &[]));
    init(&mut c);
    assert_eq!(
        refused_for(&guarded_call(&mut c, 2, "signed", Some(&good))),
        ["replayed_nonce"]
    );
    c.finish();

    // Behind the proxy, every call carries its fresh envelope and passes.
    let trace = d.join("guarded.herald");
    let mut c = Client::start(proxy_command(&keys, &trace, &[], guard_command(d, &[])));
    init(&mut c);
    for (id, m) in [(2, "one"), (3, "two")] {
        let r = c.request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": m}}),
        );
        assert_eq!(
            r.pointer("/result/content/0/text"),
            Some(&json!(format!("Echo: {m}"))),
            "{r}"
        );
    }
    c.finish();
    assert_eq!(verify(d, &trace).0, 0);
}

/// One raw HTTP/1.1 exchange: the status code and the whole answer.
fn http_exchange(addr: &str, head: &str, body: &str) -> (u16, String) {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    write!(
        s,
        "{head}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
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

/// One raw HTTP/1.1 exchange; the status code.
fn http_status(addr: &str, head: &str, body: &str) -> u16 {
    http_exchange(addr, head, body).0
}

/// `herald mcp proxy --listen 127.0.0.1:0 extra…` in front of
/// server-everything: the process and its `HOST:PORT`.
fn http_proxy(keys: &Keys, trace: &Path, extra: &[&str]) -> (Child, String) {
    let mut args = vec!["--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut c = proxy_command(keys, trace, &args, server());
    let mut child = c.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|u| u.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .to_owned();
    (child, addr)
}

/// The child processes of `pid` that have not ended (Linux).
fn live_children(pid: u32) -> Vec<u32> {
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

#[test]
fn streamable_http_keeps_host_and_origin_guards_and_sessions() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let (mut child, addr) = http_proxy(&keys, &d.join("h.herald"), &[]);
    let addr = addr.as_str();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let host = format!("Host: {addr}\r\n");
    let statuses = [
        // DNS rebinding: a foreign Origin, a foreign Host.
        http_status(
            addr,
            &format!("POST /mcp HTTP/1.1\r\n{host}Origin: http://evil.example\r\n"),
            init,
        ),
        http_status(addr, "POST /mcp HTTP/1.1\r\nHost: evil.example\r\n", init),
        // No session, an unknown one.
        http_status(addr, &format!("POST /mcp HTTP/1.1\r\n{host}"), ping),
        http_status(
            addr,
            &format!("POST /mcp HTTP/1.1\r\n{host}Mcp-Session-Id: 00\r\n"),
            ping,
        ),
        // Another loopback page is another origin.
        http_status(
            addr,
            &format!("POST /mcp HTTP/1.1\r\n{host}Origin: http://localhost:3000\r\n"),
            init,
        ),
        // This server's own origin is fine.
        http_status(
            addr,
            &format!("POST /mcp HTTP/1.1\r\n{host}Origin: http://{addr}\r\n"),
            init,
        ),
    ];
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(statuses, [403, 403, 400, 404, 403, 200]);
}

/// `--session-idle`: a session whose client keeps making requests lives
/// on; once it stops, the session and its server child are ended, and
/// its id is then unknown (404).
#[test]
fn an_idle_http_session_is_ended_with_its_server() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let (mut child, addr) = http_proxy(&keys, &d.join("idle.herald"), &["--session-idle", "1"]);
    let addr = addr.as_str();
    let host = format!("Host: {addr}\r\n");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (status, answer) = http_exchange(addr, &format!("POST /mcp HTTP/1.1\r\n{host}"), init);
    assert_eq!(status, 200, "{answer}");
    let session = answer
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no Mcp-Session-Id: {answer}"));
    let with = format!("POST /mcp HTTP/1.1\r\n{host}Mcp-Session-Id: {session}\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(http_status(addr, &with, initialized), 202);
    assert!(
        !live_children(child.id()).is_empty(),
        "the session's server is running"
    );
    // A client that keeps asking keeps its session, well past the limit.
    let busy = Instant::now();
    let mut n = 2;
    let mut sent = Instant::now();
    while busy.elapsed() < Duration::from_millis(2500) {
        let ping = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#);
        sent = Instant::now();
        let (status, answer) = http_exchange(addr, &with, &ping);
        assert_eq!(status, 200, "a busy session was ended: {answer}");
        n += 1;
        std::thread::sleep(Duration::from_millis(300));
    }
    // Then it stops: the session ends, and its server with it.
    while !live_children(child.id()).is_empty() {
        assert!(
            sent.elapsed() < Duration::from_secs(20),
            "the idle session's server still runs: {:?}",
            live_children(child.id())
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let ended = sent.elapsed();
    let ping = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#);
    let status = http_status(addr, &with, &ping);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 404, "an ended session's id must be unknown");
    assert!(
        ended >= Duration::from_secs(1),
        "ended {ended:?} after the last request, before its idle limit"
    );
}

/// server-everything in its streamable HTTP mode on a free loopback port
/// (its `listen(PORT)` held to 127.0.0.1 by tests/node-loopback.cjs);
/// killed when dropped.
struct EverythingHttp {
    child: Child,
    url: String,
}

impl EverythingHttp {
    fn start() -> Self {
        let preload = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node-loopback.cjs");
        // A free port can be taken between its probe and the server's
        // bind: a few tries.
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let mut child = Command::new("node")
                .arg(everything())
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .env("NODE_OPTIONS", format!("--require={}", preload.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let (tx, rx) = mpsc::channel();
            let stderr = child.stderr.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let _ = tx.send(line);
                }
            });
            let deadline = Instant::now() + WAIT;
            let mut said = Vec::new();
            while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                if line.contains("listening on port") {
                    return Self {
                        child,
                        url: format!("http://127.0.0.1:{port}/mcp"),
                    };
                }
                said.push(line);
            }
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("server-everything did not start on {port}: {said:?}");
        }
        panic!("server-everything (streamableHttp) did not start");
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_streamable_http_upstream_loses_nothing_and_the_trace_verifies() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();

    let direct_seen = scenario_without_the_wrapper();

    let upstream = EverythingHttp::start();
    // It listens on loopback only.
    let bound = Command::new("ss").args(["-ltnH"]).output();
    if let Ok(out) = bound {
        let port = upstream
            .url
            .rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches("/mcp");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines().filter(|l| l.contains(&format!(":{port} "))) {
            assert!(line.contains("127.0.0.1:"), "not loopback only: {line}");
        }
    }
    let trace = d.join("http-upstream.herald");
    let mut wrapped = Client::start(upstream_proxy(d, &trace, &upstream.url));
    scenario(&mut wrapped);
    let (wrapped_seen, transcript, stderr) = wrapped.finish();

    // What the client sees over the HTTP upstream is what it sees from the
    // same server over stdio without the wrapper, byte for byte (every
    // field of the tool list and the capabilities; rmcp's client transport
    // re-serialized messages through its types and lost some): results,
    // progress, errors, apart from
    // - the herald/… keys, and the cancelled call's progress (whose count
    //   after the cancellation is timing), as over stdio;
    // - the server's notifications/tools/list_changed at `initialized`:
    //   server-everything sends it over HTTP before any stream is open, so
    //   its SDK drops it (no client of its HTTP mode sees it).
    let dropped = ["notifications/tools/list_changed"];
    let (direct_norm, wrapped_norm) = (
        comparable(&direct_seen, &dropped),
        comparable(&wrapped_seen, &dropped),
    );
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|m| !b.contains(m)).cloned().collect()
    };
    assert_eq!(
        direct_norm,
        wrapped_norm,
        "only direct: {:#?}\nonly wrapped: {:#?}",
        only(&direct_norm, &wrapped_norm),
        only(&wrapped_norm, &direct_norm)
    );
    progress_passed_and_cancelled_unanswered(&wrapped_seen);
    for id in [3, 4, 5, 7] {
        let m = wrapped_seen
            .iter()
            .find(|m| m.get("id") == Some(&json!(id)))
            .unwrap();
        assert!(m.pointer("/result/_meta/herald~1envelope").is_some(), "{m}");
    }

    // The same trace as over stdio: the tool identity's birth, the
    // genesis, six requests, five answers, one cancellation; all valid.
    let (code, report) = verify(d, &trace);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        report["summary"],
        json!({"valid": 14, "partial": 0, "invalid": 0}),
        "{report:#}"
    );

    let mut seen_bytes = transcript;
    seen_bytes.extend(stderr.as_bytes());
    seen_bytes.extend(std::fs::read(&trace).unwrap());
    assert_no_secret_in(&keys, &seen_bytes);
}

#[test]
fn an_unreachable_upstream_url_is_an_error_for_the_client_not_a_hang() {
    let keys = keys();
    let d = keys.dir.path();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = Client::start(upstream_proxy(d, &d.join("t.herald"), &url));
    let answer = client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(answer["error"]["code"], json!(-32603), "{answer}");
    let text = answer["error"]["message"].as_str().unwrap();
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    // The proxy ends (the upstream is gone), with status 1.
    drop(client.stdin.take());
    assert_eq!(exit_code(&mut client.child), Some(1));
}

/// `herald mcp proxy --upstream URL` in `dir` (its keys), tracing to `trace`.
fn upstream_proxy(dir: &Path, trace: &Path, url: &str) -> Command {
    let mut command = proxy_base(dir, trace);
    command.args(["--upstream", url]);
    command
}

/// Wait (at most [`WAIT`]) for `child` to exit; its exit code.
fn exit_code(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(Instant::now() < deadline, "the proxy did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_upstream_that_dies_mid_call_answers_the_call_and_ends_the_session() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let mut upstream = EverythingHttp::start();
    let trace = d.join("dies.herald");
    let mut client = Client::start(upstream_proxy(d, &trace, &upstream.url));
    client.initialize();
    client.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "trigger-long-running-operation",
                   "arguments": {"duration": 30, "steps": 30},
                   "_meta": {"progressToken": "p2"}}}));
    client.until(|m| m.pointer("/params/progressToken") == Some(&json!("p2")));
    let _ = upstream.child.kill();
    let _ = upstream.child.wait();
    // The call is answered (an error naming the upstream), not left pending.
    let answer = client.until(|m| m.get("id") == Some(&json!(2)) && m.get("method").is_none());
    assert_eq!(answer["error"]["code"], json!(-32603), "{answer}");
    let text = answer["error"]["message"].as_str().unwrap();
    assert!(text.contains(&upstream.url), "{text}");
    // The server is gone: the session ends without the client closing,
    // with status 1, and what was signed verifies.
    assert_eq!(exit_code(&mut client.child), Some(1));
    let (code, report) = verify(d, &trace);
    assert_eq!(code, 0, "{report:#}");
    let payloads = herald(d, &["inspect", "--json", trace.to_str().unwrap()]).out();
    assert!(payloads.contains(r#""mcp":"error""#), "{payloads}");
}

#[test]
fn the_guard_faces_a_streamable_http_upstream_too() {
    let Some(_server) = server_everything() else {
        return;
    };
    let _serial = serial();
    let keys = keys();
    let d = keys.dir.path();
    let upstream = EverythingHttp::start();
    let mut guard = Command::new(env!("CARGO_BIN_EXE_herald"));
    guard.current_dir(d).args([
        "mcp",
        "guard",
        "--keyring",
        "agent.pub",
        "--state",
        "guard-state",
        "--upstream",
        &upstream.url,
    ]);
    let mut c = Client::start(guard);
    c.initialize();
    assert_eq!(
        refused_for(&guarded_call(&mut c, 2, "bare", None)),
        ["origin_missing"]
    );
    let good = signed_echo(d, "agent.key", "over http", None);
    admitted_once(&mut c, 3, "over http", &good);
    c.finish();
}

/// `--listen` starts as the stdio proxy does (one start-up): a torn last
/// item a crash left in the trace file is cut, and said on standard error.
#[test]
fn the_listening_proxy_cuts_a_torn_trace_tail_and_says_so() {
    let keys = keys();
    let d = keys.dir.path();
    let trace = d.join("torn.herald");
    // A CBOR map of five entries whose entries never came.
    std::fs::write(&trace, [0xa5, 0x01]).unwrap();
    // No session comes, so the server command is never started.
    let mut child = proxy_command(
        &keys,
        &trace,
        &["--listen", "127.0.0.1:0"],
        Command::new("true"),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let addr = support::listening(&mut child, "listening on http://");
    assert!(addr.ends_with("/mcp"), "{addr}");
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("torn last item (2 bytes)"), "{stderr}");
    assert_eq!(std::fs::read(&trace).unwrap().len(), 0);
}
