//! Refusals (spec §5.2, CONDUIT.md): a signed envelope, P7 `kind:
//! refusal`, by the conduit key, `parent` = the refused id, `trace` = the
//! refused envelope's trace, `to` = its `from`, payload `{reason,
//! retry_after?}`.

use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeBuilder, Kind, SigningKey};

use herald_http::head::Head;

/// Why the conduit refused, and the status code that says so.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `422`: the envelope is `invalid` or `partial`; every P11 code.
    Invalid(Vec<&'static str>),
    /// `409`: another envelope holds its `(from key, nonce)`.
    Replayed,
    /// `413`: larger than `--max-body` (a relay: than what leaves room for
    /// its receipt within P1's limit, CONDUIT.md *Policies*).
    TooLarge,
    /// `413`: more than `--max-signatures` signatures, refused before any
    /// is verified (CONDUIT.md revision 3).
    TooManySignatures,
    /// `429`: the sender is over `--rate`/`--burst`; seconds to wait.
    RateLimited(u64),
    /// `503`: shedding load or shutting down.
    Overloaded,
    /// `503`: the answer would come after `--deadline-ms`.
    Deadline,
    /// `410`: the envelope was erased (CONDUIT.md *Retention and
    /// erasure*, spec §11.4); the refusal is its tombstone, payload
    /// `{reason: "erased", erased_at}` with `erased_at` its `ts`.
    Erased,
}

impl Refusal {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            Self::Invalid(_) => 422,
            Self::Replayed => 409,
            Self::TooLarge | Self::TooManySignatures => 413,
            Self::RateLimited(_) => 429,
            Self::Overloaded | Self::Deadline => 503,
            Self::Erased => 410,
        }
    }

    /// The payload `reason`: a P11 code or a conduit reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Invalid(codes) => codes.first().copied().unwrap_or("malformed"),
            Self::Replayed => "replayed_nonce",
            Self::TooLarge => "too_large",
            Self::TooManySignatures => "too_many_signatures",
            Self::RateLimited(_) => "rate_limited",
            Self::Overloaded => "overloaded",
            Self::Deadline => "deadline",
            Self::Erased => "erased",
        }
    }

    /// Seconds before a retry may succeed (`retry_after`, `Retry-After`).
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Self::RateLimited(s) => Some(*s),
            Self::Overloaded | Self::Deadline => Some(1),
            _ => None,
        }
    }

    /// The signed refusal envelope for the envelope `head` names, at `now`.
    pub(crate) fn envelope(&self, key: &SigningKey, head: &Head, now: u64) -> Option<Vec<u8>> {
        let mut payload = Map::new();
        payload.insert("reason", Value::text(self.reason()));
        if let Some(s) = self.retry_after() {
            payload.insert("retry_after", Value::from(s));
        }
        EnvelopeBuilder::reply_to(head.id, head.trace, now)
            .kind(Kind::Refusal)
            .to(head.from)
            .payload(Value::Map(payload))
            .sign(key)
            .ok()
            .map(|e| e.into_bytes())
    }
}
