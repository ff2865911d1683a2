//! Sending a composed envelope to a conduit: `POST /v1/envelopes`
//! (CONDUIT.md), over plain HTTP/1.1 with one request per connection.
//!
//! A small client of its own: the conduit's client crate (herald-conduit,
//! issue 16) was not on main when this was written; swapping it in changes
//! only this file.

use std::time::Duration;

use herald_core::cbor::{ValueRef, decode};
use herald_verify::report::hex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest a send may take, connection to last byte.
const TIMEOUT: Duration = Duration::from_secs(15);

/// Largest answer read (a receipt with a proof is a few kilobytes).
const MAX_ANSWER: u64 = 4 << 20;

/// A conduit's HTTP answer.
pub(crate) struct Answer {
    /// The status code.
    pub(crate) status: u16,
    /// The headers, as received.
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: Vec<u8>,
}

/// What the conduit answered, for the page.
pub(crate) fn answer_json(answer: &Answer) -> serde_json::Value {
    let Answer {
        status,
        headers,
        body,
    } = answer;
    let status = *status;
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let content_type = header("content-type").unwrap_or_default();
    let mut out = serde_json::json!({
        "status": status,
        "content_type": content_type,
        "reasons": header("herald-reasons"),
        "location": header("location"),
    });
    if content_type.starts_with("application/cbor") {
        // 201: {envelope, index?, proof?}; a refusal: the refusal envelope.
        match decode(body) {
            Ok(ValueRef::Map(map)) if status == 201 => {
                out["envelope"] = map
                    .get("envelope")
                    .and_then(|v| v.as_bytes())
                    .map(hex)
                    .into();
                out["index"] = map.get("index").and_then(|v| v.as_unsigned()).into();
                out["proof"] = map.get("proof").map(|_| true).into();
            }
            _ => out["envelope"] = hex(body).into(),
        }
    } else {
        out["text"] = String::from_utf8_lossy(&body[..body.len().min(4096)]).into();
    }
    out
}

/// `POST` `envelope` to `{base}/v1/envelopes`: the status, headers and body.
pub(crate) async fn post(base: &str, envelope: &[u8]) -> Result<Answer, String> {
    tokio::time::timeout(TIMEOUT, post_inner(base, envelope))
        .await
        .map_err(|_| format!("no answer from {base} within {} s", TIMEOUT.as_secs()))?
}

async fn post_inner(base: &str, envelope: &[u8]) -> Result<Answer, String> {
    let rest = base
        .strip_prefix("http://")
        .ok_or("the conduit URL must start with http:// (https is not supported here)")?;
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains(['@', ' ']) {
        return Err(format!("{base}: not a conduit URL"));
    }
    let addr = if authority.contains(':') && !authority.ends_with(']') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let mut stream = TcpStream::connect(&addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let mut request = format!(
        "POST {prefix}/v1/envelopes HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/cbor\r\n\
         Accept: application/cbor, application/problem+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        envelope.len()
    )
    .into_bytes();
    request.extend_from_slice(envelope);
    stream
        .write_all(&request)
        .await
        .map_err(|e| format!("sending to {addr}: {e}"))?;
    let mut raw = Vec::new();
    stream
        .take(MAX_ANSWER + 1)
        .read_to_end(&mut raw)
        .await
        .map_err(|e| format!("reading from {addr}: {e}"))?;
    if raw.len() as u64 > MAX_ANSWER {
        return Err(format!("{addr}: answer larger than {MAX_ANSWER} bytes"));
    }
    parse(&raw).ok_or_else(|| format!("{addr}: not an HTTP/1.1 answer"))
}

/// Status, headers and body of a whole HTTP/1.1 answer (`Content-Length`
/// or read to the end; the request said `Connection: close`).
fn parse(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let body = &raw[end + 4..];
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let body = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        dechunk(body)?
    } else {
        match header("content-length") {
            Some(len) => body.get(..len.parse::<usize>().ok()?)?.to_vec(),
            None => body.to_vec(),
        }
    };
    Some(Answer {
        status,
        headers,
        body,
    })
}

/// A chunked body (RFC 9112 §7.1) put together; `None` when cut short.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_splits_into_status_headers_and_body() {
        let raw = b"HTTP/1.1 201 Created\r\nContent-Type: application/cbor\r\nContent-Length: 3\r\n\r\nabcdef";
        let answer = parse(raw).unwrap();
        assert_eq!(answer.status, 201);
        assert_eq!(
            answer.headers[0],
            ("Content-Type".into(), "application/cbor".into())
        );
        assert_eq!(answer.body, b"abc");
        let chunked = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap().body, b"abcde");
        assert!(parse(&chunked[..chunked.len() - 8]).is_none());
        assert!(parse(b"HTTP/1.1 201").is_none());
        assert!(parse(b"HTTP/1.1 201 OK\r\nContent-Length: 9\r\n\r\nabc").is_none());
    }
}
