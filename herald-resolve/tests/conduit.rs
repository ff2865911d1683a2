//! The conduit channel (PROFILE.md P15 *Conduits*) against a LYING
//! conduit: a tiny HTTP server on loopback answering `GET /v1/keys/...`
//! with a birth for another sigil, a molt without its proof, a truncated,
//! a huge or a slow answer. Each is a failure or nothing resolved, never a
//! key; resolution stays within its time bound. (The honest conduit, the
//! real `herald conduit serve`, is tested through the binary in
//! herald-cli/tests/resolve_conduit.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Kind, SigilForm, SigningKey};
use herald_resolve::{ConduitChannel, Query, ResolveError, Resolver, Source};
use herald_testkit::{T0, key};
use herald_verify::Keyring;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the lying conduit answers every request with.
#[derive(Clone)]
enum Answer {
    /// `200` with this body.
    Body(Vec<u8>),
    /// `404`.
    NotFound,
    /// `200` announcing `n` bytes and sending them all (zeros).
    Huge(usize),
    /// Never a byte.
    Silent,
}

/// Serve `answer` to every connection on 127.0.0.1:0; the URL.
async fn lying_conduit(answer: Answer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let (status, body, announced) = match answer {
                    Answer::Body(b) => ("200 OK", b.clone(), b.len()),
                    Answer::NotFound => ("404 Not Found", Vec::new(), 0),
                    Answer::Huge(n) => ("200 OK", vec![0u8; n], n),
                    Answer::Silent => {
                        std::future::pending::<()>().await;
                        return;
                    }
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/cbor-seq\r\n\
                     content-length: {announced}\r\nconnection: close\r\n\r\n"
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

fn birth(k: &SigningKey) -> Envelope {
    EnvelopeBuilder::genesis(T0)
        .kind(Kind::Birth)
        .attest("birth", birth_attestation(&k.public_key(), "agent", &[]))
        .sign(k)
        .unwrap()
}

fn molt(k: &SigningKey, parent: &Envelope, new: &SigningKey) -> Envelope {
    let mut p = Map::new();
    p.insert(
        "new_key",
        Value::Bytes(new.public_key().as_bytes().to_vec()),
    );
    p.insert("not_before", Value::Unsigned(T0 + 3 * 86_400));
    EnvelopeBuilder::reply(&parent.view(), T0 + 2 * 86_400)
        .kind(Kind::Molt)
        .payload(Value::Map(p))
        .sign(k)
        .unwrap()
}

/// Resolve carol (key 0x33) through the conduit at `url` alone, within
/// `timeout`: the resolution, and how long it took.
async fn resolve(url: &str, timeout: Duration) -> (herald_resolve::Resolution, Duration) {
    let carol = key(0x33).sigil(SigilForm::Default);
    let channel = ConduitChannel::new(url, Keyring::new()).unwrap();
    let resolver = Resolver::new()
        .with_channel(Box::new(channel))
        .with_timeout(timeout);
    let started = Instant::now();
    let r = resolver.resolve(&Query::sigil(carol)).await;
    (r, started.elapsed())
}

/// Not resolved, with one conduit failure that `expect` accepts.
async fn refused(answer: Answer, expect: impl Fn(&ResolveError) -> bool) -> ResolveError {
    let url = lying_conduit(answer).await;
    let (r, _) = resolve(&url, Duration::from_secs(5)).await;
    assert!(!r.is_resolved(), "{:?}", r.answers);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].source, Source::Conduit);
    let e = r.failures[0].error.clone();
    assert!(expect(&e), "{e}");
    e
}

#[tokio::test]
async fn an_honest_birth_resolves_to_the_sigils_key() {
    let carol = key(0x33);
    let url = lying_conduit(Answer::Body(birth(&carol).as_bytes().to_vec())).await;
    let (r, _) = resolve(&url, Duration::from_secs(5)).await;
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.answers.len(), 1);
    let a = &r.answers[0];
    assert_eq!(a.source, Source::Conduit);
    assert_eq!(a.key, carol.public_key());
    assert_eq!(*a.current_key(), carol.public_key());
    assert_eq!(a.conduit.as_deref(), Some(url.as_str()));
    assert_eq!(a.history.as_ref().unwrap().keys.len(), 1);
}

