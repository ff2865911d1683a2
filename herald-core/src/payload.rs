//! Payload shapes of the lifecycle kinds (PROFILE.md P7). Each is a closed
//! map: a missing required key, a wrong type or an extra key is `malformed`.

use crate::cbor::{ArrayRef, MapRef, RawRef, ValueRef};
use crate::kind::Kind;
use crate::reason::Detail;
use crate::sigil::Sigil;

fn bad(field: &'static str, problem: &'static str) -> Detail {
    Detail::Field { field, problem }
}

/// Check a closed map: only `allowed` keys.
fn closed<'a>(
    payload: ValueRef<'a>,
    allowed: &[&str],
    what: &'static str,
) -> Result<MapRef<'a>, Detail> {
    let map = payload
        .as_map()
        .ok_or(bad(what, "payload must be a map (P7)"))?;
    if map.iter().any(|(k, _)| !allowed.contains(&k)) {
        return Err(bad(what, "unknown key in payload (P7)"));
    }
    Ok(map)
}

/// A molt's payload `{new_key: bstr 32, not_before: uint}` (P7, P8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Molt<'a> {
    /// The incoming public key.
    pub new_key: &'a [u8; 32],
    /// When the new key may start signing.
    pub not_before: u64,
}

impl<'a> Molt<'a> {
    /// Parse a molt payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["new_key", "not_before"], "payload")?;
        Ok(Self {
            new_key: map
                .get("new_key")
                .and_then(|v| v.as_bytes())
                .and_then(|b| b.try_into().ok())
                .ok_or(bad("payload.new_key", "must be a 32-byte byte string"))
                .and_then(|k: &'a [u8; 32]| match crate::PublicKey::from_bytes(k) {
                    Ok(_) => Ok(k),
                    Err(_) => Err(bad(
                        "payload.new_key",
                        "must be a canonical Ed25519 key of prime order (P5)",
                    )),
                })?,
            not_before: map
                .get("not_before")
                .and_then(|v| v.as_unsigned())
                .ok_or(bad("payload.not_before", "must be an unsigned integer"))?,
        })
    }
}

/// A deprecation's payload `{successor?: sigil, reason?: text}` (P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deprecation<'a> {
    /// The named successor.
    pub successor: Option<Sigil>,
    /// Why.
    pub reason: Option<&'a str>,
}

impl<'a> Deprecation<'a> {
    /// Parse a deprecation payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["successor", "reason"], "payload")?;
        let successor = match map.get("successor") {
            None => None,
            Some(v) => {
                let text = v
                    .as_text()
                    .ok_or(bad("payload.successor", "must be a sigil string"))?;
                Some(Sigil::parse(text).map_err(|error| Detail::Sigil {
                    field: "payload.successor",
                    error,
                })?)
            }
        };
        Ok(Self {
            successor,
            reason: optional_text(map, "reason", "payload.reason")?,
        })
    }
}

/// A refusal's payload `{reason: text, retry_after?: uint}` (P7, spec §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal<'a> {
    /// Why the envelope was refused.
    pub reason: &'a str,
    /// When to try again.
    pub retry_after: Option<u64>,
}

impl<'a> Refusal<'a> {
    /// Parse a refusal payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["reason", "retry_after"], "payload")?;
        Ok(Self {
            reason: map
                .get("reason")
                .and_then(|v| v.as_text())
                .ok_or(bad("payload.reason", "required text (P7)"))?,
            retry_after: match map.get("retry_after") {
                None => None,
                Some(v) => Some(
                    v.as_unsigned()
                        .ok_or(bad("payload.retry_after", "must be an unsigned integer"))?,
                ),
            },
        })
    }
}

/// A duress envelope's payload `{note?: text}` (P7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duress<'a> {
    /// A note.
    pub note: Option<&'a str>,
}

impl<'a> Duress<'a> {
    /// Parse a duress payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(payload, &["note"], "payload")?;
        Ok(Self {
            note: optional_text(map, "note", "payload.note")?,
        })
    }
}

/// A capability manifest's payload (spec §8.3 less `sigil`, `ts`, `nonce`
/// and `expires`, which are the envelope's own; P7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Manifest<'a> {
    /// Capability strings, each checked by [`is_capability`].
    pub capabilities: ArrayRef<'a>,
    /// Rates, uninterpreted.
    pub rates: Option<MapRef<'a>>,
    /// Constraint strings.
    pub constraints: Option<ArrayRef<'a>>,
    /// Whether the offer is subsidised.
    pub subsidised: Option<bool>,
}

