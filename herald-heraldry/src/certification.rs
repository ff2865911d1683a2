//! Certifications (PROFILE P14): the envelopes a Herald issues, and the
//! `{certification, proof}` item it answers with (CONDUIT.md `herald
//! heraldry serve`).

use herald_core::cbor::{Map, Value, ValueRef};
use herald_core::{BuildError, Envelope, EnvelopeBuilder, EnvelopeRef, Kind, Sigil, SigningKey};
use herald_verify::CertificationItem;

/// The claims a Herald checks itself on request (CONDUIT.md: `handle`
/// through DNS, `key` from the request's own signature).
pub const REQUESTABLE: [&str; 2] = ["handle", "key"];

/// What a certification says (its payload, P14), read from its envelope.
#[derive(Clone, Debug, PartialEq)]
pub struct Certification {
    /// The sigil it is about.
    pub subject: Sigil,
    /// The claim.
    pub claim: String,
    /// The claim's value.
    pub value: Value,
    /// When it stops counting, if said.
    pub not_after: Option<u64>,
    /// The earlier certification a `revocation` revokes.
    pub revokes: Option<[u8; 32]>,
}

impl Certification {
    /// The certification an envelope carries, when it is one (kind
    /// `certification`, payload of P14's shape).
    #[must_use]
    pub fn of(env: &EnvelopeRef<'_>) -> Option<Self> {
        if env.kind() != Kind::Certification {
            return None;
        }
        let c = herald_core::payload::Certification::parse(env.payload()).ok()?;
        Some(Self {
            subject: c.subject,
            claim: c.claim.to_owned(),
            value: Value::from(&c.value),
            not_after: c.not_after,
            revokes: c.revokes.copied(),
        })
    }

    /// The P14 payload map.
    #[must_use]
    pub fn payload(&self) -> Value {
        let mut m = Map::new();
        m.insert("subject", Value::text(self.subject.to_string()));
        m.insert("claim", Value::text(self.claim.clone()));
        m.insert("value", self.value.clone());
        if let Some(t) = self.not_after {
            m.insert("not_after", Value::from(t));
        }
        if let Some(r) = self.revokes {
            m.insert("revokes", Value::from(r.to_vec()));
        }
        Value::Map(m)
    }

    /// The certification envelope, signed by `key` at `now`: a reply to
    /// the subject's request `(id, trace)` when there is one (P14: the log
    /// shows the subject asked), else the genesis of its own trace (an
    /// operator's certification).
    pub fn issue(
        &self,
        key: &SigningKey,
        request: Option<([u8; 32], [u8; 32])>,
        now: u64,
    ) -> Result<Envelope, BuildError> {
        let builder = match request {
            Some((id, trace)) => EnvelopeBuilder::reply_to(id, trace, now),
            None => EnvelopeBuilder::genesis(now),
        };
        builder
            .kind(Kind::Certification)
            .to(self.subject)
            .payload(self.payload())
            .sign(key)
    }
}

/// The item a Herald answers with: the P1 map `{certification: bstr,
/// proof: text}` (CONDUIT.md), herald-verify's [`CertificationItem`].
#[must_use]
pub fn item(certification: &[u8], proof: &str) -> Vec<u8> {
    CertificationItem::new(certification.to_vec(), proof.to_owned()).encode()
}

/// A request's payload `{certify: claim, value}` (CONDUIT.md).
#[must_use]
pub fn requested<'a>(payload: ValueRef<'a>) -> Option<(&'a str, ValueRef<'a>)> {
    let m = payload.as_map()?;
    Some((m.get("certify")?.as_text()?, m.get("value")?))
}
