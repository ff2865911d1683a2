//! The client side of MCP's streamable HTTP transport (MCP 2025-06-18,
//! *Transports*, "Streamable HTTP"), for `--upstream URL`.
//!
//! A bridge between the wrapper's lines and the server's endpoint:
//! - each message the wrapper writes is `POST`ed as it is (the bytes
//!   received); the answer is `202` (a notification or response), one
//!   JSON message, or an SSE stream of messages ending with the response,
//!   each written back to the wrapper as one line as it arrives;
//! - `initialize` and `notifications/initialized` are posted one after the
//!   other and before anything else; the `Mcp-Session-Id` of the answer to
//!   `initialize` and the negotiated `MCP-Protocol-Version` go on every
//!   later request; then a `GET` stream carries what the server sends
//!   outside any request;
//! - other messages are posted concurrently, each on its own connection,
//!   so a long call never holds back a cancellation or a ping;
//! - at the end the session is ended with `DELETE`.
//!
//! Messages are never re-encoded (only one whose text spans lines is
//! re-written on one line): nothing of what the server sends is lost to a
//! typed model. A request whose post fails is answered to the client with
//! a JSON-RPC error naming the upstream, never left hanging.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use herald_http::client::header::{ACCEPT, CONTENT_TYPE};
use herald_http::client::{
    Client, HeaderName, HeaderValue, Incoming, Limits, Method, Request, StatusCode, Streaming, Url,
};
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::io::DuplexStream;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::jsonrpc::{self, Kind};
use crate::proxy::CANCELLED;
use crate::stdio::{self, MAX_MESSAGE, Out, Sender, send, send_json};
use crate::upstream::EXIT_GRACE;

/// Buffer of the in-memory pipes between the wrapper and the bridge.
pub(crate) const PIPE: usize = 1 << 16;

/// The session header.
const SESSION: &str = "mcp-session-id";
/// The negotiated protocol version header.
const VERSION: &str = "mcp-protocol-version";
const INITIALIZE: &str = "initialize";
const INITIALIZED: &str = "notifications/initialized";
const EVENT_STREAM: &str = "text/event-stream";

/// JSON-RPC "internal error": a request the upstream could not be
/// reached for.
const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC "parse error".
const PARSE_ERROR: i64 = -32700;

/// The bounds of each request: 10 s to connect, and the answer's head
/// within [`ANSWER_TIMEOUT`] (its body is a stream: each message is
/// bounded by [`MAX_MESSAGE`] as it comes).
const LIMITS: Limits = Limits {
    connect_timeout: Duration::from_secs(10),
    timeout: ANSWER_TIMEOUT,
    max_body: MAX_MESSAGE as usize,
};
/// Longest wait for the head of an answer (a tool call may run long
/// before its server answers with a stream; the client cancels it).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// Most of an error answer's body quoted to the client.
const ERROR_BODY: usize = 512;
/// Pause before the GET stream is opened again, and most tries in a row.
const GET_RETRY: Duration = Duration::from_secs(1);
const GET_TRIES: u32 = 5;
/// How often a closing bridge looks whether every request is answered.
const CLOSING_TICK: Duration = Duration::from_millis(20);

