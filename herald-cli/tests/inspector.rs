//! `herald inspect --serve` and `--export-site` through the real binary
//! (docs/inspector.md): the listening line, the embedded files, the per-run
//! token given only on that line (never in an answer), the Host and token
//! checks, the kinds the signing endpoint refuses, and a key kept to
//! loopback. The browser tests are tests/inspector/e2e.mjs (run by
//! .ci/run).
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::herald;

/// Stops the server when dropped: the child, its address and its token.
struct Server(Child, String, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &std::path::Path, args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(["inspect", "--serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // `listening on http://ADDR/#token=TOKEN`: the token only in the fragment.
    let (addr, token) = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|url| url.split_once("/#token="))
        .unwrap_or_else(|| panic!("no listening line with a token: {line:?}"));
    assert_eq!(token.len(), 64, "a 32-byte token: {line}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    Server(child, addr.to_owned(), token.to_owned())
}

/// One GET; the status and the body.
fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, Vec<u8>) {
    request(addr, "GET", path, headers, b"")
}

/// One request; the status and the body.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| *k == "Host") {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut request = request.into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..end]);
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, raw[end + 4..].to_vec())
}

#[test]
fn serve_hands_the_page_its_files_behind_the_host_and_token_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    herald(d, &["demo", "--dir", "."]).expect(0);
    std::fs::create_dir(d.join("keys")).unwrap();
    std::fs::copy(d.join("carol.pub"), d.join("keys/carol.pub")).unwrap();
    let server = serve(
        d,
        &["trace.cbor", "--keyring", "keyring", "--keyring", "keys"],
    );
    let addr = server.1.as_str();
    let token = server.2.as_str();

    let (status, page) = get(addr, "/", &[]);
    assert_eq!(status, 200);
    assert!(!String::from_utf8(page).unwrap().contains(token));

    let (status, wasm) = get(addr, "/herald_js_bg.wasm", &[]);
    assert_eq!((status, &wasm[..4]), (200, &b"\0asm"[..]));
    let (status, glue) = get(addr, "/herald_js.js", &[]);
    assert_eq!(status, 200);
    assert!(
        String::from_utf8(glue)
            .unwrap()
            .contains("class Inspection")
    );
    assert_eq!(get(addr, "/nothing.js", &[]).0, 404);

    // The API: the token, and the server's own Host.
    assert_eq!(get(addr, "/api/session", &[]).0, 403);
    assert_eq!(
        get(addr, "/api/session", &[("Herald-Token", &"0".repeat(64))]).0,
        403
    );
    let (status, session) = get(addr, "/api/session", &[("Herald-Token", token)]);
    assert_eq!(status, 200);
    let session: serde_json::Value = serde_json::from_slice(&session).unwrap();
    assert_eq!(session["inputs"], serde_json::json!(["trace.cbor"]));
    let ring = session["keyrings"][0]["text"].as_str().unwrap();
    assert_eq!(ring.lines().count(), 3, "{ring}");
    assert!(
        ring.lines().any(|l| l.ends_with(" alice")),
        "labels kept: {ring}"
    );
    let dir = session["keyrings"][1]["text"].as_str().unwrap();
    let carol = std::fs::read_to_string(d.join("carol.pub")).unwrap();
    assert_eq!(dir.trim(), carol.trim(), "a directory's keys");
    assert_eq!(session["signer"], serde_json::Value::Null);
    let (status, bytes) = get(addr, "/api/input/0", &[("Herald-Token", token)]);
    assert_eq!(status, 200);
    assert_eq!(bytes, std::fs::read(d.join("trace.cbor")).unwrap());
    let rebound = [("Host", "rebound.example:8471"), ("Herald-Token", token)];
    assert_eq!(get(addr, "/api/session", &rebound).0, 421);
    assert_eq!(get(addr, "/", &[("Host", "rebound.example")]).0, 421);
    // A second run has another token.
    let other = serve(d, &["trace.cbor"]);
    assert_ne!(other.2, token);
}

/// Every path of the site, as `--export-site` writes it.
fn site_paths(d: &std::path::Path) -> Vec<String> {
    herald(d, &["inspect", "--export-site", "site"]).expect(0);
    let mut paths = Vec::new();
    let mut dirs = vec![d.join("site")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(d.join("site")).unwrap();
                paths.push(format!("/{}", rel.to_str().unwrap()));
            }
        }
    }
    paths
}

/// The signing endpoint's answer to `body`, with `token` (or none).
fn sign(server: &Server, token: Option<&str>, body: &str) -> (u16, String) {
    let origin = format!("http://{}", server.1);
    let mut headers = vec![
        ("Origin", origin.as_str()),
        ("Content-Type", "application/json"),
    ];
    if let Some(token) = token {
        headers.push(("Herald-Token", token));
    }
    let (status, answer) = request(&server.1, "POST", "/api/sign", &headers, body.as_bytes());
    (status, String::from_utf8(answer).unwrap())
}

