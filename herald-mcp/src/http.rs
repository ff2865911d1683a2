//! Streamable HTTP downstream (MCP transport "Streamable HTTP",
//! docs/mcp.md *Over HTTP*): `herald mcp proxy --listen ADDR` serves
//! MCP at `/mcp`, each MCP session with its own server child and its
//! own trace, exactly as over stdio (`proxy::serve_session`: the
//! session's messages are fed to the same wrapper through an in-memory
//! pipe).
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
//! - At most `--max-sessions` sessions (default
//!   [`DEFAULT_MAX_SESSIONS`]) live at once, each counted until its server
//!   has exited: an `initialize` past it is refused `503` with
//!   `Retry-After`, before anything is started.
//! - Browser requests (MCP *Security Warning*: servers MUST validate the
//!   `Origin`), the rules of `herald inspect --serve`'s guard: a request
//!   whose `Host` is not a loopback name is refused `403`; so is one whose
//!   `Origin`, when present, is not this server's own (`http://` and the
//!   `Host` it names, so no other page, loopback ones included, reaches
//!   it), and one whose `Sec-Fetch-Site`, when present, is not
//!   `same-origin` or `none`. A `POST` body must be `application/json`
//!   (`415` otherwise): a browser's `no-cors` POST (a form, `text/plain`)
//!   can never start a session.
//! - Ids and batches (docs/mcp.md): a `tools/call` without a usable id is
//!   answered `400` with a JSON-RPC error; a batch holding a `tools/call`
//!   or `tools/list` with an error per request in it; neither is
//!   forwarded.

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
use crate::stdio::Messages;
use crate::upstream::Upstream;
use herald_agent::mcp::Keys;

/// A refusal: its status and one line.
type Refusal = (StatusCode, &'static str);

/// The default of `--max-sessions`.
pub const DEFAULT_MAX_SESSIONS: u32 = 32;

/// What bounds the sessions.
#[derive(Clone, Copy, Debug)]
pub struct SessionLimits {
    /// `--session-idle`: end a session idle this long (`None`: never).
    pub idle: Option<Duration>,
    /// `--max-sessions`: most sessions at once.
    pub max_sessions: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            idle: Some(Duration::from_secs(300)),
            max_sessions: DEFAULT_MAX_SESSIONS as usize,
        }
    }
}

/// The session header.
const SESSION: &str = "mcp-session-id";

/// Buffer of the in-memory pipes between HTTP and a session's wrapper.
const PIPE: usize = 1 << 16;

/// What every session is made from.
pub(crate) struct HttpConfig {
    /// The keys (each session signs with the same ones).
    pub keys: Keys,
    /// The trace file and conduit, shared by the sessions.
    pub recorder: Recorder,
    /// `--pin FILE`.
    pub pin: Option<PathBuf>,
    /// The server: a command (a child per session) or a URL (an
    /// upstream session per session).
    pub upstream: Upstream,
    /// The idle time and the cap on sessions.
    pub limits: SessionLimits,
}

