//! The signing endpoint's work: an envelope described by the compose tab,
//! built and signed with the key of `--key` (which the page never sees).

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Kind, Sigil, SigningKey};
use herald_verify::hex;
use serde::Deserialize;

use crate::{clock, json};

/// What the compose tab sends (`POST /api/sign`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Request {
    /// A P7 kind name (default `message`).
    #[serde(default)]
    kind: Option<String>,
    /// The recipient's sigil.
    #[serde(default)]
    to: Option<String>,
    /// The payload, as JSON (default `null`).
    #[serde(default)]
    payload: Option<Box<serde_json::value::RawValue>>,
    /// Attestations: `type` → JSON value.
    #[serde(default)]
    attestations: Vec<(String, Box<serde_json::value::RawValue>)>,
    /// The parent's id and trace (hex), both or neither: a reply, else a genesis.
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    trace: Option<String>,
}

/// The kinds that change what the signer's key means to everyone who
/// trusts it (PROFILE P8): a molt hands the identity to another key, a
/// deprecation ends it, a duress marks it coerced. The page signs them only
/// when the server was started with `--allow-lifecycle`: a compose form is
/// for messages, and a key's lifecycle is the deliberate `herald new
/// --kind` of its owner.
pub(crate) const LIFECYCLE: [Kind; 3] = [Kind::Molt, Kind::Deprecation, Kind::Duress];

/// Why a request is not signed.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum Refused {
    /// A kind of [`LIFECYCLE`] without `--allow-lifecycle`.
    Lifecycle(Kind),
    /// The request does not describe an envelope this endpoint can build.
    Invalid(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Lifecycle(kind) => write!(
                f,
                "kind {}: it changes what this key means to everyone who trusts it \
                 (PROFILE P8); start the inspector with --allow-lifecycle to sign it",
                kind.name()
            ),
            Self::Invalid(why) => f.write_str(why),
        }
    }
}

impl From<String> for Refused {
    fn from(why: String) -> Self {
        Self::Invalid(why)
    }
}

/// The signed envelope's P1 bytes, or why the request is not signed;
/// `allow_lifecycle` lets it sign the kinds of [`LIFECYCLE`].
pub(crate) fn sign(
    request: &Request,
    key: &SigningKey,
    allow_lifecycle: bool,
) -> Result<Vec<u8>, Refused> {
    let kind = match request.kind.as_deref() {
        None | Some("") => Kind::default(),
        Some(name) => Kind::from_name(name).ok_or_else(|| format!("unknown kind {name:?}"))?,
    };
    if kind == Kind::Birth {
        return Err(Refused::Invalid(
            "a birth carries the key's own birth attestation: use `herald new --kind birth`".into(),
        ));
    }
    if LIFECYCLE.contains(&kind) && !allow_lifecycle {
        return Err(Refused::Lifecycle(kind));
    }
    let ts = clock::now().map_err(|e| Refused::Invalid(e.to_string()))?;
    let mut builder = match (&request.parent, &request.trace) {
        (Some(parent), Some(trace)) => {
            EnvelopeBuilder::reply_to(id("parent", parent)?, id("trace", trace)?, ts)
        }
        (None, None) => EnvelopeBuilder::genesis(ts),
        _ => {
            return Err(Refused::Invalid(
                "a reply needs both the parent's id and its trace".into(),
            ));
        }
    }
    .kind(kind);
    if let Some(to) = request.to.as_deref().filter(|t| !t.is_empty()) {
        let to = Sigil::parse(to).map_err(|e| format!("to: {e}"))?;
        builder = builder.to(to);
    }
    if let Some(payload) = &request.payload {
        builder =
            builder.payload(json::to_cbor(payload.get()).map_err(|e| format!("payload: {e}"))?);
    } else {
        builder = builder.payload(Value::Null);
    }
    for (ty, value) in &request.attestations {
        let value = json::to_cbor(value.get()).map_err(|e| format!("attestation {ty}: {e}"))?;
        builder = builder.attest(ty, value);
    }
    let envelope = builder
        .sign(key)
        .map_err(|e| format!("cannot build the envelope: {e}"))?;
    Ok(envelope.into_bytes())
}

/// A 32-byte id from 64 hex digits.
fn id(what: &str, text: &str) -> Result<[u8; 32], String> {
    data_encoding::HEXLOWER
        .decode(text.as_bytes())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| format!("{what}: expected 64 lowercase hex digits"))
}

/// The JSON answer for a signed envelope.
pub(crate) fn answer(bytes: &[u8]) -> serde_json::Value {
    let id = herald_core::EnvelopeRef::decode(bytes)
        .map(|e| hex(e.id()))
        .ok();
    serde_json::json!({ "id": id, "envelope": hex(bytes) })
}
