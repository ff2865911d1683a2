//! A small blocking HTTP/1.1 client for `http://` URLs (loopback logs and
//! witnesses): one request per connection, bounded in time and size.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use data_encoding::BASE64;
use herald_merkle::Hash;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::{Note, NoteSignature, NoteVerifier};

/// Connect and read timeout.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Largest response read (a full hash tile is 8 KiB, an entry bundle up to
/// 16 MiB).
const MAX_RESPONSE: u64 = 17 * 1024 * 1024;

/// An HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// `GET url`: the body of a 200, else an error naming the status.
pub fn get(url: &str) -> Result<Vec<u8>, String> {
    let r = request("GET", url, None)?;
    if r.status != 200 {
        return Err(format!("HTTP {}", r.status));
    }
    Ok(r.body)
}

/// One HTTP/1.1 request (`Connection: close`).
pub fn request(method: &str, url: &str, body: Option<(&str, &[u8])>) -> Result<Response, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: only http:// URLs"))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = host
        .to_socket_addrs()
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}: no address"))?;
    let mut stream =
        TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| format!("{host}: {e}"))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(|e| format!("{host}: {e}"))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    if let Some((ct, b)) = body {
        head.push_str(&format!(
            "Content-Type: {ct}\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.map_or(&[][..], |(_, b)| b)))
        .map_err(|e| format!("{url}: {e}"))?;
    let mut raw = Vec::new();
    stream
        .take(MAX_RESPONSE)
        .read_to_end(&mut raw)
        .map_err(|e| format!("{url}: {e}"))?;
    parse_response(&raw).ok_or_else(|| format!("{url}: malformed HTTP response"))
}

fn parse_response(raw: &[u8]) -> Option<Response> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = core::str::from_utf8(&raw[..split]).ok()?;
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut content_type = None;
    let mut length = None;
    let mut chunked = false;
    for l in lines {
        let (k, v) = l.split_once(':')?;
        let v = v.trim();
        match k.to_ascii_lowercase().as_str() {
            "content-type" => content_type = Some(v.to_owned()),
            "content-length" => length = Some(v.parse::<usize>().ok()?),
            "transfer-encoding" => chunked = v.eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    if chunked {
        body = dechunk(&body)?;
    } else if let Some(n) = length {
        if body.len() < n {
            return None;
        }
        body.truncate(n);
    }
    Some(Response {
        status,
        content_type,
        body,
    })
}

fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n")?;
        let size = core::str::from_utf8(&raw[..eol]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        raw = &raw[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

/// The add-checkpoint request body (tlog-witness): `old <size>`, the proof
/// lines, a blank line, the checkpoint.
#[must_use]
pub fn add_checkpoint_body(old: u64, proof: &[Hash], checkpoint: &str) -> Vec<u8> {
    let mut body = format!("old {old}\n");
    for h in proof {
        body.push_str(&BASE64.encode(h));
        body.push('\n');
    }
    body.push('\n');
    body.push_str(checkpoint);
    body.into_bytes()
}

/// Submit `checkpoint` to the witness at `prefix` (tlog-witness
/// add-checkpoint): first with old size 0; on 409 once more from the size
/// the witness reports, with `proof(old)` as the consistency proof. Returns
/// the cosignature lines of the 200 response.
pub fn add_checkpoint(
    prefix: &str,
    checkpoint: &SignedCheckpoint,
    proof: impl Fn(u64) -> Result<Vec<Hash>, String>,
) -> Result<Vec<NoteSignature>, String> {
    add_checkpoint_from(prefix, checkpoint, 0, proof)
}

/// [`add_checkpoint`], first from `old`: the size this witness last
/// cosigned for the log, as far as the caller knows (a log that keeps
/// submitting saves the 409 round trip). A wrong guess costs one 409.
pub fn add_checkpoint_from(
    prefix: &str,
    checkpoint: &SignedCheckpoint,
    old: u64,
    proof: impl Fn(u64) -> Result<Vec<Hash>, String>,
) -> Result<Vec<NoteSignature>, String> {
    let url = format!("{}/add-checkpoint", prefix.trim_end_matches('/'));
    let text = checkpoint.note().to_text();
    let mut old = old.min(checkpoint.checkpoint().size());
    for _ in 0..2 {
        let path = if old == 0 { Vec::new() } else { proof(old)? };
        let body = add_checkpoint_body(old, &path, &text);
        let r = request("POST", &url, Some(("text/plain", &body)))?;
        match r.status {
            200 => {
                let signed = format!(
                    "{}\n{}",
                    checkpoint.note().text(),
                    String::from_utf8_lossy(&r.body)
                );
                let note =
                    Note::parse(signed.as_bytes()).map_err(|e| format!("witness answer: {e}"))?;
                return Ok(note.signatures().to_vec());
            }
            409 if r.content_type.as_deref() == Some(crate::witness::SIZE_MEDIA_TYPE) => {
                let size = core::str::from_utf8(&r.body)
                    .ok()
                    .and_then(|s| s.strip_suffix('\n'))
                    .and_then(|s| s.parse::<u64>().ok())
                    .ok_or("409 without a size body")?;
                if size > checkpoint.checkpoint().size() {
                    return Err(format!(
                        "the witness has cosigned a larger tree ({size}) than this checkpoint ({})",
                        checkpoint.checkpoint().size()
                    ));
                }
                old = size;
            }
            s => {
                return Err(format!(
                    "HTTP {s}: {}",
                    String::from_utf8_lossy(&r.body).trim_end()
                ));
            }
        }
    }
    Err("the witness answered 409 twice".to_owned())
}

/// The lines of `lines` (a witness's answer for `checkpoint`) that are a
/// valid signature by one of `keys` over it, and how many were not:
/// a log publishes only cosignatures it checked (tlog-witness: the log
/// verifies the response before it adds it).
#[must_use]
pub fn verified_cosignatures(
    checkpoint: &SignedCheckpoint,
    lines: Vec<NoteSignature>,
    keys: &[NoteVerifier],
) -> (Vec<NoteSignature>, usize) {
    let mut good = Vec::new();
    let mut bad = 0;
    for line in lines {
        // The bare text and this one line: another line already on the
        // checkpoint must not vouch for this one.
        let ok = Note::new(checkpoint.note().text()).is_ok_and(|mut probe| {
            probe.push(line.clone()).is_ok()
                && probe
                    .verify(keys)
                    .is_ok_and(|v| v.iter().any(|v| v.time.is_some()))
        });
        if ok {
            good.push(line);
        } else {
            bad += 1;
        }
    }
    (good, bad)
}
