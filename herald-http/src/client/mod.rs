//! HERALD's one HTTP client: HTTP/1.1 on hyper's connection API, bounded
//! as the servers bound their side (CONDUIT.md *Bounded answers*): a
//! connect timeout, a total timeout for the whole exchange, and a limit on
//! the body read.
//!
//! Everything that reaches another HERALD service goes through it: a
//! conduit's `POST /v1/envelopes` and paged reads (herald-conduit's
//! client), a witness's `add-checkpoint` (herald-witness), an MCP server
//! over streamable HTTP (herald-mcp `--upstream`). One request per
//! connection ([`Client::send`], `Connection: close`), or requests one
//! after another on one kept-alive [`Connection`]. Only `http://`
//! ([`Url`]); names are resolved with the system resolver.
//!
//! Blocking callers use [`blocking`].

pub mod blocking;
mod url;

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::HeaderMap;
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{CONNECTION, CONTENT_TYPE, HOST};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

pub use self::url::{Url, UrlError};
// The request vocabulary, so that callers need no hyper of their own.
pub use hyper::body::Incoming;
pub use hyper::header::{self, HeaderName, HeaderValue};
pub use hyper::{Method, StatusCode};

/// An answer whose body comes as it is sent ([`Client::open`]).
pub type Streaming = hyper::Response<Incoming>;

/// The bounds of a [`Client`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest wait for a TCP connection (every address of the host, in turn).
    pub connect_timeout: Duration,
    /// Longest wait for the whole exchange: connecting, sending, and the
    /// answer with its body (for [`Client::open`]: up to the answer's head).
    pub timeout: Duration,
    /// Largest body read; a longer one is [`ClientError::TooLarge`].
    pub max_body: usize,
}

impl Default for Limits {
    /// 10 s to connect, 30 s in all, 16 MiB of body.
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body: 16 << 20,
        }
    }
}

/// Why a request got no (whole) answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The URL cannot be requested.
    Url(UrlError),
    /// The host's name did not resolve (or to no address).
    Resolve {
        /// The host as the URL names it.
        host: String,
        /// The resolver's reason.
        error: std::io::Error,
    },
    /// No TCP connection (the last address's reason).
    Connect(std::io::Error),
    /// No connection within the connect timeout.
    ConnectTimeout,
    /// No complete answer within the timeout.
    Timeout,
    /// The exchange broke: the connection closed or reset, or the answer
    /// is not HTTP/1.1.
    Http(hyper::Error),
    /// The answer's body is longer than the limit (bytes).
    TooLarge(usize),
    /// The request cannot be built (a header value that is not one).
    Request(String),
    /// The answer is HTTP, but not what the protocol asks for.
    Malformed(&'static str),
    /// A kept-alive [`Connection`] used again after it failed.
    Closed,
    /// A blocking call could not run its request (no runtime, or its
    /// thread died).
    Runtime(std::io::Error),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url(e) => write!(f, "{e}"),
            Self::Resolve { host, error } => write!(f, "{host}: {error}"),
            Self::Connect(e) => write!(f, "{e}"),
            Self::ConnectTimeout => write!(f, "no connection in time"),
            Self::Timeout => write!(f, "no answer in time"),
            Self::Http(e) => write!(f, "{e}"),
            Self::TooLarge(limit) => write!(f, "answer too large (over {limit} bytes)"),
            Self::Request(why) => write!(f, "cannot build the request: {why}"),
            Self::Malformed(what) => write!(f, "malformed answer: {what}"),
            Self::Closed => write!(f, "connection closed after an error"),
            Self::Runtime(e) => write!(f, "cannot run the request: {e}"),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Resolve { error: e, .. } | Self::Connect(e) | Self::Runtime(e) => Some(e),
            Self::Http(e) => Some(e),
            Self::Url(e) => Some(e),
            _ => None,
        }
    }
}

impl From<UrlError> for ClientError {
    fn from(e: UrlError) -> Self {
        Self::Url(e)
    }
}

/// A request: method, URL, headers and body. `Host` comes from the URL.
#[derive(Clone, Debug)]
pub struct Request {
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Bytes,
}

