//! A conduit's client side for agents, tests and benchmarks, on
//! herald-http's one client ([`herald_http::client`]): one request per
//! connection ([`request`]), requests one after another on one kept-alive
//! [`Connection`], and a paged read followed to its end ([`get_pages`],
//! CONDUIT.md *Bounded answers*); loopback or any address it is given.

use std::net::SocketAddr;
use std::time::Duration;

use herald_core::{SigilForm, SigningKey};
use herald_http::client::{self as http, Client, Limits, Method, Request, Url};

pub use herald_http::client::{ClientError, Response};

/// Largest answer read (an inbox of 1000 envelopes of 1 MiB would not
/// fit; agents read in smaller pages).
pub const MAX_RESPONSE: usize = 64 << 20;

/// The body type of `POST /v1/envelopes` (CONDUIT.md *Endpoints*).
const CBOR: &str = "application/cbor";

/// The client for one call: connected and answered within `timeout`.
fn client(timeout: Duration) -> Client {
    Client::new(Limits {
        connect_timeout: timeout,
        timeout,
        max_body: MAX_RESPONSE,
    })
}

/// `GET path`.
pub async fn get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Response, ClientError> {
    request(addr, "GET", path, None, timeout).await
}

/// `GET path` signed by `key` for its sigil now (CONDUIT.md *Who may read
/// what*: an inbox by its owner, an envelope or trace by a participant).
pub async fn get_as(
    addr: SocketAddr,
    path: &str,
    key: &SigningKey,
    timeout: Duration,
) -> Result<Response, ClientError> {
    let sigil = key.sigil(SigilForm::Default).to_string();
    let r = Request::get(Url::for_addr(addr, path)?).signed_now(key, &sigil);
    client(timeout).send(&r).await
}

/// `DELETE path` signed by `key` for its sigil now (CONDUIT.md
/// *Retention and erasure*: `DELETE /v1/envelopes/{id}` by its sender).
pub async fn delete_as(
    addr: SocketAddr,
    path: &str,
    key: &SigningKey,
    timeout: Duration,
) -> Result<Response, ClientError> {
    let sigil = key.sigil(SigilForm::Default).to_string();
    let r = Request::new(Method::DELETE, Url::for_addr(addr, path)?).signed_now(key, &sigil);
    client(timeout).send(&r).await
}

/// `GET path`, signed by `key` when there is one.
async fn get_maybe_as(
    addr: SocketAddr,
    path: &str,
    key: Option<&SigningKey>,
    timeout: Duration,
) -> Result<Response, ClientError> {
    match key {
        Some(k) => get_as(addr, path, k, timeout).await,
        None => get(addr, path, timeout).await,
    }
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
    pages(addr, path, after, max_bytes, None, timeout).await
}

/// [`get_pages`] with each page signed by `key` ([`get_as`]).
pub async fn get_pages_as(
    addr: SocketAddr,
    path: &str,
    after: u64,
    max_bytes: usize,
    key: &SigningKey,
    timeout: Duration,
) -> Result<Response, ClientError> {
    pages(addr, path, after, max_bytes, Some(key), timeout).await
}

async fn pages(
    addr: SocketAddr,
    path: &str,
    after: u64,
    max_bytes: usize,
    key: Option<&SigningKey>,
    timeout: Duration,
) -> Result<Response, ClientError> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut cursor = after;
    let mut body = Vec::new();
    loop {
        let mut page =
            get_maybe_as(addr, &format!("{path}{sep}after={cursor}"), key, timeout).await?;
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
            return Err(ClientError::TooLarge(max_bytes));
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

/// `POST url` with an `application/cbor` body: a conduit known by its URL
/// (a host name, a path prefix) rather than its socket address.
pub async fn post_to(url: &Url, body: &[u8], timeout: Duration) -> Result<Response, ClientError> {
    client(timeout)
        .send(&Request::post(url.clone(), CBOR, body.to_vec()))
        .await
}

/// One request (`Connection: close`), answered within `timeout`; a body
/// is sent as `application/cbor`.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<Response, ClientError> {
    let method =
        Method::from_bytes(method.as_bytes()).map_err(|e| ClientError::Request(e.to_string()))?;
    let mut r = Request::new(method, Url::for_addr(addr, path)?);
    if let Some(b) = body {
        r = r.body(CBOR, b.to_vec());
    }
    client(timeout).send(&r).await
}

/// One kept-alive HTTP/1.1 connection to a conduit: posts one after
/// another. After an error the connection is not used again.
#[derive(Debug)]
pub struct Connection {
    addr: SocketAddr,
    inner: http::Connection,
}

impl Connection {
    /// Connect to `addr`.
    pub async fn connect(addr: SocketAddr) -> Result<Self, ClientError> {
        let inner = Client::new(Limits {
            max_body: MAX_RESPONSE,
            ..Limits::default()
        })
        .connect(&Url::for_addr(addr, "/")?)
        .await?;
        Ok(Self { addr, inner })
    }

    /// `POST path` with an `application/cbor` body, answered within
    /// `timeout`.
    pub async fn post(
        &mut self,
        path: &str,
        body: &[u8],
        timeout: Duration,
    ) -> Result<Response, ClientError> {
        let r = Request::post(Url::for_addr(self.addr, path)?, CBOR, body.to_vec());
        self.inner.set_timeout(timeout);
        self.inner.send(&r).await
    }

    /// `GET path`, signed by `key` when there is one ([`get_as`]),
    /// answered within `timeout`.
    pub async fn get(
        &mut self,
        path: &str,
        key: Option<&SigningKey>,
        timeout: Duration,
    ) -> Result<Response, ClientError> {
        let mut r = Request::get(Url::for_addr(self.addr, path)?);
        if let Some(k) = key {
            r = r.signed_now(k, &k.sigil(SigilForm::Default).to_string());
        }
        self.inner.set_timeout(timeout);
        self.inner.send(&r).await
    }
}
