//! `herald mcp proxy` and `herald mcp guard` facing a hostile client, as
//! the real binary on loopback in front of a server in POSIX sh
//! (tests/fixtures/mcp-sh-server.sh, which logs every `tools/call` that
//! reaches it): browser requests and a flood of sessions (`--listen`),
//! calls without a usable id, batches, and a call before `initialized`
//! (docs/mcp.md *Hostile clients*).
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::keygen;
use support::probe::{
    LineClient, WAIT, body_json, call, call_without_id, calls, command, http, listen,
    live_children, rss, session_of,
};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const JSON: &str = "Content-Type: application/json\r\n";

fn keys() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    keygen(dir.path(), "agent");
    keygen(dir.path(), "tool");
    dir
}

fn proxy(dir: &Path, log: &Path) -> LineClient {
    LineClient::start(command(
        dir,
        &[
            "mcp",
            "proxy",
            "--key",
            "agent.key",
            "--sandbox-key",
            "tool.key",
            "--trace",
            "t.herald",
        ],
        log,
    ))
}

fn guard(dir: &Path, log: &Path) -> LineClient {
    LineClient::start(command(
        dir,
        &[
            "mcp",
            "guard",
            "--keyring",
            "agent.pub",
            "--state",
            "guard-state",
        ],
        log,
    ))
}

/// An "invalid request" error for `id`.
fn assert_invalid_request(answer: &Value, id: &Value) {
    assert_eq!(&answer["id"], id, "{answer}");
    assert_eq!(
        answer.pointer("/error/code"),
        Some(&json!(-32600)),
        "{answer}"
    );
}

/// D9: a `tools/call` without an id, or with `"id": null`, is answered
/// with a JSON-RPC error and never reaches the server, through the proxy
/// (stdio and `--listen`) and the guard; a call with an id still works.
#[test]
fn a_call_without_a_usable_id_is_refused_and_never_forwarded() {
    let dir = keys();
    let d = dir.path();

    let log = d.join("proxy.log");
    let mut c = proxy(d, &log);
    c.initialize(true);
    for bad in [call_without_id(), call(Value::Null), call(json!({"x": 1}))] {
        c.send(&bad);
        assert_invalid_request(&c.answer(), &Value::Null);
    }
    c.call_ok(5);
    c.finish();
    assert_eq!(
        calls(&log),
        [("5".to_owned(), true)],
        "only the signed call"
    );

    let log = d.join("guard.log");
    let mut g = guard(d, &log);
    g.initialize(true);
    for bad in [call_without_id(), call(Value::Null)] {
        g.send(&bad);
        assert_invalid_request(&g.answer(), &Value::Null);
    }
    // An unsigned call with an id is refused as before (origin_missing).
    g.send(&call(json!(6)));
    let r = g.answer();
    assert_eq!(r.pointer("/result/isError"), Some(&json!(true)), "{r}");
    g.finish();
    assert!(
        calls(&log).is_empty(),
        "the guard let through {:?}",
        calls(&log)
    );

    let log = d.join("http.log");
    let (mut child, addr) = listen(d, &[], &log);
    let (status, answer) = http(&addr, "POST", JSON, INIT);
    assert_eq!(status, 200, "{answer}");
    let session = session_of(&answer).unwrap();
    let with = format!("{JSON}Mcp-Session-Id: {session}\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(http(&addr, "POST", &with, initialized).0, 202);
    for bad in [call_without_id(), call(Value::Null)] {
        let (status, answer) = http(&addr, "POST", &with, &bad.to_string());
        assert_eq!(status, 400, "{answer}");
        assert_invalid_request(&body_json(&answer), &Value::Null);
    }
    let (status, answer) = http(&addr, "POST", &with, &call(json!(9)).to_string());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(body_json(&answer)["id"], json!(9), "{answer}");
    assert_eq!(calls(&log), [("9".to_owned(), true)]);
}

/// L1: a JSON-RPC batch holding a `tools/call` is answered, an error per
/// request in it, and nothing of it reaches the server.
#[test]
fn a_batch_holding_a_call_is_answered_and_not_forwarded() {
    let dir = keys();
    let d = dir.path();
    let batch = json!([
        call(json!(7)),
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": 1, "progress": 1}}
    ]);
    let ids = |answer: &Value| -> Vec<Value> {
        let items = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
        for item in items {
            assert_eq!(item.pointer("/error/code"), Some(&json!(-32600)), "{item}");
        }
        items.iter().map(|a| a["id"].clone()).collect()
    };

    for (name, mut client) in [
        ("proxy", proxy(d, &d.join("proxy.log"))),
        ("guard", guard(d, &d.join("guard.log"))),
    ] {
        client.initialize(true);
        client.send(&batch);
        assert_eq!(ids(&client.answer()), [json!(7), json!(8)], "{name}");
        client.finish();
        assert!(calls(&d.join(format!("{name}.log"))).is_empty(), "{name}");
    }

    let log = d.join("http.log");
    let (mut child, addr) = listen(d, &[], &log);
    let (_, answer) = http(&addr, "POST", JSON, INIT);
    let with = format!("{JSON}Mcp-Session-Id: {}\r\n", session_of(&answer).unwrap());
    let (status, answer) = http(&addr, "POST", &with, &batch.to_string());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(ids(&body_json(&answer)), [json!(7), json!(8)]);
    assert!(calls(&log).is_empty());
}

/// L2: a `tools/call` before `notifications/initialized` is answered at
/// once (an error), over stdio and `--listen`; the session then works.
#[test]
fn a_call_before_initialized_is_answered_at_once() {
    let dir = keys();
    let d = dir.path();
    let log = d.join("proxy.log");
    let mut c = proxy(d, &log);
    c.initialize(false);
    let asked = Instant::now();
    c.send(&call(json!(2)));
    let r = c.answer();
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    assert_invalid_request(&r, &json!(2));
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.call_ok(3);
    c.finish();
    assert_eq!(calls(&log), [("3".to_owned(), true)]);

    let log = d.join("http.log");
    let (mut child, addr) = listen(d, &[], &log);
    let (_, answer) = http(&addr, "POST", JSON, INIT);
    let with = format!("{JSON}Mcp-Session-Id: {}\r\n", session_of(&answer).unwrap());
    let asked = Instant::now();
    let (status, answer) = http(&addr, "POST", &with, &call(json!(2)).to_string());
    let took = asked.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200, "{answer}");
    assert!(took < Duration::from_secs(10), "answered after {took:?}");
    assert_invalid_request(&body_json(&answer), &json!(2));
}