// CONDUIT.md: another local user can connect to loopback too; what lets
// the page sign with --key must reach only the user who started it.
#[test]
fn the_token_is_only_on_the_terminal_and_lifecycle_kinds_need_a_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    herald(d, &["demo", "--dir", "."]).expect(0);
    let server = serve(
        d,
        &["trace.cbor", "--keyring", "keyring", "--key", "alice.key"],
    );
    let (addr, token) = (server.1.as_str(), server.2.as_str());
    // What anyone who can connect gets: every page and file, no token.
    let paths = site_paths(d);
    assert!(paths.len() >= 10, "{paths:?}");
    for path in paths.iter().map(String::as_str).chain(["/", "/index.html"]) {
        let (status, body) = get(addr, path, &[]);
        assert_eq!(status, 200, "{path}");
        let body = String::from_utf8_lossy(&body);
        assert!(!body.contains(token), "{path} carries the token");
    }
    // Without the token the key signs nothing; with it, a message.
    let message = r#"{"payload": {"text": "from the terminal's URL"}}"#;
    assert_eq!(sign(&server, None, message).0, 403);
    let (status, answer) = sign(&server, Some(token), message);
    assert_eq!(status, 200, "{answer}");
    let envelope: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let bytes = data_encoding::HEXLOWER
        .decode(envelope["envelope"].as_str().unwrap().as_bytes())
        .unwrap();
    std::fs::write(d.join("signed.cbor"), bytes).unwrap();
    herald(d, &["verify", "signed.cbor", "--keyring", "keyring"]).expect(0);
    // What changes the key's meaning for everyone is not the page's to sign.
    let molt = format!(
        r#"{{"kind": "molt", "payload": {{"new_key": "{}", "not_before": 0}}}}"#,
        "00".repeat(32)
    );
    for body in [
        r#"{"kind": "deprecation", "payload": {"reason": "stolen"}}"#,
        r#"{"kind": "duress", "payload": {}}"#,
        molt.as_str(),
    ] {
        let (status, answer) = sign(&server, Some(token), body);
        assert_eq!(status, 403, "{body}: {answer}");
        assert!(answer.contains("--allow-lifecycle"), "{answer}");
    }
    let allowed = serve(d, &["--key", "alice.key", "--allow-lifecycle"]);
    let body = r#"{"kind": "deprecation", "payload": {"reason": "retired"}}"#;
    let (status, answer) = sign(&allowed, Some(&allowed.2), body);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        sign(&allowed, Some(token), body).0,
        403,
        "another run's token"
    );
    assert_eq!(
        herald(d, &["inspect", "--serve", "--allow-lifecycle"]).code,
        2,
        "--allow-lifecycle needs --key"
    );
}

// CONDUIT.md gives 127.0.0.1:8471 to `herald witness serve`: the inspector
// has its own default port.
#[test]
fn the_inspector_and_the_witness_default_to_different_ports() {
    let tmp = tempfile::tempdir().unwrap();
    let inspect = herald(tmp.path(), &["inspect", "--help"]);
    let witness = herald(tmp.path(), &["witness", "serve", "--help"]);
    inspect.expect(0);
    witness.expect(0);
    let inspect = String::from_utf8_lossy(&inspect.stdout);
    let witness = String::from_utf8_lossy(&witness.stdout);
    assert!(inspect.contains("127.0.0.1:8473"), "{inspect}");
    assert!(witness.contains("127.0.0.1:8471"), "{witness}");
    assert!(!inspect.contains("8471"), "{inspect}");
}

#[test]
fn a_key_is_served_on_loopback_only_and_bad_input_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    herald(d, &["demo", "--dir", "."]).expect(0);
    let run = herald(
        d,
        &[
            "inspect",
            "--serve",
            "--listen",
            "0.0.0.0:0",
            "--key",
            "alice.key",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("loopback only"), "{}", run.stderr);
    let run = herald(
        d,
        &[
            "inspect",
            "--serve",
            "--listen",
            "127.0.0.1:0",
            "missing.cbor",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("missing.cbor"), "{}", run.stderr);
    assert_eq!(
        herald(d, &["inspect"]).code,
        2,
        "FILEs, --serve or --export-site"
    );
    // A key file named as a FILE or a keyring is never handed to the page.
    let secret = std::fs::read_to_string(d.join("alice.key")).unwrap();
    let secret = secret.lines().last().unwrap().to_owned();
    for args in [&["alice.key"][..], &["--keyring", "alice.key"]] {
        let mut all = vec!["inspect", "--serve", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let run = herald(d, &all);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("alice.key"), "{}", run.stderr);
        assert!(!run.stderr.contains(&secret), "{}", run.stderr);
        if args.len() == 1 {
            assert!(run.stderr.contains("a secret key file"), "{}", run.stderr);
        }
    }
    assert_eq!(
        herald(d, &["inspect", "--listen", "127.0.0.1:0", "trace.cbor"]).code,
        2
    );
}

#[test]
fn export_site_writes_the_static_inspector() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let run = herald(d, &["inspect", "--export-site", "site"]);
    run.expect(0);
    let site = d.join("site");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(!index.contains("herald-token"), "no token in any copy");
    for file in [
        "app.js",
        "graph.js",
        "compose.js",
        "people.js",
        "heralds.js",
        "verifier.js",
        "herald_js.js",
        "style.css",
        "spec.html",
        "spec.js",
    ] {
        assert!(site.join(file).is_file(), "{file}");
    }
    assert!(
        std::fs::read(site.join("herald_js_bg.wasm"))
            .unwrap()
            .starts_with(b"\0asm")
    );
    assert!(
        std::fs::read_to_string(site.join("vendor/LICENSES.md"))
            .unwrap()
            .contains("MIT")
    );
    assert!(
        std::fs::read_to_string(site.join("spec/PROFILE.md"))
            .unwrap()
            .contains("## P11.")
    );
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_server_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = serve(tmp.path(), &[]);
    assert_eq!(get(&server.1, "/", &[]).0, 200);
    let pid = server.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
}
