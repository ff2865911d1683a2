//! Streamable HTTP downstream (MCP transport "Streamable HTTP", issue 19
//! item 1): `herald mcp proxy --listen ADDR` serves MCP at `/mcp`, each
//! MCP session with its own server child and its own trace, exactly as
//! over stdio (`proxy::serve_session`: the session's messages are
//! fed to the same wrapper through an in-memory pipe).
//!
//! - `POST /mcp`: one JSON-RPC message. A request is answered with an SSE
//!   stream (`text/event-stream`) carrying the progress notifications of
//!   its `progressToken`, anything the server sends while it is the only
//!   one pending, and its response, after which the stream ends; a
//!   notification or response is answered `202`. `initialize` (without a
//!   session) starts a session and its answer carries `Mcp-Session-Id`.
//! - `GET /mcp`: the session's stream for everything not tied to a request.
//! - `DELETE /mcp`: ends the session (the server's input is closed).
//! - A session idle for `--session-idle` (no request from its client, no
//!   request of it pending, no GET stream open) is ended the same way, so
//!   a client that went away without `DELETE` does not leave its server
//!   running (rmcp's session manager does the same, 5 minutes by default).
//! - Host and Origin guards (against DNS rebinding): a request whose `Host`
//!   is not a loopback name, or whose `Origin` is present and not a
//!   loopback origin, is refused `403`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use data_encoding::HEXLOWER;
use http_body::Frame;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

use crate::jsonrpc::{self, Kind};
use crate::ledger::Ledger;
use crate::recorder::Recorder;
use crate::session::Keys;
use crate::stdio::Messages;
use crate::upstream::Upstream;