/// The session as the bridge knows it, shared by its tasks.
struct Session {
    endpoint: Url,
    /// `Mcp-Session-Id`, once the server gave one.
    id: Mutex<Option<HeaderValue>>,
    /// `MCP-Protocol-Version`, once `initialize` was answered.
    version: Mutex<Option<HeaderValue>>,
    /// The id of the client's `initialize` (JSON text).
    initialize: Mutex<Option<String>>,
    /// Requests posted and not yet answered (JSON ids as [`jsonrpc::id_key`]).
    pending: Mutex<HashSet<String>>,
    /// Lines for the wrapper.
    down: Sender,
    /// Set when the upstream ended the session (or never started one).
    ended: watch::Sender<bool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain values, no invariant a panic could break halfway.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run the bridge until the wrapper has closed its side and every pending
/// request is answered (at most [`EXIT_GRACE`] more), or until the
/// upstream ends the session; whether it was the upstream that ended.
pub(crate) async fn bridge(endpoint: Url, from: DuplexStream, to: DuplexStream) -> bool {
    let (down, down_rx) = mpsc::unbounded_channel();
    let writer = tokio::spawn(stdio::writer(to, down_rx));
    let (lines_tx, mut lines) = mpsc::unbounded_channel();
    let reader = tokio::spawn(async move { stdio::forward(from, &lines_tx).await });
    let (ended, mut ended_rx) = watch::channel(false);
    let session = Arc::new(Session {
        endpoint,
        id: Mutex::new(None),
        version: Mutex::new(None),
        initialize: Mutex::new(None),
        pending: Mutex::new(HashSet::new()),
        down: down.clone(),
        ended,
    });
    let mut tasks = JoinSet::new();
    let mut closing: Option<tokio::time::Instant> = None;
    let upstream_ended = loop {
        tokio::select! {
            line = lines.recv(), if closing.is_none() => match line {
                Some(Out::Line(line)) => session.dispatch(line, &mut tasks).await,
                Some(Out::Close) | None => {
                    closing = Some(tokio::time::Instant::now() + EXIT_GRACE);
                }
            },
            () = async { let _ = ended_rx.wait_for(|e| *e).await; } => break true,
            () = tokio::time::sleep(CLOSING_TICK), if closing.is_some() => {
                let over = closing.is_some_and(|c| tokio::time::Instant::now() >= c);
                if over || lock(&session.pending).is_empty() {
                    break false;
                }
            }
            // Finished posts are reaped as they end.
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    };
    if upstream_ended {
        // What the client still waits for is answered, never left hanging.
        let pending: Vec<String> = lock(&session.pending).drain().collect();
        for key in pending {
            if let Ok(id) = serde_json::from_str::<Value>(&key) {
                session.fail(Some(&id), "the server ended the session");
            }
        }
        if closing.is_none() {
            tracing::warn!(
                "herald-mcp: the streamable HTTP upstream {} ended the session",
                session.endpoint
            );
        }
    }
    tasks.abort_all();
    if lock(&session.id).is_some() {
        let _ = tokio::time::timeout(EXIT_GRACE, session.send(Method::DELETE, None)).await;
    }
    reader.abort();
    let _ = down.send(Out::Close);
    let _ = writer.await;
    upstream_ended
}

impl Session {
    /// One line of the wrapper: posted in order (the handshake) or
    /// concurrently (everything after it).
    async fn dispatch(self: &Arc<Self>, line: Vec<u8>, tasks: &mut JoinSet<()>) {
        let value: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(e) => {
                let text = format!("herald-mcp: a message that is not JSON ({e})");
                return send_json(
                    &self.down,
                    &jsonrpc::error(&Value::Null, PARSE_ERROR, &text),
                );
            }
        };
        let mut id = None;
        let (mut in_order, mut opens_stream) = (false, false);
        match jsonrpc::classify(&value) {
            Kind::Request { id: key, method } => {
                if method == INITIALIZE {
                    *lock(&self.initialize) = Some(key.clone());
                    in_order = true;
                }
                lock(&self.pending).insert(key);
                id = value.get("id").cloned();
            }
            Kind::Notification {
                method: INITIALIZED,
            } => (in_order, opens_stream) = (true, true),
            Kind::Notification { method: CANCELLED } => {
                // A cancelled request gets no answer: nothing to wait for.
                if let Some(request) = value.pointer("/params/requestId") {
                    lock(&self.pending).remove(&jsonrpc::id_key(request));
                }
            }
            _ => {}
        }
        if in_order {
            let posted = self.post(line, id).await;
            if posted && opens_stream {
                let session = self.clone();
                tasks.spawn(async move { session.get_stream().await });
            }
        } else {
            let session = self.clone();
            tasks.spawn(async move {
                session.post(line, id).await;
            });
        }
    }

    /// One request to the endpoint, on its own connection.
    async fn send(&self, method: Method, body: Option<Vec<u8>>) -> Result<Streaming, String> {
        let accept = match method {
            Method::GET => EVENT_STREAM,
            _ => "application/json, text/event-stream",
        };
        let mut request = Request::new(method, self.endpoint.clone())
            .header(ACCEPT, HeaderValue::from_static(accept));
        if let Some(id) = lock(&self.id).clone() {
            request = request.header(HeaderName::from_static(SESSION), id);
        }
        if let Some(version) = lock(&self.version).clone() {
            request = request.header(HeaderName::from_static(VERSION), version);
        }
        if let Some(body) = body {
            request = request.body("application/json", body);
        }
        Client::new(LIMITS)
            .open(&request)
            .await
            .map_err(|e| e.to_string())
    }

    /// Post one message and deliver what answers it; whether it was
    /// accepted.
    async fn post(&self, line: Vec<u8>, id: Option<Value>) -> bool {
        let response = match self.send(Method::POST, Some(line)).await {
            Ok(r) => r,
            Err(e) => {
                self.fail(id.as_ref(), &e);
                if lock(&self.id).is_none() {
                    // No session was ever opened: there is nothing to wait for.
                    self.ended.send_replace(true);
                }
                return false;
            }
        };
        let status = response.status();
        if let Some(session) = response.headers().get(SESSION) {
            lock(&self.id).get_or_insert_with(|| session.clone());
        }
        match status {
            StatusCode::OK => {
                let whole = self.deliver_body(response).await;
                if let Some(id) = id.as_ref().filter(|_| !whole)
                    && lock(&self.pending).contains(&jsonrpc::id_key(id))
                {
                    self.fail(Some(id), "the connection broke before the answer");
                }
                true
            }
            s if s.is_success() => true,
            StatusCode::NOT_FOUND if lock(&self.id).is_some() => {
                self.fail(id.as_ref(), "the session has expired (404)");
                self.ended.send_replace(true);
                false
            }
            s => {
                let body = prefix(response.into_body(), ERROR_BODY).await;
                self.fail(id.as_ref(), &format!("HTTP {s}: {body}"));
                if lock(&self.id).is_none() {
                    self.ended.send_replace(true);
                }
                false
            }
        }
    }

    /// The session's GET stream, opened again when it ends while the
    /// session lives; not at all when the server offers none (`405`).
    /// A server that cannot be reached [`GET_TRIES`] times in a row has
    /// ended the session.
    async fn get_stream(&self) {
        let (mut failures, mut unreachable) = (0, 0);
        while failures < GET_TRIES {
            match self.send(Method::GET, None).await {
                Ok(r) if r.status() == StatusCode::OK => {
                    (failures, unreachable) = (0, 0);
                    self.deliver_body(r).await;
                }
                Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                    self.ended.send_replace(true);
                    return;
                }
                Ok(_) => (failures, unreachable) = (failures + 1, 0),
                Err(_) => (failures, unreachable) = (failures + 1, unreachable + 1),
            }
            tokio::time::sleep(GET_RETRY).await;
        }
        if unreachable >= GET_TRIES {
            self.ended.send_replace(true);
        }
    }