struct Shared {
    config: HttpConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// One permit per live session, held until its server has exited.
    slots: Arc<tokio::sync::Semaphore>,
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
            // A batch of responses goes to the stream of the requests it
            // answers.
            Kind::Batch
                if message.as_array().is_some_and(|items| {
                    items
                        .iter()
                        .any(|m| matches!(jsonrpc::classify(m), Kind::Response { .. }))
                }) =>
            {
                message
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| match jsonrpc::classify(m) {
                        Kind::Response { id } => streams.pending.remove(&id),
                        _ => None,
                    })
                    .fold(None, |first, to| first.or(Some(to)))
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
pub(crate) async fn serve_http(
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let idle = config.limits.idle;
    let shared = Arc::new(Shared {
        slots: Arc::new(tokio::sync::Semaphore::new(config.limits.max_sessions)),
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
            tracing::warn!(
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

/// The Host guard and the browser-request rules (the module's list); a
/// `POST` (`body`) must carry `application/json`.
fn guarded(headers: &HeaderMap, body: bool) -> Result<(), Refusal> {
    let text = |h| headers.get(h).and_then(|v: &HeaderValue| v.to_str().ok());
    let host = text(header::HOST)
        .filter(|h| loopback_host(h))
        .ok_or((StatusCode::FORBIDDEN, "herald-mcp: Host is not loopback"))?;
    // This server's own origin is the one its `Host` names.
    if text(header::ORIGIN).is_some_and(|o| {
        !o.strip_prefix("http://")
            .is_some_and(|o| o.eq_ignore_ascii_case(host))
    }) {
        return Err((
            StatusCode::FORBIDDEN,
            "herald-mcp: cross-origin requests are refused",
        ));
    }
    if text(header::HeaderName::from_static("sec-fetch-site"))
        .is_some_and(|site| !matches!(site, "same-origin" | "none"))
    {
        return Err((
            StatusCode::FORBIDDEN,
            "herald-mcp: cross-site requests are refused",
        ));
    }
    let json = text(header::CONTENT_TYPE).is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if body && !json {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "herald-mcp: the body must be application/json",
        ));
    }
    Ok(())
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

/// A new session: its wrapper and server started, its router running;
/// refused past `--max-sessions`.
fn start(shared: &Arc<Shared>) -> Result<(String, Arc<Session>), Refusal> {
    let slot = shared.slots.clone().try_acquire_owned().map_err(|_| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "herald-mcp: too many MCP sessions at once (--max-sessions); retry later",
        )
    })?;
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
            tracing::warn!("herald-mcp: session: {e}");
        }
        // The server has exited (or was killed): its slot is free.
        drop(slot);
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

/// A JSON answer to a POST, made here (nothing forwarded).
fn json_answer(status: StatusCode, answer: &Value) -> Response {
    let mut r = (status, answer.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The ids of the requests in a message (one, or those of a batch).
fn request_ids(message: &Value) -> Vec<String> {
    match jsonrpc::classify(message) {
        Kind::Request { id, .. } => vec![id],
        Kind::Batch => message
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| match jsonrpc::classify(m) {
                Kind::Request { id, .. } => Some(id),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

async fn on_post(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(r) = guarded(&headers, true) {
        return r.into_response();
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "herald-mcp: the body is not JSON").into_response();
    };
    if jsonrpc::without_usable_id(&message, crate::proxy::TOOLS_CALL) {
        // Streamable HTTP: input the server cannot accept is an HTTP error
        // whose body may be a JSON-RPC error without an id.
        let answer = jsonrpc::no_usable_id(crate::proxy::TOOLS_CALL);
        return json_answer(StatusCode::BAD_REQUEST, &answer);
    }
    if crate::proxy::batch_has_wrapped(&message) {
        let answers = crate::proxy::refuse_batch(&message);
        let status = if answers.iter().any(|a| !a["id"].is_null()) {
            StatusCode::OK
        } else {
            StatusCode::BAD_REQUEST
        };
        return json_answer(status, &Value::Array(answers));
    }
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
            Err(r) => {
                let mut r = r.into_response();
                if r.status() == StatusCode::SERVICE_UNAVAILABLE {
                    r.headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                }
                return r;
            }
        },
        _ => match session_of(&shared, &headers) {
            Ok(s) => (None, s),
            Err(r) => return r.into_response(),
        },
    };
    let line = serde_json::to_vec(&message).unwrap_or_default();
    let ids = request_ids(&message);
    if ids.is_empty() {
        return if session.write(&line).await {
            StatusCode::ACCEPTED.into_response()
        } else {
            (StatusCode::NOT_FOUND, "herald-mcp: the session has ended").into_response()
        };
    }
    // One stream for the request (or every request of a batch): it ends
    // once each has its response.
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let mut streams = session.streams();
        if let (Kind::Request { id, .. }, Some(token)) =
            (&kind, message.pointer("/params/_meta/progressToken"))
        {
            streams.tokens.insert(jsonrpc::id_key(token), id.clone());
        }
        for id in ids {
            streams.pending.insert(id, tx.clone());
        }
    }
    drop(tx);
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
    if let Err(r) = guarded(&headers, false) {
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
    if let Err(r) = guarded(&headers, false) {
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
    limits: SessionLimits,
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
    let recorder = crate::proxy::open_recorder(&trace, conduit, sync)?;
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
            recorder,
            pin,
            upstream,
            limits,
        };
        serve_http(listener, config, stop)
            .await
            .map_err(ProxyError::Io)
    })
}