/// A refusal: its status and one line.
type Refusal = (StatusCode, &'static str);

/// The session header.
const SESSION: &str = "mcp-session-id";

/// Buffer of the in-memory pipes between HTTP and a session's wrapper.
const PIPE: usize = 1 << 16;

/// What every session is made from.
pub struct HttpConfig {
    /// The keys (each session signs with the same ones).
    pub keys: Keys,
    /// The trace file and conduit, shared by the sessions.
    pub recorder: Recorder,
    /// `--pin FILE`.
    pub pin: Option<PathBuf>,
    /// The server: a command (a child per session) or a URL (an
    /// upstream session per session).
    pub upstream: Upstream,
    /// `--session-idle`: end a session idle this long (`None`: never).
    pub idle: Option<Duration>,
}

struct Shared {
    config: HttpConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

type Events = mpsc::UnboundedSender<Bytes>;

/// Where the session's outgoing messages go.
#[derive(Default)]
struct Streams {
    /// Pending requests: JSON id → their POST stream.
    pending: HashMap<String, Events>,
    /// Progress tokens (JSON text) → request id.
    tokens: HashMap<String, String>,
    get: Option<Events>,
    /// Messages for the GET stream before it was opened.
    backlog: Vec<Bytes>,
}

struct Session {
    input: tokio::sync::Mutex<Option<DuplexStream>>,
    streams: Mutex<Streams>,
    /// Its client's last request.
    touched: Mutex<Instant>,
}

impl Session {
    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its client made a request.
    fn touch(&self) {
        *self.touched.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// No request from its client for `limit`, and no stream a client
    /// still reads (a pending request's, or the GET stream).
    fn idle(&self, now: Instant, limit: Duration) -> bool {
        let touched = *self.touched.lock().unwrap_or_else(|p| p.into_inner());
        let streams = self.streams();
        now.saturating_duration_since(touched) >= limit
            && streams.pending.values().all(Events::is_closed)
            && streams.get.as_ref().is_none_or(Events::is_closed)
    }

    /// End it: closing the server's input is a stdio shutdown.
    async fn end(&self) {
        self.input.lock().await.take();
    }

    async fn write(&self, message: &[u8]) -> bool {
        let mut input = self.input.lock().await;
        let Some(pipe) = input.as_mut() else {
            return false;
        };
        let mut line = message.to_vec();
        line.push(b'\n');
        pipe.write_all(&line).await.is_ok()
    }

    /// Route one message of the wrapper to its stream.
    fn route(&self, message: &Value, line: &[u8]) {
        let event = Bytes::from([b"event: message\ndata: ".as_slice(), line, b"\n\n"].concat());
        let mut streams = self.streams();
        let target = match jsonrpc::classify(message) {
            Kind::Response { id } => {
                streams.tokens.retain(|_, r| *r != id);
                streams.pending.remove(&id)
            }
            _ => {
                let token = message
                    .pointer("/params/progressToken")
                    .map(jsonrpc::id_key)
                    .and_then(|t| streams.tokens.get(&t).cloned());
                match token {
                    Some(id) => streams.pending.get(&id).cloned(),
                    None if streams.get.is_some() => streams.get.clone(),
                    None if streams.pending.len() == 1 => streams.pending.values().next().cloned(),
                    None => None,
                }
            }
        };
        match target {
            Some(to) if to.send(event.clone()).is_ok() => {}
            _ => streams.backlog.push(event),
        }
    }
}

/// An SSE body fed by a channel.
struct Sse(mpsc::UnboundedReceiver<Bytes>);

impl http_body::Body for Sse {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

fn sse(rx: mpsc::UnboundedReceiver<Bytes>) -> Response {
    let mut r = Response::new(Body::new(Sse(rx)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// Serve MCP over streamable HTTP on `listener` until `shutdown`
/// completes, under the limits every HERALD server has (docs/mcp.md):
/// then stop accepting, finish what is in flight within the shutdown
/// grace, close the rest and return.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let idle = config.idle;
    let shared = Arc::new(Shared {
        config,
        sessions: Mutex::new(HashMap::new()),
    });
    if let Some(limit) = idle {
        tokio::spawn(reap(Arc::downgrade(&shared), limit));
    }
    let app = Router::new()
        .route("/mcp", post(on_post).get(on_get).delete(on_delete))
        .with_state(shared);
    herald_http::server::serve(
        listener,
        app,
        herald_http::server::Limits::default(),
        shutdown,
    )
    .await
}

/// End the sessions idle for `limit`, looking a few times per `limit`,
/// until the server is gone.
async fn reap(shared: std::sync::Weak<Shared>, limit: Duration) {
    let every = (limit / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    loop {
        tokio::time::sleep(every).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let now = Instant::now();
        let idle: Vec<(String, Arc<Session>)> = {
            let mut sessions = shared.sessions.lock().unwrap_or_else(|p| p.into_inner());
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.idle(now, limit))
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| sessions.remove(&id).map(|s| (id, s)))
                .collect()
        };
        for (id, session) in idle {
            eprintln!(
                "herald-mcp: session {id} idle for {} s: ended",
                limit.as_secs_f64()
            );
            session.end().await;
        }
    }
}

fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

/// The Host and Origin guards.
fn guarded(headers: &HeaderMap) -> Result<(), Refusal> {
    let text = |h| headers.get(h).and_then(|v: &HeaderValue| v.to_str().ok());
    let host_ok = text(header::HOST).is_some_and(loopback_host);
    let origin_ok = text(header::ORIGIN).is_none_or(|o| {
        o.strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"))
            .is_some_and(loopback_host)
    });
    if host_ok && origin_ok {
        Ok(())
    } else {
        Err((
            StatusCode::FORBIDDEN,
            "herald-mcp: Host or Origin is not loopback",
        ))
    }
}

fn session_of(shared: &Shared, headers: &HeaderMap) -> Result<Arc<Session>, Refusal> {
    let id = headers
        .get(SESSION)
        .and_then(|v| v.to_str().ok())
        .ok_or((StatusCode::BAD_REQUEST, "herald-mcp: no Mcp-Session-Id"))?;
    let sessions = shared.sessions.lock().unwrap_or_else(|p| p.into_inner());
    let session = sessions
        .get(id)
        .cloned()
        .ok_or((StatusCode::NOT_FOUND, "herald-mcp: no such session"))?;
    session.touch();
    Ok(session)
}

/// A new session: its wrapper and server started, its router running.
fn start(shared: &Arc<Shared>) -> Result<(String, Arc<Session>), Refusal> {
    let nonce = herald_core::Nonce::generate().map_err(|_| {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "herald-mcp: no randomness",
        )
    })?;
    let id = HEXLOWER.encode(&nonce.0);
    let (http_in, wrapper_in) = tokio::io::duplex(PIPE);
    let (wrapper_out, http_out) = tokio::io::duplex(PIPE);
    let session = Arc::new(Session {
        input: tokio::sync::Mutex::new(Some(http_in)),
        streams: Mutex::new(Streams::default()),
        touched: Mutex::new(Instant::now()),
    });
    let c = &shared.config;
    let ledger = Ledger::new(c.keys.duplicate(), c.recorder.clone(), c.pin.clone());
    let upstream = c.upstream.clone();
    tokio::spawn(async move {
        if let Err(e) =
            crate::proxy::serve_session(ledger, &upstream, wrapper_in, wrapper_out).await
        {
            eprintln!("herald-mcp: session: {e}");
        }
    });
    let (router, gone) = (session.clone(), shared.clone());
    let key = id.clone();
    tokio::spawn(async move {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut messages = Messages::new(http_out);
        while let Ok(Some(message)) = messages.next(&tx).await {
            router.route(&message, messages.line());
        }
        // The server has ended: close every stream, forget the session.
        let mut streams = router.streams();
        streams.pending.clear();
        streams.get = None;
        drop(streams);
        gone.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
    });
    shared
        .sessions
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id.clone(), session.clone());
    Ok((id, session))
}

async fn on_post(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(r) = guarded(&headers) {
        return r.into_response();
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "herald-mcp: the body is not JSON").into_response();
    };
    let kind = jsonrpc::classify(&message);
    let (new, session) = match (&kind, headers.get(SESSION)) {
        (
            Kind::Request {
                method: "initialize",
                ..
            },
            None,
        ) => match start(&shared) {
            Ok((id, s)) => (Some(id), s),
            Err(r) => return r.into_response(),
        },
        _ => match session_of(&shared, &headers) {
            Ok(s) => (None, s),
            Err(r) => return r.into_response(),
        },
    };
    let line = serde_json::to_vec(&message).unwrap_or_default();
    let Kind::Request { id, .. } = kind else {
        return if session.write(&line).await {
            StatusCode::ACCEPTED.into_response()
        } else {
            (StatusCode::NOT_FOUND, "herald-mcp: the session has ended").into_response()
        };
    };
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let mut streams = session.streams();
        if let Some(token) = message.pointer("/params/_meta/progressToken") {
            streams.tokens.insert(jsonrpc::id_key(token), id.clone());
        }
        streams.pending.insert(id, tx);
    }
    if !session.write(&line).await {
        return (StatusCode::NOT_FOUND, "herald-mcp: the session has ended").into_response();
    }
    let mut response = sse(rx);
    if let Some(id) = new.and_then(|id| HeaderValue::from_str(&id).ok()) {
        response.headers_mut().insert(SESSION, id);
    }
    response
}

async fn on_get(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Err(r) = guarded(&headers) {
        return r.into_response();
    }
    let session = match session_of(&shared, &headers) {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let mut streams = session.streams();
    for event in streams.backlog.drain(..) {
        let _ = tx.send(event);
    }
    streams.get = Some(tx);
    drop(streams);
    sse(rx)
}

async fn on_delete(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Err(r) = guarded(&headers) {
        return r.into_response();
    }
    let session = match session_of(&shared, &headers) {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    session.end().await;
    StatusCode::OK.into_response()
}

/// `herald mcp proxy --listen ADDR`: bind, say `listening on
/// http://ADDR/mcp` on standard output, and serve until SIGTERM or SIGINT.
pub fn run_http(
    listen: std::net::SocketAddr,
    config: crate::ProxyConfig,
    idle: Option<Duration>,
) -> Result<(), crate::ProxyError> {
    use crate::ProxyError;
    let crate::ProxyConfig {
        keys,
        trace,
        pin,
        conduit,
        sync,
        upstream,
    } = config;
    upstream.check()?;
    let trace = crate::TraceFile::open(&trace).map_err(ProxyError::Trace)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProxyError::Io)?;
    runtime.block_on(async move {
        // Installed before the `listening on` line.
        let stop = herald_http::server::termination();
        let listener = herald_http::server::listen(listen).map_err(ProxyError::Io)?;
        let addr = listener.local_addr().map_err(ProxyError::Io)?;
        let mut out = tokio::io::stdout();
        out.write_all(format!("listening on http://{addr}/mcp\n").as_bytes())
            .await
            .and(out.flush().await)
            .map_err(ProxyError::Io)?;
        let config = HttpConfig {
            keys,
            recorder: Recorder::new(trace, conduit, sync),
            pin,
            upstream,
            idle,
        };
        serve_http(listener, config, stop)
            .await
            .map_err(ProxyError::Io)
    })
}
