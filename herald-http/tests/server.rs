//! The accept loop's bounds, on loopback with short limits: the
//! connection cap (a genuine client is served once held slots free) and
//! the bounded graceful shutdown (what is in flight is answered, a stalled
//! client does not hold the process).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use herald_http::server::{Limits, listen, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// `/` answers at once; `/slow` says it started on `started`, then
/// answers 300 ms later.
fn app(started: Arc<Notify>) -> Router {
    Router::new().route("/", get(|| async { "ok" })).route(
        "/slow",
        get(move || async move {
            started.notify_one();
            tokio::time::sleep(Duration::from_millis(300)).await;
            "slow"
        }),
    )
}

/// Send `GET path` on a new connection; the whole answer.
async fn get_text(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn past_the_cap_a_client_waits_until_a_slot_frees() {
    let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = Limits::default()
        .max_connections(2)
        .header_read_timeout(Duration::from_secs(1));
    let app = app(Arc::new(Notify::new()));
    tokio::spawn(serve(listener, app, limits, std::future::pending()));
    // Two idle connections take both slots (accepted first: one loop, in order).
    let idle = [
        TcpStream::connect(addr).await.unwrap(),
        TcpStream::connect(addr).await.unwrap(),
    ];
    let t = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), get_text(addr, "/"))
        .await
        .expect("a genuine client is served once the idle ones are closed");
    let waited = t.elapsed();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("ok"), "{answer}");
    // It waited for the header read timeout to close an idle one.
    assert!(waited >= Duration::from_millis(700), "{waited:?}");
    drop(idle);
}

#[tokio::test]
async fn shutdown_answers_what_is_in_flight_and_is_bounded() {
    let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = Limits::default()
        .header_read_timeout(Duration::from_secs(60))
        .shutdown_grace(Duration::from_secs(1));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let started = Arc::new(Notify::new());
    let app = app(Arc::clone(&started));
    let server = tokio::spawn(serve(listener, app, limits, async {
        let _ = stopped.await;
    }));
    // A client stalled in its request head, then one whose answer is
    // being computed when shutdown begins.
    let mut stalled = TcpStream::connect(addr).await.unwrap();
    stalled.write_all(b"GET / HTTP/1.1\r\nHo").await.unwrap();
    let slow = tokio::spawn(get_text(addr, "/slow"));
    started.notified().await;
    let t = Instant::now();
    stop.send(()).unwrap();
    let answer = slow.await.unwrap();
    assert!(answer.ends_with("slow"), "in flight, answered: {answer}");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("shutdown is bounded by the grace")
        .unwrap()
        .unwrap();
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(800),
        "the grace was given: {took:?}"
    );
    // The stalled client's connection was closed.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(1), stalled.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the stalled connection is still open");
}
