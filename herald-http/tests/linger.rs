//! Lingering close (herald-http `server`, docs/conduit.md *Limits*): an
//! answer given before the request's body was read — a `413` from the
//! head — reaches a client that is still sending its body, instead of a
//! reset that makes the client's kernel drop the answer unread.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use herald_http::client::{self, Client, Request, Url};
use herald_http::server::{Limits, listen, serve};

/// Body bytes the client sends: far past what the kernel's socket
/// buffers on both sides hold, so the server answers with most unread.
const BODY: usize = 64 << 20;

/// The server: `POST /` refuses from the head, never reading the body.
async fn server() -> SocketAddr {
    let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route("/", post(|| async { StatusCode::PAYLOAD_TOO_LARGE }));
    tokio::spawn(serve(
        listener,
        app,
        Limits::default(),
        std::future::pending(),
    ));
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_before_the_body_is_read_reaches_a_client_still_sending() {
    let addr = server().await;
    let client = Client::new(client::Limits::default());
    let body = hyper::body::Bytes::from(vec![0u8; BODY]);
    let url = Url::for_addr(addr, "/").unwrap();
    for round in 0..10 {
        let request = Request::post(url.clone(), "application/octet-stream", body.clone());
        match client.send(&request).await {
            Ok(r) => assert_eq!(r.status, 413, "round {round}"),
            Err(e) => panic!("round {round}: the client lost the 413 to {e} ({e:?})"),
        }
    }
}
