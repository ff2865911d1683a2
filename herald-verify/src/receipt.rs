//! A sender's check of a conduit's answer (spec §5.2 *Neutrality*,
//! CONDUIT.md `POST /v1/envelopes`): the one check every HERALD sender
//! makes (`herald agent`, the MCP proxy's `--conduit`, herald-py's
//! `ConduitSink`).
//!
//! - An acknowledgement (`201`) counts as delivery only when the envelope
//!   it returns is the one sent, unaltered (spec §5.2: a conduit MUST NOT
//!   modify what is already signed), with a `conduit_receipt` signature
//!   (P6) by the conduit's key that verifies ([`check_forwarded`]).
//!   Senders that require non-repudiation of hand-off MUST require it
//!   (spec §5.2); anything else is not delivered.
//! - A refusal counts as one only when it is a `refusal` envelope (P7)
//!   signed by the conduit's key, `valid`, answering the envelope sent
//!   (`parent` = its id) ([`check_refusal`]).
//!
//! The conduit's key is the sender's to know: pinned from the conduit's
//! `/.well-known/herald-conduit` on first use, or given.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use herald_core::{CheckOptions, EnvelopeRef, Kind, PublicKey, Reason, Scope, Status, check};

/// Why a conduit's answer does not prove what it claims.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The answer holds no decodable envelope.
    Undecodable,
    /// The envelope answered is not the one sent (another id).
    OtherEnvelope,
    /// The envelope answered is the one sent, altered: the signatures
    /// sent are not its first ones, or a field changed.
    Altered,
    /// No `conduit_receipt` signature by the conduit's key.
    Missing,
    /// A `conduit_receipt` by the conduit's key that does not verify.
    BadSignature,
    /// Not a valid refusal by the conduit of the envelope sent: why.
    NotARefusal(&'static str),
}

impl fmt::Display for ReceiptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Undecodable => f.write_str("the answer holds no decodable envelope"),
            Self::OtherEnvelope => {
                f.write_str("the answer holds another envelope than the one sent")
            }
            Self::Altered => f.write_str("the envelope came back altered (spec §5.2)"),
            Self::Missing => {
                f.write_str("no conduit_receipt signature by the conduit's key (spec §5.2)")
            }
            Self::BadSignature => {
                f.write_str("the conduit_receipt signature does not verify under the conduit's key")
            }
            Self::NotARefusal(why) => write!(f, "not a refusal signed by the conduit: {why}"),
        }
    }
}

impl core::error::Error for ReceiptError {}

/// Whether `envelope` carries a `conduit_receipt` (P6) by `conduit` that
/// verifies over its body up to that signature (P5); its claimed time.
pub fn receipt_by(envelope: &EnvelopeRef<'_>, conduit: &PublicKey) -> Result<u64, ReceiptError> {
    let tag = Scope::ConduitReceipt.tag().unwrap_or_default();
    let mut found = false;
    for (k, sig) in envelope.signatures().enumerate() {
        let Ok(sig) = sig else { continue };
        if sig.registered_scope() != Some(Scope::ConduitReceipt)
            || !sig.signer.names_key(conduit.as_bytes())
        {
            continue;
        }
        found = true;
        let Some(body) = envelope.body(k) else {
            continue;
        };
        let verified = sig.alg == herald_core::envelope::ED25519
            && conduit
                .verify_parts(sig.sig, |feed| {
                    feed(tag);
                    body.feed(feed);
                })
                .is_ok();
        if verified {
            return Ok(sig.ts.unwrap_or_default());
        }
    }
    Err(if found {
        ReceiptError::BadSignature
    } else {
        ReceiptError::Missing
    })
}

/// The check of a `201`: `forwarded` (the answer's `envelope`) is `sent`,
/// unaltered, with a receipt by `conduit` ([`receipt_by`]).
pub fn check_forwarded(
    sent: &[u8],
    forwarded: &[u8],
    conduit: &PublicKey,
) -> Result<(), ReceiptError> {
    let back = EnvelopeRef::decode(forwarded).map_err(|_| ReceiptError::Undecodable)?;
    let mine = EnvelopeRef::decode(sent).map_err(|_| ReceiptError::Undecodable)?;
    if back.id() != mine.id() {
        return Err(ReceiptError::OtherEnvelope);
    }
    // Everything sent, its signatures included, is the start of what came
    // back: body(E, n) (P4) of both, n the signatures sent.
    let n = mine.signature_count();
    let same = match (back.body(n), mine.body(n)) {
        (Some(b), Some(m)) => back.computed_id() == *back.id() && b.sha256() == m.sha256(),
        _ => false,
    };
    if !same {
        return Err(ReceiptError::Altered);
    }
    receipt_by(&back, conduit).map(drop)
}

/// A refusal, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Its payload's `reason` (a P11 code or a CONDUIT.md reason).
    pub reason: String,
    /// Its payload's `retry_after`, seconds.
    pub retry_after: Option<u64>,
}

