//! Refusals (CONDUIT.md `herald heraldry serve`: "a signed refusal as for
//! the conduit"; spec §5.2): a P7 `kind: refusal` envelope signed by the
//! Herald, `parent` = the refused request, `trace` = its trace, `to` = its
//! `from`, payload `{reason, retry_after?}`.

use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeBuilder, Kind, Sigil, SigningKey};

/// Why the Herald will not certify, and the status that says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `422`: the request is not a valid envelope (a P11 code, or
    /// `malformed` for a payload that is not `{certify, value}`).
    Invalid(&'static str),
    /// `422`: the request is not addressed `to` this Herald.
    NotForThisHerald,
    /// `422`: a claim the Herald does not check on request (P14: the
    /// operator issues those).
    UnsupportedClaim,
    /// `422`: a `key` claim whose key the request's `from` does not name.
    KeyMismatch,
    /// `422`: the handle's DNS record does not name the request's `from`.
    HandleUnconfirmed,
    /// `503`: the handle's DNS record could not be read now.
    DnsUnavailable,
    /// `413`: larger than the body limit.
    TooLarge,
    /// `413`: more signatures than a request needs.
    TooManySignatures,
    /// `429`: the subject, or every subject the log does not name yet
    /// together, asked too often (docs/heralds.md *Limits*); seconds to
    /// wait.
    RateLimited(u64),
    /// `503`: shedding load or shutting down.
    Overloaded,
    /// `503`: the answer would come after the deadline.
    Deadline,
}

impl Refusal {
    /// The HTTP status.
    #[must_use]
    pub fn status(self) -> u16 {
        match self {
            Self::TooLarge | Self::TooManySignatures => 413,
            Self::RateLimited(_) => 429,
            Self::DnsUnavailable | Self::Overloaded | Self::Deadline => 503,
            _ => 422,
        }
    }

    /// The payload's `reason`.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Self::Invalid(code) => code,
            Self::NotForThisHerald => "not_for_this_herald",
            Self::UnsupportedClaim => "unsupported_claim",
            Self::KeyMismatch => "key_mismatch",
            Self::HandleUnconfirmed => "handle_unconfirmed",
            Self::DnsUnavailable => "dns_unavailable",
            Self::TooLarge => "too_large",
            Self::TooManySignatures => "too_many_signatures",
            Self::RateLimited(_) => "rate_limited",
            Self::Overloaded => "overloaded",
            Self::Deadline => "deadline",
        }
    }

    /// Seconds before a retry may succeed.
    #[must_use]
    pub fn retry_after(self) -> Option<u64> {
        match self {
            Self::RateLimited(s) => Some(s),
            _ => (self.status() == 503).then_some(1),
        }
    }

    /// The signed refusal of the request `(id, trace)` from `from`.
    #[must_use]
    pub fn envelope(
        self,
        key: &SigningKey,
        (id, trace, from): ([u8; 32], [u8; 32], Sigil),
        now: u64,
    ) -> Option<Vec<u8>> {
        let mut payload = Map::new();
        payload.insert("reason", Value::text(self.reason()));
        if let Some(s) = self.retry_after() {
            payload.insert("retry_after", Value::from(s));
        }
        EnvelopeBuilder::reply_to(id, trace, now)
            .kind(Kind::Refusal)
            .to(from)
            .payload(Value::Map(payload))
            .sign(key)
            .ok()
            .map(herald_core::Envelope::into_bytes)
    }
}