    /// The messages of one answer (JSON or an SSE stream), each as it
    /// comes; whether the body came whole (not cut by a broken connection
    /// or an oversized message).
    async fn deliver_body(&self, response: Streaming) -> bool {
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with(EVENT_STREAM));
        let mut body = response.into_body();
        let mut events = Sse::default();
        let mut json = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return false;
            };
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            if sse {
                if events.push(&data, |message| self.deliver(message)).is_err() {
                    tracing::warn!("herald-mcp: an SSE event longer than {MAX_MESSAGE} bytes");
                    return false;
                }
            } else {
                json.extend_from_slice(&data);
                if json.len() as u64 > MAX_MESSAGE {
                    tracing::warn!("herald-mcp: an answer longer than {MAX_MESSAGE} bytes");
                    return false;
                }
            }
        }
        if !sse {
            self.deliver(&json);
        }
        true
    }

    /// One message from the upstream, to the wrapper as one line.
    fn deliver(&self, message: &[u8]) {
        let message = message.trim_ascii();
        if message.is_empty() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(message) else {
            // Not JSON: the wrapper passes it on as it is, on one line.
            return send(
                &self.down,
                message.split(|b| *b == b'\n').flatten().copied().collect(),
            );
        };
        if let Kind::Response { id } = jsonrpc::classify(&value) {
            lock(&self.pending).remove(&id);
            if lock(&self.initialize).as_ref() == Some(&id)
                && let Some(version) = value
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .and_then(|v| HeaderValue::from_str(v).ok())
            {
                *lock(&self.version) = Some(version);
            }
        }
        if message.contains(&b'\n') || message.contains(&b'\r') {
            send_json(&self.down, &value);
        } else {
            send(&self.down, message.to_vec());
        }
    }

    /// A request that could not be posted: answered here.
    fn fail(&self, id: Option<&Value>, why: &str) {
        let text = format!("herald-mcp: upstream {}: {why}", self.endpoint);
        tracing::warn!("{text}");
        if let Some(id) = id {
            lock(&self.pending).remove(&jsonrpc::id_key(id));
            send_json(&self.down, &jsonrpc::error(id, INTERNAL_ERROR, &text));
        }
    }
}

