//! A subject's request (CONDUIT.md `POST /v1/certify`): an envelope `to`
//! the Herald, payload `{certify: claim, value}`, checked before anything
//! is issued. The Herald issues on request only what it checks itself
//! (PROFILE P14's table):
//!
//! - `key` (value: 32 bytes): the request's `from` names that key (P2)
//!   and its origin signature verifies under it;
//! - `handle` (value: the handle's text): the P15 DNS record of that
//!   handle names `from` with a key, and the request's origin verifies
//!   under that key (both directions agree, as P15 asks of a verifier).
//!
//! Anything else is refused (`unsupported_claim`); an operator issues the
//! other claims with `herald heraldry certify`.

use herald_core::cbor::{Value, ValueRef};
use herald_core::{
    CheckOptions, EnvelopeRef, KeyResolver, PublicKey, Reason, Sigil, SigilForm, Status,
};
use herald_resolve::{Channel, Handle, Query};

use crate::certification::{Certification, requested};
use crate::refusal::Refusal;

/// What the Herald decided about a request.
#[derive(Debug)]
pub(crate) struct Decided {
    /// The certification to issue.
    pub(crate) certification: Certification,
    /// The request's id and trace (the certification replies to it).
    pub(crate) request: ([u8; 32], [u8; 32]),
}

/// One key for every sigil it names.
struct OneKey(PublicKey);

impl KeyResolver for OneKey {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        sigil.names_key(self.0.as_bytes()).then_some(self.0)
    }
}

/// The origin of `bytes` verifies under `key` at `now` (P5, P10 time
/// checks): else the first P11 code.
fn origin_verifies(bytes: &[u8], key: PublicKey, now: u64) -> Result<(), Refusal> {
    let opts = CheckOptions {
        now: Some(now),
        learn_birth_keys: false,
        ..CheckOptions::DEFAULT
    };
    let mut reasons: Vec<Reason> = Vec::new();
    let checked = herald_core::check(bytes, &OneKey(key), &opts, &mut reasons);
    if checked.status == Status::Valid {
        Ok(())
    } else {
        Err(Refusal::Invalid(
            reasons.first().map_or("malformed", |r| r.code.name()),
        ))
    }
}

/// Decide a request. `dns` is the channel `handle` claims are resolved
/// through; `not_after` the validity given to what is issued.
pub(crate) async fn decide(
    bytes: &[u8],
    herald: &Sigil,
    dns: Option<&dyn Channel>,
    now: u64,
    not_after: Option<u64>,
) -> Result<Decided, Refusal> {
    let env = EnvelopeRef::decode(bytes).map_err(|_| Refusal::Invalid("malformed"))?;
    if !env.to().is_some_and(|(_, to)| to.same_key_as(herald)) {
        return Err(Refusal::NotForThisHerald);
    }
    let from = env.from_sigil();
    if from.is_short() {
        return Err(Refusal::Invalid("short_sigil_misuse"));
    }
    let (claim, value) = requested(env.payload()).ok_or(Refusal::Invalid("malformed"))?;
    let request = (*env.id(), *env.trace());
    let subject = from.to_form(SigilForm::Default).unwrap_or(from);
    let value: Value = match claim {
        "key" => {
            let key = key_value(value)?;
            if !from.names_key(key.as_bytes()) {
                return Err(Refusal::KeyMismatch);
            }
            origin_verifies(bytes, key, now)?;
            Value::from(key.as_bytes().to_vec())
        }
        "handle" => {
            let text = value.as_text().ok_or(Refusal::Invalid("malformed"))?;
            let handle = Handle::parse(text).map_err(|_| Refusal::Invalid("malformed"))?;
            let dns = dns.ok_or(Refusal::UnsupportedClaim)?;
            let answers = dns
                .lookup(&Query::sigil_at(from, handle.clone()))
                .await
                .map_err(|e| {
                    tracing::info!(%handle, error = %e, "DNS lookup for a handle certification failed");
                    Refusal::DnsUnavailable
                })?;
            let key = answers
                .iter()
                .find(|a| a.key_matches() && a.sigil.same_key_as(&from))
                .map(|a| a.key)
                .ok_or(Refusal::HandleUnconfirmed)?;
            origin_verifies(bytes, key, now)?;
            Value::text(handle.as_str())
        }
        _ => return Err(Refusal::UnsupportedClaim),
    };
    Ok(Decided {
        certification: Certification {
            subject,
            claim: claim.to_owned(),
            value,
            not_after,
            revokes: None,
        },
        request,
    })
}

fn key_value(value: ValueRef<'_>) -> Result<PublicKey, Refusal> {
    value
        .as_bytes()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| PublicKey::from_bytes(&b).ok())
        .ok_or(Refusal::Invalid("malformed"))
}