/// D7: what a web page can send (`text/plain`, a foreign loopback
/// `Origin`, `Sec-Fetch-Site: cross-site`: a `no-cors` POST) starts
/// nothing; a flood of genuine-looking `initialize` requests starts at
/// most `--max-sessions` (default 32) servers, the rest answered 503; idle
/// sessions are reaped, and a genuine session works after.
#[test]
fn hostile_initialize_requests_are_refused_or_capped() {
    let dir = keys();
    let d = dir.path();
    let log = d.join("http.log");
    let (mut child, addr) = listen(d, &["--session-idle", "2"], &log);
    let pid = child.id();
    let idle_rss = rss(pid);
    let port = addr.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let foreign = format!("http://127.0.0.1:{}", port.wrapping_add(1).max(1));

    // Browser-shaped: refused before anything starts.
    let browser = [
        format!("Content-Type: text/plain\r\nOrigin: {foreign}\r\nSec-Fetch-Site: cross-site\r\n"),
        "Content-Type: text/plain\r\n".to_owned(),
        format!("{JSON}Origin: {foreign}\r\n"),
        format!("{JSON}Sec-Fetch-Site: cross-site\r\n"),
        format!("{JSON}Origin: http://localhost:{port}\r\n"),
    ];
    let mut refused = Vec::new();
    for i in 0..150 {
        refused.push(http(&addr, "POST", &browser[i % browser.len()], INIT).0);
    }
    assert!(
        refused.iter().all(|s| *s == 403 || *s == 415),
        "{refused:?}"
    );
    assert_eq!(refused.iter().filter(|s| **s == 415).count(), 30);
    assert!(
        live_children(pid).is_empty(),
        "a browser request started a server"
    );

    // A flood from a local program: at most the cap, each answered.
    let mut started = 0;
    let mut busy = 0;
    let mut most = 0;
    let mut peak = 0;
    for _ in 0..150 {
        match http(&addr, "POST", JSON, INIT) {
            (200, _) => started += 1,
            (503, answer) => {
                assert!(
                    answer.to_ascii_lowercase().contains("retry-after: 1"),
                    "{answer}"
                );
                busy += 1;
            }
            (status, answer) => panic!("{status}: {answer}"),
        }
        most = most.max(live_children(pid).len());
        let all: u64 = live_children(pid).iter().map(|c| rss(*c)).sum();
        peak = peak.max(rss(pid) + all);
    }
    let flooded_rss = rss(pid);
    assert!(most <= 32, "{most} servers at once");
    assert!(
        started >= 32 && started + busy == 150,
        "{started} started, {busy} refused"
    );
    // Generous: 32 sh servers and the proxy, far below the 2 GB of old.
    assert!(peak < 400 << 20, "proxy and servers: {} MiB", peak >> 20);
    assert!(
        flooded_rss < idle_rss + (64 << 20),
        "proxy RSS {} MiB after the flood, {} MiB idle",
        flooded_rss >> 20,
        idle_rss >> 20
    );

    // The flood's sessions go idle and are reaped; a genuine client then
    // gets a session that works.
    let deadline = Instant::now() + WAIT;
    let answer = loop {
        let (status, answer) = http(&addr, "POST", JSON, INIT);
        if status == 200 {
            break answer;
        }
        assert_eq!(status, 503, "{answer}");
        assert!(
            Instant::now() < deadline,
            "the capped sessions were never reaped"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let with = format!("{JSON}Mcp-Session-Id: {}\r\n", session_of(&answer).unwrap());
    let own = format!("{with}Origin: http://{addr}\r\nSec-Fetch-Site: same-origin\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(http(&addr, "POST", &own, initialized).0, 202);
    let (status, answer) = http(&addr, "POST", &own, &call(json!(4)).to_string());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        body_json(&answer).pointer("/result/content/0/text"),
        Some(&json!("ran")),
        "{answer}"
    );
    assert_eq!(calls(&log), [("4".to_owned(), true)]);
}