impl<'a> Manifest<'a> {
    /// Parse a manifest payload.
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = payload
            .as_map()
            .ok_or(bad("payload", "payload must be a map (P7)"))?;
        for (k, _) in map.iter() {
            match k {
                "capabilities" | "rates" | "constraints" | "subsidised" => {}
                "sigil" | "ts" | "nonce" | "expires" => {
                    return Err(bad(
                        "payload",
                        "sigil, ts, nonce and expires are the envelope's own (P7)",
                    ));
                }
                _ => return Err(bad("payload", "unknown key in payload (P7)")),
            }
        }
        let capabilities = map
            .get("capabilities")
            .and_then(|v| v.as_array())
            .ok_or(bad(
                "payload.capabilities",
                "required array of capability strings",
            ))?;
        if !capabilities
            .iter()
            .all(|c| c.as_text().is_some_and(is_capability))
        {
            return Err(bad(
                "payload.capabilities",
                "a capability is 1-8 segments of [a-z0-9-]+ joined by / (P7)",
            ));
        }
        let constraints = match map.get("constraints") {
            None => None,
            Some(v) => {
                let a = v
                    .as_array()
                    .filter(|a| a.iter().all(|c| c.as_text().is_some()));
                Some(a.ok_or(bad("payload.constraints", "must be an array of text"))?)
            }
        };
        let rates = match map.get("rates") {
            None => None,
            Some(v) => Some(v.as_map().ok_or(bad("payload.rates", "must be a map"))?),
        };
        let subsidised = match map.get("subsidised") {
            None => None,
            Some(ValueRef::Bool(b)) => Some(b),
            Some(_) => return Err(bad("payload.subsidised", "must be a bool")),
        };
        Ok(Self {
            capabilities,
            rates,
            constraints,
            subsidised,
        })
    }
}

/// A certification's payload `{subject, claim, value, not_after?,
/// revokes?}` (P7, P14): a Herald's claim about a sigil.
///
/// [`Certification::parse`] checks the P7 shape only (`value` is any
/// value); what a claim's `value` must be is [`Certification::claim`]'s
/// business, since P14 carries claims it does not know and applies only
/// those it does. A short `subject` parses (the envelope check reports it
/// as `short_sigil_misuse`, P2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Certification<'a> {
    /// The sigil the claim is about (default or long, P14).
    pub subject: Sigil,
    /// The claim's name (`handle`, `key`, `lineage`, `model`, `deprecated`,
    /// `revocation`, or one a verifier carries without applying it).
    pub claim: &'a str,
    /// The claim's value, as the payload carries it.
    pub value: ValueRef<'a>,
    /// The last second the certification stands (P14: `ts ≤ now ≤ not_after`).
    pub not_after: Option<u64>,
    /// The id of an earlier certification by the same Herald that this one
    /// revokes (claim `revocation`).
    pub revokes: Option<&'a [u8; 32]>,
}

impl<'a> Certification<'a> {
    /// Parse a certification payload (P7 shape: a closed map; `subject` a
    /// sigil, `claim` text, `value` present, `not_after` an unsigned
    /// integer, `revokes` 32 bytes).
    pub fn parse(payload: ValueRef<'a>) -> Result<Self, Detail> {
        let map = closed(
            payload,
            &["subject", "claim", "value", "not_after", "revokes"],
            "payload",
        )?;
        let subject = map
            .get("subject")
            .and_then(|v| v.as_text())
            .ok_or(bad("payload.subject", "required sigil string (P14)"))?;
        let subject = Sigil::parse(subject).map_err(|error| Detail::Sigil {
            field: "payload.subject",
            error,
        })?;
        if subject.is_reserved() {
            return Err(bad(
                "payload.subject",
                "a reserved sigil has no key to certify (P2, P14)",
            ));
        }
        Ok(Self {
            subject,
            claim: map
                .get("claim")
                .and_then(|v| v.as_text())
                .ok_or(bad("payload.claim", "required text (P14)"))?,
            value: map.get("value").ok_or(bad(
                "payload.value",
                "required (P14; null for a revocation)",
            ))?,
            not_after: match map.get("not_after") {
                None => None,
                Some(v) => Some(
                    v.as_unsigned()
                        .ok_or(bad("payload.not_after", "must be an unsigned integer"))?,
                ),
            },
            revokes: match map.get("revokes") {
                None => None,
                Some(v) => Some(
                    v.as_bytes()
                        .and_then(|b| b.try_into().ok())
                        .ok_or(bad("payload.revokes", "must be a 32-byte byte string"))?,
                ),
            },
        })
    }