/// The check of a refusal: `body` is a `refusal` envelope (P7), `valid`
/// under `conduit`'s key alone, whose `parent` is the id of `sent`
/// (CONDUIT.md *Refusals are signed envelopes*).
pub fn check_refusal(
    sent_id: &[u8; 32],
    body: &[u8],
    conduit: &PublicKey,
) -> Result<Refusal, ReceiptError> {
    let keys = [*conduit];
    let mut reasons: Vec<Reason> = Vec::new();
    let checked = check(body, &keys, &CheckOptions::DEFAULT, &mut reasons);
    let Some(envelope) = checked.envelope else {
        return Err(ReceiptError::NotARefusal("not an envelope"));
    };
    if checked.status != Status::Valid {
        return Err(ReceiptError::NotARefusal(
            "not valid under the conduit's key",
        ));
    }
    if !envelope.from_sigil().names_key(conduit.as_bytes()) {
        return Err(ReceiptError::NotARefusal("not from the conduit's key"));
    }
    if envelope.kind() != Kind::Refusal {
        return Err(ReceiptError::NotARefusal("not of kind refusal"));
    }
    if envelope.parent() != Some(sent_id) {
        return Err(ReceiptError::NotARefusal("it answers another envelope"));
    }
    let payload = herald_core::payload::Refusal::parse(envelope.payload())
        .map_err(|_| ReceiptError::NotARefusal("its payload is not {reason, retry_after?}"))?;
    let (reason, retry_after) = (payload.reason.to_string(), payload.retry_after);
    Ok(Refusal {
        reason,
        retry_after,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use herald_core::cbor::{Map, Value};
    use herald_core::{Envelope, EnvelopeBuilder, SigningKey};

    fn sent(key: &SigningKey) -> Envelope {
        EnvelopeBuilder::genesis(1_700_000_000)
            .payload(Value::text("hello"))
            .sign(key)
            .unwrap()
    }

    #[test]
    fn a_receipt_by_the_conduit_passes_and_any_other_answer_does_not() {
        let (me, conduit, other) = (
            SigningKey::generate_os(),
            SigningKey::generate_os(),
            SigningKey::generate_os(),
        );
        let e = sent(&me);
        let pk = conduit.public_key();
        let good = e
            .cosign(&conduit, Scope::ConduitReceipt, Some(1_700_000_001))
            .unwrap();
        assert_eq!(check_forwarded(e.as_bytes(), good.as_bytes(), &pk), Ok(()));
        // No receipt at all, or one by another key.
        assert_eq!(
            check_forwarded(e.as_bytes(), e.as_bytes(), &pk),
            Err(ReceiptError::Missing)
        );
        let foreign = e.cosign(&other, Scope::ConduitReceipt, None).unwrap();
        assert_eq!(
            check_forwarded(e.as_bytes(), foreign.as_bytes(), &pk),
            Err(ReceiptError::Missing)
        );
        // A receipt naming the conduit with a wrong signature.
        let mut forged = good.as_bytes().to_vec();
        // The last 64-byte string is the receipt's `sig` (its map's keys
        // sort `sig` before `scope`, and nothing follows the signatures).
        let at = forged.windows(2).rposition(|w| w == [0x58, 0x40]).unwrap();
        forged[at + 2] ^= 1;
        assert_eq!(
            check_forwarded(e.as_bytes(), &forged, &pk),
            Err(ReceiptError::BadSignature)
        );
        // Another envelope, or junk.
        let third = sent(&me)
            .cosign(&conduit, Scope::ConduitReceipt, None)
            .unwrap();
        assert_eq!(
            check_forwarded(e.as_bytes(), third.as_bytes(), &pk),
            Err(ReceiptError::OtherEnvelope)
        );
        assert_eq!(
            check_forwarded(e.as_bytes(), b"junk", &pk),
            Err(ReceiptError::Undecodable)
        );
    }

    #[test]
    fn a_refusal_counts_only_signed_by_the_conduit_for_the_envelope_sent() {
        let (me, conduit, other) = (
            SigningKey::generate_os(),
            SigningKey::generate_os(),
            SigningKey::generate_os(),
        );
        let e = sent(&me);
        let refusal = |by: &SigningKey, parent: [u8; 32]| {
            let mut p = Map::new();
            p.insert("reason", Value::text("rate_limited"));
            p.insert("retry_after", Value::Unsigned(3));
            EnvelopeBuilder::reply_to(parent, *e.view().trace(), 1_700_000_002)
                .kind(Kind::Refusal)
                .to(me.sigil(herald_core::SigilForm::Default))
                .payload(Value::Map(p))
                .sign(by)
                .unwrap()
        };
        let pk = conduit.public_key();
        let good = refusal(&conduit, e.id());
        assert_eq!(
            check_refusal(&e.id(), good.as_bytes(), &pk),
            Ok(Refusal {
                reason: "rate_limited".into(),
                retry_after: Some(3)
            })
        );
        for bad in [refusal(&other, e.id()), refusal(&conduit, [7; 32])] {
            assert!(matches!(
                check_refusal(&e.id(), bad.as_bytes(), &pk),
                Err(ReceiptError::NotARefusal(_))
            ));
        }
        assert!(check_refusal(&e.id(), b"{}", &pk).is_err());
    }
}
