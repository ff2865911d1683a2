//! The client's bounds and its reading of answers, on loopback against
//! raw sockets that misbehave on purpose (short limits, every wait
//! bounded): a body past the limit, a server that never answers or
//! trickles, nothing listening, an early `413` while the body is still
//! being sent, a chunked answer on a kept-alive connection, and the
//! blocking wrapper called from inside a runtime.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use herald_http::client::{Client, ClientError, Limits, Request, Url, blocking};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SHORT: Limits = Limits {
    connect_timeout: Duration::from_secs(2),
    timeout: Duration::from_millis(700),
    max_body: 1024,
};

/// A listener on loopback; each connection is handed to `serve`.
async fn server<F, Fut>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            tokio::spawn(serve(s));
        }
    });
    addr
}

/// Read one request head (up to its blank line).
async fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).await.unwrap_or(0) == 0 {
            break;
        }
        head.push(b[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

fn url(addr: SocketAddr, target: &str) -> Url {
    Url::for_addr(addr, target).unwrap()
}

#[tokio::test]
async fn an_answer_is_read_whole_with_its_headers_and_the_request_names_its_host() {
    let addr = server(|mut s| async move {
        let head = read_head(&mut s).await;
        let body = head.lines().next().unwrap_or_default().to_owned();
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Host: {}\r\nContent-Length: {}\r\n\r\n{body}",
            head.lines()
                .find_map(|l| l.strip_prefix("host: "))
                .unwrap_or("none"),
            body.len()
        );
        let _ = s.write_all(answer.as_bytes()).await;
    })
    .await;
    let r = Client::new(SHORT).get(&url(addr, "/a?b=1")).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"GET /a?b=1 HTTP/1.1");
    assert_eq!(r.content_type(), Some("text/plain"));
    assert_eq!(r.header("x-host"), Some(addr.to_string().as_str()));
}

#[tokio::test]
async fn a_body_past_the_limit_is_refused_however_it_is_framed() {
    for chunked in [false, true] {
        let addr = server(move |mut s| async move {
            read_head(&mut s).await;
            let body = vec![b'x'; 4096];
            let head = if chunked {
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n".to_owned()
            } else {
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
            };
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(&body).await;
            if chunked {
                let _ = s.write_all(b"\r\n0\r\n\r\n").await;
            }
        })
        .await;
        let err = Client::new(SHORT).get(&url(addr, "/")).await.unwrap_err();
        assert!(matches!(err, ClientError::TooLarge(1024)), "{err}");
    }
}

#[tokio::test]
async fn a_server_that_never_finishes_is_given_up_on_in_time() {
    // One that never answers, one that trickles a byte every 100 ms.
    for trickle in [false, true] {
        let addr = server(move |mut s| async move {
            read_head(&mut s).await;
            if trickle {
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
                    .await;
                for _ in 0..100 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if s.write_all(b"x").await.is_err() {
                        return;
                    }
                }
            } else {
                tokio::time::sleep(Duration::from_secs(30)).await;
            }
        })
        .await;
        let t = Instant::now();
        let err = Client::new(SHORT).get(&url(addr, "/")).await.unwrap_err();
        let took = t.elapsed();
        assert!(matches!(err, ClientError::Timeout), "{err}");
        assert!(
            took >= SHORT.timeout && took < SHORT.timeout * 3,
            "{took:?}"
        );
    }
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = Client::new(SHORT).get(&url(addr, "/")).await.unwrap_err();
    assert!(matches!(err, ClientError::Connect(_)), "{err}");
}

#[tokio::test]
async fn an_early_refusal_of_a_large_body_is_the_answer() {
    // The server answers 413 after the head and closes without reading
    // the body (as a conduit refuses an envelope past its limit).
    let addr = server(|mut s| async move {
        read_head(&mut s).await;
        let _ = s
            .write_all(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo_large")
            .await;
        let _ = s.shutdown().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    })
    .await;
    let limits = Limits {
        timeout: Duration::from_secs(5),
        ..SHORT
    };
    let body = vec![0u8; 8 << 20];
    for _ in 0..5 {
        let r = Client::new(limits)
            .send(&Request::post(
                url(addr, "/v1/envelopes"),
                "application/cbor",
                body.clone(),
            ))
            .await
            .unwrap();
        assert_eq!((r.status, r.body.as_slice()), (413, &b"too_large"[..]));
    }
}

#[tokio::test]
async fn a_kept_alive_connection_carries_requests_one_after_another() {
    let addr = server(|mut s| async move {
        for n in 0..3 {
            let head = read_head(&mut s).await;
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0u8; len];
            s.read_exact(&mut body).await.unwrap();
            // Chunked, then sized: both framings on one connection.
            let answer = if n % 2 == 0 {
                format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{len:x}\r\n")
            } else {
                format!("HTTP/1.1 201 Created\r\nContent-Length: {len}\r\n\r\n")
            };
            s.write_all(answer.as_bytes()).await.unwrap();
            s.write_all(&body).await.unwrap();
            if n % 2 == 0 {
                s.write_all(b"\r\n0\r\n\r\n").await.unwrap();
            }
        }
    })
    .await;
    let mut conn = Client::new(SHORT).connect(&url(addr, "/")).await.unwrap();
    for (n, status) in [200, 201, 200].into_iter().enumerate() {
        let body = format!("request {n}");
        let r = conn
            .send(&Request::post(url(addr, "/p"), "text/plain", body.clone()))
            .await
            .unwrap();
        assert_eq!((r.status, r.body), (status, body.into_bytes()));
    }
    // The server has closed: an error, then the connection is not used again.
    assert!(conn.send(&Request::get(url(addr, "/"))).await.is_err());
    let err = conn.send(&Request::get(url(addr, "/"))).await.unwrap_err();
    assert!(matches!(err, ClientError::Closed), "{err}");
}

// Two workers: the call blocks its own (as any blocking call would), the
// server runs on the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_wrapper_works_inside_a_runtime_too() {
    let addr = server(|mut s| async move {
        read_head(&mut s).await;
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .await;
    })
    .await;
    let r = blocking::get(&Client::new(SHORT), &url(addr, "/")).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
}