    /// The claim, typed by the P14 table: a known claim whose value (or
    /// `revokes`) is not of its shape is an error, and one P14 does not
    /// know is [`Claim::Other`] (carried and reported, never applied).
    pub fn claim(&self) -> Result<Claim<'a>, Detail> {
        Claim::parse(self.claim, self.value, self.revokes)
    }
}

/// A claim of a certification, by the P14 table.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Claim<'a> {
    /// `handle`: the P15 DNS record of this handle named the subject.
    Handle(&'a str),
    /// `key`: the subject's current public key (32 bytes, as carried; a
    /// verifier checks that it is a key and that it hashes to the subject).
    Key(&'a [u8; 32]),
    /// `lineage`: the subject's declared lineage parent is the real one.
    Lineage {
        /// The parent (never a short sigil, P2).
        parent: Sigil,
        /// The hash of the model, when said.
        model_hash: Option<&'a [u8; 32]>,
    },
    /// `model`: the subject runs this model.
    Model {
        /// The model's name.
        name: &'a str,
        /// The hash of the model, when said.
        model_hash: Option<&'a [u8; 32]>,
    },
    /// `deprecated`: the subject's operator retired it at `ts`.
    Deprecated {
        /// When it was retired, Unix seconds.
        ts: u64,
    },
    /// `revocation`: the earlier certification with this id, by the same
    /// Herald, no longer stands.
    Revocation(&'a [u8; 32]),
    /// A claim P14 does not name: carried and reported, not applied.
    Other {
        /// The claim's name.
        claim: &'a str,
        /// Its value.
        value: ValueRef<'a>,
    },
}

/// The claim names P14 defines, in its table's order.
pub const CLAIMS: [&str; 6] = [
    "handle",
    "key",
    "lineage",
    "model",
    "deprecated",
    "revocation",
];

impl<'a> Claim<'a> {
    /// Type the claim `name` with `value` and the payload's `revokes`
    /// (P14): only a `revocation` carries `revokes`, and it must.
    pub fn parse(
        name: &'a str,
        value: ValueRef<'a>,
        revokes: Option<&'a [u8; 32]>,
    ) -> Result<Self, Detail> {
        if revokes.is_some() != (name == "revocation") {
            return Err(bad(
                "payload.revokes",
                "present exactly when the claim is revocation (P14)",
            ));
        }
        let hash32 = |v: Option<ValueRef<'a>>, field| match v {
            None => Ok(None),
            Some(v) => v
                .as_bytes()
                .and_then(|b| b.try_into().ok())
                .map(Some)
                .ok_or(bad(field, "must be a 32-byte byte string")),
        };
        Ok(match name {
            "handle" => {
                let text = value
                    .as_text()
                    .filter(|t| crate::handle::check(t).is_ok())
                    .ok_or(bad(
                        "payload.value",
                        "a handle claim's value is a DNS name or name@ a DNS name (P14, P15)",
                    ))?;
                Self::Handle(text)
            }
            "key" => Self::Key(value.as_bytes().and_then(|b| b.try_into().ok()).ok_or(bad(
                "payload.value",
                "a key claim's value is 32 bytes (P14)",
            ))?),
            "lineage" => {
                const SHAPE: &str =
                    "a lineage claim's value is {parent: sigil, model_hash?: bstr 32} (P14)";
                let m = closed(value, &["parent", "model_hash"], "payload.value")?;
                let parent = m
                    .get("parent")
                    .and_then(|v| v.as_text())
                    .and_then(|t| Sigil::parse(t).ok())
                    .filter(|s| !s.is_reserved() && !s.is_short())
                    .ok_or(bad("payload.value.parent", SHAPE))?;
                Self::Lineage {
                    parent,
                    model_hash: hash32(m.get("model_hash"), "payload.value.model_hash")?,
                }
            }
            "model" => {
                let m = closed(value, &["name", "model_hash"], "payload.value")?;
                Self::Model {
                    name: m.get("name").and_then(|v| v.as_text()).ok_or(bad(
                        "payload.value.name",
                        "a model claim's value is {name: text, model_hash?: bstr 32} (P14)",
                    ))?,
                    model_hash: hash32(m.get("model_hash"), "payload.value.model_hash")?,
                }
            }
            "deprecated" => {
                let m = closed(value, &["ts"], "payload.value")?;
                Self::Deprecated {
                    ts: m.get("ts").and_then(|v| v.as_unsigned()).ok_or(bad(
                        "payload.value.ts",
                        "a deprecated claim's value is {ts: uint} (P14)",
                    ))?,
                }
            }
            "revocation" => match (value, revokes) {
                (ValueRef::Null, Some(id)) => Self::Revocation(id),
                _ => {
                    return Err(bad(
                        "payload.value",
                        "a revocation's value is null, with revokes (P14)",
                    ));
                }
            },
            _ => Self::Other { claim: name, value },
        })
    }

    /// The claim's name.
    pub fn name(&self) -> &'a str {
        match self {
            Self::Handle(_) => "handle",
            Self::Key(_) => "key",
            Self::Lineage { .. } => "lineage",
            Self::Model { .. } => "model",
            Self::Deprecated { .. } => "deprecated",
            Self::Revocation(_) => "revocation",
            Self::Other { claim, .. } => claim,
        }
    }

    /// The claim's `value` as a payload carries it (what [`Claim::parse`]
    /// reads back).
    #[cfg(feature = "alloc")]
    pub fn value(&self) -> crate::cbor::Value {
        use crate::cbor::{Map, Value};
        let with_hash = |mut m: Map, hash: Option<&[u8; 32]>| {
            if let Some(h) = hash {
                m.insert("model_hash", Value::Bytes(h.to_vec()));
            }
            Value::Map(m)
        };
        match self {
            Self::Handle(h) => Value::text(*h),
            Self::Key(k) => Value::Bytes(k.to_vec()),
            Self::Lineage { parent, model_hash } => {
                let mut m = Map::new();
                m.insert("parent", Value::Text(alloc::format!("{parent}")));
                with_hash(m, *model_hash)
            }
            Self::Model { name, model_hash } => {
                let mut m = Map::new();
                m.insert("name", Value::text(*name));
                with_hash(m, *model_hash)
            }
            Self::Deprecated { ts } => {
                let mut m = Map::new();
                m.insert("ts", Value::Unsigned(*ts));
                Value::Map(m)
            }
            Self::Revocation(_) => Value::Null,
            Self::Other { value, .. } => Value::from(value),
        }
    }
}

