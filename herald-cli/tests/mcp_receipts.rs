//! `herald mcp proxy --conduit` counts an envelope as delivered only with a
//! `conduit_receipt` that verifies under the conduit's key (spec §5.2):
//! against a fake conduit (a loopback HTTP server in this test) that
//! answers `201` with no receipt, or with one signed by another key, the
//! call is answered `isError`, reported, and never reaches the server;
//! through a real `herald conduit serve --roles relay` it is delivered.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;

use herald_core::cbor::{Map, Value as Cbor};
use herald_core::{Envelope, Scope, SigilForm, SigningKey};
use serde_json::json;
use support::keygen;
use support::probe::{LineClient, call, calls, command};

/// What the fake conduit does to the envelope it acknowledges.
#[derive(Clone, Copy)]
enum Receipt {
    /// Returns it as sent.
    None,
    /// Appends a receipt by another key.
    Foreign,
    /// Appends a receipt naming the conduit, signed by another key.
    Forged,
}

/// A fake conduit on a free loopback port publishing `key`; its URL.
fn fake_conduit(key: &SigningKey, receipt: Receipt) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let published = data_encoding::HEXLOWER.encode(key.public_key().as_bytes());
    let conduit = key.sigil(SigilForm::Default);
    std::thread::spawn(move || {
        let other = SigningKey::generate_os();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (path, body) = read_request(&stream);
            let (status, kind, answer) = if path.starts_with("/.well-known/") {
                let doc = json!({"key": published, "roles": ["relay"]}).to_string();
                (200, "application/json", doc.into_bytes())
            } else {
                let sent = Envelope::from_bytes(body).unwrap();
                let back = match receipt {
                    Receipt::None => sent,
                    Receipt::Foreign => sent.cosign(&other, Scope::ConduitReceipt, None).unwrap(),
                    Receipt::Forged => sent
                        .cosign_as(&other, conduit, Scope::ConduitReceipt, None)
                        .unwrap(),
                };
                let mut m = Map::new();
                m.insert("envelope", Cbor::Bytes(back.as_bytes().to_vec()));
                (201, "application/cbor", Cbor::Map(m).to_vec())
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                answer.len()
            );
            let _ = stream.write_all(&answer);
        }
    });
    url
}

/// The path and body of one HTTP/1.1 request.
fn read_request(stream: &TcpStream) -> (String, Vec<u8>) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        if header.trim().is_empty() {
            break;
        }
        if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (path, body)
}

fn proxy(dir: &Path, conduit: &str, log: &Path) -> LineClient {
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
            "--conduit",
            conduit,
        ],
        log,
    ))
}

#[test]
fn a_201_without_a_valid_receipt_is_not_a_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(d, "agent");
    keygen(d, "tool");
    let conduit = SigningKey::generate_os();
    for (n, receipt) in [Receipt::None, Receipt::Foreign, Receipt::Forged]
        .into_iter()
        .enumerate()
    {
        let log = d.join(format!("{n}.log"));
        let mut c = proxy(d, &fake_conduit(&conduit, receipt), &log);
        c.initialize(true);
        c.send(&call(json!(2)));
        let r = c.answer();
        c.finish();
        assert_eq!(r.pointer("/result/isError"), Some(&json!(true)), "{r}");
        let text = r.pointer("/result/content/0/text").unwrap().to_string();
        assert!(
            text.contains("not a delivery") && text.contains("conduit_receipt"),
            "case {n}: {text}"
        );
        assert!(calls(&log).is_empty(), "case {n}: the call was made");
    }
}

#[test]
fn a_real_relay_delivers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(d, "agent");
    keygen(d, "tool");
    keygen(d, "relay");
    let mut relay = std::process::Command::new(env!("CARGO_BIN_EXE_herald"))
        .args([
            "conduit",
            "serve",
            "--key",
            "relay.key",
            "--state",
            "relay-state",
        ])
        .args(["--listen", "127.0.0.1:0", "--roles", "relay"])
        .args(["--keyring", "agent.pub", "--keyring", "tool.pub"])
        .current_dir(d)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let url = format!(
        "http://{}",
        support::listening(&mut relay, "listening on http://")
    );
    let log = d.join("relay.log");
    let mut c = proxy(d, &url, &log);
    c.initialize(true);
    c.call_ok(2);
    c.finish();
    let _ = relay.kill();
    let _ = relay.wait();
    assert_eq!(calls(&log), [("2".to_owned(), true)]);
    // Every envelope on file is the one the relay forwarded, receipt on.
    let run = support::herald(d, &["inspect", "--json", "t.herald"]);
    let receipts = run.out().matches(r#""scope":"conduit_receipt""#).count();
    assert_eq!(
        receipts,
        4,
        "birth, genesis, request, result: {}",
        run.out()
    );
}
