//! The sender reaches a conduit by its URL, a path prefix included
//! (CONDUIT.md behind a reverse proxy): the well-known document and
//! `POST /v1/envelopes` under the prefix, the receipt checked under the
//! key the document names (spec §5.2). On loopback, against a raw socket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use herald_agent::Conduit;
use herald_agent::sender::SendError;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Scope, SigilForm, SigningKey};
use herald_http::client::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request: its request line and body.
async fn read_request(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut raw = Vec::new();
    let mut b = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).await.unwrap() == 0 {
            break;
        }
        raw.push(b[0]);
    }
    let head = String::from_utf8(raw).unwrap();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).await.unwrap();
    (head.lines().next().unwrap().to_owned(), body)
}

async fn answer(s: &mut TcpStream, status: &str, kind: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
}

/// A relay under `/relay` that publishes `key` and acknowledges every
/// post with its receipt; every request line it saw comes back on `seen`.
async fn relay(key: SigningKey) -> (Url, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, seen) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let (line, body) = read_request(&mut s).await;
            tx.send(line.clone()).unwrap();
            if line.starts_with("GET /relay/.well-known/herald-conduit ") {
                let hex = data_encoding::HEXLOWER.encode(key.public_key().as_bytes());
                let doc = format!("{{\"key\":\"{hex}\",\"roles\":[\"relay\"]}}");
                answer(&mut s, "200 OK", "application/json", doc.as_bytes()).await;
            } else if line.starts_with("POST /relay/v1/envelopes ") {
                let sent = Envelope::from_bytes(body).unwrap();
                let forwarded = sent.cosign(&key, Scope::ConduitReceipt, None).unwrap();
                let mut map = Map::new();
                map.insert("envelope", Value::Bytes(forwarded.as_bytes().to_vec()));
                map.insert("index", Value::Unsigned(7));
                answer(
                    &mut s,
                    "201 Created",
                    "application/cbor",
                    &Value::Map(map).to_vec(),
                )
                .await;
            } else {
                answer(&mut s, "404 Not Found", "text/plain", b"no").await;
            }
        }
    });
    (Url::parse(&format!("http://{addr}/relay/")).unwrap(), seen)
}

#[tokio::test]
async fn a_conduit_under_a_prefix_is_reached_and_its_receipt_checked() {
    let conduit_key = SigningKey::generate_os();
    let (url, mut seen) = relay(SigningKey::from_seed(&conduit_key.to_seed())).await;
    let agent = SigningKey::generate_os();
    let envelope = EnvelopeBuilder::genesis(1_700_000_000)
        .to(agent.sigil(SigilForm::Default))
        .payload(Value::text("hello"))
        .sign(&agent)
        .unwrap();
    let conduit = Conduit::with_timeout(url, None, Duration::from_secs(5));
    let delivered = conduit.send(envelope.as_bytes()).await.unwrap();
    assert_eq!(delivered.index, Some(7));
    assert_ne!(delivered.envelope, envelope.as_bytes());
    assert_eq!(conduit.key().await.unwrap(), conduit_key.public_key());
    assert_eq!(
        seen.recv().await.unwrap(),
        "GET /relay/.well-known/herald-conduit HTTP/1.1"
    );
    assert_eq!(
        seen.recv().await.unwrap(),
        "POST /relay/v1/envelopes HTTP/1.1"
    );

    // Another key pinned by the caller: the same receipt proves nothing.
    let other = Conduit::with_timeout(
        conduit.url().clone(),
        Some(SigningKey::generate_os().public_key()),
        Duration::from_secs(5),
    );
    let err = other.send(envelope.as_bytes()).await.unwrap_err();
    assert!(
        matches!(err, SendError::Unproven { status: 201, .. }),
        "{err}"
    );
}
