//! The client side of tlog-witness (C2SP tlog-witness v1.0.0,
//! *add-checkpoint*) and blocking `GET`s of a log's or witness's resources,
//! on herald-http's one client ([`herald_http::client::blocking`]),
//! bounded in time and size.

use std::time::Duration;

use data_encoding::BASE64;
use herald_http::client::{Client, Limits, Method, Request, Url, blocking};
use herald_merkle::Hash;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::{Note, NoteSignature, NoteVerifier};

pub use herald_http::client::Response;

/// The bounds of every request: 10 s to connect, 30 s in all, and the
/// largest resource read (a full hash tile is 8 KiB, an entry bundle up to
/// 16 MiB).
const LIMITS: Limits = Limits {
    connect_timeout: Duration::from_secs(10),
    timeout: Duration::from_secs(30),
    max_body: 17 * 1024 * 1024,
};

/// `GET url`: the body of a 200, else an error naming the status.
pub fn get(url: &str) -> Result<Vec<u8>, String> {
    let r = request("GET", url, None)?;
    if r.status != 200 {
        return Err(format!("HTTP {}", r.status));
    }
    Ok(r.body)
}

/// One HTTP/1.1 request (`Connection: close`), blocking; a body with its
/// content type.
pub fn request(
    method: &str,
    url: &str,
    body: Option<(&'static str, &[u8])>,
) -> Result<Response, String> {
    let parsed = Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let method = Method::from_bytes(method.as_bytes()).map_err(|e| format!("{method}: {e}"))?;
    let mut r = Request::new(method, parsed);
    if let Some((content_type, bytes)) = body {
        r = r.body(content_type, bytes.to_vec());
    }
    send(&r)
}

fn send(request: &Request) -> Result<Response, String> {
    blocking::send(&Client::new(LIMITS), request).map_err(|e| format!("{}: {e}", request.url()))
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
    let url = Url::parse(prefix)
        .and_then(|u| u.join("/add-checkpoint"))
        .map_err(|e| format!("{prefix}: {e}"))?;
    let text = checkpoint.note().to_text();
    let mut old = old.min(checkpoint.checkpoint().size());
    for _ in 0..2 {
        let path = if old == 0 { Vec::new() } else { proof(old)? };
        let body = add_checkpoint_body(old, &path, &text);
        let r = send(&Request::post(url.clone(), "text/plain", body))?;
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
            409 if r.content_type() == Some(crate::witness::SIZE_MEDIA_TYPE) => {
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