/// The first `most` bytes of a body, as text.
async fn prefix(mut body: Incoming, most: usize) -> String {
    let mut text = Vec::new();
    while text.len() < most {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    text.extend_from_slice(&data);
                }
            }
            _ => break,
        }
    }
    text.truncate(most);
    String::from_utf8_lossy(&text).trim().to_owned()
}

/// An incremental parser of `text/event-stream` (HTML Living Standard,
/// *Server-sent events*, "Interpreting an event stream"): the `data` of
/// each event; other fields (`event`, `id`, `retry`) and comments are
/// read past.
#[derive(Default)]
struct Sse {
    line: Vec<u8>,
    data: Vec<u8>,
    /// The last byte seen was a CR (a CRLF split across chunks).
    after_cr: bool,
}

impl Sse {
    /// Feed a chunk; `event` gets each complete event's data. Errs when a
    /// line or an event outgrows [`MAX_MESSAGE`].
    fn push(&mut self, chunk: &[u8], mut event: impl FnMut(&[u8])) -> Result<(), ()> {
        for &b in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, b == b'\r');
            match b {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => self.end_line(&mut event),
                _ => self.line.push(b),
            }
            if (self.line.len() + self.data.len()) as u64 > MAX_MESSAGE {
                return Err(());
            }
        }
        Ok(())
    }

    fn end_line(&mut self, event: &mut impl FnMut(&[u8])) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            // An empty data buffer dispatches nothing (a priming event).
            if !self.data.is_empty() {
                event(&self.data);
            }
            self.data.clear();
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(0) => return,
            Some(i) => {
                let (f, v) = line.split_at(i);
                let v = v.get(1..).unwrap_or_default();
                (f, v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line.as_slice(), &[][..]),
        };
        if field == b"data" {
            if !self.data.is_empty() {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut sse = Sse::default();
        let mut out = Vec::new();
        for chunk in chunks {
            sse.push(chunk, |e| out.push(String::from_utf8(e.to_vec()).unwrap()))
                .unwrap();
        }
        out
    }

    #[test]
    fn sse_events_are_their_data_however_the_stream_is_cut() {
        let stream: &[u8] = b": comment\r\nid: 1\r\nretry: 500\r\ndata: \r\n\r\n\
            event: message\r\nid: 2\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n\
            data:{\"b\":2}\n\ndata: {\"c\":3}\r\r";
        let want = ["{\"a\":\n1}", "{\"b\":2}", "{\"c\":3}"];
        assert_eq!(events(&[stream]), want);
        // Cut at every byte, a CRLF split across chunks included.
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), want);
        // An event without its blank line is not dispatched yet.
        assert!(events(&[b"data: {}\n"]).is_empty());
    }
}