/// The payload of a certification of `claim` about `subject` (P7, P14),
/// standing until `not_after` when given: what [`Certification::parse`]
/// reads back. A [`Claim::Revocation`] carries its `revokes`. Build the
/// envelope with kind `certification`, `to` the subject, and (when the
/// subject asked) as a reply to its request.
#[cfg(feature = "alloc")]
pub fn certification(
    subject: &Sigil,
    claim: &Claim<'_>,
    not_after: Option<u64>,
) -> crate::cbor::Value {
    use crate::cbor::{Map, Value};
    let mut m = Map::new();
    m.insert("subject", Value::Text(alloc::format!("{subject}")));
    m.insert("claim", Value::text(claim.name()));
    m.insert("value", claim.value());
    if let Some(t) = not_after {
        m.insert("not_after", Value::Unsigned(t));
    }
    if let Claim::Revocation(id) = claim {
        m.insert("revokes", Value::Bytes(id.to_vec()));
    }
    Value::Map(m)
}

/// Whether `s` is a capability string: lower-case segments `[a-z0-9-]+`
/// joined by `/`, 1–8 segments (P7).
pub fn is_capability(s: &str) -> bool {
    let mut segments = 0;
    for segment in s.split('/') {
        segments += 1;
        if segment.is_empty()
            || !segment
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        {
            return false;
        }
    }
    (1..=8).contains(&segments)
}

fn optional_text<'a>(
    map: MapRef<'a>,
    key: &str,
    field: &'static str,
) -> Result<Option<&'a str>, Detail> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => Ok(Some(v.as_text().ok_or(bad(field, "must be text"))?)),
    }
}

/// Check the payload shape `kind` requires (P7). Kinds without a shape
/// (message, birth, posthumous citation) accept any payload.
pub fn check(kind: Kind, payload: ValueRef<'_>) -> Result<(), Detail> {
    match kind {
        Kind::Molt => Molt::parse(payload).map(|_| ()),
        Kind::Deprecation => Deprecation::parse(payload).map(|_| ()),
        Kind::Refusal => Refusal::parse(payload).map(|_| ()),
        Kind::Duress => Duress::parse(payload).map(|_| ()),
        Kind::Manifest => Manifest::parse(payload).map(|_| ()),
        Kind::Certification => Certification::parse(payload).map(|_| ()),
        _ => Ok(()),
    }
}

/// [`check`] of a payload whose text the strict decoder checked (P1):
/// only the kinds with a payload shape read it.
pub(crate) fn check_raw(kind: Kind, payload: RawRef<'_>) -> Result<(), Detail> {
    match kind {
        Kind::Molt
        | Kind::Deprecation
        | Kind::Refusal
        | Kind::Duress
        | Kind::Manifest
        | Kind::Certification => payload.value().map_or(Ok(()), |v| check(kind, v)),
        _ => Ok(()),
    }
}