#[tokio::test]
async fn a_birth_for_another_sigil_is_not_a_key() {
    let bob = birth(&key(0x22));
    let e = refused(Answer::Body(bob.as_bytes().to_vec()), |e| {
        matches!(e, ResolveError::Malformed { .. })
    })
    .await;
    assert!(e.to_string().contains("another sigil"), "{e}");
}

#[tokio::test]
async fn a_molt_without_its_proof_is_not_a_key() {
    let carol = key(0x33);
    let b = birth(&carol);
    let m = molt(&carol, &b, &key(0x66));
    let body = [b.as_bytes(), m.as_bytes()].concat();
    let e = refused(Answer::Body(body), |e| {
        matches!(e, ResolveError::Malformed { .. })
    })
    .await;
    assert!(e.to_string().contains("no inclusion proof"), "{e}");
}

#[tokio::test]
async fn a_truncated_answer_is_not_a_key() {
    let b = birth(&key(0x33));
    let bytes = b.as_bytes();
    let e = refused(Answer::Body(bytes[..bytes.len() - 5].to_vec()), |e| {
        matches!(e, ResolveError::Malformed { .. })
    })
    .await;
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[tokio::test]
async fn a_huge_answer_is_not_read() {
    let limit = herald_verify::KEYS_MAX_BYTES;
    refused(Answer::Huge(limit + 1), |e| {
        *e == ResolveError::TooLarge { limit }
    })
    .await;
}

#[tokio::test]
async fn a_slow_conduit_times_out_within_the_bound() {
    let url = lying_conduit(Answer::Silent).await;
    let bound = Duration::from_millis(400);
    let (r, took) = resolve(&url, bound).await;
    assert!(!r.is_resolved());
    assert_eq!(r.failures.len(), 1);
    assert_eq!(r.failures[0].error, ResolveError::Timeout);
    assert!(took < bound + Duration::from_secs(1), "{took:?}");
}

#[tokio::test]
async fn a_conduit_that_holds_nothing_knows_nothing() {
    let url = lying_conduit(Answer::NotFound).await;
    let (r, _) = resolve(&url, Duration::from_secs(5)).await;
    assert!(!r.is_resolved());
    assert!(r.failures.is_empty(), "{:?}", r.failures);
}

#[tokio::test]
async fn a_bad_conduit_url_is_refused() {
    let e = ConduitChannel::new("ftp://example", Keyring::new()).unwrap_err();
    assert!(e.to_string().contains("conduit URL"), "{e}");
}

#[tokio::test]
async fn a_dns_answer_follows_the_conduit_its_record_names() {
    let carol = key(0x33);
    let sigil = carol.sigil(SigilForm::Default);
    let dns = |url: &str| {
        herald_resolve::Resolved::new(sigil, carol.public_key(), Source::Dns)
            .with_conduit(url.to_owned())
    };
    // An honest conduit: the history joins the DNS answer.
    let url = lying_conduit(Answer::Body(birth(&carol).as_bytes().to_vec())).await;
    let (a, e) = ConduitChannel::follow(dns(&url), Keyring::new()).await;
    assert_eq!(e, None);
    assert_eq!(a.source, Source::Dns);
    assert_eq!(a.history.unwrap().keys[0].key, carol.public_key());
    // A lying one: the DNS answer stands alone, the failure is said.
    let url = lying_conduit(Answer::Body(birth(&key(0x22)).as_bytes().to_vec())).await;
    let (a, e) = ConduitChannel::follow(dns(&url), Keyring::new()).await;
    assert!(matches!(e, Some(ResolveError::Malformed { .. })), "{e:?}");
    assert_eq!(a.history, None);
    assert_eq!(*a.current_key(), carol.public_key());
}