impl Request {
    /// `method url`, no body.
    #[must_use]
    pub fn new(method: Method, url: Url) -> Self {
        Self {
            method,
            url,
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    /// `GET url`.
    #[must_use]
    pub fn get(url: Url) -> Self {
        Self::new(Method::GET, url)
    }

    /// `POST url` with `body` of `content_type`.
    #[must_use]
    pub fn post(url: Url, content_type: &'static str, body: impl Into<Bytes>) -> Self {
        Self::new(Method::POST, url).body(content_type, body)
    }

    /// With the header `name: value` (added to any of the same name).
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// With `body` of `content_type`.
    #[must_use]
    pub fn body(mut self, content_type: &'static str, body: impl Into<Bytes>) -> Self {
        self.headers
            .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        self.body = body.into();
        self
    }

    /// Signed for the sigil `keyid` with its `key` at `created` (Unix
    /// seconds): the `Signature-Input` and `Signature` fields of
    /// CONDUIT.md *Who may read what* ([`crate::signature`]) over this
    /// request's method and `http://` target URI.
    #[must_use]
    pub fn signed(mut self, key: &herald_core::SigningKey, keyid: &str, created: u64) -> Self {
        let uri = crate::signature::target_uri(self.url.authority(), self.url.target());
        let s = crate::signature::sign(key, keyid, self.method.as_str(), &uri, created);
        for (name, value) in [("signature-input", s.input), ("signature", s.signature)] {
            if let Ok(v) = HeaderValue::from_str(&value) {
                self.headers.insert(HeaderName::from_static(name), v);
            }
        }
        self
    }

    /// [`Request::signed`] now, with a `created` this process has not
    /// signed the same request with before (`fresh_created`): Ed25519
    /// being deterministic, the same request signed twice in one second
    /// would carry the same signature, which a conduit refuses as a replay.
    #[must_use]
    pub fn signed_now(self, key: &herald_core::SigningKey, keyid: &str) -> Self {
        let uri = crate::signature::target_uri(self.url.authority(), self.url.target());
        let created = fresh_created(&[keyid, self.method.as_str(), &uri]);
        self.signed(key, keyid, created)
    }

    /// The URL requested.
    #[must_use]
    pub fn url(&self) -> &Url {
        &self.url
    }

    fn build(&self, close: bool) -> Result<hyper::Request<Full<Bytes>>, ClientError> {
        let mut r = hyper::Request::builder()
            .method(self.method.clone())
            .uri(self.url.target());
        if let Some(h) = r.headers_mut() {
            h.clone_from(&self.headers);
            let host = HeaderValue::from_str(self.url.authority())
                .map_err(|e| ClientError::Request(e.to_string()))?;
            h.insert(HOST, host);
            if close {
                h.insert(CONNECTION, HeaderValue::from_static("close"));
            }
        }
        r.body(Full::new(self.body.clone()))
            .map_err(|e| ClientError::Request(e.to_string()))
    }
}

/// Requests remembered by [`fresh_created`] at most.
const MAX_RECENT: usize = 4096;

/// A `created` for signing the request named by `parts` (sigil, method,
/// target URI): now, or one second past the last one given for the same
/// request when that is not in the past. A conduit accepts `created` up to
/// 300 s ahead (CONDUIT.md *Who may read what*), so up to 300 identical
/// requests a second sign distinctly.
fn fresh_created(parts: &[&str]) -> u64 {
    use std::collections::HashMap;
    use std::hash::{BuildHasher, RandomState};
    use std::sync::{Mutex, OnceLock, PoisonError};
    static RECENT: OnceLock<(RandomState, Mutex<HashMap<u64, u64>>)> = OnceLock::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (hasher, recent) = RECENT.get_or_init(Default::default);
    let name = hasher.hash_one(parts);
    let mut recent = recent.lock().unwrap_or_else(PoisonError::into_inner);
    if recent.len() >= MAX_RECENT {
        recent.retain(|_, last| *last >= now);
        if recent.len() >= MAX_RECENT {
            recent.clear();
        }
    }
    let created = match recent.get(&name) {
        Some(&last) if last >= now => last.saturating_add(1),
        _ => now,
    };
    recent.insert(name, created);
    created
}

/// A whole answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Headers, names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (lowercase).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `Content-Type`, if any.
    #[must_use]
    pub fn content_type(&self) -> Option<&str> {
        self.header("content-type")
    }
}

/// The client: its [`Limits`]; cheap to copy, holds no connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct Client {
    limits: Limits,
}

impl Client {
    /// A client bounded by `limits`.
    #[must_use]
    pub const fn new(limits: Limits) -> Self {
        Self { limits }
    }

    /// Its limits.
    #[must_use]
    pub const fn limits(&self) -> Limits {
        self.limits
    }

    /// `GET url`.
    pub async fn get(&self, url: &Url) -> Result<Response, ClientError> {
        self.send(&Request::get(url.clone())).await
    }

    /// One request on its own connection (`Connection: close`), its whole
    /// answer within the limits.
    pub async fn send(&self, request: &Request) -> Result<Response, ClientError> {
        let exchange = async {
            let mut sender = handshake(request.url(), self.limits.connect_timeout).await?;
            let answer = sender
                .send_request(request.build(true)?)
                .await
                .map_err(ClientError::Http)?;
            whole(answer, self.limits.max_body).await
        };
        tokio::time::timeout(self.limits.timeout, exchange)
            .await
            .map_err(|_| ClientError::Timeout)?
    }

