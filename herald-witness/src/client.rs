//! The client side of tlog-witness (C2SP tlog-witness v1.0.0,
//! *add-checkpoint*) and blocking `GET`s of a log's or witness's resources,
//! on herald-http's one client ([`herald_http::client::blocking`]),
//! bounded in time and size.
//!
//! A log that has its checkpoints cosigned (the conduit's notary,
//! CONDUIT.md *Witnesses*; a Herald, PROFILE P14) names each witness by a
//! [`WitnessTarget`] (`--witness URL` or `--witness VKEY=URL`), asks it
//! with [`WitnessTarget::cosign`] (the checkpoint and its consistency
//! proof sent, the answer checked, bounded by this client's time limits)
//! and, when it fails, asks again on a [`Backoff`].

use core::fmt;
use std::time::{Duration, Instant};

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

/// A witness a log submits its checkpoints to (`--witness URL`, or
/// `--witness VKEY=URL`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessTarget {
    /// Its cosigning verifier key (type 0x04), when given: then only its
    /// valid cosignatures are published. Without it (CONDUIT.md's plain
    /// `--witness URL`) the lines it answers are published as they are,
    /// when they have the shape of a tlog-cosignature (an 8-byte time and
    /// a 64-byte signature); verifiers check them against their policy.
    pub key: Option<NoteVerifier>,
    /// Its tlog-witness submission prefix (`http://…`; `/add-checkpoint`
    /// is appended).
    pub url: String,
}

/// A `--witness` value is neither `URL` nor `VKEY=URL`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessSpecError(String);

impl fmt::Display for WitnessSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WitnessSpecError {}

/// The length of a tlog-cosignature v1 signature field: the big-endian
/// u64 time, then the Ed25519 signature.
const COSIGNATURE_LEN: usize = 8 + 64;

impl WitnessTarget {
    /// Parse `URL` (an `http://` prefix) or `VKEY=URL`: a cosigner
    /// verifier key (`name+hex(id)+base64(0x04‖key)`, as `herald witness
    /// key` prints it), `=`, the URL. The split is at the first
    /// `=http://`, so neither part needs escaping.
    pub fn parse(spec: &str) -> Result<Self, WitnessSpecError> {
        if spec.starts_with("http://") {
            return Ok(Self {
                key: None,
                url: spec.to_owned(),
            });
        }
        let (vkey, url) = spec
            .find("=http://")
            .map(|i| (&spec[..i], &spec[i + 1..]))
            .ok_or_else(|| {
                WitnessSpecError(format!(
                    "{spec:?} is neither http://HOST:PORT nor VKEY=http://HOST:PORT"
                ))
            })?;
        let key =
            NoteVerifier::parse(vkey).map_err(|e| WitnessSpecError(format!("{vkey}: {e}")))?;
        if key.signature_type() != herald_tlog::note::TYPE_COSIGNATURE {
            return Err(WitnessSpecError(format!(
                "{vkey}: not a cosigner key (type 0x{:02x}, expected 0x{:02x})",
                key.signature_type(),
                herald_tlog::note::TYPE_COSIGNATURE
            )));
        }
        Ok(Self {
            key: Some(key),
            url: url.to_owned(),
        })
    }

    /// One cosigning round with this witness: `checkpoint` submitted
    /// ([`add_checkpoint_from`], first from `from`, the size it last
    /// cosigned as far as the log knows; `proof(old)` the consistency
    /// proof from `old`), within this client's time limits. Its
    /// cosignatures: the lines verified by its key when it is known (a log
    /// publishes only cosignatures it checked), else the lines of a
    /// tlog-cosignature's shape. None of either is an error.
    pub fn cosign(
        &self,
        checkpoint: &SignedCheckpoint,
        from: u64,
        proof: impl Fn(u64) -> Result<Vec<Hash>, String>,
    ) -> Result<Vec<NoteSignature>, String> {
        let lines = add_checkpoint_from(&self.url, checkpoint, from, proof)?;
        let good: Vec<NoteSignature> = match &self.key {
            Some(key) => verified_cosignatures(checkpoint, lines, std::slice::from_ref(key)).0,
            None => lines
                .into_iter()
                .filter(|l| l.signature().len() == COSIGNATURE_LEN)
                .collect(),
        };
        if good.is_empty() {
            return Err(match &self.key {
                Some(k) => format!("no valid cosignature by {k} in its answer"),
                None => "no tlog-cosignature line in its answer".to_owned(),
            });
        }
        Ok(good)
    }
}

/// When to ask a witness that failed again: 1 s after its first failure,
/// the delay doubling with each failure after it up to 30 s, back to 1 s
/// once it answers (CONDUIT.md *Witnesses*: a witness that is down is
/// retried with a backoff, never waited for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Not asked before this.
    retry_at: Instant,
    /// The delay after the next failure.
    delay: Duration,
}

impl Backoff {
    /// The first retry delay after a witness fails.
    pub const FIRST: Duration = Duration::from_secs(1);
    /// The longest retry delay.
    pub const MAX: Duration = Duration::from_secs(30);

    /// A witness that may be asked now.
    #[must_use]
    pub fn new() -> Self {
        Self {
            retry_at: Instant::now(),
            delay: Self::FIRST,
        }
    }

    /// Whether the witness may be asked at `now`.
    #[must_use]
    pub fn due(&self, now: Instant) -> bool {
        now >= self.retry_at
    }

    /// It failed: not asked again for the current delay (returned, for the
    /// log line), and the next delay doubled.
    pub fn failed(&mut self) -> Duration {
        let delay = self.delay;
        self.retry_at = Instant::now() + delay;
        self.delay = (delay * 2).min(Self::MAX);
        delay
    }

    /// It answered: whether it had failed since it last answered (it is
    /// cosigning again after a backoff).
    pub fn answered(&mut self) -> bool {
        let recovered = self.delay > Self::FIRST;
        self.delay = Self::FIRST;
        recovered
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use herald_core::SigningKey;

    #[test]
    fn witness_specs() {
        let key = SigningKey::from_seed(&[4; 32]).public_key();
        let v = NoteVerifier::cosigner("w.example", key).unwrap();
        let t = WitnessTarget::parse(&format!("{v}=http://127.0.0.1:8471")).unwrap();
        assert_eq!(t.key.as_ref(), Some(&v));
        assert_eq!(t.url, "http://127.0.0.1:8471");
        let bare = WitnessTarget::parse("http://127.0.0.1:8471/w").unwrap();
        assert_eq!(
            (bare.key, bare.url.as_str()),
            (None, "http://127.0.0.1:8471/w")
        );
        // A log key (type 0x01) is not a cosigner key.
        let log = NoteVerifier::ed25519("log.example", key).unwrap();
        let e = WitnessTarget::parse(&format!("{log}=http://127.0.0.1:1")).unwrap_err();
        assert!(e.to_string().contains("not a cosigner key"), "{e}");
        assert!(WitnessTarget::parse("127.0.0.1:8471").is_err());
        assert!(WitnessTarget::parse(&format!("{v}=https://x")).is_err());
        assert!(WitnessTarget::parse("garbage=http://127.0.0.1:1").is_err());
    }

    #[test]
    fn the_backoff_doubles_to_its_cap_and_resets() {
        let mut b = Backoff::new();
        assert!(b.due(Instant::now()));
        let delays: Vec<u64> = (0..7).map(|_| b.failed().as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
        assert!(!b.due(Instant::now()));
        assert!(b.answered());
        assert!(!b.answered());
        assert_eq!(b.failed(), Backoff::FIRST);
    }
}
