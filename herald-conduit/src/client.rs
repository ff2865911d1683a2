//! A small HTTP/1.1 client for agents, tests and benchmarks: one request
//! per connection (`Connection: close`, [`request`]), or requests one after
//! another on one kept-alive connection ([`Connection`]); loopback or any
//! address it is given.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest answer read (an inbox of 1000 envelopes of 1 MiB would not
/// fit; agents read in smaller pages).
pub const MAX_RESPONSE: usize = 64 << 20;

/// An answer.
#[derive(Clone, Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request got no answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// Connecting, writing or reading failed.
    Io(std::io::Error),
    /// No complete answer within the timeout.
    Timeout,
    /// The answer is not HTTP/1.1 as this client reads it.
    Malformed(&'static str),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::Timeout => write!(f, "no answer in time"),
            Self::Malformed(what) => write!(f, "malformed answer: {what}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// `GET path`.
pub async fn get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Response, ClientError> {
    request(addr, "GET", path, None, timeout).await
}

/// Every page of a paged answer (a trace or an inbox, CONDUIT.md *Bounded
/// answers*): `GET path?after=N` from `after`, following `Herald-Cursor`
/// until a page is empty, each page within `timeout`; at most
/// `max_bytes` of bodies in all. The answer is the last page's, with
/// every page's body concatenated and the last cursor in
/// `Herald-Cursor`; any status but 200 is returned as it came.
pub async fn get_pages(
    addr: SocketAddr,
    path: &str,
    after: u64,
    max_bytes: usize,
    timeout: Duration,
) -> Result<Response, ClientError> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut cursor = after;
    let mut body = Vec::new();
    loop {
        let mut page = get(addr, &format!("{path}{sep}after={cursor}"), timeout).await?;
        if page.status != 200 {
            return Ok(page);
        }
        let next = page
            .header("herald-cursor")
            .and_then(|c| c.parse::<u64>().ok())
            .ok_or(ClientError::Malformed("a page without Herald-Cursor"))?;
        if page.body.is_empty() || next <= cursor {
            page.body = body;
            page.headers.retain(|(n, _)| n != "herald-cursor");
            page.headers
                .push(("herald-cursor".into(), cursor.to_string()));
            return Ok(page);
        }
        if body.len().saturating_add(page.body.len()) > max_bytes {
            return Err(ClientError::Malformed("answer too large"));
        }
        body.append(&mut page.body);
        cursor = next;
    }
}

/// `POST path` with an `application/cbor` body.
pub async fn post(
    addr: SocketAddr,
    path: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<Response, ClientError> {
    request(addr, "POST", path, Some(body), timeout).await
}

/// One request, answered within `timeout`.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<Response, ClientError> {
    tokio::time::timeout(timeout, exchange(addr, method, path, body))
        .await
        .map_err(|_| ClientError::Timeout)?
}

/// The bytes of one request; `close` asks the server to close after it.
fn request_bytes(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    close: bool,
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    if close {
        head.push_str("Connection: close\r\n");
    }
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/cbor\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    let mut request = head.into_bytes();
    request.extend_from_slice(body.unwrap_or_default());
    request
}

async fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
) -> Result<Response, ClientError> {
    let mut stream = TcpStream::connect(addr).await.map_err(ClientError::Io)?;
    // One write, no Nagle: a head and a body in two segments would wait for
    // the server's delayed ACK (40 ms) between them.
    let _ = stream.set_nodelay(true);
    let request = request_bytes(addr, method, path, body, true);
    // The server may answer (413) before reading everything: keep what it
    // said.
    if let Err(e) = stream.write_all(&request).await
        && body.is_none()
    {
        return Err(ClientError::Io(e));
    }
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(buf.get(..n).unwrap_or_default());
                if raw.len() > MAX_RESPONSE {
                    return Err(ClientError::Malformed("answer too large"));
                }
            }
            // A reset after a complete answer (the server closed while we
            // were still sending) keeps the answer.
            Err(e) if raw.is_empty() => return Err(ClientError::Io(e)),
            Err(_) => break,
        }
    }
    parse(&raw)
}

/// One kept-alive HTTP/1.1 connection: requests are sent one after
/// another, each answer read to its `Content-Length` (the conduit sends
/// one with every answer but the chunked ones, which this refuses). After
/// an error the connection is not used again.
#[derive(Debug)]
pub struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    /// Bytes read past the last answer.
    pending: Vec<u8>,
}

impl Connection {
    /// Connect to `addr`.
    pub async fn connect(addr: SocketAddr) -> Result<Self, ClientError> {
        let stream = TcpStream::connect(addr).await.map_err(ClientError::Io)?;
        let _ = stream.set_nodelay(true);
        Ok(Self {
            addr,
            stream: Some(stream),
            pending: Vec::new(),
        })
    }

    /// `POST path` with an `application/cbor` body, answered within
    /// `timeout`.
    pub async fn post(
        &mut self,
        path: &str,
        body: &[u8],
        timeout: Duration,
    ) -> Result<Response, ClientError> {
        let request = request_bytes(self.addr, "POST", path, Some(body), false);
        let answer = tokio::time::timeout(timeout, self.exchange(&request)).await;
        match answer {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => {
                self.stream = None;
                Err(e)
            }
            Err(_) => {
                self.stream = None;
                Err(ClientError::Timeout)
            }
        }
    }

    async fn exchange(&mut self, request: &[u8]) -> Result<Response, ClientError> {
        let stream = self
            .stream
            .as_mut()
            .ok_or(ClientError::Malformed("connection closed after an error"))?;
        stream.write_all(request).await.map_err(ClientError::Io)?;
        let mut raw = std::mem::take(&mut self.pending);
        let mut buf = vec![0u8; 16 << 10];
        let mut need = None;
        loop {
            if need.is_none()
                && let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n")
            {
                need = Some(end + 4 + content_length(raw.get(..end).unwrap_or_default())?);
            }
            if let Some(n) = need
                && raw.len() >= n
            {
                self.pending = raw.split_off(n);
                return parse(&raw);
            }
            let n = stream.read(&mut buf).await.map_err(ClientError::Io)?;
            if n == 0 {
                return Err(ClientError::Malformed("connection closed mid-answer"));
            }
            raw.extend_from_slice(buf.get(..n).unwrap_or_default());
            if raw.len() > MAX_RESPONSE {
                return Err(ClientError::Malformed("answer too large"));
            }
        }
    }
}

/// The `Content-Length` of an answer's head (without its blank line).
fn content_length(head: &[u8]) -> Result<usize, ClientError> {
    let head = std::str::from_utf8(head).map_err(|_| ClientError::Malformed("head not UTF-8"))?;
    head.split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or(ClientError::Malformed(
            "a kept-alive answer without Content-Length",
        ))
}

fn parse(raw: &[u8]) -> Result<Response, ClientError> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or(ClientError::Malformed("no end of head"))?;
    let head = std::str::from_utf8(raw.get(..end).unwrap_or_default())
        .map_err(|_| ClientError::Malformed("head not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or(ClientError::Malformed("status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = raw.get(end + 4..).unwrap_or_default();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)?
    } else {
        let len = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(rest.len());
        rest.get(..len)
            .ok_or(ClientError::Malformed("body shorter than its length"))?
            .to_vec()
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    loop {
        let line = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or(ClientError::Malformed("chunk size"))?;
        let size = std::str::from_utf8(rest.get(..line).unwrap_or_default())
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .ok_or(ClientError::Malformed("chunk size"))?;
        rest = rest.get(line + 2..).unwrap_or_default();
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(rest.get(..size).ok_or(ClientError::Malformed("chunk"))?);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
}
