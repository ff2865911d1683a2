//! A sender's side of `POST /v1/envelopes` (CONDUIT.md, spec §5.2
//! *Neutrality*): what `herald agent`, the MCP proxy's `--conduit` and the
//! Python `ConduitSink` count as delivered.
//!
//! The conduit's key comes from its `/.well-known/herald-conduit`
//! ([`conduit_key`]), fetched once and pinned by the caller. An envelope
//! is delivered only when the `201` returns it unaltered with a
//! `conduit_receipt` that verifies under that key, and refused only when
//! the answer is a refusal the conduit signed for it
//! (herald-verify's [`herald_verify::check_forwarded`] and
//! [`herald_verify::check_refusal`] check them);
//! any other answer is [`SendError::Unproven`]: not delivered.

use std::fmt;
use std::time::Duration;

use herald_core::PublicKey;
use herald_core::cbor::Value;
use herald_http::client::{Client, ClientError, Limits, Request, Response, Url};
use herald_verify::{ReceiptError, Refusal, check_forwarded, check_refusal};

/// The conduit's well-known document (CONDUIT.md *Endpoints*).
pub const WELL_KNOWN: &str = "/.well-known/herald-conduit";

/// An envelope the conduit acknowledged, checked.
#[derive(Clone, Debug)]
pub struct Delivered {
    /// The envelope as forwarded: the bytes sent with the receipt appended.
    pub envelope: Vec<u8>,
    /// Its leaf index in the audit log (a notary's `index`).
    pub index: Option<u64>,
}

/// Why an envelope is not delivered.
#[derive(Debug)]
#[non_exhaustive]
pub enum SendError {
    /// No answer: connecting, sending or reading failed, or it came late.
    Unreachable(ClientError),
    /// The well-known document names no usable key.
    NoKey(String),
    /// A refusal signed by the conduit for this envelope.
    Refused {
        /// The HTTP status.
        status: u16,
        /// Its reason and `retry_after`.
        refusal: Refusal,
    },
    /// An answer that proves neither delivery nor a refusal.
    Unproven {
        /// The HTTP status.
        status: u16,
        /// Why it proves nothing.
        why: String,
    },
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable(e) => write!(f, "no answer from the conduit: {e}"),
            Self::NoKey(why) => write!(f, "{WELL_KNOWN}: {why}"),
            Self::Refused { status, refusal } => {
                write!(f, "refused ({status}): {}", refusal.reason)
            }
            Self::Unproven { status, why } => {
                write!(f, "an answer ({status}) that proves no delivery: {why}")
            }
        }
    }
}

impl std::error::Error for SendError {}

/// Largest answer read: a `201` returns the envelope (at most 1 MiB, P1)
/// with its receipt and proof.
const MAX_ANSWER: usize = 2 << 20;

/// `GET` or `POST` `path` under the conduit's URL, within `timeout`.
async fn ask(
    conduit: &Url,
    path: &str,
    envelope: Option<&[u8]>,
    timeout: Duration,
) -> Result<Response, SendError> {
    let url = conduit.join(path).map_err(ClientError::Url);
    let request = match envelope {
        None => url.map(Request::get),
        Some(e) => url.map(|u| Request::post(u, "application/cbor", e.to_vec())),
    }
    .map_err(SendError::Unreachable)?;
    let client = Client::new(Limits {
        connect_timeout: timeout,
        timeout,
        max_body: MAX_ANSWER,
    });
    client.send(&request).await.map_err(SendError::Unreachable)
}

/// The key a conduit (its base URL) publishes in its well-known document
/// (JSON `key`, hex).
pub async fn conduit_key(conduit: &Url, timeout: Duration) -> Result<PublicKey, SendError> {
    let r = ask(conduit, WELL_KNOWN, None, timeout).await?;
    if r.status != 200 {
        return Err(SendError::NoKey(format!("status {}", r.status)));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&r.body).map_err(|e| SendError::NoKey(format!("not JSON: {e}")))?;
    json.get("key")
        .and_then(serde_json::Value::as_str)
        .and_then(|k| data_encoding::HEXLOWER.decode(k.as_bytes()).ok())
        .and_then(|k| PublicKey::from_slice(&k).ok())
        .ok_or_else(|| SendError::NoKey("no valid key".into()))
}

/// `POST /v1/envelopes` of `envelope` to the conduit at `url` (its base
/// URL) whose key is `conduit`, and the answer checked (the module's
/// rules).
pub async fn deliver(
    url: &Url,
    envelope: &[u8],
    conduit: &PublicKey,
    timeout: Duration,
) -> Result<Delivered, SendError> {
    let r = ask(url, "/v1/envelopes", Some(envelope), timeout).await?;
    let unproven = |why: String| SendError::Unproven {
        status: r.status,
        why,
    };
    if r.status == 201 {
        let (forwarded, index) = acknowledged(&r.body)
            .ok_or_else(|| unproven("a 201 without {envelope: bytes}".into()))?;
        check_forwarded(envelope, &forwarded, conduit).map_err(|e| unproven(e.to_string()))?;
        return Ok(Delivered {
            envelope: forwarded,
            index,
        });
    }
    let sent_id = herald_core::EnvelopeRef::decode(envelope)
        .map(|e| *e.id())
        .map_err(|e| unproven(format!("the envelope sent does not decode: {e}")))?;
    match check_refusal(&sent_id, &r.body, conduit) {
        Ok(refusal) => Err(SendError::Refused {
            status: r.status,
            refusal,
        }),
        Err(ReceiptError::NotARefusal(why)) => Err(unproven(format!(
            "not a refusal signed by the conduit ({why}): {}",
            first_line(&r.body)
        ))),
        Err(e) => Err(unproven(e.to_string())),
    }
}

/// The `envelope` and `index` of a `201` body (a P1 map).
fn acknowledged(body: &[u8]) -> Option<(Vec<u8>, Option<u64>)> {
    let value = Value::decode(body).ok()?;
    let map = value.as_map()?;
    let Value::Bytes(bytes) = map.get("envelope")? else {
        return None;
    };
    let index = match map.get("index") {
        Some(Value::Unsigned(i)) => Some(*i),
        _ => None,
    };
    Some((bytes.clone(), index))
}

/// The first line of a body, at most 200 characters, for a message.
fn first_line(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}