    /// One request on its own connection, the answer's head within the
    /// timeout and its body as it comes, not bounded here: for streams
    /// (server-sent events) whose reader bounds each message.
    pub async fn open(&self, request: &Request) -> Result<Streaming, ClientError> {
        let exchange = async {
            let mut sender = handshake(request.url(), self.limits.connect_timeout).await?;
            sender
                .send_request(request.build(false)?)
                .await
                .map_err(ClientError::Http)
        };
        tokio::time::timeout(self.limits.timeout, exchange)
            .await
            .map_err(|_| ClientError::Timeout)?
    }

    /// A kept-alive connection to `url`'s server.
    pub async fn connect(&self, url: &Url) -> Result<Connection, ClientError> {
        let sender = tokio::time::timeout(
            self.limits.timeout,
            handshake(url, self.limits.connect_timeout),
        )
        .await
        .map_err(|_| ClientError::Timeout)??;
        Ok(Connection {
            limits: self.limits,
            sender: Some(sender),
        })
    }
}

/// One kept-alive HTTP/1.1 connection: requests one after another, each
/// answer read whole within the client's limits. After an error it is not
/// used again ([`ClientError::Closed`]).
#[derive(Debug)]
pub struct Connection {
    limits: Limits,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Connection {
    /// The total timeout of each later request (the connect timeout is spent).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    /// `request` on this connection (its URL's server should be the one
    /// connected to: the request goes here whatever it names).
    pub async fn send(&mut self, request: &Request) -> Result<Response, ClientError> {
        let sender = self.sender.as_mut().ok_or(ClientError::Closed)?;
        let exchange = async {
            sender.ready().await.map_err(ClientError::Http)?;
            let answer = sender
                .send_request(request.build(false)?)
                .await
                .map_err(ClientError::Http)?;
            whole(answer, self.limits.max_body).await
        };
        let answer = tokio::time::timeout(self.limits.timeout, exchange)
            .await
            .unwrap_or(Err(ClientError::Timeout));
        if answer.is_err() {
            self.sender = None;
        }
        answer
    }
}

/// A TCP connection to `url`'s host (each address in turn) and the HTTP/1.1
/// handshake; the connection is driven by a task of its own.
async fn handshake(url: &Url, timeout: Duration) -> Result<SendRequest<Full<Bytes>>, ClientError> {
    let stream = tokio::time::timeout(timeout, connect(url.host(), url.port()))
        .await
        .map_err(|_| ClientError::ConnectTimeout)??;
    // One write per request, no Nagle: a head and a body in two segments
    // would wait for the server's delayed ACK (40 ms) between them.
    let _ = stream.set_nodelay(true);
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(ClientError::Http)?;
    tokio::spawn(async move {
        // Its errors reach the request that was in flight.
        let _ = connection.await;
    });
    Ok(sender)
}

async fn connect(host: &str, port: u16) -> Result<TcpStream, ClientError> {
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|error| ClientError::Resolve {
                host: host.to_owned(),
                error,
            })?
            .collect(),
    };
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => ClientError::Connect(e),
        None => ClientError::Resolve {
            host: host.to_owned(),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
        },
    })
}

/// The answer with its body, at most `max` bytes of it.
async fn whole(answer: hyper::Response<Incoming>, max: usize) -> Result<Response, ClientError> {
    let status = answer.status().as_u16();
    let headers = answer
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).trim().to_owned(),
            )
        })
        .collect();
    let mut body = answer.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(ClientError::Http)?.into_data() {
            if bytes.len().saturating_add(data.len()) > max {
                return Err(ClientError::TooLarge(max));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(Response {
        status,
        headers,
        body: bytes,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn fields(r: &Request) -> (String, String) {
        let get = |n: &str| r.headers.get(n).unwrap().to_str().unwrap().to_owned();
        (get("signature-input"), get("signature"))
    }

    #[test]
    fn the_same_request_signed_twice_at_once_signs_distinctly() {
        let key = herald_core::SigningKey::from_seed(&[9; 32]);
        let url = Url::parse("http://127.0.0.1:1/v1/inbox/x").unwrap();
        let a = fields(&Request::get(url.clone()).signed_now(&key, "sigil:k"));
        let b = fields(&Request::get(url.clone()).signed_now(&key, "sigil:k"));
        assert_ne!(a.1, b.1, "a second signature in the same second");
        let (ca, cb) = [&a.0, &b.0]
            .map(|i| {
                let p =
                    crate::signature::parse("herald", &[i.as_bytes()], &[a.1.as_bytes()]).unwrap();
                p.created().unwrap()
            })
            .into();
        assert!(cb > ca, "{ca} then {cb}");
        // Another request is not held back.
        let other = Url::parse("http://127.0.0.1:1/v1/inbox/y").unwrap();
        let c = fields(&Request::get(other).signed_now(&key, "sigil:k"));
        let p = crate::signature::parse("herald", &[c.0.as_bytes()], &[c.1.as_bytes()]).unwrap();
        assert!(p.created().unwrap() <= ca + 1);
    }
}
